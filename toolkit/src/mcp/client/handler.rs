//! Our side of a client session: what we answer when a server asks us
//! something, and what we do with its notifications.

// Logging and sampling are deprecated only from protocol version 2026-07-28
// on; the clients and servers of the versions we speak still use them.
#![allow(deprecated)]

use std::sync::{Arc, Weak};

use futures_util::FutureExt;

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, Implementation, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Map, Value, json};

use super::link::ServerLink;
use super::sampling::{Sampler, SamplingRequest};

/// How long a sampler may take when the server's link is gone.
const DEFAULT_SAMPLING_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Answers a server's requests and relays its list-changed notifications to the link.
pub(crate) struct ClientSide {
    pub(crate) link: Weak<ServerLink>,
    /// The server this session is with, for the sampler.
    pub(crate) server: String,
    /// The host's model; without it sampling is neither offered nor done.
    pub(crate) sampler: Option<Arc<dyn Sampler>>,
}

impl ClientHandler for ClientSide {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = json!({"elicitation": {"form": {}}});
        if self.sampler.is_some() {
            capabilities["sampling"] = json!({});
        }
        let capabilities: ClientCapabilities =
            serde_json::from_value(capabilities).unwrap_or_default();
        let mut info = ClientConfig::new(
            capabilities,
            Implementation::new("toolsmith", env!("CARGO_PKG_VERSION")),
        );
        // The newest version with an `initialize` handshake: what servers in
        // the field speak.
        info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        info
    }

    /// The host's sampler answers; a failure or a panic in it is an error
    /// the server sees, never a request left unanswered. The sampler is
    /// stopped when the server cancels the request, and after the server's
    /// `toolTimeout`: the call that led to the request has given up by then.
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(sampler) = &self.sampler else {
            return Err(ErrorData::invalid_request(
                "this client does not offer sampling",
                None,
            ));
        };
        let request = SamplingRequest::from_params(
            &self.server,
            serde_json::to_value(&params).unwrap_or_default(),
        );
        let limit = self
            .link
            .upgrade()
            .map_or(DEFAULT_SAMPLING_LIMIT, |link| link.config().tool_timeout);
        let sampling = std::panic::AssertUnwindSafe(sampler.sample(request)).catch_unwind();
        let answer = tokio::select! {
            answer = tokio::time::timeout(limit, sampling) => answer.map_err(|_| {
                ErrorData::internal_error(
                    format!("the host's model did not answer within {limit:?}"),
                    None,
                )
            })?,
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the request was cancelled", None));
            }
        };
        let sampled = match answer {
            Ok(Ok(sampled)) => sampled,
            Ok(Err(e)) => {
                return Err(ErrorData::internal_error(
                    format!("the host's model could not answer: {e}"),
                    None,
                ));
            }
            Err(_) => {
                tracing::error!(server = %self.server, "the sampler panicked");
                return Err(ErrorData::internal_error(
                    "the host's model could not answer: its sampler crashed",
                    None,
                ));
            }
        };
        serde_json::from_value(sampled.to_result())
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
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

    struct Silent;

    #[async_trait::async_trait]
    impl Sampler for Silent {
        async fn sample(
            &self,
            _request: SamplingRequest,
        ) -> Result<super::super::sampling::Sampled, Box<dyn std::error::Error + Send + Sync>>
        {
            Err("never asked here".into())
        }
    }

    #[test]
    fn sampling_is_declared_only_with_a_sampler() {
        let declared = |sampler: Option<Arc<dyn Sampler>>| {
            let side = ClientSide {
                link: Weak::new(),
                server: "s".into(),
                sampler,
            };
            serde_json::to_value(side.get_info().capabilities).unwrap()
        };
        let without = declared(None);
        assert!(without.get("sampling").is_none(), "{without}");
        assert!(without.get("elicitation").is_some());
        let with = declared(Some(Arc::new(Silent)));
        assert_eq!(with["sampling"], json!({}));
        assert!(with.get("elicitation").is_some());
    }
}
