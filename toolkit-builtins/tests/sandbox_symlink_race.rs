//! A symlink swapped between an inside and an outside target while the
//! tools read, write, list and search through it: nothing outside is ever
//! read or written. (A check-then-open sandbox loses this race quickly.)

mod fs_support;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use fs_support::{Env, SECRET};
use serde_json::json;

const ROUNDS: usize = 400;

/// Point `link` at `target` atomically (a new link renamed over it).
fn repoint(dir: &Path, target: &Path) {
    let temp = dir.join(".swap.tmp");
    let _ = std::fs::remove_file(&temp);
    symlink(target, &temp).unwrap();
    std::fs::rename(&temp, dir.join("swap")).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swapped_symlink_never_leads_outside() {
    let env = Env::new();
    env.write("inside/data.txt", "INSIDE\n");
    std::fs::write(env.outside.join("data.txt"), format!("{SECRET}\n")).unwrap();
    std::fs::write(env.outside.join("only-outside.txt"), "x").unwrap();
    let outside_before = std::fs::read_dir(&env.outside).unwrap().count();

    // Relative targets: absolute links are refused outright, which would
    // make the race too easy to win.
    let inside = Path::new("inside");
    repoint(&env.ws, inside);
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (ws, stop) = (env.ws.clone(), Arc::clone(&stop));
        let outside = Path::new("../outside");
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                repoint(&ws, outside);
                repoint(&ws, inside);
                swaps += 1;
            }
            swaps
        })
    };

    let mut inside_reads = 0;
    for round in 0..ROUNDS {
        let out = env
            .call("read_file", json!({"path": "swap/data.txt"}))
            .await;
        assert!(
            !out.content.contains(SECRET),
            "round {round}: read the outside file"
        );
        inside_reads += usize::from(out.content == "1|INSIDE\n");

        let content = format!("WRITTEN {round}\n");
        let out = env
            .call(
                "write_file",
                json!({"path": "swap/data.txt", "content": content}),
            )
            .await;
        assert!(!out.content.contains(SECRET));
        let out = env
            .call(
                "write_file",
                json!({"path": "swap/new.txt", "content": "new"}),
            )
            .await;
        assert!(!out.content.contains(SECRET));
        let out = env
            .call(
                "edit_file",
                json!({"path": "swap/data.txt", "old_text": "WRITTEN", "new_text": "INSIDE"}),
            )
            .await;
        assert!(!out.content.contains(SECRET));
        // Put the inside file back for the next read.
        let _ = env
            .call(
                "write_file",
                json!({"path": "inside/data.txt", "content": "INSIDE\n"}),
            )
            .await;

        for (tool, args) in [
            ("list_dir", json!({"path": "swap"})),
            ("glob", json!({"pattern": "*.txt", "path": "swap"})),
            (
                "grep",
                json!({"pattern": "SECRET|only", "path": "swap", "output_mode": "content"}),
            ),
        ] {
            let out = env.call(tool, args).await;
            assert!(
                !out.content.contains(SECRET) && !out.content.contains("only-outside"),
                "round {round}: {tool} showed the outside: {}",
                out.content
            );
        }
        assert_eq!(
            std::fs::read_to_string(env.outside.join("data.txt")).unwrap(),
            format!("{SECRET}\n"),
            "round {round}: the outside file was written"
        );
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();

    assert_eq!(
        std::fs::read_dir(&env.outside).unwrap().count(),
        outside_before
    );
    assert!(!env.outside.join("new.txt").exists());
    // The race really ran: the link moved many times, and some reads
    // caught it pointing inside.
    assert!(swaps > 10, "only {swaps} swaps");
    assert!(inside_reads > 0);
}
