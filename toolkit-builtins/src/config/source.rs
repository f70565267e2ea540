//! Loading a source of tools into a registry, and loading it again.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use toolsmith::{RegistryError, Tool, ToolRegistry};

/// The names one source (a file, a plugin directory) put in a registry, so
/// that loading it again replaces exactly its own tools, in one step.
#[derive(Debug, Default)]
pub(crate) struct Owned {
    names: Mutex<BTreeSet<String>>,
}

impl Owned {
    /// Put `tools` in `registry` in place of this source's previous tools.
    /// A new name already taken by a tool from elsewhere is refused.
    pub(crate) fn replace(
        &self,
        registry: &ToolRegistry,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Result<Vec<String>, RegistryError> {
        let mut owned = self.names.lock().unwrap_or_else(|e| e.into_inner());
        let new: BTreeSet<String> = tools.iter().map(|t| t.spec().name.to_string()).collect();
        if let Some(taken) = new
            .iter()
            .find(|n| !owned.contains(*n) && registry.contains(n))
        {
            return Err(RegistryError::Duplicate {
                name: taken.clone(),
                existing: "another source".into(),
                added: "this source".into(),
            });
        }
        let group: BTreeSet<String> = owned.union(&new).cloned().collect();
        registry.replace(|name| group.contains(name), tools)?;
        *owned = new;
        Ok(owned.iter().cloned().collect())
    }
}
