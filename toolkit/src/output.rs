//! [`ToolOutput`]: what a call gives back, for the model and for the user.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The result of one tool call.
///
/// It speaks to two audiences: [`content`](Self::content) is what the model
/// reads; [`display`](Self::display) is an optional rendering for the person
/// watching (a diff, a summary). [`metadata`](Self::metadata) is for the host
/// program only and never reaches the model.
///
/// ```
/// use toolsmith::ToolOutput;
///
/// let out = ToolOutput::text("3 files changed").with_display("✔ wrote 3 files");
/// assert_eq!(out.content, "3 files changed");
/// assert!(!out.is_error);
///
/// let failed: ToolOutput = Err::<String, _>("disk full").into();
/// assert!(failed.is_error);
/// assert_eq!(failed.content, "disk full");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolOutput {
    /// Text for the model.
    pub content: String,
    /// Text for the user, when it should differ from what the model reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<String>,
    /// A structured result (MCP `structuredContent`). Boxed: most results
    /// have none, and an output is moved several times on its way out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Box<Value>>,
    /// Images for models that can see them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// Other content beside the text: audio clips and embedded resources
    /// (what MCP results carry besides text and images).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// Whether this result reports a failure.
    #[serde(default)]
    pub is_error: bool,
    /// The tool only started the work: this result says so, and the real
    /// one comes later through [`LateResults`](crate::LateResults).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_async: bool,
    /// Facts for the host program (timings, casts, file references); never sent to the model.
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    pub metadata: Metadata,
}

/// Facts about a result for the host program, by key.
///
/// A JSON object that costs nothing until the first entry is added: most
/// results carry no metadata until a runner adds some, and an output is
/// moved several times on the way from a tool to the model.
///
/// Entries are read and written by name as JSON, or through a [`MetaKey`],
/// which names the type of its value; the keys this crate writes are in
/// [`exec::shape::meta`](crate::exec::shape::meta).
///
/// ```
/// use toolsmith::ToolOutput;
/// use serde_json::json;
///
/// let mut out = ToolOutput::text("done");
/// assert!(out.metadata.is_empty());
/// out.metadata.insert("elapsed_ms", 12);
/// assert_eq!(out.metadata["elapsed_ms"], json!(12));
/// assert_eq!(out.metadata["missing"], json!(null));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Metadata(Option<Box<Map<String, Value>>>);

impl Metadata {
    /// The value under `key`, as its type; `None` when it is absent or
    /// holds something that does not deserialize as one.
    pub fn read<T: DeserializeOwned>(&self, key: &MetaKey<T>) -> Option<T> {
        T::deserialize(self.get(key.name)?).ok()
    }

    /// Set `key` to `value`, serialized. A value without a JSON form (a map
    /// whose keys are not strings) leaves the entry as it was.
    pub fn write<T: Serialize>(&mut self, key: &MetaKey<T>, value: &T) {
        if let Ok(value) = serde_json::to_value(value) {
            self.insert(key.name, value);
        }
    }

    /// Set `key`, returning the value it replaced.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) -> Option<Value> {
        self.0
            .get_or_insert_with(Default::default)
            .insert(key.into(), value.into())
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.as_ref()?.get(key)
    }

    /// Remove `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.0.as_mut()?.remove(key)
    }

    /// Whether `key` is set.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |map| map.len())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0.iter().flat_map(|map| map.iter())
    }

    /// All entries as one JSON object.
    pub fn to_json(&self) -> Value {
        Value::Object(self.0.as_deref().cloned().unwrap_or_default())
    }
}

impl std::ops::Index<&str> for Metadata {
    type Output = Value;

    /// The value under `key`, or `null` when there is none (as `Value` indexing does).
    fn index(&self, key: &str) -> &Value {
        static NULL: Value = Value::Null;
        self.get(key).unwrap_or(&NULL)
    }
}

/// A [`Metadata`] key and the type of its value, for
/// [`Metadata::read`] and [`Metadata::write`].
///
/// ```
/// use toolsmith::{MetaKey, ToolOutput};
///
/// const ELAPSED_MS: MetaKey<u64> = MetaKey::new("elapsed_ms");
///
/// let mut out = ToolOutput::text("done");
/// out.metadata.write(&ELAPSED_MS, &12);
/// assert_eq!(out.metadata.read(&ELAPSED_MS), Some(12));
/// assert_eq!(out.metadata[ELAPSED_MS.name()], 12);
/// ```
pub struct MetaKey<T> {
    name: &'static str,
    value: PhantomData<fn() -> T>,
}

impl<T> MetaKey<T> {
    /// The key `name`, whose value is a `T`.
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            value: PhantomData,
        }
    }

    /// The entry's name in the metadata.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

// By hand: derived, they would require `T` to be `Clone`, `Copy` or `Debug`.
impl<T> Clone for MetaKey<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for MetaKey<T> {}

impl<T> fmt::Debug for MetaKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MetaKey({:?})", self.name)
    }
}

/// An image in a tool result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// Base64-encoded bytes.
    pub data: String,
    /// The media type, such as `image/png`.
    pub mime_type: String,
}

/// Content of a result other than its text and images.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Attachment {
    /// An audio clip.
    Audio {
        /// Base64-encoded bytes.
        data: String,
        /// The media type, such as `audio/wav`.
        mime_type: String,
    },
    /// A resource embedded in the result: text, or base64 bytes in `blob`.
    Resource {
        /// The resource's URI.
        uri: String,
        /// Its media type, when known.
        mime_type: Option<String>,
        /// Its text, for a text resource.
        text: Option<String>,
        /// Its base64-encoded bytes, for a binary resource.
        blob: Option<String>,
    },
}

impl ToolOutput {
    /// A successful result with text for the model.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            ..Self::default()
        }
    }

    /// A result that says the work has started and its outcome will be
    /// delivered later (see [`LateResults`](crate::LateResults)).
    pub fn started(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_async: true,
            ..Self::default()
        }
    }

    /// A failed result; `content` should tell the model what to do differently.
    pub fn error(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: true,
            ..Self::default()
        }
    }

    /// A structured result; the model reads it as JSON text.
    ///
    /// A value that cannot be serialized becomes an error result saying so.
    pub fn structured<T: Serialize + ?Sized>(value: &T) -> Self {
        match serde_json::to_value(value) {
            Ok(value) => Self::from_json(value),
            Err(e) => Self::error(format!("the tool's result could not be serialized: {e}")),
        }
    }

    /// A result from a JSON value: text as JSON; objects are also kept as structured content.
    pub fn from_json(value: Value) -> Self {
        let content = match &value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let structured = value.is_object().then(|| Box::new(value));
        Self {
            content,
            structured,
            ..Self::default()
        }
    }

    /// A structured result for a value that is not an object, wrapped the
    /// way MCP (which wants an object) and FastMCP have it: the structured
    /// content is `{"result": value}`, while the model reads the value itself
    /// as [`from_json`](Self::from_json) renders it.
    ///
    /// This goes with an output schema that wraps the value's schema the
    /// same way and carries `"x-toolsmith-wrapped": true`, which `#[tool]`
    /// writes for a return type whose schema is not an object at its root.
    ///
    /// ```
    /// use toolsmith::ToolOutput;
    /// use serde_json::json;
    ///
    /// let out = ToolOutput::from_json_wrapped(json!([1, 2]));
    /// assert_eq!(out.content, "[1,2]");
    /// assert_eq!(out.structured.as_deref(), Some(&json!({"result": [1, 2]})));
    /// ```
    pub fn from_json_wrapped(value: Value) -> Self {
        let content = match &value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let mut wrapper = Map::new();
        wrapper.insert("result".to_owned(), value);
        Self {
            content,
            structured: Some(Box::new(Value::Object(wrapper))),
            ..Self::default()
        }
    }

    /// Add text for the user.
    pub fn with_display(mut self, display: impl Into<String>) -> Self {
        self.display = Some(display.into());
        self
    }

    /// Add an image.
    pub fn with_image(mut self, data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        self.images.push(Image {
            data: data.into(),
            mime_type: mime_type.into(),
        });
        self
    }

    /// Add an attachment (audio, an embedded resource).
    pub fn with_attachment(mut self, attachment: Attachment) -> Self {
        self.attachments.push(attachment);
        self
    }

    /// Add a metadata entry for the host.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key, value);
        self
    }

    /// Mark the result as an error (or not).
    pub fn with_is_error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }

    /// What the user should see: the display text if any, else the model's text.
    pub fn for_user(&self) -> &str {
        self.display.as_deref().unwrap_or(&self.content)
    }
}

impl fmt::Display for ToolOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.content)
    }
}

impl From<String> for ToolOutput {
    #[inline]
    fn from(content: String) -> Self {
        Self::text(content)
    }
}

impl From<&str> for ToolOutput {
    fn from(content: &str) -> Self {
        Self::text(content)
    }
}

impl From<Cow<'_, str>> for ToolOutput {
    fn from(content: Cow<'_, str>) -> Self {
        Self::text(content.into_owned())
    }
}

impl From<Value> for ToolOutput {
    fn from(value: Value) -> Self {
        Self::from_json(value)
    }
}

impl From<()> for ToolOutput {
    fn from((): ()) -> Self {
        Self::default()
    }
}

impl<T: Into<ToolOutput>, E: fmt::Display> From<Result<T, E>> for ToolOutput {
    fn from(result: Result<T, E>) -> Self {
        match result {
            Ok(value) => value.into(),
            Err(e) => Self::error(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Serialize)]
    struct Weather {
        city: &'static str,
        celsius: i32,
    }

    #[test]
    fn structured_objects_keep_their_value_and_read_as_json() {
        let out = ToolOutput::structured(&Weather {
            city: "Oslo",
            celsius: -3,
        });
        assert_eq!(out.content, r#"{"city":"Oslo","celsius":-3}"#);
        assert_eq!(
            out.structured.as_deref(),
            Some(&json!({"city": "Oslo", "celsius": -3}))
        );
    }

    #[test]
    fn scalars_are_text_only() {
        let out = ToolOutput::from(json!("plain"));
        assert_eq!(out.content, "plain");
        assert!(out.structured.is_none());
        assert_eq!(ToolOutput::from(json!([1, 2])).content, "[1,2]");
    }

    #[test]
    fn wrapped_values_read_as_themselves_and_travel_under_result() {
        let out = ToolOutput::from_json_wrapped(json!("plain"));
        assert_eq!(out.content, "plain");
        assert_eq!(out.structured.as_deref(), Some(&json!({"result": "plain"})));
        let out = ToolOutput::from_json_wrapped(json!({"a": 1}));
        assert_eq!(out.content, r#"{"a":1}"#);
        assert_eq!(
            out.structured.as_deref(),
            Some(&json!({"result": {"a": 1}}))
        );
        let out = ToolOutput::from_json_wrapped(Value::Null);
        assert_eq!(out.content, "null");
        assert_eq!(out.structured.as_deref(), Some(&json!({"result": null})));
    }

    #[test]
    fn typed_keys_read_only_their_type_and_write_only_json() {
        const COUNT: MetaKey<u64> = MetaKey::new("count");
        let mut metadata = Metadata::default();
        assert_eq!(metadata.read(&COUNT), None);
        metadata.insert("count", "three");
        assert_eq!(metadata.read(&COUNT), None);
        metadata.write(&COUNT, &3);
        assert_eq!(metadata["count"], json!(3));
        assert_eq!(metadata.read(&COUNT), Some(3));

        // A map with keys that are not strings has no JSON form.
        const PAIRS: MetaKey<std::collections::BTreeMap<(u8, u8), u8>> = MetaKey::new("count");
        metadata.write(&PAIRS, &[((1, 2), 3)].into());
        assert_eq!(metadata["count"], json!(3));
    }

    #[test]
    fn results_become_errors() {
        let ok: ToolOutput = Ok::<_, String>("fine").into();
        assert!(!ok.is_error);
        let err: ToolOutput = Err::<&str, _>("bad").into();
        assert!(err.is_error);
        assert_eq!(err.content, "bad");
    }

    #[test]
    fn the_user_sees_display_text_when_there_is_some() {
        let out = ToolOutput::text("for model");
        assert_eq!(out.for_user(), "for model");
        assert_eq!(out.with_display("for user").for_user(), "for user");
    }

    #[test]
    fn metadata_and_images_are_kept() {
        let out = ToolOutput::text("x")
            .with_metadata("elapsed_ms", 5)
            .with_image("aGk=", "image/png");
        assert_eq!(out.metadata["elapsed_ms"], json!(5));
        assert_eq!(out.images[0].mime_type, "image/png");
    }
}
