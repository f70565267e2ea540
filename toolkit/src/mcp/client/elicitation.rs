//! Elicitation through the host: a server asks the user for input
//! (`elicitation/create`) and the host asks its user.
//!
//! Our types, not the SDK's, as for sampling: the request is read from
//! MCP's JSON form.

use std::error::Error;

use async_trait::async_trait;
use serde_json::{Map, Value, json};

/// The host's user, answering what MCP servers ask them: a form to fill in
/// or a URL to visit.
///
/// Set one with [`McpClients::with_elicitor`](crate::mcp::McpClients::with_elicitor):
/// the client then declares the `elicitation` capability (with the modes
/// [`modes`](Self::modes) names) when it connects, and what a server asks
/// reaches [`elicit`](Self::elicit), whether the server sent a request or
/// (protocol 2026-07-28) ended a call with an input-required result.
/// Without one the capability is not declared and such requests are
/// refused. An error returned here reaches the server as a JSON-RPC error;
/// a panic is caught and answered with an error too. An elicitor still
/// waiting when the server cancels, or after the server's `toolTimeout`, is
/// dropped. Each server's questions are held to a
/// [`QuestionRate`](crate::mcp::QuestionRate), counted apart from its
/// sampling requests (see
/// [`McpClients::with_question_rate`](crate::mcp::McpClients::with_question_rate)).
///
/// ```
/// use toolsmith::mcp::{Elicitation, ElicitationRequest, Elicitor};
///
/// /// Takes every default the form offers (a host would show the form).
/// struct Defaults;
///
/// #[toolsmith::async_trait]
/// impl Elicitor for Defaults {
///     async fn elicit(
///         &self,
///         request: ElicitationRequest,
///     ) -> Result<Elicitation, Box<dyn std::error::Error + Send + Sync>> {
///         let defaults = request.defaults();
///         Ok(if defaults.is_empty() {
///             Elicitation::Decline
///         } else {
///             Elicitation::Accept(defaults)
///         })
///     }
/// }
/// ```
#[async_trait]
pub trait Elicitor: Send + Sync + 'static {
    /// Ask the user what `request` asks.
    async fn elicit(
        &self,
        request: ElicitationRequest,
    ) -> Result<Elicitation, Box<dyn Error + Send + Sync>>;

    /// The modes this host can show: a form, a URL, or both (the default).
    fn modes(&self) -> ElicitationModes {
        ElicitationModes::default()
    }
}

/// Which kinds of elicitation a host can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ElicitationModes {
    /// Forms of simple fields (`mode: "form"`).
    pub form: bool,
    /// URLs the user visits (`mode: "url"`).
    pub url: bool,
}

impl Default for ElicitationModes {
    fn default() -> Self {
        Self {
            form: true,
            url: true,
        }
    }
}

impl ElicitationModes {
    /// Forms only.
    pub fn form_only() -> Self {
        Self {
            form: true,
            url: false,
        }
    }

    /// The `elicitation` capability declaring these modes.
    pub(crate) fn capability(self) -> Value {
        let mut capability = json!({});
        if self.form {
            capability["form"] = json!({});
        }
        if self.url {
            capability["url"] = json!({});
        }
        capability
    }
}

/// What a server asks the user.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ElicitationRequest {
    /// The configured name of the server asking.
    pub server: String,
    /// What to show the user.
    pub message: String,
    /// What the user is asked for.
    pub kind: ElicitationKind,
    /// All of the request's parameters in MCP's JSON form.
    pub params: Value,
}

/// A form to fill in, or a URL to visit.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitationKind {
    /// Fill in a form: `schema` is the requested schema, an object of
    /// simple properties (strings, numbers, booleans, enums).
    Form {
        /// The requested schema.
        schema: Value,
    },
    /// Visit `url` (to sign in, pay, consent) out of band.
    Url {
        /// Where to send the user.
        url: String,
        /// The server's id for this elicitation, if it gave one.
        elicitation_id: Option<String>,
    },
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Elicitation {
    /// The user accepted: the form's values (empty for a URL).
    Accept(Map<String, Value>),
    /// The user said no.
    Decline,
    /// The user dismissed the question without choosing.
    Cancel,
}

impl Elicitation {
    /// MCP's `ElicitResult` for this answer.
    pub(crate) fn to_result(&self) -> Value {
        match self {
            Self::Accept(content) if content.is_empty() => json!({"action": "accept"}),
            Self::Accept(content) => json!({"action": "accept", "content": content}),
            Self::Decline => json!({"action": "decline"}),
            Self::Cancel => json!({"action": "cancel"}),
        }
    }
}

impl ElicitationRequest {
    /// The request `server` sent, from the `params` of its
    /// `elicitation/create` request in MCP's JSON form. Without a `mode`,
    /// a request is a form.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::mcp::{ElicitationKind, ElicitationRequest};
    ///
    /// let request = ElicitationRequest::from_params("shop", json!({
    ///     "mode": "url", "message": "Pay here", "url": "https://shop.example/pay",
    /// }));
    /// assert!(matches!(request.kind, ElicitationKind::Url { .. }));
    /// ```
    pub fn from_params(server: &str, params: Value) -> Self {
        let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
        let kind = if params.get("mode").and_then(Value::as_str) == Some("url") {
            ElicitationKind::Url {
                url: text("url").unwrap_or_default(),
                elicitation_id: text("elicitationId"),
            }
        } else {
            ElicitationKind::Form {
                schema: params
                    .get("requestedSchema")
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            }
        };
        Self {
            server: server.to_owned(),
            message: text("message").unwrap_or_default(),
            kind,
            params,
        }
    }

    /// The `default` of every property of a form's schema that has one
    /// (nothing for a URL).
    pub fn defaults(&self) -> Map<String, Value> {
        let ElicitationKind::Form { schema } = &self.kind else {
            return Map::new();
        };
        schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .iter()
                    .filter_map(|(name, p)| Some((name.clone(), p.get("default")?.clone())))
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_and_urls_are_read_from_the_params() {
        let form = ElicitationRequest::from_params(
            "s",
            json!({"message": "Who?", "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "John"},
                "age": {"type": "integer", "default": 30},
                "free": {"type": "string"}
            }}}),
        );
        assert_eq!(form.message, "Who?");
        assert_eq!(
            Value::Object(form.defaults()),
            json!({"name": "John", "age": 30})
        );
        let url = ElicitationRequest::from_params(
            "s",
            json!({"mode": "url", "message": "Sign in", "url": "https://x.example", "elicitationId": "e1"}),
        );
        assert_eq!(
            url.kind,
            ElicitationKind::Url {
                url: "https://x.example".into(),
                elicitation_id: Some("e1".into())
            }
        );
        assert!(url.defaults().is_empty());
    }

    #[test]
    fn answers_become_elicit_results() {
        let mut content = Map::new();
        content.insert("ok".into(), json!(true));
        assert_eq!(
            Elicitation::Accept(content).to_result(),
            json!({"action": "accept", "content": {"ok": true}})
        );
        assert_eq!(
            Elicitation::Accept(Map::new()).to_result(),
            json!({"action": "accept"})
        );
        assert_eq!(Elicitation::Decline.to_result()["action"], "decline");
        assert_eq!(
            ElicitationModes::form_only().capability(),
            json!({"form": {}})
        );
    }
}
