//! The HTTP server as an OAuth resource server, over real HTTP on loopback:
//! tokens signed here with a key whose JWKS a loopback server of this test
//! publishes; every kind of bad token refused as the MCP authorization
//! specification says; a served tool told who calls it; and the
//! `Mcp-Param-*` headers checked against the arguments.

#![cfg(all(feature = "mcp", feature = "mcp-jwt"))]

mod mcp_http;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_http::{HEALTHY, ISSUER, Jwks, Key, Reply, claims, jwks, now, post, post_text, serve};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use toolsmith::mcp::{Caller, Claims, JwtVerifier, McpServer, OAuthResource};
use toolsmith::{
    Arguments, CancellationToken, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec,
    async_trait, tool,
};

const LIMIT: Duration = Duration::from_secs(20);

/// Say who is calling.
#[tool(read_only)]
async fn whoami(caller: &Caller) -> Value {
    json!({
        "subject": caller.claims().and_then(|c| c.subject()),
        "tenant": caller.header("x-tenant"),
        "session": caller.session_id(),
        "protocol": caller.protocol_version(),
        "http": caller.is_http(),
    })
}

/// Needs a verified token.
#[tool(read_only)]
async fn scopes(claims: &Claims) -> String {
    claims.scopes().join(" ")
}

/// A tool whose `region` is mirrored in the `Mcp-Param-Region` header,
/// and that needs the `files:write` scope.
struct Place(ToolSpec);

impl Place {
    fn new() -> Self {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"]});
        Self(
            ToolSpec::new("place", "Place something in a region.", schema)
                .with_meta(toolsmith::mcp::SCOPES_META_KEY, json!(["files:write"])),
        )
    }
}

#[async_trait]
impl Tool for Place {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, args: Arguments, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!(
            "placed in {}",
            args.into_json()["region"]
        )))
    }
}

/// The registry these tests serve.
fn server() -> McpServer {
    let registry = Arc::new(ToolRegistry::new());
    registry.register(WhoamiTool).unwrap();
    registry.register(ScopesTool).unwrap();
    registry.register(Place::new()).unwrap();
    McpServer::new(registry)
}

/// A server whose tokens `key` signs, for the audience of its own URL;
/// every request needs the scope `mcp`.
async fn protected(jwks: &Jwks, stop: &CancellationToken) -> String {
    let jwks_url = jwks.url.clone();
    serve(
        server(),
        true,
        |url| {
            let verifier =
                JwtVerifier::new(jwks_url, ISSUER, url.clone()).refresh_interval(Duration::ZERO);
            Some(OAuthResource::new(url, ISSUER, verifier).require_scopes(["mcp"]))
        },
        stop,
    )
    .await
}

fn good_claims(url: &str) -> Value {
    claims(url, ISSUER, Some("alice"))
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
}

fn structured(reply: &Reply) -> Value {
    let result = &reply.body["result"];
    assert_ne!(result["isError"], json!(true), "{}", reply.body);
    let text = result["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap_or(Value::String(text.into()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_good_token_passes_and_the_tool_sees_who_calls() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let key = Key::new("k1");
        let jwks = jwks(vec![key.jwk.clone()], HEALTHY, stop.clone()).await;
        let url = protected(&jwks, &stop).await;
        let token = key.sign(&good_claims(&url));
        let headers = [("x-tenant", "acme"), ("mcp-protocol-version", "2025-11-25")];
        let reply = post(&url, Some(&token), &headers, &call("whoami", json!({}))).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let who = structured(&reply);
        assert_eq!(who["subject"], "alice");
        assert_eq!(who["tenant"], "acme");
        assert_eq!(who["protocol"], "2025-11-25");
        assert_eq!(who["http"], true);
        // `&Claims` is injected on its own.
        let reply = post(&url, Some(&token), &headers, &call("scopes", json!({}))).await;
        assert_eq!(structured(&reply), "mcp");
        // Both calls used the keys fetched once.
        assert_eq!(jwks.fetches.load(Ordering::SeqCst), 1);
        stop.cancel();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_the_client_is_told_where_the_metadata_is() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let key = Key::new("k1");
        let jwks = jwks(vec![key.jwk.clone()], HEALTHY, stop.clone()).await;
        let url = protected(&jwks, &stop).await;
        let reply = post(&url, None, &[], &initialize()).await;
        assert_eq!(reply.status, 401);
        let origin = url.trim_end_matches("/mcp");
        let metadata_url = format!("{origin}/.well-known/oauth-protected-resource/mcp");
        assert_eq!(
            reply.challenge.as_deref(),
            Some(format!("Bearer resource_metadata=\"{metadata_url}\", scope=\"mcp\"").as_str())
        );
        // Both forms of the metadata's address answer, with the resource's metadata.
        let client = reqwest::Client::builder().timeout(LIMIT).build().unwrap();
        for address in [
            metadata_url.clone(),
            format!("{origin}/.well-known/oauth-protected-resource"),
        ] {
            let response = client.get(&address).send().await.unwrap();
            assert_eq!(response.status(), 200, "{address}");
            let metadata: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
            assert_eq!(metadata["resource"], url.as_str());
            assert_eq!(metadata["authorization_servers"], json!([ISSUER]));
            assert_eq!(metadata["scopes_supported"], json!(["mcp"]));
            assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
        }
        // Another scheme is not a bearer token.
        let client_reply = client
            .post(&url)
            .header("authorization", "Basic YWxpY2U6cHc=")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize().to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(client_reply.status(), 401);
        stop.cancel();
    })
    .await
    .unwrap();
}

/// The `401` with `error="invalid_token"` a bad token gets; its description.
async fn refused(url: &str, token: &str) -> String {
    let reply = post(url, Some(token), &[], &call("whoami", json!({}))).await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    let challenge = reply.challenge.expect("a challenge");
    assert!(
        challenge.starts_with("Bearer error=\"invalid_token\""),
        "{challenge}"
    );
    assert!(challenge.contains("resource_metadata=\""), "{challenge}");
    assert_eq!(reply.body["error"], "invalid_token");
    reply.body["error_description"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_bad_token_is_refused() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let key = Key::new("k1");
        let jwks = jwks(vec![key.jwk.clone()], HEALTHY, stop.clone()).await;
        let url = protected(&jwks, &stop).await;
        let good = good_claims(&url);
        let with = |change: &dyn Fn(&mut Value)| {
            let mut claims = good.clone();
            change(&mut claims);
            claims
        };

        let expired = key.sign(&with(&|c| c["exp"] = json!(now() - 600)));
        assert!(refused(&url, &expired).await.contains("expired"));

        let elsewhere = key.sign(&with(&|c| c["aud"] = json!("https://other.test/mcp")));
        assert!(refused(&url, &elsewhere).await.contains("audience"));

        let no_audience = key.sign(&with(&|c| {
            c.as_object_mut().unwrap().remove("aud");
        }));
        assert!(refused(&url, &no_audience).await.contains("aud"));

        let foreign = key.sign(&with(&|c| c["iss"] = json!("https://evil.test")));
        assert!(refused(&url, &foreign).await.contains("issuer"));

        let stranger = Key::new("k2").sign(&good);
        assert!(refused(&url, &stranger).await.contains("no key `k2`"));

        // Signed by another key under the known key's name.
        let mut impostor = Key::new("k1");
        impostor.kid = Some("k1".into());
        assert!(
            refused(&url, &impostor.sign(&good))
                .await
                .contains("signature")
        );

        // The payload changed after signing.
        let token = key.sign(&good);
        let parts: Vec<&str> = token.split('.').collect();
        let mut payload: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        payload["sub"] = json!("mallory");
        let tampered = format!(
            "{}.{}.{}",
            parts[0],
            URL_SAFE_NO_PAD.encode(payload.to_string()),
            parts[2]
        );
        assert!(refused(&url, &tampered).await.contains("signature"));

        // `alg: none`, unsigned.
        let none_header = URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT","kid":"k1"}"#);
        let unsigned = format!("{none_header}.{}.", parts[1]);
        assert!(refused(&url, &unsigned).await.contains("malformed"));

        // HS256 with the public key as the secret (algorithm confusion).
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("k1".into());
        let secret = EncodingKey::from_secret(key.jwk.to_string().as_bytes());
        let confused = jsonwebtoken::encode(&header, &good, &secret).unwrap();
        assert!(refused(&url, &confused).await.contains("not accepted"));

        assert!(refused(&url, "not-a-jwt").await.contains("malformed"));
        stop.cancel();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_key_is_fetched_when_a_token_names_it() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let old = Key::new("old");
        let jwks = jwks(vec![old.jwk.clone()], HEALTHY, stop.clone()).await;
        let url = protected(&jwks, &stop).await;
        let call_whoami = call("whoami", json!({}));
        let reply = post(&url, Some(&old.sign(&good_claims(&url))), &[], &call_whoami).await;
        assert_eq!(reply.status, 200);
        assert_eq!(jwks.fetches.load(Ordering::SeqCst), 1);
        let new = Key::new("new");
        jwks.keys.lock().unwrap().push(new.jwk.clone());
        let reply = post(&url, Some(&new.sign(&good_claims(&url))), &[], &call_whoami).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(jwks.fetches.load(Ordering::SeqCst), 2);
        stop.cancel();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_keys_do_not_flood_the_authorization_server() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let key = Key::new("k1");
        let jwks = jwks(vec![key.jwk.clone()], HEALTHY, stop.clone()).await;
        let jwks_url = jwks.url.clone();
        let url = serve(
            server(),
            true,
            |url| {
                let verifier = JwtVerifier::new(jwks_url, ISSUER, url.clone());
                Some(OAuthResource::new(url, ISSUER, verifier))
            },
            &stop,
        )
        .await;
        for i in 0..5 {
            let token = Key::new(&format!("x{i}")).sign(&good_claims(&url));
            refused(&url, &token).await;
        }
        assert_eq!(jwks.fetches.load(Ordering::SeqCst), 1);
        stop.cancel();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_scopes_are_named_in_a_403() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let key = Key::new("k1");
        let jwks = jwks(vec![key.jwk.clone()], HEALTHY, stop.clone()).await;
        let url = protected(&jwks, &stop).await;
        // Without the scope every request needs.
        let mut claims = good_claims(&url);
        claims["scope"] = json!("profile");
        let reply = post(
            &url,
            Some(&key.sign(&claims)),
            &[],
            &call("whoami", json!({})),
        )
        .await;
        assert_eq!(reply.status, 403);
        let challenge = reply.challenge.unwrap();
        assert!(
            challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"mcp\""),
            "{challenge}"
        );
        assert!(challenge.contains("resource_metadata=\""), "{challenge}");
        // With it, but not the one the tool declares.
        let token = key.sign(&good_claims(&url));
        let place = call("place", json!({"region": "eu"}));
        let reply = post(&url, Some(&token), &[], &place).await;
        assert_eq!(reply.status, 403);
        let challenge = reply.challenge.unwrap();
        assert!(
            challenge.contains("scope=\"mcp files:write\""),
            "{challenge}"
        );
        assert!(
            reply.body["error_description"]
                .as_str()
                .unwrap()
                .contains("`place`")
        );
        // The method spelled with JSON escapes is the same call, refused alike.
        for method in [r"tools\/call", r"tools\u002fcall", r"\u0074ools/call"] {
            let body = place.to_string().replace("tools/call", method);
            assert!(body.contains(method), "{body}");
            let reply = post_text(&url, Some(&token), &[], body).await;
            assert_eq!(reply.status, 403, "{method}: {}", reply.body);
        }
        // With both, the tool runs.
        let mut claims = good_claims(&url);
        claims["scope"] = json!("mcp files:write");
        let reply = post(&url, Some(&key.sign(&claims)), &[], &place).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(
            reply.body["result"]["content"][0]["text"],
            "placed in \"eu\""
        );
        stop.cancel();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_map_of_scopes_overrides_the_tools_own() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let key = Key::new("k1");
        let jwks = jwks(vec![key.jwk.clone()], HEALTHY, stop.clone()).await;
        let jwks_url = jwks.url.clone();
        let url = serve(
            server(),
            true,
            |url| {
                let verifier = JwtVerifier::new(jwks_url, ISSUER, url.clone());
                Some(
                    OAuthResource::new(url, ISSUER, verifier)
                        .tool_scopes("place", Vec::<String>::new())
                        .tool_scopes("whoami", ["admin"]),
                )
            },
            &stop,
        )
        .await;
        let token = key.sign(&good_claims(&url));
        let reply = post(
            &url,
            Some(&token),
            &[],
            &call("place", json!({"region": "eu"})),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let reply = post(&url, Some(&token), &[], &call("whoami", json!({}))).await;
        assert_eq!(reply.status, 403);
        assert!(reply.challenge.unwrap().contains("scope=\"admin\""));
        stop.cancel();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_its_openers_and_the_tool_sees_its_id() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let key = Key::new("k1");
        let jwks = jwks(vec![key.jwk.clone()], HEALTHY, stop.clone()).await;
        let jwks_url = jwks.url.clone();
        let url = serve(
            server(),
            false,
            |url| {
                let verifier = JwtVerifier::new(jwks_url, ISSUER, url.clone());
                Some(OAuthResource::new(url, ISSUER, verifier))
            },
            &stop,
        )
        .await;
        let alice = key.sign(&good_claims(&url));
        let reply = post(&url, Some(&alice), &[], &initialize()).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let session = reply.headers["mcp-session-id"].to_str().unwrap().to_owned();
        let version = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let reply = post(&url, Some(&alice), &version, &initialized).await;
        assert!(reply.status < 300);
        let reply = post(&url, Some(&alice), &version, &call("whoami", json!({}))).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let who = structured(&reply);
        assert_eq!(who["session"], session.as_str());
        assert_eq!(who["subject"], "alice");
        // Bob's good token does not open Alice's session.
        let mut claims = good_claims(&url);
        claims["sub"] = json!("bob");
        let bob = key.sign(&claims);
        let reply = post(&url, Some(&bob), &version, &call("whoami", json!({}))).await;
        assert_eq!(reply.status, 404);
        stop.cancel();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirrored_parameters_are_checked_as_the_conformance_scenario_expects() {
    tokio::time::timeout(LIMIT, async {
        let stop = CancellationToken::new();
        let url = serve(server(), true, |_| None, &stop).await;
        let new = ("mcp-protocol-version", "2026-07-28");
        let cases: [(&str, Option<&str>, bool); 7] = [
            ("Hello", Some("=?base64?SGVsbG8=?="), true),
            ("Hello", Some("=?BASE64?SGVsbG8=?="), true),
            ("Hello", Some("=?base64?SGVsbG8?="), false),
            ("Hello", Some("=?base64?SGVs!!!bG8=?="), false),
            ("SGVsbG8=", Some("SGVsbG8="), true),
            ("=?base64?SGVsbG8=", Some("=?base64?SGVsbG8="), true),
            ("test-value", None, false),
        ];
        for (body, header, accepted) in cases {
            // The standard headers rmcp checks for this version.
            let mut headers = vec![new, ("Mcp-Method", "tools/call"), ("Mcp-Name", "place")];
            if let Some(header) = header {
                headers.push(("Mcp-Param-Region", header));
            }
            let mut message = call("place", json!({"region": body}));
            // What a request of this version carries in `_meta`.
            message["params"]["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}});
            let reply = post(&url, None, &headers, &message).await;
            if accepted {
                assert_eq!(reply.status, 200, "{body} / {header:?}: {}", reply.body);
                assert_ne!(
                    reply.body["result"]["isError"],
                    json!(true),
                    "{}",
                    reply.body
                );
            } else {
                assert_eq!(reply.status, 400, "{body} / {header:?}: {}", reply.body);
                assert_eq!(reply.body["error"]["code"], -32020, "{}", reply.body);
                assert_eq!(reply.body["id"], 7);
            }
        }
        // A client of an older version sends no such header and is not held to it.
        let old = [("mcp-protocol-version", "2025-11-25")];
        let reply = post(&url, None, &old, &call("place", json!({"region": "eu"}))).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        // With no auth, a tool that takes `&Claims` cannot run, and `&Caller` has none.
        let reply = post(&url, None, &old, &call("scopes", json!({}))).await;
        assert_eq!(
            reply.body["result"]["isError"],
            json!(true),
            "{}",
            reply.body
        );
        let reply = post(&url, None, &old, &call("whoami", json!({}))).await;
        assert_eq!(structured(&reply)["subject"], Value::Null);
        // Nothing is served at the metadata's address.
        let metadata = format!(
            "{}/.well-known/oauth-protected-resource",
            url.trim_end_matches("/mcp")
        );
        let client = reqwest::Client::builder().timeout(LIMIT).build().unwrap();
        assert_eq!(client.get(metadata).send().await.unwrap().status(), 404);
        stop.cancel();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_call_knows_its_protocol_and_has_no_headers() {
    tokio::time::timeout(LIMIT, async {
        let registry = Arc::new(ToolRegistry::new());
        registry.register(WhoamiTool).unwrap();
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_io);
        tokio::spawn(McpServer::new(registry).serve_io(server_read, server_write));
        let (read, mut write) = tokio::io::split(client_io);
        let mut lines = tokio::io::BufReader::new(read);
        use tokio::io::AsyncBufReadExt;
        let mut send = async |message: Value| {
            write
                .write_all(format!("{message}\n").as_bytes())
                .await
                .unwrap();
        };
        send(initialize()).await;
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        send(call("whoami", json!({}))).await;
        let mut line = String::new();
        loop {
            line.clear();
            lines.read_line(&mut line).await.unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == 7 {
                let text = message["result"]["content"][0]["text"].as_str().unwrap();
                let who: Value = serde_json::from_str(text).unwrap();
                assert_eq!(who["protocol"], "2025-11-25");
                assert_eq!(who["http"], false);
                assert_eq!(who["session"], Value::Null);
                assert_eq!(who["tenant"], Value::Null);
                break;
            }
        }
    })
    .await
    .unwrap();
}
