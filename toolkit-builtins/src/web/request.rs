//! `http_request`: one HTTP request to an allowed domain.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::Method;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use toolsmith::schemars::JsonSchema;
use toolsmith::serde::Deserialize;
use toolsmith::{ToolError, ToolOutput, tool};

use super::client::{Limits, Outgoing, send};
use super::extract::{
    EXTERNAL_CONTENT_END, cap_chars, more_characters, pretty_json, response_head,
};
use super::{HttpPolicy, WebError, parse_url};

/// An HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde", rename_all = "UPPERCASE")]
#[schemars(crate = "toolsmith::schemars")]
pub enum HttpMethod {
    /// GET
    Get,
    /// POST
    Post,
    /// PUT
    Put,
    /// PATCH
    Patch,
    /// DELETE
    Delete,
    /// HEAD
    Head,
    /// OPTIONS
    Options,
}

impl From<HttpMethod> for Method {
    fn from(method: HttpMethod) -> Self {
        match method {
            HttpMethod::Get => Method::GET,
            HttpMethod::Post => Method::POST,
            HttpMethod::Put => Method::PUT,
            HttpMethod::Patch => Method::PATCH,
            HttpMethod::Delete => Method::DELETE,
            HttpMethod::Head => Method::HEAD,
            HttpMethod::Options => Method::OPTIONS,
        }
    }
}

/// Headers the client sets itself: a model setting them could smuggle a
/// second request or change where the request goes.
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "keep-alive",
    "proxy-authorization",
    "proxy-connection",
];

/// Send an HTTP request to an API on one of the allowed domains and return
/// the status, the content type and the response body (JSON
/// pretty-printed), cut at the host's character cap. Private and local addresses cannot be reached.
#[tool(open_world, category = network_write, timeout = 120)]
pub async fn http_request(
    policy: &HttpPolicy,
    /// The HTTP method.
    method: HttpMethod,
    /// The http or https URL.
    #[arg(min_length = 1)]
    url: String,
    /// Request headers, name to value.
    headers: Option<BTreeMap<String, String>>,
    /// The request body, sent as is.
    body: Option<String>,
    /// Timeout in seconds (the host sets the upper limit).
    #[arg(minimum = 1)]
    timeout: Option<u64>,
) -> Result<ToolOutput, ToolError> {
    let url = parse_url(&url)?;
    let header_map = header_map(headers.unwrap_or_default())?;
    let timeout = timeout
        .map(Duration::from_secs)
        .map_or(policy.timeout, |t| t.min(policy.timeout));
    let outgoing = Outgoing {
        method: method.into(),
        url,
        headers: header_map,
        body: body.map(String::into_bytes),
    };
    let limits = Limits {
        timeout,
        max_bytes: policy.max_response_bytes,
    };
    let allowed = |url: &url::Url| {
        if policy.allows(url) {
            Ok(())
        } else {
            Err(WebError::DomainNotAllowed(
                url.host_str().unwrap_or_default().to_string(),
            ))
        }
    };
    let fetched = send(&policy.net, outgoing, limits, &allowed).await?;
    let media_type = fetched.media_type();
    // Formatted within the character cap: the printing stops there.
    let max_chars = policy.max_chars;
    let readable = if media_type == "application/json" || media_type.ends_with("+json") {
        match pretty_json(&fetched.body, max_chars) {
            Some((text, omitted)) => (text, omitted),
            None => plain_text(&fetched.body, max_chars),
        }
    } else {
        plain_text(&fetched.body, max_chars)
    };
    let mut out = response_head(
        &format!("Status: {}\n", fetched.status),
        &media_type,
        fetched.truncated.then_some(policy.max_response_bytes),
    );
    out.push_str(&readable.0);
    if let Some(omitted) = &readable.1 {
        out.push('\n');
        out.push_str(omitted);
    }
    out.push('\n');
    out.push_str(EXTERNAL_CONTENT_END);
    // A rate limit or a server down for now is a failure that may pass:
    // its kind says so, and the model still reads the whole answer.
    if let Some(WebError::Busy {
        status,
        retry_after,
        ..
    }) = WebError::from_status(&fetched.url, fetched.status, &fetched.headers)
    {
        return Err(if status == 429 {
            ToolError::rate_limited(out, retry_after)
        } else {
            ToolError::unavailable(out)
        });
    }
    Ok(ToolOutput::text(out)
        .with_metadata("status", fetched.status.as_u16())
        .with_is_error(fetched.status.is_client_error() || fetched.status.is_server_error()))
}

/// `body` as text, at most `max_chars` characters. Only as many bytes as
/// can hold that many characters are decoded.
fn plain_text(body: &[u8], max_chars: usize) -> (String, Option<String>) {
    let head = &body[..body
        .len()
        .min(max_chars.saturating_mul(4).saturating_add(1))];
    let (text, rest) = cap_chars(&String::from_utf8_lossy(head), max_chars);
    let omitted = match (rest, head.len() < body.len()) {
        (_, true) => Some(format!(
            "[… the body goes on past {max_chars} characters; the rest is not shown]"
        )),
        (Some(rest), false) => Some(more_characters(rest)),
        (None, false) => None,
    };
    (text, omitted)
}

fn header_map(headers: BTreeMap<String, String>) -> Result<HeaderMap, WebError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if RESERVED_HEADERS.contains(&lower.as_str()) {
            return Err(WebError::Header(name, "the client sets it"));
        }
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| WebError::Header(name.clone(), "not a valid header name"))?;
        let value = HeaderValue::from_str(&value).map_err(|_| {
            WebError::Header(name, "the value has characters a header cannot carry")
        })?;
        map.append(header, value);
    }
    Ok(map)
}
