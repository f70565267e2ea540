//! A client of the streamable HTTP server that floods one session with
//! requests, each on a connection it drops as soon as the server has taken
//! the request, and cancels them as it goes, to a handler that does not
//! stop when cancelled: the session has at most 64 handlers running at
//! once, as over a byte stream, and still answers the next request. And
//! one that posts more requests at once than the session answers and
//! holds: those past them are refused at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use tk::CancellationToken;
use tk::mcp::HttpOptions;

use crate::raw_http;
use crate::support::{Served, Until, in_session, within};

/// How many reads of [`Stubborn`] run now, the most at once, and how many
/// started.
#[derive(Default)]
struct Reads {
    now: AtomicUsize,
    most: AtomicUsize,
    started: AtomicUsize,
}

/// Counts a read for as long as it runs, however it ends.
struct Running(Arc<Reads>);

impl Running {
    fn start(reads: &Arc<Reads>) -> Self {
        reads.started.fetch_add(1, SeqCst);
        let now = reads.now.fetch_add(1, SeqCst) + 1;
        reads.most.fetch_max(now, SeqCst);
        Self(Arc::clone(reads))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, SeqCst);
    }
}

/// A resource whose read takes 200 ms, or until `open` is cancelled when
/// there is one, and never looks at its cancellation: neither a cancel nor
/// the client leaving ends it.
struct Stubborn(Arc<Reads>, Option<CancellationToken>);

#[tk::async_trait]
impl tk::mcp::ResourceSource for Stubborn {
    fn resources(&self) -> Vec<serde_json::Value> {
        vec![serde_json::json!({"uri": "mem://slow", "name": "slow"})]
    }

    async fn read(&self, _uri: &str) -> Result<serde_json::Value, String> {
        let _running = Running::start(&self.0);
        match &self.1 {
            Some(open) => open.cancelled().await,
            None => tokio::time::sleep(Duration::from_millis(200)).await,
        }
        Ok(serde_json::json!({"contents": []}))
    }
}

/// A server of [`Stubborn`] on loopback, and its count of reads.
async fn serve(options: HttpOptions, open: Option<CancellationToken>) -> (Arc<Served>, Arc<Reads>) {
    let reads = Arc::new(Reads::default());
    let stubborn = Stubborn(Arc::clone(&reads), open);
    (Served::with_resources(options, |_| stubborn).await, reads)
}

/// POST `body` to the session (none if empty), and read the answer until its head has
/// come (`whole`: until the server closes), bounded at 30 s. Returns what
/// came.
async fn post(served: &Served, session: &str, body: &serde_json::Value, whole: bool) -> String {
    post_from(1, served, session, body, whole).await
}

/// [`post`] from the loopback address 127.0.0.`client`: the server counts
/// a client's share by the address it connects from.
async fn post_from(
    client: u8,
    served: &Served,
    session: &str,
    body: &serde_json::Value,
    whole: bool,
) -> String {
    // No session header for a stateless server.
    let request = match session {
        "" => served.post(body, &["MCP-Protocol-Version: 2025-11-25".to_owned()]),
        session => served.post(body, &in_session(session)),
    };
    let until = if whole { Until::Closed } else { Until::Head };
    within(
        client,
        served.server,
        &request,
        Duration::from_secs(30),
        until,
    )
    .await
}

/// Requests of one session, each on a connection dropped once the server
/// has taken it, half of them cancelled: at most 64 handlers run at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_flooded_with_requests_runs_no_more_handlers_than_the_bound() {
    const REQUESTS: u64 = 1000;
    const AT_ONCE: usize = 32;
    let (served, reads) = serve(HttpOptions::default(), None).await;
    let opening = served.url.clone();
    let session = tokio::task::spawn_blocking(move || raw_http::open_session(&opening))
        .await
        .unwrap();
    let attackers = Arc::new(tokio::sync::Semaphore::new(AT_ONCE));
    let mut sent = tokio::task::JoinSet::new();
    for id in 10..10 + REQUESTS {
        let permit = Arc::clone(&attackers).acquire_owned().await.unwrap();
        let (served, session) = (Arc::clone(&served), session.clone());
        sent.spawn(async move {
            let _permit = permit;
            let read = serde_json::json!({"jsonrpc": "2.0", "id": id,
                "method": "resources/read", "params": {"uri": "mem://slow"}});
            post(&served, &session, &read, false).await;
            if id % 2 == 0 {
                let cancel = serde_json::json!({"jsonrpc": "2.0",
                    "method": "notifications/cancelled", "params": {"requestId": id}});
                post(&served, &session, &cancel, false).await;
            }
        });
    }
    while sent.join_next().await.is_some() {}
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list"});
    let listed = post(&served, &session, &list, true).await;
    served.shutdown.cancel();
    let (most, started) = (reads.most.load(SeqCst), reads.started.load(SeqCst));
    eprintln!("{started} reads started, at most {most} at once");
    assert!(
        listed.contains("mem://slow"),
        "the request after the flood was not answered: {listed}"
    );
    assert!(started > 64, "only {started} reads started");
    assert!(most <= 64, "{most} handlers ran at once");
}

/// 200 requests posted to one session at once, to reads that wait until
/// let go: 64 run, 64 wait for a slot, and the other 72 are answered at
/// once with the error of too many requests; once the reads are let go,
/// every request has its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_past_those_answered_and_waiting_are_refused_at_once() {
    const REQUESTS: u64 = 200;
    let open = CancellationToken::new();
    let (served, reads) = serve(HttpOptions::default(), Some(open.clone())).await;
    let opening = served.url.clone();
    let session = tokio::task::spawn_blocking(move || raw_http::open_session(&opening))
        .await
        .unwrap();
    let refused = Arc::new(AtomicUsize::new(0));
    let mut posts = tokio::task::JoinSet::new();
    for id in 10..10 + REQUESTS {
        let (served, session, refused) =
            (Arc::clone(&served), session.clone(), Arc::clone(&refused));
        posts.spawn(async move {
            let read = serde_json::json!({"jsonrpc": "2.0", "id": id,
                "method": "resources/read", "params": {"uri": "mem://slow"}});
            let answer = post(&served, &session, &read, true).await;
            if answer.contains("-32029") {
                refused.fetch_add(1, SeqCst);
            }
            answer
        });
    }
    // The refusals come while the reads still wait: bounded, then let go.
    let expected = REQUESTS as usize - 128;
    let _ = tokio::time::timeout(Duration::from_secs(30), async {
        while refused.load(SeqCst) < expected {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let refused_while_held = refused.load(SeqCst);
    open.cancel();
    let mut read = 0;
    while let Some(answer) = posts.join_next().await {
        if answer.unwrap().contains("\"contents\"") {
            read += 1;
        }
    }
    served.shutdown.cancel();
    let most = reads.most.load(SeqCst);
    eprintln!("{read} read, {refused_while_held} refused, at most {most} at once");
    assert_eq!(
        refused_while_held, expected,
        "refused while the reads were held"
    );
    assert_eq!(read, 128, "the requests let in were not all answered");
    assert!(most <= 64, "{most} handlers ran at once");
}

/// A stateless server: each request is answered on its own, and a client
/// that leaves before the answer leaves its handler running (one that
/// does not watch its cancellation). Requests posted and dropped in a loop
/// by four clients have at most as many handlers running at once as the
/// server serves connections (here 16), and the server still answers the
/// next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_runs_no_more_handlers_than_its_connections() {
    const REQUESTS: u64 = 300;
    const CONNECTIONS: usize = 16;
    let open = CancellationToken::new();
    let options = HttpOptions::default()
        .stateless(true)
        .max_connections(CONNECTIONS);
    let (served, reads) = serve(options, Some(open.clone())).await;
    let attackers = Arc::new(tokio::sync::Semaphore::new(32));
    let mut sent = tokio::task::JoinSet::new();
    for id in 10..10 + REQUESTS {
        let permit = Arc::clone(&attackers).acquire_owned().await.unwrap();
        let served = Arc::clone(&served);
        sent.spawn(async move {
            let _permit = permit;
            let read = serde_json::json!({"jsonrpc": "2.0", "id": id,
                "method": "resources/read", "params": {"uri": "mem://slow"}});
            // Gone after a moment: no answer comes before the reads are
            // let go.
            let client = (id % 4) as u8 + 1;
            let posted = post_from(client, &served, "", &read, true);
            let _ = tokio::time::timeout(Duration::from_millis(300), posted).await;
        });
    }
    while sent.join_next().await.is_some() {}
    let (most, started) = (reads.most.load(SeqCst), reads.started.load(SeqCst));
    open.cancel();
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list"});
    let listed = post(&served, "", &list, true).await;
    served.shutdown.cancel();
    eprintln!("{started} reads started, at most {most} at once");
    assert!(
        listed.contains("mem://slow"),
        "not answered after: {listed}"
    );
    assert!(started >= CONNECTIONS, "only {started} reads started");
    assert!(most <= CONNECTIONS, "{most} handlers ran at once");
}

/// Requests spread over several sessions of as many clients, each dropped
/// once taken: the server answers at most as many at once, in all its
/// sessions, as it serves connections (here 16), though each session alone
/// may have 64.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_together_run_no_more_handlers_than_the_server_serves_connections() {
    const REQUESTS: u64 = 400;
    const CONNECTIONS: usize = 16;
    let options = HttpOptions::default().max_connections(CONNECTIONS);
    let (served, reads) = serve(options, None).await;
    let opening = served.url.clone();
    let sessions = tokio::task::spawn_blocking(move || {
        (0..4)
            .map(|_| raw_http::open_session(&opening))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let attackers = Arc::new(tokio::sync::Semaphore::new(32));
    let mut sent = tokio::task::JoinSet::new();
    for id in 10..10 + REQUESTS {
        let permit = Arc::clone(&attackers).acquire_owned().await.unwrap();
        let served = Arc::clone(&served);
        let which = id as usize % sessions.len();
        let session = sessions[which].clone();
        sent.spawn(async move {
            let _permit = permit;
            let read = serde_json::json!({"jsonrpc": "2.0", "id": id,
                "method": "resources/read", "params": {"uri": "mem://slow"}});
            post_from(which as u8 + 1, &served, &session, &read, false).await;
        });
    }
    while sent.join_next().await.is_some() {}
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list"});
    let listed = post(&served, &sessions[0], &list, true).await;
    served.shutdown.cancel();
    let (most, started) = (reads.most.load(SeqCst), reads.started.load(SeqCst));
    eprintln!("{started} reads started, at most {most} at once");
    assert!(
        listed.contains("mem://slow"),
        "not answered after: {listed}"
    );
    assert!(started > CONNECTIONS, "only {started} reads started");
    assert!(most <= CONNECTIONS, "{most} handlers ran at once");
}
