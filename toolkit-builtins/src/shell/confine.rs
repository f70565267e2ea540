//! Kernel confinement of the child with Landlock (Linux, `landlock` feature).
//!
//! The ruleset is built in the parent, where allocating and opening files is
//! safe; the child only calls `restrict_self` between `fork` and `exec`. The
//! child may then read and run programs from the system directories, read
//! the extra directories the policy names, and write only inside the
//! workspace (and to `/dev/null`), whatever its command line says.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};

use super::{Confinement, ShellError, ShellPolicy};

/// The newest Landlock ABI these rules are written for; older kernels get
/// the subset they support.
const TARGET_ABI: ABI = ABI::V5;

/// Directories a confined command may read and execute from.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt", "/proc", "/sys", "/dev",
];

/// Device files a confined command may write to.
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/tty", "/dev/zero", "/dev/full"];

/// Whether the running kernel enforces Landlock.
pub fn landlock_available() -> bool {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::Execute)
        .and_then(|r| r.create())
        .is_ok()
}

/// A ruleset ready to be applied in the child.
pub(crate) struct Prepared {
    ruleset: Option<RulesetCreated>,
    required: bool,
}

impl Prepared {
    /// Apply the ruleset to the calling (child) process.
    pub(crate) fn enforce(&mut self) -> std::io::Result<()> {
        let Some(ruleset) = self.ruleset.take() else {
            return Ok(());
        };
        match ruleset.restrict_self() {
            Ok(status) if self.required && status.ruleset == RulesetStatus::NotEnforced => Err(
                std::io::Error::other("Landlock is not enforced by this kernel"),
            ),
            Ok(_) => Ok(()),
            Err(e) => Err(std::io::Error::other(e.to_string())),
        }
    }
}

/// Build the ruleset for `policy`, or `None` when confinement is off or,
/// in best-effort mode, unavailable (with a note saying so).
pub(crate) fn prepare(
    policy: &ShellPolicy,
    workspace: &Path,
    read_only: &[PathBuf],
) -> Result<(Option<Prepared>, Option<String>), ShellError> {
    let required = match policy.confinement {
        Confinement::Off => return Ok((None, None)),
        Confinement::Required => true,
        Confinement::BestEffort => false,
    };
    if !landlock_available() {
        if required {
            return Err(ShellError::Confinement(
                "Landlock confinement is required but this kernel does not provide it".into(),
            ));
        }
        return Ok((
            None,
            Some(
                "Landlock is not available here; the command ran without kernel confinement".into(),
            ),
        ));
    }
    let existing =
        |paths: Vec<PathBuf>| paths.into_iter().filter(|p| p.exists()).collect::<Vec<_>>();
    let readable = existing(
        SYSTEM_DIRS
            .iter()
            .map(PathBuf::from)
            .chain(policy.extra_read_dirs.iter().cloned())
            .chain(read_only.iter().cloned())
            .collect(),
    );
    let devices = existing(WRITABLE_DEVICES.iter().map(PathBuf::from).collect());
    let build = || -> Result<RulesetCreated, landlock::RulesetError> {
        Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(TARGET_ABI))?
            .create()?
            .add_rules(path_beneath_rules(
                &readable,
                AccessFs::from_read(TARGET_ABI),
            ))?
            .add_rules(path_beneath_rules(
                &devices,
                AccessFs::from_file(TARGET_ABI),
            ))?
            .add_rules(path_beneath_rules(
                [workspace],
                AccessFs::from_all(TARGET_ABI),
            ))
    };
    let ruleset = build().map_err(|e| ShellError::Confinement(e.to_string()))?;
    Ok((
        Some(Prepared {
            ruleset: Some(ruleset),
            required,
        }),
        None,
    ))
}
