//! Many generated calls of one tool, each checked for what a model must
//! never see: a crash, an empty error, a refusal of valid arguments.

use std::time::Duration;

use futures_util::FutureExt;

use super::generate::{ArgumentGenerator, Case, CaseKind};
use crate::context::ToolContext;
use crate::error::ErrorKind;
use crate::exec::meta;
use crate::output::ToolOutput;
use crate::registry::ToolRegistry;

/// A property test of one registered tool: `cases` calls generated from
/// its schema by an [`ArgumentGenerator`], each run through
/// [`ToolRegistry::call`] (the pipeline, as a model's call), and checked:
///
/// - no call panics past the pipeline, none runs longer than the time
///   allowed, and no tool panics (a contained panic still reads as a crash);
/// - every error has text the model can act on;
/// - valid and sloppy arguments pass the check, as the generator expects
///   them to be cast, and the call succeeds (or, with
///   [`allow_tool_errors`](Self::allow_tool_errors), fails only with the
///   tool's own error, never an internal one);
/// - invalid arguments are refused as invalid, and the error names the
///   parameter at fault.
///
/// ```
/// use toolsmith::testing::Robustness;
/// use toolsmith::{ToolRegistry, tool};
///
/// /// Repeat a word.
/// #[tool]
/// async fn repeat(word: String, #[arg(minimum = 1, maximum = 5)] times: u8) -> String {
///     word.repeat(usize::from(times))
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let registry = ToolRegistry::new();
/// registry.register(RepeatTool).unwrap();
/// let report = Robustness::new(&registry, "repeat").cases(50).seed(7).assert().await;
/// assert!(report.invalid > 0);
/// # }
/// ```
#[derive(Debug)]
pub struct Robustness<'r> {
    registry: &'r ToolRegistry,
    name: String,
    cases: usize,
    seed: u64,
    ctx: ToolContext,
    per_call: Duration,
    tool_errors_allowed: bool,
}

/// What a [`Robustness`] run found.
#[derive(Debug, Clone, Default)]
pub struct RobustnessReport {
    /// The seed the cases were generated from.
    pub seed: u64,
    /// How many valid cases ran.
    pub valid: usize,
    /// How many sloppy cases ran.
    pub sloppy: usize,
    /// How many invalid cases ran.
    pub invalid: usize,
    /// The cases that broke a rule.
    pub failures: Vec<RobustnessFailure>,
}

impl RobustnessReport {
    /// Whether every case kept every rule.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

impl std::fmt::Display for RobustnessReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} valid, {} sloppy, {} invalid cases (seed {}): {} failed",
            self.valid,
            self.sloppy,
            self.invalid,
            self.seed,
            self.failures.len()
        )?;
        for failure in self.failures.iter().take(10) {
            write!(f, "\n  {failure}")?;
        }
        if self.failures.len() > 10 {
            write!(f, "\n  ... and {} more", self.failures.len() - 10)?;
        }
        Ok(())
    }
}

/// One case that broke a rule.
#[derive(Debug, Clone)]
pub struct RobustnessFailure {
    /// Its place among the generated cases.
    pub index: usize,
    /// The case.
    pub case: Case,
    /// Which rule it broke.
    pub problem: String,
    /// What the model read, when the call answered.
    pub output: Option<ToolOutput>,
}

impl std::fmt::Display for RobustnessFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "case {} ({:?}, {}): {} with arguments {}",
            self.index, self.case.kind, self.case.note, self.problem, self.case.arguments
        )?;
        if let Some(output) = &self.output {
            write!(f, "; the model read: {:?}", output.content)?;
        }
        Ok(())
    }
}

impl<'r> Robustness<'r> {
    /// 100 cases of the tool `name` in `registry`, from seed 0, each in a
    /// fresh [`ToolContext`], 10 s allowed per call.
    pub fn new(registry: &'r ToolRegistry, name: &str) -> Self {
        Self {
            registry,
            name: name.to_owned(),
            cases: 100,
            seed: 0,
            ctx: ToolContext::new(),
            per_call: Duration::from_secs(10),
            tool_errors_allowed: false,
        }
    }

    /// How many calls to make.
    pub fn cases(mut self, cases: usize) -> Self {
        self.cases = cases;
        self
    }

    /// The seed the cases are generated from: the same seed, the same cases.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The context every call is made in (a workspace, state); each call
    /// gets its own call id.
    pub fn context(mut self, ctx: ToolContext) -> Self {
        self.ctx = ctx;
        self
    }

    /// How long one call may take before it counts as hanging.
    pub fn per_call_timeout(mut self, limit: Duration) -> Self {
        self.per_call = limit;
        self
    }

    /// Let valid arguments fail with the tool's own error (a file that is
    /// not there, for a generated path): only a panic, an internal error,
    /// a refusal of the arguments or an empty error text then fail the test.
    pub fn allow_tool_errors(mut self) -> Self {
        self.tool_errors_allowed = true;
        self
    }

    /// Run the cases and report; panics only when the tool is not
    /// registered or its schema does not compile.
    pub async fn run(self) -> RobustnessReport {
        let tool = self
            .registry
            .get(&self.name)
            .unwrap_or_else(|| panic!("no tool named `{}` in the registry", self.name));
        let mut generator = ArgumentGenerator::new(tool.spec(), self.seed)
            .unwrap_or_else(|e| panic!("the schema of `{}` does not compile: {e}", self.name));
        let mut report = RobustnessReport {
            seed: self.seed,
            ..RobustnessReport::default()
        };
        for (index, case) in generator.cases(self.cases).into_iter().enumerate() {
            match case.kind {
                CaseKind::Valid => report.valid += 1,
                CaseKind::Sloppy => report.sloppy += 1,
                CaseKind::Invalid => report.invalid += 1,
            }
            let (problem, output) = self.one(index, &case).await;
            if let Some(problem) = problem {
                report.failures.push(RobustnessFailure {
                    index,
                    case,
                    problem,
                    output,
                });
            }
        }
        report
    }

    /// Run the cases and panic, listing what failed, unless all passed.
    pub async fn assert(self) -> RobustnessReport {
        let name = self.name.clone();
        let report = self.run().await;
        assert!(report.passed(), "the tool `{name}` is not robust: {report}");
        report
    }

    async fn one(&self, index: usize, case: &Case) -> (Option<String>, Option<ToolOutput>) {
        if let Some(expected) = &case.expected {
            match self.registry.check(&self.name, case.arguments.clone()) {
                Ok(checked) if checked.arguments() == expected => {}
                Ok(checked) => {
                    let problem = format!(
                        "the arguments were cast to {}, not {expected}",
                        checked.arguments()
                    );
                    return (Some(problem), None);
                }
                Err(error) => {
                    let problem = format!("the registry refused them: {error}");
                    return (Some(problem), None);
                }
            }
        }
        let ctx = self.ctx.clone().with_call_id(format!("robustness-{index}"));
        let call = self.registry.call(&self.name, case.arguments.clone(), &ctx);
        let output = match tokio::time::timeout(
            self.per_call,
            std::panic::AssertUnwindSafe(call).catch_unwind(),
        )
        .await
        {
            Err(_) => return (Some(format!("no answer within {:?}", self.per_call)), None),
            Ok(Err(panic)) => {
                crate::panics::discard(panic);
                return (Some("the call panicked past the pipeline".into()), None);
            }
            Ok(Ok(output)) => output,
        };
        let problem = self.judge(case, &output);
        (problem, Some(output))
    }

    fn judge(&self, case: &Case, output: &ToolOutput) -> Option<String> {
        let kind = output.metadata.read(&meta::ERROR_KIND);
        if output.is_error {
            if !says_something(&output.content, &self.name) {
                return Some("an error without text".into());
            }
            match kind {
                Some(ErrorKind::Panicked) => return Some("the tool panicked".into()),
                Some(ErrorKind::Internal) => return Some("an internal error".into()),
                _ => {}
            }
        }
        match case.kind {
            CaseKind::Valid | CaseKind::Sloppy if output.is_error => {
                let refused = matches!(kind, Some(ErrorKind::UnknownTool));
                if refused || !self.tool_errors_allowed {
                    Some("valid arguments did not succeed".into())
                } else {
                    None
                }
            }
            CaseKind::Valid | CaseKind::Sloppy => None,
            CaseKind::Invalid if !output.is_error => {
                Some("invalid arguments were not refused".into())
            }
            CaseKind::Invalid => {
                if !matches!(kind, Some(ErrorKind::InvalidArguments)) {
                    return Some(format!("refused as {kind:?}, not as invalid arguments"));
                }
                match &case.parameter {
                    Some(name) if !output.content.contains(name.as_str()) => {
                        Some(format!("the error does not name `{name}`"))
                    }
                    _ => None,
                }
            }
        }
    }
}

/// Whether an error's text says more than that there was an error: what
/// is left without the hint the pipeline adds and the words it wraps a
/// tool's own error in.
fn says_something(content: &str, tool: &str) -> bool {
    let text = content.split("\n\n[").next().unwrap_or_default().trim();
    let text = text.strip_prefix("Error:").unwrap_or(text).trim();
    let wrapper = format!("Tool '{tool}' failed:");
    let text = text.strip_prefix(wrapper.as_str()).unwrap_or(text);
    !text.trim().is_empty()
}

/// Run `cases` generated calls of the tool `name` through `registry` and
/// panic, listing what failed, unless it is robust: see [`Robustness`]
/// for the rules and for settings (seed, context, tool errors).
///
/// ```
/// use toolsmith::testing::assert_tool_is_robust;
/// use toolsmith::{ToolRegistry, tool};
///
/// /// Add two numbers.
/// #[tool]
/// async fn add(a: i64, b: i64) -> String {
///     a.checked_add(b).map_or_else(|| "too large".into(), |n| n.to_string())
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let registry = ToolRegistry::new();
/// registry.register(AddTool).unwrap();
/// assert_tool_is_robust(&registry, "add", 60).await;
/// # }
/// ```
pub async fn assert_tool_is_robust(
    registry: &ToolRegistry,
    name: &str,
    cases: usize,
) -> RobustnessReport {
    Robustness::new(registry, name).cases(cases).assert().await
}
