//! Our MCP client over `https` (feature `mcp-tls`): HAProxy
//! (`scripts/install_haproxy.sh`) terminates TLS on loopback with a
//! certificate this test makes (the `openssl` CLI: a certificate authority
//! of its own, and a server certificate for 127.0.0.1 it signs) in front of
//! the fixture server. The client trusts the server once the entry's
//! `caCertificate` names that authority, and refuses it, saying why, when
//! it does not, or when it trusts another authority.

#[path = "../haproxy.rs"]
mod haproxy;
#[path = "../peers.rs"]
mod peers;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tk::mcp::{McpClients, McpConfig};
use tk::{ToolContext, ToolRegistry};

use haproxy::{GLOBAL, Scratch};
use peers::Running;

async fn bounded<F: std::future::Future>(body: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), body)
        .await
        .expect("the test did not finish within 60 s")
}

const OPENSSL_CONFIG: &str = "\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
";

fn openssl(dir: &Scratch, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(&dir.0)
        .output()
        .expect("the openssl CLI is not installed: run scripts/install_haproxy.sh");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A certificate authority `{name}.pem` (key `{name}.key`) in `dir`.
fn authority(dir: &Scratch, name: &str) {
    let (key, cert) = (format!("{name}.key"), format!("{name}.pem"));
    let subject = format!("/CN=toolsmith test authority {name}");
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-config",
            "openssl.cnf",
            "-extensions",
            "ca",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &cert,
            "-days",
            "2",
            "-subj",
            &subject,
        ],
    );
}

/// The server's certificate for 127.0.0.1, signed by the authority `ca`,
/// with its key after it in `server.pem`, as HAProxy takes them.
fn server_certificate(dir: &Scratch, ca: &str) {
    let (ca_cert, ca_key) = (format!("{ca}.pem"), format!("{ca}.key"));
    openssl(
        dir,
        &[
            "req",
            "-new",
            "-config",
            "openssl.cnf",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            &ca_cert,
            "-CAkey",
            &ca_key,
            "-set_serial",
            "2",
            "-days",
            "2",
            "-extfile",
            "openssl.cnf",
            "-extensions",
            "server",
            "-out",
            "server.crt",
        ],
    );
    let pem = std::fs::read_to_string(dir.path("server.crt")).unwrap()
        + &std::fs::read_to_string(dir.path("server.key")).unwrap();
    std::fs::write(dir.path("server.pem"), pem).unwrap();
}

/// The fixture server behind HAProxy terminating TLS with `server.pem`;
/// the `https` URL to reach it at.
fn tls_in_front(dir: &Scratch) -> (Running, Running, String) {
    let server = peers::fixture_http(&["--stateless"]);
    let port = peers::free_port();
    let crt = dir.path("server.pem");
    let config = format!(
        "{GLOBAL}
frontend tls
    bind 127.0.0.1:{port} ssl crt {}
    default_backend plain

backend plain
    server fixture {}
",
        crt.display(),
        haproxy::authority(&server.url)
    );
    let balancer = haproxy::start(dir, &config, port);
    (server, balancer, format!("https://127.0.0.1:{port}/mcp"))
}

/// Connect one client to `entry`; the registry, or the connection's error.
async fn connect(entry: Value) -> Result<(Arc<ToolRegistry>, McpClients), String> {
    let config = McpConfig::from_json(&json!({"mcpServers": {"tls": entry}})).unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    for (_, outcome) in clients.connect().await {
        outcome.map_err(|e| e.to_string())?;
    }
    Ok((registry, clients))
}

fn scratch_with_authorities() -> Scratch {
    let dir = Scratch::new("tls");
    std::fs::write(dir.path("openssl.cnf"), OPENSSL_CONFIG).unwrap();
    authority(&dir, "ours");
    authority(&dir, "other");
    server_certificate(&dir, "ours");
    dir
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_reaches_an_https_server_whose_authority_it_is_told_to_trust() {
    let dir = scratch_with_authorities();
    let (_server, _tls, url) = tls_in_front(&dir);
    bounded(async {
        let entry = json!({"url": url, "caCertificate": path(&dir.path("ours.pem"))});
        let (registry, _clients) = connect(entry).await.unwrap();
        let out = registry
            .call(
                "mcp_tls_echo",
                json!({"message": "over TLS"}),
                &ToolContext::new(),
            )
            .await;
        assert!(!out.is_error, "{out:?}");
        assert_eq!(out.content, "Echo: over TLS");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_the_client_does_not_trust_is_refused_and_the_error_says_so() {
    let dir = scratch_with_authorities();
    let (_server, _tls, url) = tls_in_front(&dir);
    bounded(async {
        // The system's roots alone, and another authority besides them.
        for entry in [
            json!({"url": url}),
            json!({"url": url, "caCertificate": path(&dir.path("other.pem"))}),
        ] {
            let err = connect(entry.clone()).await.err().unwrap_or_else(|| {
                panic!("connected to a server signed by an untrusted authority: {entry}")
            });
            eprintln!("{err}");
            assert!(
                err.contains("could not connect to the MCP server `tls`")
                    && err.contains("invalid peer certificate: UnknownIssuer"),
                "{err}"
            );
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ca_certificate_that_is_missing_or_no_certificate_fails_with_its_path() {
    let dir = Scratch::new("tls-bad");
    std::fs::write(dir.path("not.pem"), "not a certificate").unwrap();
    bounded(async {
        for (file, says) in [
            ("missing.pem", "No such file"),
            ("not.pem", "no PEM certificate"),
        ] {
            let ca = path(&dir.path(file));
            let entry = json!({"url": "https://127.0.0.1:9/mcp", "caCertificate": ca});
            let err = connect(entry).await.err().unwrap();
            assert!(
                err.contains(&format!("`caCertificate` {ca}")) && err.contains(says),
                "{err}"
            );
        }
    })
    .await;
}
