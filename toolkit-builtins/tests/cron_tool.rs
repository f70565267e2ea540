//! The `cron` tool over the ready-made scheduler and its jobs file.

#![cfg(feature = "agent")]

use serde_json::{Value, json};
use toolsmith::{ToolContext, ToolFilter, ToolOutput, ToolRegistry};
use toolsmith_builtins::agent::cron::{
    Clock, CronJobs, FiredJob, MAX_EXPR_CHARS, MAX_MESSAGE_CHARS, MAX_MOMENT_CHARS, MAX_NAME_CHARS,
    MAX_TZ_CHARS, NewJob, Schedule, TokioScheduler, parse_moment,
};
use toolsmith_builtins::agent::{ChannelSink, Messenger};

const NOW: &str = "2026-01-15T12:00:00Z";

struct Setup {
    _dir: tempfile::TempDir,
    scheduler: TokioScheduler,
    ctx: ToolContext,
    registry: ToolRegistry,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (sink, _outbox) = ChannelSink::new(8);
        let clock = Clock::tokio(NOW.parse().unwrap());
        let scheduler = TokioScheduler::open_with_clock(
            dir.path().join("jobs.json"),
            Messenger::new(sink),
            clock,
        )
        .unwrap();
        let ctx = ToolContext::new()
            .with_channel("telegram", "42")
            .with_state(CronJobs::new(scheduler.clone()).with_timezone("Europe/Paris"));
        let registry =
            ToolRegistry::from_inventory(&ToolFilter::default().names(["cron"])).unwrap();
        Self {
            _dir: dir,
            scheduler,
            ctx,
            registry,
        }
    }

    async fn call(&self, args: Value) -> ToolOutput {
        self.registry.call("cron", args, &self.ctx).await
    }
}

fn id_of(text: &str) -> String {
    let start = text.find("(id: ").expect("an id") + 5;
    text[start..start + 8].to_owned()
}

#[tokio::test(start_paused = true)]
async fn add_list_and_remove_each_kind_of_job() {
    let s = Setup::new();
    let out = s
        .call(json!({"action": "add", "message": "drink water", "every_seconds": "3600"}))
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(
        out.content.starts_with("Created job 'drink water' (id: "),
        "{}",
        out.content
    );
    assert!(
        out.content.ends_with("next run 2026-01-15T13:00:00Z"),
        "{}",
        out.content
    );
    let every = id_of(&out.content);

    // The default time zone applies: 9:00 in Paris is 8:00 UTC in January.
    let out = s
        .call(json!({"action": "add", "name": "standup", "message": "standup time", "cron_expr": "0 9 * * 1-5"}))
        .await;
    assert!(
        out.content.ends_with("next run 2026-01-16T08:00:00Z"),
        "{}",
        out.content
    );

    let out = s
        .call(json!({"action": "add", "message": "call mom", "cron_expr": "0 18 * * SUN", "tz": "America/Vancouver"}))
        .await;
    assert!(
        out.content.ends_with("next run 2026-01-19T02:00:00Z"),
        "{}",
        out.content
    );

    let out = s
        .call(json!({"action": "add", "message": "launch", "at": "2026-02-12T10:30:00"}))
        .await;
    assert!(
        out.content.ends_with("next run 2026-02-12T09:30:00Z"),
        "{}",
        out.content
    );

    let listing = s.call(json!({"action": "list"})).await.content;
    assert!(listing.starts_with("Scheduled jobs:\n"), "{listing}");
    assert!(
        listing.contains(&format!(
            "- drink water (id: {every}, every 3600s), next run 2026-01-15T13:00:00Z"
        )),
        "{listing}"
    );
    assert!(listing.contains("standup (id: "), "{listing}");
    assert!(
        listing.contains("cron '0 9 * * 1-5' (Europe/Paris)"),
        "{listing}"
    );
    assert!(
        listing.contains("cron '0 18 * * SUN' (America/Vancouver)"),
        "{listing}"
    );
    assert!(listing.contains("at 2026-02-12T09:30:00Z"), "{listing}");

    // Each job keeps the chat it was scheduled from.
    assert!(
        s.scheduler
            .jobs()
            .iter()
            .all(|j| j.channel == "telegram" && j.chat_id == "42")
    );

    let out = s.call(json!({"action": "remove", "job_id": every})).await;
    assert_eq!(
        out.content,
        format!("Removed job 'drink water' (id: {every})")
    );
    assert_eq!(s.scheduler.jobs().len(), 3);
    let out = s.call(json!({"action": "remove", "job_id": every})).await;
    assert!(out.is_error);
    assert!(
        out.content.contains(&format!("Job {every} not found")),
        "{}",
        out.content
    );
}

#[tokio::test(start_paused = true)]
async fn an_empty_list_says_so() {
    let s = Setup::new();
    assert_eq!(
        s.call(json!({"action": "list"})).await.content,
        "No scheduled jobs."
    );
}

#[tokio::test(start_paused = true)]
async fn protected_system_jobs_are_listed_but_not_removed() {
    let s = Setup::new();
    let dream = s
        .scheduler
        .add_system_job(
            NewJob::new(
                Schedule::every(7200).unwrap(),
                "consolidate memory",
                "system",
                "dream",
            )
            .named("dream"),
            "This is the system's memory consolidation job; it can be viewed, not removed.",
        )
        .unwrap();
    let listing = s.call(json!({"action": "list"})).await.content;
    assert!(
        listing.contains(&format!("- dream (id: {}, every 7200s)", dream.id)),
        "{listing}"
    );
    assert!(
        listing.contains("[system job: can be viewed, not removed]"),
        "{listing}"
    );

    let out = s
        .call(json!({"action": "remove", "job_id": dream.id}))
        .await;
    assert!(out.is_error);
    assert!(
        out.content.contains(&format!(
            "Cannot remove job `dream` (id: {}).\nThis is the system's memory consolidation job; it can be viewed, not removed.",
            dream.id
        )),
        "{}",
        out.content
    );
    assert_eq!(s.scheduler.jobs().len(), 1);

    // Adding it again at the next start updates it in place.
    let again = s
        .scheduler
        .add_system_job(
            NewJob::new(
                Schedule::every(3600).unwrap(),
                "consolidate memory",
                "system",
                "dream",
            )
            .named("dream"),
            "still protected",
        )
        .unwrap();
    assert_eq!(again.id, dream.id);
    assert_eq!(s.scheduler.jobs().len(), 1);
    assert_eq!(
        s.scheduler.jobs()[0].schedule,
        Schedule::Every { seconds: 3600 }
    );
}

#[tokio::test(start_paused = true)]
async fn wrong_arguments_get_errors_the_model_can_act_on() {
    let s = Setup::new();
    let cases = [
        (
            json!({"action": "add", "every_seconds": 60}),
            "message is required for add",
        ),
        (
            json!({"action": "add", "message": "x"}),
            "either every_seconds, cron_expr, or at is required",
        ),
        (
            json!({"action": "add", "message": "x", "every_seconds": 60, "tz": "UTC"}),
            "tz can only be used with cron_expr",
        ),
        (
            json!({"action": "add", "message": "x", "every_seconds": 60, "at": "2026-03-01T00:00:00Z"}),
            "give only one of every_seconds, cron_expr and at",
        ),
        (
            json!({"action": "add", "message": "x", "cron_expr": "0 9 * * *", "tz": "Moon/Base"}),
            "unknown timezone 'Moon/Base'",
        ),
        (
            json!({"action": "add", "message": "x", "cron_expr": "not cron"}),
            "invalid cron expression 'not cron'",
        ),
        (
            json!({"action": "add", "message": "x", "at": "next tuesday"}),
            "invalid ISO datetime format 'next tuesday'",
        ),
        (
            json!({"action": "add", "message": "x", "at": "2020-01-01T00:00:00Z"}),
            "is in the past",
        ),
        (
            json!({"action": "add", "message": "x", "every_seconds": 0}),
            "every_seconds must be >= 1",
        ),
        (json!({"action": "remove"}), "job_id is required for remove"),
        (json!({"action": "pause"}), "action must be one of"),
    ];
    for (args, expected) in cases {
        let out = s.call(args.clone()).await;
        assert!(out.is_error, "{args} was accepted");
        assert!(out.content.contains(expected), "{args}: {}", out.content);
    }
    assert!(s.scheduler.jobs().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_job_needs_a_chat_to_report_to() {
    let s = Setup::new();
    let ctx = ToolContext::new().with_state(CronJobs::new(s.scheduler.clone()));
    let out = s
        .registry
        .call(
            "cron",
            json!({"action": "add", "message": "x", "every_seconds": 5}),
            &ctx,
        )
        .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("no session context"),
        "{}",
        out.content
    );
}

#[tokio::test(start_paused = true)]
async fn a_turn_run_for_a_fired_job_cannot_add_jobs() {
    let s = Setup::new();
    let out = s
        .call(json!({"action": "add", "message": "check the news", "every_seconds": 60}))
        .await;
    let job = id_of(&out.content);
    // The host runs the job's turn with the marker in its context.
    let fired = s.ctx.clone().with_state(FiredJob {
        job_id: job.clone(),
    });
    let out = s
        .registry
        .call(
            "cron",
            json!({"action": "add", "message": "and again", "every_seconds": 1}),
            &fired,
        )
        .await;
    assert!(out.is_error);
    assert!(
        out.content.contains(&format!(
            "cannot schedule new jobs from within the scheduled job '{job}'"
        )),
        "{}",
        out.content
    );
    assert_eq!(s.scheduler.jobs().len(), 1, "nothing was added");
    // Listing and removing still work from such a turn.
    let out = s
        .registry
        .call("cron", json!({"action": "list"}), &fired)
        .await;
    assert!(out.content.contains(&job), "{}", out.content);
    let out = s
        .registry
        .call("cron", json!({"action": "remove", "job_id": job}), &fired)
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(s.scheduler.jobs().is_empty());
}

/// The tool takes from the model what the scheduler keeps from its file:
/// a message of `MAX_MESSAGE_CHARS` characters and a name of
/// `MAX_NAME_CHARS` (counted in characters, not bytes), an expression of
/// `MAX_EXPR_CHARS`, a time zone of `MAX_TZ_CHARS` and a moment of
/// `MAX_MOMENT_CHARS`, and not one more; what is refused for its length is
/// not echoed back.
#[tokio::test(start_paused = true)]
async fn the_tools_lengths_are_the_schedulers() {
    let s = Setup::new();
    let add = |message: String, name: String| json!({"action": "add", "message": message, "name": name, "every_seconds": 60});
    let longest = add("é".repeat(MAX_MESSAGE_CHARS), "é".repeat(MAX_NAME_CHARS));
    let out = s.call(longest).await;
    assert!(!out.is_error, "{}", out.content);
    for args in [
        add("é".repeat(MAX_MESSAGE_CHARS + 1), "n".into()),
        add("m".into(), "é".repeat(MAX_NAME_CHARS + 1)),
    ] {
        let out = s.call(args).await;
        assert!(out.is_error, "accepted");
    }
    assert_eq!(s.scheduler.jobs().len(), 1);

    let cron = |expr: String, tz: String| json!({"action": "add", "message": "m", "cron_expr": expr, "tz": tz});
    // `croner` takes any number of spaces between fields.
    let spaced = |chars: usize| format!("0 9{} * * *", " ".repeat(chars - 9));
    let out = s.call(cron(spaced(MAX_EXPR_CHARS), "UTC".into())).await;
    assert!(!out.is_error, "{}", out.content);
    let out = s.call(cron(spaced(MAX_EXPR_CHARS + 1), "UTC".into())).await;
    assert!(out.is_error, "accepted");
    assert!(!out.content.contains("        "), "{}", out.content);
    // No zone has so long a name: the longest is refused as unknown, one
    // more character for its length, before it is looked up.
    let out = s
        .call(cron("0 9 * * *".into(), "Z".repeat(MAX_TZ_CHARS)))
        .await;
    assert!(out.content.contains("unknown timezone"), "{}", out.content);
    let out = s
        .call(cron("0 9 * * *".into(), "Z".repeat(MAX_TZ_CHARS + 1)))
        .await;
    assert!(out.is_error, "accepted");
    assert!(!out.content.contains("unknown timezone"), "{}", out.content);
    assert_eq!(s.scheduler.jobs().len(), 2);

    let at = |at: String| json!({"action": "add", "message": "m", "at": at});
    // The longest moment, padded with blanks (which are trimmed): read.
    let padded = |chars: usize| format!("{:<chars$}", "2099-01-01T09:00:00Z");
    let out = s.call(at(padded(MAX_MOMENT_CHARS))).await;
    assert!(!out.is_error, "{}", out.content);
    let out = s.call(at(padded(MAX_MOMENT_CHARS + 1))).await;
    assert!(out.is_error, "accepted");
    let out = s.call(at("9".repeat(1 << 20))).await;
    assert!(out.is_error, "accepted");
    assert!(
        out.content.len() < 1000,
        "echoed: {} bytes",
        out.content.len()
    );
    assert_eq!(s.scheduler.jobs().len(), 3);
    for (text, tz) in [
        ("9".repeat(MAX_MOMENT_CHARS + 1), "UTC".to_owned()),
        (
            "2099-01-01T09:00:00".to_owned(),
            "Z".repeat(MAX_TZ_CHARS + 1),
        ),
    ] {
        let refused = parse_moment(&text, &tz).expect_err("read").to_string();
        assert!(refused.contains("longer than"), "{refused}");
    }
}

/// Arguments a model may write to hurt the scheduler: numbers past `u64`,
/// negative, as strings and floats; moments at the ends of the calendar,
/// in a gap of a time change, in other scripts, a megabyte long; cron
/// expressions of zero steps, huge steps, impossible dates, other digits;
/// time zones spelled as paths to files of the host (`../../etc/passwd`,
/// `/proc/self/environ`), with NUL bytes; ids as paths. Each call answers
/// in time without a panic, and what is added is a job that fires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_arguments_answer_in_time_without_a_panic() {
    let s = std::sync::Arc::new(Setup::new());
    let mut cases = Vec::new();
    for seconds in [
        json!(-1),
        json!("-1"),
        json!(u64::MAX),
        json!("18446744073709551616"),
        json!(1e300),
        json!(2.5),
        json!("NaN"),
        json!("1e3"),
        json!(true),
        json!(i64::MAX),
    ] {
        cases.push(json!({"action": "add", "message": "x", "every_seconds": seconds}));
    }
    for at in [
        json!(""),
        json!("+999999-01-01T00:00:00"),
        json!("-009999-01-01T00:00:00Z"),
        json!("9999-12-31T23:59:59.999999999Z"),
        json!("2026-02-30T00:00:00"),
        json!("2026-03-29T02:30:00"),
        json!("２０２６-０３-０１T00:00:00"),
        json!("2026-03-01T00:00:00[../../etc/passwd]"),
        json!("2026-03-01T00:00:00+99:99"),
        json!("9".repeat(1 << 20)),
        json!(1_767_225_600),
    ] {
        cases.push(json!({"action": "add", "message": "x", "at": at}));
    }
    for expr in [
        "*/0 * * * *".to_owned(),
        "0 0 30 2 *".to_owned(),
        "0 0 1-31/4294967296 * *".to_owned(),
        "59-0 * * * *".to_owned(),
        "* * * * * * * *".to_owned(),
        "٣ * * * *".to_owned(),
        "0 0 29 2 1#5".to_owned(),
        "0 0 L W ?".to_owned(),
        format!("{} * * * *", vec!["0"; 127].join(",")),
    ] {
        cases.push(json!({"action": "add", "message": "x", "cron_expr": expr}));
    }
    for tz in [
        "../../../../etc/passwd",
        "/etc/localtime",
        "/proc/self/environ",
        "../../../../proc/self/fd/0",
        "UTC\u{0}",
        "posix:EST5EDT,M3.2.0,M11.1.0",
        "right/UTC",
        "Europe/../../..",
        "europe/PARIS",
        "",
    ] {
        cases.push(json!({"action": "add", "message": "x", "cron_expr": "0 9 * * *", "tz": tz}));
    }
    for id in ["../jobs", "\u{0}", "*", &"f".repeat(1 << 20)] {
        cases.push(json!({"action": "remove", "job_id": id}));
    }
    cases.push(json!({"action": "add", "message": "\u{202e}x\u{0}", "name": "\u{301}", "every_seconds": 60}));
    let (mut tried, mut refused, mut added) = (0, 0, 0);
    for args in cases {
        tried += 1;
        let call = {
            let (s, args) = (std::sync::Arc::clone(&s), args.clone());
            tokio::spawn(async move { s.call(args).await })
        };
        let out = tokio::time::timeout(std::time::Duration::from_secs(30), call)
            .await
            .unwrap_or_else(|_| panic!("{args}: no answer in time"))
            .unwrap();
        assert!(
            !out.content.contains("internal error"),
            "{args}: {}",
            out.content
        );
        if out.is_error {
            refused += 1;
        } else {
            added += 1;
            let id = id_of(&out.content);
            let job = s.scheduler.jobs().into_iter().find(|j| j.id == id).unwrap();
            assert!(job.next_run.is_some(), "{args}: {job:?}");
        }
    }
    eprintln!("cron arguments: tried {tried}, refused {refused}, added {added}");
    assert!(added > 0 && refused > 0);
}
