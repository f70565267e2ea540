//! [`ToolRegistry`]: the tools an agent may call, and the path of one call.
//!
//! A call goes: payload -> lookup -> lenient cast -> validate -> bind -> run.
//! Everything a step needs from a tool's schema is prepared when the tool is
//! registered, so the call path does no schema work.

use std::collections::HashMap;
use std::collections::HashSet;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use serde_json::Value;

use crate::args::{ArgumentSchema, Cast, discard, is_plain_arguments, read_payload};
use crate::context::ToolContext;
use crate::discovery::{ToolFilter, ToolRegistration};
use crate::error::{
    ArgumentError, CallError, InvalidArguments, RegistryError, ToolError, UnknownTool,
};
use crate::filed_name::{FiledName, Name};
use crate::output::ToolOutput;
use crate::panics;
use crate::pipeline::Pipeline;
use crate::schema::{Definition, DefinitionCache, DefinitionFormat, sanitize_tool_name};
use crate::suggest::did_you_mean;
use crate::tool::{Arguments, Tool, ToolSpec};

/// Tool names are short and chosen by the host, not by an attacker who could
/// aim for collisions, so a fast non-keyed hash serves the lookup on every call.
type NameHasher = rustc_hash::FxBuildHasher;

/// The tools of a catalog, by name.
type Entries = HashMap<FiledName, Arc<Entry>, NameHasher>;

/// Names of tools mounted from MCP servers start with this; they sort after the rest.
const MCP_PREFIX: &str = "mcp_";

/// The tools an agent may call.
///
/// Tools come from `#[tool]` functions linked into the program (chosen with a
/// [`ToolFilter`]) and from [`register`](Self::register) at run time. The
/// registry can be shared between tasks (`Arc<ToolRegistry>`); adding or
/// removing tools takes `&self`.
///
/// ```
/// use toolsmith::{ToolContext, ToolRegistry, tool};
/// use serde_json::json;
///
/// /// Add two numbers.
/// #[tool]
/// async fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let registry = ToolRegistry::new();
/// registry.register(AddTool).unwrap();
/// let out = registry.call("add", json!({"a": 2, "b": "40"}), &ToolContext::new()).await;
/// assert_eq!(out.content, "42");
/// # }
/// ```
#[derive(Default)]
pub struct ToolRegistry {
    /// Read on every call; replaced whole on every change. A read lock held
    /// for one lookup costs a call less than a lock-free snapshot (about 20
    /// instructions against arc-swap's 90), and only a change to the set of
    /// tools ever waits behind it.
    catalog: RwLock<Arc<Catalog>>,
    /// Serializes changes, so two registrations cannot lose each other's tools.
    writer: Mutex<()>,
    /// Counts the changes to the set of tools.
    generation: AtomicU64,
    /// Wakes those waiting in [`changed`](Self::changed).
    changes: tokio::sync::Notify,
    /// What [`call`](Self::call) runs every call through.
    pipeline: Pipeline,
}

/// An immutable set of tools plus its cached definitions; replaced on every change.
#[derive(Default)]
struct Catalog {
    entries: Entries,
    /// Tool names in definition order: the rest alphabetically, then `mcp_` tools.
    order: Vec<String>,
    /// The names some providers are shown instead of a tool's own (see
    /// [`shown_name`]), each with the tool's name: few, most names show as
    /// they are.
    renamed: HashMap<String, String, NameHasher>,
    /// The lists of definitions by (format, compact), assembled on first
    /// use from each tool's rendering.
    definitions: Mutex<HashMap<DefinitionKey, Arc<[Definition]>>>,
}

/// A set of tools just replaced, to drop after the writer lock is
/// released: it may hold the last reference to a removed tool, whose own
/// drop code may use the registry (register another tool, say) and would
/// wait for ever on a lock its own thread holds. So every change declares
/// what it lets go of (this, the tools it prepared, a snapshot) before it
/// takes the lock, and Rust drops those after the lock, on every path.
type ReplacedSet = Arc<Catalog>;

/// A definitions cache key: the format, and whether descriptions are compact.
type DefinitionKey = (DefinitionFormat, bool);

impl Catalog {
    fn with_entries(entries: Entries) -> Self {
        let mut order: Vec<String> = entries
            .keys()
            .map(|name| name.as_str().to_owned())
            .collect();
        order.sort_by(|a, b| {
            (a.starts_with(MCP_PREFIX), a.as_str()).cmp(&(b.starts_with(MCP_PREFIX), b.as_str()))
        });
        let renamed = renamed_index(&entries);
        Self {
            entries,
            order,
            renamed,
            definitions: Default::default(),
        }
    }
}

/// A registered tool with its schema compiled for casting and validation.
pub(crate) struct Entry {
    /// Dropped inside panic containment (see the `Drop` impl).
    pub(crate) tool: std::mem::ManuallyDrop<Arc<dyn Tool>>,
    /// The tool's name, read once when it was registered: the registry
    /// files it, checks it and names it in errors by this, never asking
    /// the tool again (a `spec()` is the tool's own code, and may answer
    /// differently or panic).
    pub(crate) name: String,
    schema: ArgumentSchema,
    /// Whether the tool has a parameter named `arguments`, so a wrapped
    /// payload must not be unwrapped.
    takes_arguments: bool,
    origin: String,
    /// The tool's renderings, for a tool that keeps none of its own (see
    /// [`Tool::definition_cache`]); kept with the entry, so they outlive a
    /// change to the rest of the set, and pass to the tool's successor when
    /// a [`replace`](ToolRegistry::replace) lists it again unchanged.
    definitions: Arc<DefinitionCache>,
    /// The spec's own timeout, read once like the schema: each call takes
    /// it from here instead of asking the tool for its spec.
    pub(crate) timeout: Option<std::time::Duration>,
}

impl Entry {
    /// The tool's definition in `format`, rendered once: by the tool's own
    /// cache if it has one, else by the entry's.
    fn definition(&self, format: DefinitionFormat, compact: bool) -> Definition {
        let cache = self.tool.definition_cache().unwrap_or(&self.definitions);
        cache.definition(self.tool.spec(), format, compact)
    }
}

impl Drop for Entry {
    /// The last reference to a tool may be this entry's: dropped as a call
    /// ends, or when the set of tools changes. A tool whose own drop code
    /// panics (one that owns a tokio runtime does, on an async thread) must
    /// not unwind into the host there.
    fn drop(&mut self) {
        // SAFETY: `tool` is taken once, here, and never used again.
        let tool = unsafe { std::mem::ManuallyDrop::take(&mut self.tool) };
        panics::contain(move || drop(tool));
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("tool", &self.name)
            .field("origin", &self.origin)
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry, whose calls take the default [`Pipeline`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Run [`call`](Self::call) and [`try_call`](Self::try_call) through
    /// `pipeline` (its timeout, shaping and layers) instead of the default.
    pub fn with_pipeline(mut self, pipeline: Pipeline) -> Self {
        self.pipeline = pipeline;
        self
    }

    /// The pipeline [`call`](Self::call) runs calls through; the runner and
    /// the MCP server start from it too.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// A registry holding the linked `#[tool]` functions that `filter` selects.
    ///
    /// See [`ToolFilter`]: by default high-risk tools (shell, hardware,
    /// destructive) are left out unless named.
    pub fn from_inventory(filter: &ToolFilter) -> Result<Self, RegistryError> {
        let registry = Self::new();
        registry.register_inventory(filter)?;
        Ok(registry)
    }

    /// Add the linked `#[tool]` functions that `filter` selects. Adds nothing on error.
    pub fn register_inventory(&self, filter: &ToolFilter) -> Result<usize, RegistryError> {
        let mut added = Vec::new();
        for registration in inventory::iter::<ToolRegistration> {
            let tool = (registration.make)();
            if filter.accepts(tool.spec()) {
                added.push((tool, format!("#[tool] in {}", registration.module_path)));
            }
        }
        let count = added.len();
        self.insert_all(added)?;
        Ok(count)
    }

    /// Add one tool.
    pub fn register(&self, tool: impl Tool) -> Result<(), RegistryError> {
        self.register_arc(Arc::new(tool))
    }

    /// Add one tool that is already shared.
    pub fn register_arc(&self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        self.insert_all(vec![(tool, "run-time registration".to_owned())])
    }

    /// Remove a tool by name; returns it if it was there.
    pub fn unregister(&self, name: &str) -> Option<Arc<dyn Tool>> {
        // Declared before the lock, so dropped after it (see `ReplacedSet`).
        let _replaced;
        let removed;
        let _writing = self.write_lock();
        let mut entries = self.snapshot().entries.clone();
        removed = entries.remove(Name::of(name))?;
        _replaced = self.publish(entries);
        Some(Arc::clone(&removed.tool))
    }

    /// Replace every tool whose name satisfies `owned` with `tools`, in one step.
    ///
    /// This is how a source of tools (an MCP server announcing a changed list)
    /// refreshes its share of the registry without a moment where callers see
    /// neither the old nor the new set.
    ///
    /// `owned` runs while the registry holds the lock that orders changes:
    /// it must not change the registry itself (that would wait for ever).
    /// A removed tool is dropped after the lock, so a tool's own drop code
    /// may change the registry.
    pub fn replace(
        &self,
        owned: impl Fn(&str) -> bool,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Result<(), RegistryError> {
        let mut prepared = tools
            .into_iter()
            .map(|tool| prepare_entry(tool, "run-time registration".to_owned()))
            .collect::<Result<Vec<_>, _>>()?;
        // By the names filed, which are the names put in.
        if let Some(stranger) = prepared.iter().find(|entry| !owned(&entry.name)) {
            return Err(RegistryError::NotInGroup(stranger.name.clone()));
        }
        // The tools' specs are their own code: compared before the lock,
        // with the set as it is now.
        let seen = self.snapshot();
        keep_renderings(&seen, &mut prepared);
        // The same tools again (a refresh that found nothing new) are put in,
        // but announced to no one: two hosts mounting each other would
        // otherwise tell each other of changes forever.
        let mut before: Vec<&ToolSpec> = seen
            .entries
            .iter()
            .filter(|(name, _)| owned(name.as_str()))
            .map(|(_, entry)| entry.tool.spec())
            .collect();
        let mut after: Vec<&ToolSpec> = prepared.iter().map(|entry| entry.tool.spec()).collect();
        before.sort_by(|a, b| a.name.cmp(&b.name));
        after.sort_by(|a, b| a.name.cmp(&b.name));
        let mut changed = before != after;
        // Declared before the lock, so dropped after it (see `ReplacedSet`).
        let current;
        let _replaced;
        let _writing = self.write_lock();
        current = self.snapshot();
        // Another change came in between: announced, whatever the specs say.
        changed |= !Arc::ptr_eq(&current, &seen);
        let mut entries: Entries = current
            .entries
            .iter()
            .filter(|(name, _)| !owned(name.as_str()))
            .map(|(name, entry)| (name.clone(), Arc::clone(entry)))
            .collect();
        check_names(&entries, &prepared)?;
        insert(&mut entries, prepared);
        _replaced = self.store(entries);
        if changed {
            self.announce();
        }
        Ok(())
    }

    fn insert_all(&self, tools: Vec<(Arc<dyn Tool>, String)>) -> Result<(), RegistryError> {
        // Declared before the lock, so dropped after it (see `ReplacedSet`):
        // the tools prepared, should they be refused, and the replaced set.
        let prepared = tools
            .into_iter()
            .map(|(tool, origin)| prepare_entry(tool, origin))
            .collect::<Result<Vec<_>, _>>()?;
        let _replaced;
        let _writing = self.write_lock();
        let mut entries = self.snapshot().entries.clone();
        check_names(&entries, &prepared)?;
        insert(&mut entries, prepared);
        _replaced = self.publish(entries);
        Ok(())
    }

    /// Make `entries` the set of tools, and tell whoever waits for a change.
    /// Returns the set replaced, as [`store`](Self::store) does.
    fn publish(&self, entries: Entries) -> ReplacedSet {
        let replaced = self.store(entries);
        self.announce();
        replaced
    }

    /// Make `entries` the set of tools. The set replaced is returned, for
    /// the caller to drop once its writer lock is released (see
    /// [`ReplacedSet`]); the catalog's own lock is released already.
    #[must_use]
    fn store(&self, entries: Entries) -> ReplacedSet {
        let catalog = Arc::new(Catalog::with_entries(entries));
        std::mem::replace(&mut *self.write_catalog(), catalog)
    }

    /// Wake whoever waits in [`changed`](Self::changed).
    fn announce(&self) {
        self.generation.fetch_add(1, Ordering::Release);
        self.changes.notify_waiters();
    }

    /// A number that changes whenever the set of tools does (a
    /// registration, a removal, a [`replace`](Self::replace) that changed
    /// something): pass it to
    /// [`changed`](Self::changed) to wait for the next change.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Wait until the set of tools is no longer the one `generation` (from
    /// [`generation`](Self::generation)) was read from. This is how a server
    /// of the registry learns to tell its clients their tool list changed.
    ///
    /// ```
    /// use toolsmith::{ToolRegistry, tool};
    ///
    /// /// Say hello.
    /// #[tool]
    /// async fn hello() -> &'static str {
    ///     "hello"
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let registry = std::sync::Arc::new(ToolRegistry::new());
    /// let seen = registry.generation();
    /// let watcher = tokio::spawn({
    ///     let registry = registry.clone();
    ///     async move { registry.changed(seen).await }
    /// });
    /// registry.register(HelloTool).unwrap();
    /// watcher.await.unwrap();
    /// assert_ne!(registry.generation(), seen);
    /// # }
    /// ```
    pub async fn changed(&self, generation: u64) {
        loop {
            // Registered before the check, so a change in between still wakes it.
            let notified = self.changes.notified();
            if self.generation() != generation {
                return;
            }
            notified.await;
        }
    }

    fn snapshot(&self) -> Arc<Catalog> {
        Arc::clone(&self.read_catalog())
    }

    /// The current set of tools, for a look that takes no reference to it.
    /// Nothing that runs under the lock can panic, so a poisoned lock
    /// still holds a whole catalog.
    #[inline]
    fn read_catalog(&self) -> std::sync::RwLockReadGuard<'_, Arc<Catalog>> {
        self.catalog.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_catalog(&self) -> std::sync::RwLockWriteGuard<'_, Arc<Catalog>> {
        self.catalog.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_lock(&self) -> MutexGuard<'_, ()> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tool registered under `name`.
    ///
    /// Like a call, this also accepts the name a provider was shown, if its
    /// rules changed it (see [`DefinitionFormat::Gemini`]): the tool's own
    /// name is then `tool.spec().name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        find(&self.read_catalog(), name).map(|entry| Arc::clone(&entry.tool))
    }

    /// Whether a tool with this name is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.snapshot().entries.contains_key(Name::of(name))
    }

    /// The registered names in definition order.
    pub fn names(&self) -> Vec<String> {
        self.snapshot().order.clone()
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.snapshot().entries.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The specs of every tool, in definition order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let catalog = self.snapshot();
        catalog
            .order
            .iter()
            .map(|name| catalog.entries[Name::of(name)].tool.spec().clone())
            .collect()
    }

    /// Every tool's definition in `format`, sorted: the rest alphabetically, then
    /// `mcp_` tools. The list is kept until the set of tools changes, so the
    /// bytes sent to a model stay identical between turns.
    ///
    /// Each tool's definition is rendered once per format and shared (see
    /// [`Definition`]): by every list of this registry, and for a `#[tool]`
    /// by every registry of the program, so a new list costs a pointer per
    /// tool. Serialized, the list is the JSON array of the definitions.
    pub fn definitions(&self, format: DefinitionFormat) -> Arc<[Definition]> {
        Self::definitions_of(&self.snapshot(), format, false)
    }

    /// Like [`definitions`](Self::definitions), with each description cut to its
    /// first sentence to save tokens.
    pub fn definitions_compact(&self, format: DefinitionFormat) -> Arc<[Definition]> {
        Self::definitions_of(&self.snapshot(), format, true)
    }

    /// The definitions of the named tools only, in definition order; unknown names are skipped.
    pub fn definitions_for(&self, names: &[&str], format: DefinitionFormat) -> Vec<Definition> {
        let wanted: HashSet<&str> = names.iter().copied().collect();
        let catalog = self.snapshot();
        let all = Self::definitions_of(&catalog, format, false);
        catalog
            .order
            .iter()
            .zip(all.iter())
            .filter(|(name, _)| wanted.contains(name.as_str()))
            .map(|(_, def)| def.clone())
            .collect()
    }

    fn definitions_of(
        catalog: &Catalog,
        format: DefinitionFormat,
        compact: bool,
    ) -> Arc<[Definition]> {
        let cache = || {
            catalog
                .definitions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
        };
        if let Some(listed) = cache().get(&(format, compact)) {
            return Arc::clone(listed);
        }
        // Rendered without the lock: the tools' own code runs here (a spec,
        // a rendering), and may ask for these very definitions. Should two
        // render at once, the first one kept is what both return.
        let rendered: Arc<[Definition]> = catalog
            .order
            .iter()
            .map(|name| catalog.entries[Name::of(name)].definition(format, compact))
            .collect();
        Arc::clone(cache().entry((format, compact)).or_insert(rendered))
    }

    /// The tools as they are now, as one consistent view: their order,
    /// specs and cached definitions come from the same set of tools.
    pub(crate) fn view(&self) -> CatalogView {
        CatalogView(self.snapshot())
    }

    /// Steps 1 to 5 of a call: read the payload, find the tool, cast, validate
    /// and bind. Returns the call ready to run, or a precise error.
    pub fn prepare(&self, name: &str, payload: Value) -> Result<PreparedCall, CallError> {
        self.check(name, payload)?.bind()
    }

    /// Steps 1 to 4: find the tool, read the payload, cast and validate. The
    /// checked arguments can be inspected (by an approver, a log) before
    /// [`CheckedCall::bind`] turns them into the tool's own type.
    pub fn check(&self, name: &str, payload: Value) -> Result<CheckedCall, CallError> {
        let entry = match self.lookup(name) {
            Ok(entry) => entry,
            Err(error) => {
                discard(payload);
                return Err(error);
            }
        };
        let (args, casts) = check_call(&entry, payload)?;
        Ok(CheckedCall { entry, args, casts })
    }

    /// Run a call through the registry's [`Pipeline`] and return what the
    /// model reads: the output, or an error whose text says what to do next.
    ///
    /// The call's id, for the span and the shaping, is the context's
    /// [`call_id`](ToolContext::call_id).
    // The pipeline's future itself, not one more around it.
    pub fn call<'a>(
        &'a self,
        name: &'a str,
        payload: Value,
        ctx: &'a ToolContext,
    ) -> impl Future<Output = ToolOutput> + Send + 'a {
        self.pipeline.call(self, name, payload, ctx)
    }

    /// Run a call through the registry's [`Pipeline`]; failures come back
    /// as typed errors for the host, and outputs are not shaped.
    pub async fn try_call(
        &self,
        name: &str,
        payload: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, CallError> {
        self.pipeline.try_call(self, name, payload, ctx).await
    }

    fn lookup(&self, name: &str) -> Result<Arc<Entry>, CallError> {
        self.entry(name).ok_or_else(|| self.unknown_tool(name))
    }

    /// The tool called `name` (or by its provider-safe alias), ready to check calls.
    #[inline]
    pub(crate) fn entry(&self, name: &str) -> Option<Arc<Entry>> {
        // Under the read lock: no reference count for the catalog.
        find(&self.read_catalog(), name).map(Arc::clone)
    }

    /// The error for a call of `name`, which no tool has: the names there
    /// are, and the one the model most likely meant.
    pub(crate) fn unknown_tool(&self, name: &str) -> CallError {
        let catalog = self.snapshot();
        let suggestion = did_you_mean(name, catalog.order.iter().map(String::as_str));
        CallError::UnknownTool(UnknownTool {
            name: name.to_owned(),
            suggestion: suggestion.map(str::to_owned),
            available: catalog.order.clone(),
        })
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .finish()
    }
}

/// One set of a registry's tools, unchanged by later registrations, for
/// what renders a turn's definitions from it ([`crate::DeferredTools`]).
#[derive(Clone)]
pub(crate) struct CatalogView(Arc<Catalog>);

impl CatalogView {
    /// The names in definition order.
    pub(crate) fn order(&self) -> &[String] {
        &self.0.order
    }

    /// The spec of the tool called `name`.
    pub(crate) fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.0
            .entries
            .get(Name::of(name))
            .map(|entry| entry.tool.spec())
    }

    /// Every definition in `format`, in definition order (cached).
    pub(crate) fn definitions(&self, format: DefinitionFormat) -> Arc<[Definition]> {
        ToolRegistry::definitions_of(&self.0, format, false)
    }

    /// Whether both views are of the same set of tools, unchanged.
    pub(crate) fn same(&self, other: &CatalogView) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Why a registry would refuse `tool` (its name, its input schema, its
/// examples), checked without registering it: a set of tools from
/// elsewhere can leave out the ones no registry takes and keep the rest.
#[cfg(feature = "mcp")]
pub(crate) fn refusal(tool: &Arc<dyn Tool>) -> Option<RegistryError> {
    prepare_entry(Arc::clone(tool), String::new()).err()
}

fn prepare_entry(tool: Arc<dyn Tool>, origin: String) -> Result<Entry, RegistryError> {
    let spec = tool.spec();
    if !is_valid_tool_name(&spec.name) {
        return Err(RegistryError::InvalidName(spec.name.to_string()));
    }
    if let Some(problem) = root_problem(&spec.input_schema) {
        return Err(RegistryError::InvalidSchema {
            tool: spec.name.to_string(),
            reason: problem,
        });
    }
    let schema = tool
        .argument_schema()
        .map_err(|e| RegistryError::InvalidSchema {
            tool: spec.name.to_string(),
            reason: e.to_string(),
        })?;
    // An example is shown to the model as a call to copy, so it must be
    // one the registry would run as it is.
    for (index, example) in spec.input_examples.iter().enumerate() {
        if schema.accepts(example) {
            continue;
        }
        if let Err(errors) = schema.validate(example) {
            let reasons: Vec<String> = errors.iter().map(ToString::to_string).collect();
            return Err(RegistryError::InvalidExample {
                tool: spec.name.to_string(),
                index,
                reason: reasons.join("; "),
            });
        }
    }
    Ok(Entry {
        timeout: spec.timeout,
        takes_arguments: schema.has_parameter("arguments"),
        name: spec.name.to_string(),
        schema,
        tool: std::mem::ManuallyDrop::new(tool),
        origin,
        definitions: Arc::default(),
    })
}

/// Give each tool listed again with the spec it had its predecessor's
/// renderings: the bytes sent stay the ones sent before (an equal spec can
/// still render other bytes, its keys in another order), and nothing is
/// rendered again.
fn keep_renderings(current: &Catalog, prepared: &mut [Entry]) {
    for entry in prepared {
        if let Some(old) = current.entries.get(Name::of(&entry.name))
            && old.tool.spec() == entry.tool.spec()
        {
            entry.definitions = Arc::clone(&old.definitions);
        }
    }
}

/// Why an input schema cannot be a tool's: every provider sends the
/// arguments as one JSON object, so the root must describe an object.
/// Refused here, once, rather than failing every call.
fn root_problem(schema: &Value) -> Option<String> {
    let Value::Object(root) = schema else {
        return Some(format!(
            "the root must be a JSON Schema object with \"type\": \"object\", not `{schema}`"
        ));
    };
    match root.get("type") {
        Some(Value::String(t)) if t == "object" => None,
        Some(other) => Some(format!(
            "the root's \"type\" must be \"object\" (the arguments are one JSON object), not {other}"
        )),
        None => Some(
            "the root must say \"type\": \"object\" (the arguments are one JSON object)".into(),
        ),
    }
}

/// The tool called `name`, or the one shown to a provider under `name`.
#[inline]
fn find<'c>(catalog: &'c Catalog, name: &str) -> Option<&'c Arc<Entry>> {
    catalog.entries.get(Name::of(name)).or_else(|| {
        // Of the providers' naming rules, only Gemini's (a letter or `_`
        // first) can change a valid registry name: `3d_render` went out as
        // `_3d_render`. Registration keeps those shown names unique.
        catalog
            .renamed
            .get(name)
            .and_then(|own| catalog.entries.get(Name::of(own)))
    })
}

/// The name a provider with the strictest rules is shown.
fn shown_name(name: &str) -> std::borrow::Cow<'_, str> {
    sanitize_tool_name(name, DefinitionFormat::Gemini)
}

/// The names some providers are shown instead of a tool's own, each with
/// the tool's name. Most names show as they are, so this stays small.
fn renamed_index(entries: &Entries) -> HashMap<String, String, NameHasher> {
    entries
        .keys()
        .filter_map(|name| {
            let name = name.as_str();
            let shown = shown_name(name);
            (shown != name).then(|| (shown.into_owned(), name.to_owned()))
        })
        .collect()
}

/// Whether `prepared` can join `entries`: no name, and no name some
/// provider is shown, taken twice.
fn check_names(entries: &Entries, prepared: &[Entry]) -> Result<(), RegistryError> {
    // Checked before anything is put in, so a refusal leaves every prepared
    // tool with the caller, to drop after its lock (see `ReplacedSet`).
    // The names the tools checked so far take, with their origins.
    let mut added: HashMap<String, &str, NameHasher> = HashMap::default();
    let origin = |name: &str, added: &HashMap<String, &str, NameHasher>| -> Option<String> {
        entries
            .get(Name::of(name))
            .map(|existing| existing.origin.clone())
            .or_else(|| added.get(name).map(|origin| (*origin).to_owned()))
    };
    // Two tools must differ in the name the strictest provider is shown too.
    let mut renamed = renamed_index(entries);
    for entry in prepared {
        let name = entry.name.clone();
        let shown = shown_name(&name).into_owned();
        // The tool already shown as `shown`: one of that name shown as it is
        // (a shown name is always shown as itself), or one renamed to it.
        let other = if entries.contains_key(Name::of(&shown)) || added.contains_key(&shown) {
            Some(shown.clone())
        } else {
            renamed.get(&shown).cloned()
        };
        let clash = match other {
            Some(other) => origin(&other, &added).map(|existing| (other, existing)),
            None => origin(&name, &added).map(|existing| (name.clone(), existing)),
        };
        if let Some((other, existing)) = clash {
            let existing = if other == name {
                existing
            } else {
                format!("'{other}', which some providers are shown as '{shown}', {existing}")
            };
            return Err(RegistryError::Duplicate {
                name,
                existing,
                added: entry.origin.clone(),
            });
        }
        if shown != name {
            renamed.insert(shown, name.clone());
        }
        added.insert(name, &entry.origin);
    }
    Ok(())
}

/// Put `prepared`, whose names [`check_names`] passed, into `entries`.
fn insert(entries: &mut Entries, prepared: Vec<Entry>) {
    for entry in prepared {
        entries.insert(FiledName::new(entry.name.clone()), Arc::new(entry));
    }
}

/// Tool names models accept everywhere: `[A-Za-z0-9_-]{1,64}`.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Steps 1, 3 and 4: the payload as checked arguments, and the casts applied.
pub(crate) fn check_call(entry: &Entry, payload: Value) -> Result<(Value, Vec<Cast>), CallError> {
    let mut args = payload;
    let casts = check_in_place(entry, &mut args)?;
    Ok((args, casts))
}

/// [`check_call`] on arguments where they lie: the payload becomes the
/// checked arguments, and the casts applied are returned.
///
/// Inlined into the call path: most payloads are plain arguments that
/// check at once, and the rest is out of line.
#[inline]
pub(crate) fn check_in_place(entry: &Entry, args: &mut Value) -> Result<Vec<Cast>, CallError> {
    if !is_plain_arguments(args, entry.takes_arguments) {
        return check_read_payload(entry, args);
    }
    match entry.schema.check(args) {
        Ok(casts) => Ok(casts),
        Err(errors) => Err(refuse(entry, args, errors)),
    }
}

/// [`check_in_place`] for a caller that has no use for the casts: they are
/// applied alike, and not written out.
#[inline]
pub(crate) fn check_in_place_unlogged(entry: &Entry, args: &mut Value) -> Result<(), CallError> {
    if !is_plain_arguments(args, entry.takes_arguments) {
        return check_read_payload(entry, args).map(drop);
    }
    entry
        .schema
        .check_unlogged(args)
        .map_err(|errors| refuse(entry, args, errors))
}

/// [`check_in_place`] for a payload that is not plain arguments: read (and
/// repaired) first; the repairs come before the casts, as they were made first.
#[inline(never)]
fn check_read_payload(entry: &Entry, args: &mut Value) -> Result<Vec<Cast>, CallError> {
    let (read, mut repairs) =
        read_payload(std::mem::take(args), entry.takes_arguments).map_err(|error| {
            CallError::InvalidPayload {
                tool: entry.name.clone(),
                error,
            }
        })?;
    *args = read;
    match entry.schema.check(args) {
        Ok(casts) => {
            repairs.extend(casts);
            Ok(repairs)
        }
        Err(errors) => Err(refuse(entry, args, errors)),
    }
}

/// The refusal of arguments the schema does not accept.
#[cold]
#[inline(never)]
fn refuse(entry: &Entry, args: &mut Value, errors: Vec<ArgumentError>) -> CallError {
    // Refused arguments may nest too deep for a recursive drop.
    discard(std::mem::take(args));
    CallError::InvalidArguments(InvalidArguments {
        tool: entry.name.clone(),
        errors,
    })
}

/// A call that passed steps 1 to 4: its arguments are valid JSON for the
/// tool's schema, with lenient casts applied.
#[derive(Debug)]
pub struct CheckedCall {
    entry: Arc<Entry>,
    args: Value,
    casts: Vec<Cast>,
}

impl CheckedCall {
    /// The tool's spec.
    pub fn spec(&self) -> &ToolSpec {
        self.entry.tool.spec()
    }

    /// The arguments as the tool will receive them, after casting.
    pub fn arguments(&self) -> &Value {
        &self.args
    }

    /// The lenient conversions applied to the arguments.
    pub fn casts(&self) -> &[Cast] {
        &self.casts
    }

    /// Step 5: turn the arguments into the tool's own type. A panic while
    /// they are read (a type's `Deserialize` may panic) is the tool's
    /// failure, [`ToolError::Panicked`], as one while it runs is.
    pub fn bind(self) -> Result<PreparedCall, CallError> {
        let Self { entry, args, casts } = self;
        let tool = &entry.tool;
        let bound = match std::panic::catch_unwind(AssertUnwindSafe(|| tool.bind(args))) {
            Ok(bound) => bound,
            Err(panic) => {
                let error = ToolError::Panicked(panics::message(panic));
                return Err(CallError::tool_failed(&entry.name, error));
            }
        };
        let bound = bound.map_err(|error| {
            CallError::InvalidArguments(InvalidArguments {
                tool: entry.name.clone(),
                errors: vec![error],
            })
        })?;
        Ok(PreparedCall {
            entry,
            args: bound,
            casts,
        })
    }
}

/// Run a tool's future so that a panic in it is an error for this call,
/// never a crash of the agent that made it.
async fn contain_panic(
    call: impl std::future::Future<Output = Result<ToolOutput, ToolError>>,
) -> Result<ToolOutput, ToolError> {
    use futures_util::FutureExt;
    match std::panic::AssertUnwindSafe(call).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => Err(ToolError::Panicked(panics::message(panic))),
    }
}

/// A call that passed steps 1 to 5 and is ready to run.
pub struct PreparedCall {
    entry: Arc<Entry>,
    args: Arguments,
    casts: Vec<Cast>,
}

impl PreparedCall {
    /// The tool that will run.
    pub fn tool(&self) -> &Arc<dyn Tool> {
        &self.entry.tool
    }

    /// The tool's spec.
    pub fn spec(&self) -> &ToolSpec {
        self.entry.tool.spec()
    }

    /// The lenient conversions applied to the arguments.
    pub fn casts(&self) -> &[Cast] {
        &self.casts
    }

    /// Run the tool. A panic inside it becomes [`ToolError::Panicked`].
    pub async fn run(self, ctx: &ToolContext) -> Result<ToolOutput, CallError> {
        let tool: &dyn Tool = &**self.entry.tool;
        contain_panic(crate::pipeline::start_contained(tool, self.args, ctx))
            .await
            .map_err(|error| CallError::tool_failed(&self.entry.name, error))
    }
}

impl std::fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCall")
            .field("tool", &self.spec().name)
            .field("args", &self.args)
            .field("casts", &self.casts)
            .finish()
    }
}
