//! Our side of a client session: what we answer when a server asks us
//! something, and what we do with its notifications.

// Logging and sampling are deprecated only from protocol version 2026-07-28
// on; the clients and servers of the versions we speak still use them.
#![allow(deprecated)]

use std::sync::Weak;

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, Implementation, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Map, Value, json};

use super::link::ServerLink;

/// Answers a server's requests and relays its list-changed notifications to the link.
pub(crate) struct ClientSide {
    pub(crate) link: Weak<ServerLink>,
}

impl ClientHandler for ClientSide {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap_or_default();
        let mut info = ClientConfig::new(
            capabilities,
            Implementation::new("toolkit", env!("CARGO_PKG_VERSION")),
        );
        // The newest version with an `initialize` handshake: what servers in
        // the field speak.
        info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        info
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        Err(ErrorData::invalid_request(
            "this client does not offer sampling",
            None,
        ))
    }

    /// Nobody is there to fill in a form while a tool runs, so we accept it
    /// with the defaults the server's schema offers (and nothing else).
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let request = serde_json::to_value(&request).unwrap_or_default();
        let defaults = schema_defaults(request.get("requestedSchema"));
        let answer = if defaults.is_empty() {
            json!({"action": "decline"})
        } else {
            json!({"action": "accept", "content": defaults})
        };
        serde_json::from_value(answer).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.refresh();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.refresh();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.refresh();
    }
}

impl ClientSide {
    fn refresh(&self) {
        if let Some(link) = self.link.upgrade() {
            // The refresh asks the server for its lists, which needs this
            // handler to return first: run it beside.
            tokio::spawn(async move {
                if let Err(e) = link.refresh().await {
                    tracing::warn!(server = %link.name(), "refreshing MCP tools failed: {e}");
                }
            });
        }
    }
}

/// The `default` of every property of an elicitation schema that has one.
fn schema_defaults(schema: Option<&Value>) -> Map<String, Value> {
    schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .filter_map(|(name, p)| Some((name.clone(), p.get("default")?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_collected_from_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John"},
            "age": {"type": "integer", "default": 30},
            "free": {"type": "string"}
        }});
        let defaults = schema_defaults(Some(&schema));
        assert_eq!(Value::Object(defaults), json!({"name": "John", "age": 30}));
        assert!(schema_defaults(None).is_empty());
    }
}
