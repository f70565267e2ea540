//! Our side of a client session: what we answer when a server asks us
//! something, and what we do with its notifications.

// Logging and sampling are deprecated only from protocol version 2026-07-28
// on; the clients and servers of the versions we speak still use them.
#![allow(deprecated)]

use std::sync::{Arc, Weak};

use futures_util::FutureExt;

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, Implementation, InputRequest, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::elicitation::{ElicitationRequest, Elicitor};
use super::link::ServerLink;
use super::rate::{Bucket, Questions};
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
    /// The host's user; without it elicitation is neither offered nor done.
    pub(crate) elicitor: Option<Arc<dyn Elicitor>>,
    /// How fast this server may ask the sampler and the elicitor: the
    /// link's, kept across its sessions.
    pub(crate) questions: Arc<Questions>,
}

/// What a question past the server's rate gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    /// A server's own request: refused at once with a rate-limited error.
    Refuse,
    /// A question of a call of the host's: waits for its turn, within the
    /// call.
    Wait,
}

impl ClientHandler for ClientSide {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = json!({});
        if self.sampler.is_some() {
            capabilities["sampling"] = json!({});
        }
        if let Some(elicitor) = &self.elicitor {
            capabilities["elicitation"] = elicitor.modes().capability();
        }
        // A tool that runs as a task is waited for (see `ServerLink`).
        capabilities["extensions"] = json!({rmcp::model::TASKS_EXTENSION_ID: {}});
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

    /// The host's sampler answers (see [`ClientSide::sample`]).
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(&params).unwrap_or_default();
        let result = self.sample(params, &context.ct, Turn::Refuse).await?;
        serde_json::from_value(result).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    /// The host's elicitor answers (see [`ClientSide::elicit`]).
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(&request).unwrap_or_default();
        let result = self.elicit(params, &context.ct, Turn::Refuse).await?;
        serde_json::from_value(result).map_err(|e| ErrorData::internal_error(e.to_string(), None))
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
    /// How long the host may take to answer: the server's `toolTimeout`,
    /// since the call that led to the question has given up by then.
    fn answer_limit(&self) -> std::time::Duration {
        self.link
            .upgrade()
            .map_or(DEFAULT_SAMPLING_LIMIT, |link| link.config().tool_timeout)
    }

    /// Run the host's `answer`, within the answer limit and until `ct` is
    /// cancelled; a failure or a panic in it is an error the server sees,
    /// never a question left unanswered.
    async fn host_answers<T>(
        &self,
        who: &str,
        answerer: &str,
        answer: impl std::future::Future<Output = Result<T, Box<dyn std::error::Error + Send + Sync>>>,
        ct: &CancellationToken,
    ) -> Result<T, ErrorData> {
        let limit = self.answer_limit();
        let answering = std::panic::AssertUnwindSafe(answer).catch_unwind();
        let answer = tokio::select! {
            answer = tokio::time::timeout(limit, answering) => answer.map_err(|_| {
                ErrorData::internal_error(
                    format!("the host's {who} did not answer within {limit:?}"),
                    None,
                )
            })?,
            () = ct.cancelled() => {
                return Err(ErrorData::internal_error("the request was cancelled", None));
            }
        };
        match answer {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(ErrorData::internal_error(
                format!("the host's {who} could not answer: {e}"),
                None,
            )),
            Err(panic) => {
                crate::panics::discard(panic);
                tracing::error!(server = %self.server, "the {answerer} panicked");
                Err(ErrorData::internal_error(
                    format!("the host's {who} could not answer: its {answerer} crashed"),
                    None,
                ))
            }
        }
    }

    /// Take a token from `bucket` for a question, as `turn` says.
    async fn take_turn(
        bucket: &Bucket,
        what: &str,
        turn: Turn,
        ct: &CancellationToken,
    ) -> Result<(), ErrorData> {
        match turn {
            Turn::Refuse => bucket.admit(what),
            Turn::Wait if bucket.wait_turn(ct).await => Ok(()),
            Turn::Wait => Err(ErrorData::internal_error("the request was cancelled", None)),
        }
    }

    /// Answer a `sampling/createMessage` request (its params in MCP's JSON
    /// form) with the host's sampler, in the server's rate: its
    /// `CreateMessageResult`.
    pub(crate) async fn sample(
        &self,
        params: Value,
        ct: &CancellationToken,
        turn: Turn,
    ) -> Result<Value, ErrorData> {
        let Some(sampler) = &self.sampler else {
            return Err(ErrorData::invalid_request(
                "this client does not offer sampling",
                None,
            ));
        };
        Self::take_turn(&self.questions.sampling, "sampling requests", turn, ct).await?;
        let request = SamplingRequest::from_params(&self.server, params);
        let sampled = self
            .host_answers("model", "sampler", sampler.sample(request), ct)
            .await?;
        Ok(sampled.to_result())
    }

    /// Answer an `elicitation/create` request (its params in MCP's JSON
    /// form) with the host's elicitor, in the server's rate: its
    /// `ElicitResult`.
    pub(crate) async fn elicit(
        &self,
        params: Value,
        ct: &CancellationToken,
        turn: Turn,
    ) -> Result<Value, ErrorData> {
        let Some(elicitor) = &self.elicitor else {
            return Err(ErrorData::invalid_request(
                "this client does not offer elicitation",
                None,
            ));
        };
        Self::take_turn(
            &self.questions.elicitation,
            "elicitation requests",
            turn,
            ct,
        )
        .await?;
        let request = ElicitationRequest::from_params(&self.server, params);
        let answer = self
            .host_answers("user", "elicitor", elicitor.elicit(request), ct)
            .await?;
        Ok(answer.to_result())
    }

    /// Answer one of the questions of an input-required result or a task:
    /// its result in MCP's JSON form. Past the server's rate, it waits its
    /// turn: the call it belongs to bounds how many there are, and how long
    /// they wait.
    pub(crate) async fn answer_input(
        &self,
        request: &InputRequest,
        ct: &CancellationToken,
    ) -> Result<Value, ErrorData> {
        let request = serde_json::to_value(request).unwrap_or_default();
        let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
        match request.get("method").and_then(Value::as_str) {
            Some("sampling/createMessage") => self.sample(params, ct, Turn::Wait).await,
            Some("elicitation/create") => self.elicit(params, ct, Turn::Wait).await,
            Some(method) => Err(ErrorData::invalid_request(
                format!("this client does not answer `{method}`"),
                None,
            )),
            None => Err(ErrorData::invalid_request(
                "a question without a method",
                None,
            )),
        }
    }

    fn refresh(&self) {
        if let Some(link) = self.link.upgrade() {
            link.changed_on_server();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    struct FormsOnly;

    #[async_trait::async_trait]
    impl Elicitor for FormsOnly {
        async fn elicit(
            &self,
            _request: ElicitationRequest,
        ) -> Result<super::super::Elicitation, Box<dyn std::error::Error + Send + Sync>> {
            Err("never asked here".into())
        }

        fn modes(&self) -> super::super::ElicitationModes {
            super::super::ElicitationModes::form_only()
        }
    }

    #[test]
    fn sampling_and_elicitation_are_declared_only_with_a_host_to_answer() {
        let declared = |sampler: Option<Arc<dyn Sampler>>, elicitor: Option<Arc<dyn Elicitor>>| {
            let side = ClientSide {
                link: Weak::new(),
                server: "s".into(),
                sampler,
                elicitor,
                questions: Arc::new(Questions::new(Default::default())),
            };
            serde_json::to_value(side.get_info().capabilities).unwrap()
        };
        let without = declared(None, None);
        assert!(without.get("sampling").is_none(), "{without}");
        assert!(without.get("elicitation").is_none(), "{without}");
        let with = declared(Some(Arc::new(Silent)), Some(Arc::new(FormsOnly)));
        assert_eq!(with["sampling"], json!({}));
        assert_eq!(with["elicitation"], json!({"form": {}}));
    }

    #[tokio::test]
    async fn questions_without_a_host_to_answer_are_refused() {
        let side = ClientSide {
            link: Weak::new(),
            server: "s".into(),
            sampler: None,
            elicitor: None,
            questions: Arc::new(Questions::new(Default::default())),
        };
        let ct = CancellationToken::new();
        let form: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}
        }))
        .unwrap();
        let refused = side.answer_input(&form, &ct).await.unwrap_err();
        assert!(
            refused.message.contains("elicitation"),
            "{}",
            refused.message
        );
    }

    #[tokio::test]
    async fn elicitation_past_its_rate_is_refused_and_sampling_counts_apart() {
        let side = ClientSide {
            link: Weak::new(),
            server: "s".into(),
            sampler: Some(Arc::new(Silent)),
            elicitor: Some(Arc::new(FormsOnly)),
            questions: Arc::new(Questions::new(super::super::QuestionRate::new(
                1,
                std::time::Duration::from_secs(3600),
            ))),
        };
        let ct = CancellationToken::new();
        let form = json!({"message": "?", "requestedSchema": {"type": "object", "properties": {}}});
        let first = side
            .elicit(form.clone(), &ct, Turn::Refuse)
            .await
            .unwrap_err();
        assert!(
            first.message.contains("could not answer"),
            "{}",
            first.message
        );
        let second = side.elicit(form, &ct, Turn::Refuse).await.unwrap_err();
        assert_eq!(second.code.0, -32029, "{}", second.message);
        assert!(
            second.message.contains("elicitation requests"),
            "{}",
            second.message
        );
        // The sampler's bucket is its own: its first request still goes through.
        let sampled = side
            .sample(json!({"messages": [], "maxTokens": 1}), &ct, Turn::Refuse)
            .await
            .unwrap_err();
        assert!(
            sampled.message.contains("could not answer"),
            "{}",
            sampled.message
        );
    }
}
