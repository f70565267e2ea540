//! A stateless server's requests, each outside every session (here of
//! protocol 2026-07-28, whose version is in its `_meta`), are bounded per
//! client: one client posting such requests and leaving each has at most
//! its part of the server's permits running (half of `max_connections`).

use std::time::Duration;

use tk::mcp::HttpOptions;

use crate::support::Served;

/// The most reads one client (127.0.0.1) had running at once after posting
/// 12 reads of protocol 2026-07-28, one after another, leaving each after
/// 300 ms, to a server of `max_connections(4)` (a client's share: 2). Every
/// read holds until the gate is released, ignoring its cancellation.
async fn most_running(stateless: bool) -> (usize, Vec<String>) {
    let options = HttpOptions::default()
        .max_connections(4)
        .stateless(stateless);
    let served = Served::new(options).await;
    let mut heard = Vec::new();
    let test = async {
        for id in 0..12 {
            heard.push(
                served
                    .read_and_leave(1, id, Duration::from_millis(300))
                    .await,
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    let most = served.gate.most("127.0.0.1");
    served.gate.release();
    served.shutdown.cancel();
    (most, heard)
}

/// Stateless, the client share holds: at most 2 at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_a_client_runs_at_most_its_share_of_sessionless_requests() {
    let (most, heard) = most_running(true).await;
    eprintln!(
        "stateless: at most {most} running at once; first answer {:?}",
        heard.first()
    );
    assert!(most >= 1, "no read ran: {heard:?}");
    assert!(
        most <= 2,
        "one client had {most} reads running at once (its share: 2)"
    );
}
