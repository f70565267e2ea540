//! Resources and prompts a server offers beside its tools.

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::ClientSession;

/// Resources to serve, in MCP's JSON shapes.
///
/// Most servers built on this crate serve only tools; this is for those that
/// also expose data by URI.
#[async_trait]
pub trait ResourceSource: Send + Sync + 'static {
    /// The resources (`Resource` objects: `uri`, `name`, `mimeType`...).
    fn resources(&self) -> Vec<Value>;

    /// The resource templates (`ResourceTemplate` objects: `uriTemplate`, `name`...).
    fn templates(&self) -> Vec<Value> {
        Vec::new()
    }

    /// Read one resource: a `ReadResourceResult` (`{"contents": [...]}`), or
    /// a message saying why not.
    async fn read(&self, uri: &str) -> Result<Value, String>;
}

/// Prompts to serve, in MCP's JSON shapes.
#[async_trait]
pub trait PromptSource: Send + Sync + 'static {
    /// The prompts (`Prompt` objects: `name`, `description`, `arguments`).
    fn prompts(&self) -> Vec<Value>;

    /// Fill in one prompt: a `GetPromptResult` (`{"messages": [...]}`), or a
    /// message saying why not.
    async fn get(&self, name: &str, arguments: Map<String, Value>) -> Result<Value, String>;

    /// Fill in one prompt, able to ask the client through `session` as a
    /// tool does (on protocol 2026-07-28 the request ends with an
    /// input-required result and is made again with the answers; see
    /// [`ClientSession`]). By default [`get`](Self::get), asking nothing.
    async fn get_asking(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        session: &ClientSession,
    ) -> Result<Value, String> {
        let _ = session;
        self.get(name, arguments).await
    }
}
