//! Tools as groups: combine, prefix, rename, filter, hide and transform
//! them together, and decide for each call's context which are offered.
//!
//! A [`Toolset`] is a description of a group of tools: where they come
//! from (tools, a registry, the linked `#[tool]` functions, other toolsets)
//! and what to change about them. [`Toolset::build`] makes a [`Toolbox`]:
//! the tools as the model will see them, each a real [`Tool`] that goes
//! through casting, validation and the [`Pipeline`](crate::pipeline::Pipeline)
//! like any other, and the rules that decide, for a [`ToolContext`], which
//! of them are offered. Nothing is unregistered to take a tool away: a
//! toolbox's [`definitions`](Toolbox::definitions) leave out what a context
//! is not offered, and its [`gate`](Toolbox::gate) refuses calls of it.
//!
//! ```
//! use serde_json::json;
//! use toolsmith::pipeline::Pipeline;
//! use toolsmith::toolset::{ArgTransform, Toolset};
//! use toolsmith::{DefinitionFormat, ToolContext, ToolRegistry, tool};
//!
//! /// Search a document collection.
//! #[tool(read_only)]
//! async fn search(collection: String, query: String) -> String {
//!     format!("{query} in {collection}")
//! }
//!
//! /// Delete a document.
//! #[tool]
//! async fn delete(collection: String, id: u64) -> String {
//!     format!("deleted {id} from {collection}")
//! }
//!
//! /// Who is asking.
//! struct Role(&'static str);
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let docs = Toolset::new()
//!     .with_tool(SearchTool)
//!     .with_tool(DeleteTool)
//!     .prefix("docs_")
//!     // The model never chooses the collection.
//!     .transform_arg_everywhere("collection", ArgTransform::fixed(json!("manuals")))
//!     // Only an administrator is offered `docs_delete`.
//!     .prepare(|ctx, spec| {
//!         spec.name != "docs_delete" || ctx.state::<Role>().is_some_and(|r| r.0 == "admin")
//!     })
//!     .build()
//!     .unwrap();
//!
//! let registry = ToolRegistry::new().with_pipeline(Pipeline::new().layer(docs.gate()));
//! docs.register(&registry).unwrap();
//!
//! let guest = ToolContext::new().with_state(Role("guest"));
//! assert_eq!(docs.offered(&guest), ["docs_search"]);
//! let shown = docs.definitions(&registry, &guest, DefinitionFormat::OpenAi);
//! assert_eq!(shown.len(), 1);
//!
//! let out = registry.call("docs_search", json!({"query": "fuses"}), &guest).await;
//! assert_eq!(out.content, "fuses in manuals");
//! let refused = registry.call("docs_delete", json!({"id": 7}), &guest).await;
//! assert!(refused.is_error);
//!
//! let admin = ToolContext::new().with_state(Role("admin"));
//! let out = registry.call("docs_delete", json!({"id": "7"}), &admin).await;
//! assert_eq!(out.content, "deleted 7 from manuals");
//! # }
//! ```

mod transform;

use std::collections::HashSet;
use std::sync::{Arc, RwLock};

use crate::context::ToolContext;
use crate::discovery::{ToolFilter, ToolRegistration};
use crate::error::{CallError, RegistryError};
use crate::output::ToolOutput;
use crate::pipeline::{Call, Layer, Next, Stage};
use crate::registry::ToolRegistry;
use crate::schema::{Definition, DefinitionFormat};
use crate::tool::{Tool, ToolSpec};

pub use transform::ArgTransform;
use transform::Plan;

/// Decides whether a tool is offered in a context: given the context of
/// the call (its session, its turn, its agent, its state) and the tool's
/// spec as the model sees it.
pub type PrepareFn = dyn Fn(&ToolContext, &ToolSpec) -> bool + Send + Sync;

/// Why a [`Toolset`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolsetError {
    /// A change named a tool the set does not have.
    #[error("the toolset has no tool named `{0}`")]
    UnknownTool(String),
    /// A change named a parameter the tool does not have (in the model's
    /// view of it, after the changes before).
    #[error("the tool `{tool}` has no parameter named `{parameter}`")]
    UnknownParameter {
        /// The tool.
        tool: String,
        /// The parameter.
        parameter: String,
    },
    /// A parameter renamed to a name another parameter has.
    #[error("the tool `{tool}` already has a parameter named `{parameter}`")]
    ParameterClash {
        /// The tool.
        tool: String,
        /// The name taken twice.
        parameter: String,
    },
    /// A required parameter hidden without a value to give it.
    #[error(
        "the tool `{tool}`'s parameter `{parameter}` is required: hide it with a value (ArgTransform::fixed)"
    )]
    HiddenWithoutValue {
        /// The tool.
        tool: String,
        /// The parameter.
        parameter: String,
    },
    /// A fixed value or default the original tool would refuse.
    #[error("the tool `{tool}`: {reason}")]
    InvalidValue {
        /// The tool.
        tool: String,
        /// What is wrong with the value.
        reason: String,
    },
    /// A tool name models do not accept (`[A-Za-z0-9_-]{1,64}`).
    #[error("`{0}` is not a valid tool name")]
    InvalidName(String),
    /// Two tools of the set would have the same name.
    #[error("two tools of the toolset are named `{0}`")]
    Duplicate(String),
}

/// One tool of a set: how it will look, and when it is offered.
#[derive(Clone)]
struct Member {
    plan: Plan,
    prepare: Vec<Arc<PrepareFn>>,
    hidden: bool,
}

/// A group of tools and what to change about them; [`build`](Self::build)
/// makes the [`Toolbox`]. See the [module](self).
///
/// Each change applies to the tools in the set when it is made, under the
/// names they have then: `prefix("fs_")` then `rename("fs_read", "open")`.
/// A change that names a tool or parameter that is not there is reported
/// by `build`.
#[derive(Clone, Default)]
pub struct Toolset {
    members: Vec<Member>,
    errors: Vec<ToolsetError>,
}

impl std::fmt::Debug for Toolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolset")
            .field("tools", &self.names())
            .field("errors", &self.errors)
            .finish()
    }
}

impl Toolset {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The linked `#[tool]` functions that `filter` selects.
    pub fn from_inventory(filter: &ToolFilter) -> Self {
        let mut set = Self::new();
        for registration in inventory::iter::<ToolRegistration> {
            let tool = (registration.make)();
            if filter.accepts(tool.spec()) {
                set = set.with_tool_arc(tool);
            }
        }
        set.members.sort_by(|a, b| a.plan.name().cmp(b.plan.name()));
        set
    }

    /// The tools registered in `registry` now, in its definition order.
    pub fn from_registry(registry: &ToolRegistry) -> Self {
        registry
            .names()
            .iter()
            .filter_map(|name| registry.get(name))
            .fold(Self::new(), Self::with_tool_arc)
    }

    /// The tools of every set, each keeping what was decided for it.
    pub fn combine(sets: impl IntoIterator<Item = Toolset>) -> Self {
        sets.into_iter().fold(Self::new(), Self::with)
    }

    /// Add the tools of `other`, each keeping what was decided for it.
    pub fn with(mut self, other: Toolset) -> Self {
        self.members.extend(other.members);
        self.errors.extend(other.errors);
        self
    }

    /// Add a tool.
    pub fn with_tool(self, tool: impl Tool) -> Self {
        self.with_tool_arc(Arc::new(tool))
    }

    /// Add a tool that is already shared.
    pub fn with_tool_arc(mut self, tool: Arc<dyn Tool>) -> Self {
        self.members.push(Member {
            plan: Plan::new(tool),
            prepare: Vec::new(),
            hidden: false,
        });
        self
    }

    /// The names of the tools as the model will see them, in order.
    pub fn names(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|m| m.plan.name().to_owned())
            .collect()
    }

    /// Put `prefix` before every tool's name (`fs_` makes `read` `fs_read`).
    pub fn prefix(mut self, prefix: &str) -> Self {
        for member in &mut self.members {
            let name = format!("{prefix}{}", member.plan.name());
            member.plan.spec.name = name.into();
        }
        self
    }

    /// Show the tool called `from` as `to`.
    pub fn rename(mut self, from: &str, to: impl Into<String>) -> Self {
        let to = to.into();
        match self.member_mut(from) {
            Some(member) => member.plan.spec.name = to.into(),
            None => self.errors.push(ToolsetError::UnknownTool(from.to_owned())),
        }
        self
    }

    /// Describe the tool called `name` in these words instead of its own.
    pub fn describe(mut self, name: &str, description: impl Into<String>) -> Self {
        let description = description.into();
        match self.member_mut(name) {
            Some(member) => member.plan.spec.description = description.into(),
            None => self.errors.push(ToolsetError::UnknownTool(name.to_owned())),
        }
        self
    }

    /// Keep only the tools whose spec (as the model would see it now)
    /// satisfies `keep`; the others leave the set.
    pub fn filter(mut self, keep: impl Fn(&ToolSpec) -> bool) -> Self {
        self.members.retain(|m| keep(&m.plan.spec));
        self
    }

    /// Hide the named tools at first: they are registered, but not offered
    /// until [`Toolbox::show`] shows them.
    pub fn hide<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for name in names {
            let name = name.as_ref();
            match self.member_mut(name) {
                Some(member) => member.hidden = true,
                None => self.errors.push(ToolsetError::UnknownTool(name.to_owned())),
            }
        }
        self
    }

    /// Offer the set's tools only in the contexts where `offer` says yes;
    /// asked per tool, with the context a call is made in. Given several
    /// times (here, or on sets combined into this one), every one must say
    /// yes.
    pub fn prepare(
        mut self,
        offer: impl Fn(&ToolContext, &ToolSpec) -> bool + Send + Sync + 'static,
    ) -> Self {
        let offer: Arc<PrepareFn> = Arc::new(offer);
        for member in &mut self.members {
            member.prepare.push(Arc::clone(&offer));
        }
        self
    }

    /// Change the parameter `param` of the tool called `tool`, as the model
    /// sees them now.
    pub fn transform_arg(mut self, tool: &str, param: &str, transform: ArgTransform) -> Self {
        let result = match self.member_mut(tool) {
            Some(member) => member.plan.transform(param, &transform),
            None => Err(ToolsetError::UnknownTool(tool.to_owned())),
        };
        if let Err(error) = result {
            self.errors.push(error);
        }
        self
    }

    /// Change the parameter `param` of every tool of the set that has one;
    /// that none has is an error.
    pub fn transform_arg_everywhere(mut self, param: &str, transform: ArgTransform) -> Self {
        let mut found = false;
        let mut errors = Vec::new();
        for member in &mut self.members {
            if member.plan.has_parameter(param) {
                found = true;
                if let Err(error) = member.plan.transform(param, &transform) {
                    errors.push(error);
                }
            }
        }
        if !found {
            errors.push(ToolsetError::UnknownParameter {
                tool: "*".into(),
                parameter: param.to_owned(),
            });
        }
        self.errors.extend(errors);
        self
    }

    fn member_mut(&mut self, name: &str) -> Option<&mut Member> {
        self.members.iter_mut().find(|m| m.plan.name() == name)
    }

    /// The tools as the model will see them, and the rules that offer them.
    pub fn build(self) -> Result<Toolbox, ToolsetError> {
        if let Some(error) = self.errors.into_iter().next() {
            return Err(error);
        }
        let mut names = HashSet::new();
        let mut members = Vec::with_capacity(self.members.len());
        let mut hidden = HashSet::new();
        for member in self.members {
            let name = member.plan.name().to_owned();
            if !names.insert(name.clone()) {
                return Err(ToolsetError::Duplicate(name));
            }
            if member.hidden {
                hidden.insert(name.clone());
            }
            members.push(Built {
                name,
                tool: member.plan.build()?,
                prepare: member.prepare,
            });
        }
        Ok(Toolbox {
            inner: Arc::new(Inner {
                members,
                hidden: RwLock::new(hidden),
            }),
        })
    }
}

struct Built {
    name: String,
    tool: Arc<dyn Tool>,
    prepare: Vec<Arc<PrepareFn>>,
}

struct Inner {
    members: Vec<Built>,
    hidden: RwLock<HashSet<String>>,
}

/// A built [`Toolset`]: its tools, and which of them a context is offered.
///
/// Cheap to clone; clones share which tools are hidden.
#[derive(Clone)]
pub struct Toolbox {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolbox")
            .field("tools", &self.names())
            .finish()
    }
}

impl Toolbox {
    /// The tools, as the model sees them.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.inner
            .members
            .iter()
            .map(|m| Arc::clone(&m.tool))
            .collect()
    }

    /// The tools' names, in the set's order.
    pub fn names(&self) -> Vec<String> {
        self.inner.members.iter().map(|m| m.name.clone()).collect()
    }

    /// Whether the box has a tool called `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.member(name).is_some()
    }

    fn member(&self, name: &str) -> Option<&Built> {
        self.inner.members.iter().find(|m| m.name == name)
    }

    /// Register every tool in `registry`; on an error (a name taken) none
    /// stays registered.
    pub fn register(&self, registry: &ToolRegistry) -> Result<(), RegistryError> {
        for (index, member) in self.inner.members.iter().enumerate() {
            if let Err(error) = registry.register_arc(Arc::clone(&member.tool)) {
                for added in &self.inner.members[..index] {
                    registry.unregister(&added.name);
                }
                return Err(error);
            }
        }
        Ok(())
    }

    /// Take every tool of the box out of `registry`.
    pub fn unregister(&self, registry: &ToolRegistry) {
        for member in &self.inner.members {
            registry.unregister(&member.name);
        }
    }

    fn hidden(&self) -> std::sync::RwLockReadGuard<'_, HashSet<String>> {
        self.inner.hidden.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Stop offering `name` in every context, until [`show`](Self::show).
    /// Returns whether the box has such a tool.
    pub fn hide(&self, name: &str) -> bool {
        let known = self.contains(name);
        if known {
            let mut hidden = self.inner.hidden.write().unwrap_or_else(|e| e.into_inner());
            hidden.insert(name.to_owned());
        }
        known
    }

    /// Offer `name` again where its rules allow. Returns whether the box
    /// has such a tool.
    pub fn show(&self, name: &str) -> bool {
        let mut hidden = self.inner.hidden.write().unwrap_or_else(|e| e.into_inner());
        hidden.remove(name);
        self.contains(name)
    }

    /// Whether `name` is hidden (see [`hide`](Self::hide)).
    pub fn is_hidden(&self, name: &str) -> bool {
        self.hidden().contains(name)
    }

    /// Whether the box has a tool called `name` and offers it in `ctx`:
    /// not hidden, and every [`prepare`](Toolset::prepare) rule says yes.
    pub fn is_offered(&self, name: &str, ctx: &ToolContext) -> bool {
        self.member(name)
            .is_some_and(|m| self.offers(m, ctx, &self.hidden()))
    }

    fn offers(&self, member: &Built, ctx: &ToolContext, hidden: &HashSet<String>) -> bool {
        !hidden.contains(&member.name)
            && member
                .prepare
                .iter()
                .all(|offer| offer(ctx, member.tool.spec()))
    }

    /// The names of the box's tools offered in `ctx`, in the set's order.
    pub fn offered(&self, ctx: &ToolContext) -> Vec<String> {
        let hidden = self.hidden();
        self.inner
            .members
            .iter()
            .filter(|m| self.offers(m, ctx, &hidden))
            .map(|m| m.name.clone())
            .collect()
    }

    /// The definitions to send a model in `ctx`: every tool of `registry`
    /// (in its definition order, as [`ToolRegistry::definitions`] renders
    /// them) except the box's tools that `ctx` is not offered.
    pub fn definitions(
        &self,
        registry: &ToolRegistry,
        ctx: &ToolContext,
        format: DefinitionFormat,
    ) -> Vec<Definition> {
        let hidden = self.hidden();
        let names = registry.names();
        let shown: Vec<&str> = names
            .iter()
            .filter(|name| match self.member(name) {
                Some(member) => self.offers(member, ctx, &hidden),
                None => true,
            })
            .map(String::as_str)
            .collect();
        registry.definitions_for(&shown, format)
    }

    /// A [`Layer`] that refuses a call of one of the box's tools that the
    /// call's context is not offered, before its arguments are read. Add it
    /// to the registry's pipeline, so a model cannot call what it was not
    /// shown.
    pub fn gate(&self) -> ToolboxGate {
        ToolboxGate {
            tools: self.clone(),
        }
    }
}

/// The [`Layer`] of [`Toolbox::gate`].
#[derive(Clone, Debug)]
pub struct ToolboxGate {
    tools: Toolbox,
}

#[async_trait::async_trait]
impl Layer for ToolboxGate {
    fn stage(&self) -> Stage {
        Stage::Received
    }

    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        let name = call.tool_name();
        if self.tools.contains(name) && !self.tools.is_offered(name, call.context()) {
            let reason = format!(
                "the tool '{name}' is not available here; call one of the tools you were given"
            );
            return Err(call.refuse(reason));
        }
        next.run(call).await
    }
}
