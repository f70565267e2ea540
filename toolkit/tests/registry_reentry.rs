//! A tool's own code that comes back into the registry while the registry
//! is changing its set of tools or rendering its definitions: a tool's drop
//! code that registers a tool, a tool's `spec()` that lists the
//! definitions. Each waited for ever on a lock its own thread held; no
//! lock is held around a tool's code now.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use toolsmith::{
    Arguments, DefinitionFormat, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec,
};

/// What a tool does with the registry from its own code.
#[derive(Clone, Copy, PartialEq)]
enum Reentry {
    Nothing,
    /// From `Drop`: register another tool.
    DropRegisters,
    /// From `spec()`, once: list the registry's definitions.
    SpecListsDefinitions,
}

struct Probe {
    spec: ToolSpec,
    reentry: Reentry,
    registry: Arc<OnceLock<Weak<ToolRegistry>>>,
    armed: Arc<AtomicBool>,
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

fn plain(name: String) -> Arc<dyn Tool> {
    Arc::new(Probe {
        spec: ToolSpec::new(name, "A tool.", json!({"type": "object"})),
        reentry: Reentry::Nothing,
        registry: Arc::default(),
        armed: Arc::default(),
    })
}

impl Probe {
    fn registry(&self) -> Option<Arc<ToolRegistry>> {
        self.registry.get().and_then(Weak::upgrade)
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        if self.reentry != Reentry::DropRegisters || !self.armed.load(Ordering::SeqCst) {
            return;
        }
        if let Some(registry) = self.registry() {
            let name = format!("from_drop_{}", COUNTER.fetch_add(1, Ordering::Relaxed));
            let _ = registry.register_arc(plain(name));
        }
    }
}

#[async_trait]
impl Tool for Probe {
    fn spec(&self) -> &ToolSpec {
        if self.reentry == Reentry::SpecListsDefinitions
            && self.armed.swap(false, Ordering::SeqCst)
            && let Some(registry) = self.registry()
        {
            let _ = registry.definitions(DefinitionFormat::OpenAi);
        }
        &self.spec
    }

    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok("done".into())
    }
}

/// A probe that can reach `registry`, disarmed.
fn probe(name: &str, reentry: Reentry, registry: &Arc<ToolRegistry>) -> (Probe, Arc<AtomicBool>) {
    let slot: Arc<OnceLock<Weak<ToolRegistry>>> = Arc::default();
    slot.set(Arc::downgrade(registry)).unwrap();
    let armed = Arc::new(AtomicBool::new(false));
    let probe = Probe {
        spec: ToolSpec::new(name.to_owned(), "A probe.", json!({"type": "object"})),
        reentry,
        registry: slot,
        armed: armed.clone(),
    };
    (probe, armed)
}

/// A registry holding `stable` and a probe called `name`, and the switch
/// that arms the probe.
fn with_probe(name: &str, reentry: Reentry) -> (Arc<ToolRegistry>, Arc<AtomicBool>) {
    let registry = Arc::new(ToolRegistry::new());
    registry.register_arc(plain("stable".into())).unwrap();
    let (probe, armed) = probe(name, reentry, &registry);
    registry.register(probe).unwrap();
    (registry, armed)
}

/// Run `work` on a thread of its own, and say whether it ended within a
/// bound far above what it takes (a deadlock never ends; its thread is
/// left behind).
fn ends(work: impl FnOnce() + Send + 'static) -> bool {
    let (done, wait) = mpsc::channel();
    std::thread::spawn(move || {
        work();
        let _ = done.send(());
    });
    wait.recv_timeout(Duration::from_secs(20)).is_ok()
}

/// A tool whose `Drop` registers a tool, removed by `replace`: the
/// replaced set, the last reference to it, is dropped after the lock.
#[test]
fn a_tool_whose_drop_registers_can_be_replaced() {
    let (registry, armed) = with_probe("grp_probe", Reentry::DropRegisters);
    armed.store(true, Ordering::SeqCst);
    assert!(
        ends(move || {
            registry
                .replace(|name| name.starts_with("grp_"), Vec::new())
                .unwrap();
        }),
        "replace never returned: the replaced tool's drop code ran under the writer lock"
    );
}

/// A registration refused as a duplicate, whose tool's `Drop` registers:
/// the refused tool is dropped after the lock.
#[test]
fn a_refused_duplicate_whose_drop_registers_is_refused() {
    let (registry, _) = with_probe("other", Reentry::Nothing);
    let (twin, armed) = probe("stable", Reentry::DropRegisters, &registry);
    armed.store(true, Ordering::SeqCst);
    assert!(
        ends(move || {
            assert!(registry.register(twin).is_err());
        }),
        "register never returned: the refused tool's drop code ran under the writer lock"
    );
}

/// A tool whose `spec()` lists the registry's definitions, asked for its
/// spec while those very definitions are rendered: they are rendered
/// outside the cache's lock.
#[test]
fn a_spec_that_lists_definitions_can_be_rendered() {
    let (registry, armed) = with_probe("lister", Reentry::SpecListsDefinitions);
    armed.store(true, Ordering::SeqCst);
    assert!(
        ends(move || {
            let _ = registry.definitions(DefinitionFormat::Anthropic);
        }),
        "definitions never returned: the cache's mutex is held while the tool's spec() runs"
    );
}
