//! DNS rebinding, end to end: a name whose resolver answers an allowed
//! address to the check and another address afterwards. The guard must
//! connect to what it checked and never ask again.
//!
//! The resolver is the test's own (plugged in with
//! `NetPolicy::with_resolver`); every address in play is loopback: the
//! allowed server on 127.0.0.1, the "internal" one on 127.0.0.2, which the
//! allow list leaves out.
#![cfg(feature = "web")]

mod web_support;

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolsmith::{ToolContext, ToolFilter, ToolOutput, ToolRegistry};
use toolsmith_builtins::net::{NetPolicy, Resolve};
use toolsmith_builtins::web::WebPolicy;
use web_support::{Reply, Server};

/// Answers each lookup with the next of a list of scripted answers (the
/// last one repeats), and records every name it was asked for.
#[derive(Clone, Default)]
struct ScriptedDns {
    answers: Arc<Mutex<VecDeque<Vec<SocketAddr>>>>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl ScriptedDns {
    fn answering(answers: &[&[SocketAddr]]) -> Self {
        let dns = Self::default();
        dns.answers
            .lock()
            .unwrap()
            .extend(answers.iter().map(|a| a.to_vec()));
        dns
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

#[toolsmith::async_trait]
impl Resolve for ScriptedDns {
    async fn resolve(&self, host: &str, _port: u16) -> io::Result<Vec<SocketAddr>> {
        self.asked.lock().unwrap().push(host.to_owned());
        let mut answers = self.answers.lock().unwrap();
        let answer = if answers.len() > 1 {
            answers.pop_front()
        } else {
            answers.front().cloned()
        };
        answer.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such name"))
    }
}

/// The allowed server on 127.0.0.1 and an internal one on 127.0.0.2, on the
/// same port, so only the address tells them apart.
async fn two_servers() -> (Server, Server) {
    let allowed = Server::start(|_| Reply::ok("text/plain", "public page")).await;
    let internal = Server::start_at(&format!("127.0.0.2:{}", allowed.port()), |_| {
        Reply::ok("text/plain", "internal secret")
    })
    .await;
    (allowed, internal)
}

fn context(allowed: &Server, dns: &ScriptedDns) -> ToolContext {
    let net = NetPolicy::new()
        .allow(&format!("127.0.0.1:{}", allowed.port()))
        .unwrap()
        .with_resolver(dns.clone());
    ToolContext::new().with_state(WebPolicy::new().with_net(net))
}

async fn fetch(ctx: &ToolContext, url: &str) -> ToolOutput {
    ToolRegistry::from_inventory(&ToolFilter::default().names(["web_fetch"]))
        .unwrap()
        .call("web_fetch", json!({ "url": url }), ctx)
        .await
}

#[tokio::test]
async fn the_connection_goes_to_the_checked_address_and_the_name_is_looked_up_once() {
    let (allowed, internal) = two_servers().await;
    // First answer: the allowed address. Every later one: the internal one.
    let dns = ScriptedDns::answering(&[&[allowed.addr], &[internal.addr]]);
    let ctx = context(&allowed, &dns);
    let url = format!("http://rebind.test:{}/page", allowed.port());

    let out = fetch(&ctx, &url).await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("public page"), "{}", out.content);
    assert_eq!(dns.asked(), ["rebind.test"], "one lookup for one fetch");
    assert_eq!(allowed.requests().len(), 1);
    assert_eq!(
        allowed.requests()[0].header("host"),
        Some(format!("rebind.test:{}", allowed.port()).as_str()),
        "the request still names the host it was asked for"
    );
    assert!(internal.requests().is_empty());

    // The next fetch asks again and gets the rebound answer: refused before
    // any connection.
    let out = fetch(&ctx, &url).await;
    assert!(out.is_error);
    assert!(
        out.content.contains("`rebind.test` leads to 127.0.0.2:")
            && out.content.contains("a loopback address"),
        "{}",
        out.content
    );
    assert!(
        internal.requests().is_empty(),
        "the internal server was contacted"
    );
}

#[tokio::test]
async fn one_refused_address_among_the_answers_refuses_the_name() {
    let (allowed, internal) = two_servers().await;
    for answer in [[allowed.addr, internal.addr], [internal.addr, allowed.addr]] {
        let dns = ScriptedDns::answering(&[&answer]);
        let ctx = context(&allowed, &dns);
        let out = fetch(&ctx, &format!("http://rebind.test:{}/", allowed.port())).await;
        assert!(out.is_error, "{answer:?}: {}", out.content);
        assert!(out.content.contains("127.0.0.2"), "{}", out.content);
    }
    assert!(allowed.requests().is_empty());
    assert!(internal.requests().is_empty());
}

#[tokio::test]
async fn a_redirect_to_the_same_name_is_looked_up_and_checked_again() {
    // A relative redirect: the next hop is the same name and port.
    let allowed = Server::start(|request| match request.target.as_str() {
        "/start" => Reply::redirect(302, "/next"),
        _ => Reply::ok("text/plain", "public page"),
    })
    .await;
    let internal = Server::start_at(&format!("127.0.0.2:{}", allowed.port()), |_| {
        Reply::ok("text/plain", "internal secret")
    })
    .await;
    // The start of the chain resolves to the allowed server, the redirect's
    // lookup of the same name to the internal one.
    let dns = ScriptedDns::answering(&[&[allowed.addr], &[internal.addr]]);
    let ctx = context(&allowed, &dns);

    let out = fetch(
        &ctx,
        &format!("http://rebind.test:{}/start", allowed.port()),
    )
    .await;
    assert!(out.is_error, "{}", out.content);
    assert!(out.content.contains("127.0.0.2"), "{}", out.content);
    assert_eq!(dns.asked(), ["rebind.test", "rebind.test"]);
    assert_eq!(allowed.requests().len(), 1);
    assert!(internal.requests().is_empty());
}

#[tokio::test]
async fn the_port_checked_is_the_urls_whatever_port_the_resolver_answers() {
    let (allowed, _internal) = two_servers().await;
    let other_port = Server::start(|_| Reply::ok("text/plain", "another service")).await;
    // The resolver answers the allowed address and port; the URL names
    // another port on the same address, which the allow list leaves out.
    let dns = ScriptedDns::answering(&[&[allowed.addr]]);
    let ctx = context(&allowed, &dns);
    let out = fetch(&ctx, &format!("http://rebind.test:{}/", other_port.port())).await;
    assert!(out.is_error, "{}", out.content);
    assert!(
        out.content
            .contains(&format!("leads to 127.0.0.1:{}", other_port.port())),
        "{}",
        out.content
    );
    assert!(other_port.requests().is_empty());
    assert!(allowed.requests().is_empty());
}

#[tokio::test]
async fn a_name_the_resolver_does_not_know_is_a_clear_error() {
    let (allowed, _internal) = two_servers().await;
    let dns = ScriptedDns::default();
    let ctx = context(&allowed, &dns);
    let out = fetch(&ctx, "http://nowhere.test/").await;
    assert!(out.is_error);
    assert!(
        out.content
            .contains("cannot resolve `nowhere.test`: no such name"),
        "{}",
        out.content
    );
}
