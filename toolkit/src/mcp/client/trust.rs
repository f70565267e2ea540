//! The certificates an HTTP server's entry tells the client to trust
//! (`caCertificate`), besides the system's roots.

use std::path::Path;

/// `builder` trusting the certificates of the PEM file at `path` as well as
/// the system's roots.
#[cfg(feature = "mcp-tls")]
pub(crate) fn trust(
    builder: reqwest::ClientBuilder,
    path: &Path,
) -> Result<reqwest::ClientBuilder, String> {
    let shown = path.display();
    let pem = std::fs::read(path).map_err(|e| format!("`caCertificate` {shown}: {e}"))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| format!("`caCertificate` {shown}: not PEM certificates: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "`caCertificate` {shown}: no PEM certificate (-----BEGIN CERTIFICATE-----) in the file"
        ));
    }
    Ok(builder.tls_certs_merge(certs))
}

/// Without TLS there is nothing to trust a certificate for.
#[cfg(not(feature = "mcp-tls"))]
pub(crate) fn trust(
    _builder: reqwest::ClientBuilder,
    path: &Path,
) -> Result<reqwest::ClientBuilder, String> {
    Err(format!(
        "`caCertificate` {} needs TLS: build toolsmith with the feature `mcp-tls`",
        path.display()
    ))
}

/// Why a connection failed, with the causes the SDK's message leaves out,
/// each after a colon: an HTTP client's "error sending request" says why
/// only in its sources (the certificate the server showed is not trusted,
/// the connection was refused), and the SDK's errors do not pass those on.
pub(super) fn with_causes(error: &rmcp::service::ClientInitializeError) -> String {
    let first: Option<&(dyn std::error::Error + 'static)> = match error {
        rmcp::service::ClientInitializeError::TransportError { error, .. } => Some(error),
        other => std::error::Error::source(other),
    };
    chain(origins_only(&error.to_string()), first)
}

/// `text` with each `for url (...)` an HTTP client's error names cut to the
/// URL's origin: a URL's path or query may hold a secret (`/s/<token>/mcp`,
/// `?api_key=`), and these messages reach the model.
pub(super) fn origins_only(text: &str) -> String {
    const MARK: &str = "for url (";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let start = at + MARK.len();
        let Some(len) = rest[start..].find(')') else {
            break;
        };
        let origin = reqwest::Url::parse(&rest[start..start + len])
            .map(|url| url.origin().ascii_serialization())
            .unwrap_or_else(|_| "?".to_owned());
        out.push_str(&rest[..start]);
        out.push_str(&origin);
        rest = &rest[start + len..];
    }
    out.push_str(rest);
    out
}

/// `message`, then each cause from `next` on that it does not say already.
pub(super) fn chain(
    mut message: String,
    mut next: Option<&(dyn std::error::Error + 'static)>,
) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    while let Some(cause) = next {
        let said = origins_only(&cause.to_string());
        if !said.is_empty() && !message.contains(&said) {
            message = format!("{message}: {said}");
        }
        next = match cause.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::Client(inner)) => Some(inner),
            _ => cause.source(),
        };
    }
    message
}
