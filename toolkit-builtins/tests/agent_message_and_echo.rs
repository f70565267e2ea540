//! `echo` and `message` through a real registry, delivering into the
//! ready-made channel sink the host reads.

#![cfg(feature = "agent")]

use serde_json::json;
use toolsmith::{ToolContext, ToolFilter, ToolRegistry};
use toolsmith_builtins::agent::{ChannelSink, Messenger, OutboundMessage};

fn registry() -> ToolRegistry {
    ToolRegistry::from_inventory(&ToolFilter::default().names(["echo", "message"])).unwrap()
}

#[tokio::test]
async fn echo_repeats_its_message() {
    let out = registry()
        .call(
            "echo",
            json!({"message": "héllo ; $(x)"}),
            &ToolContext::new(),
        )
        .await;
    assert!(!out.is_error);
    assert_eq!(out.content, "héllo ; $(x)");
}

#[test]
fn echo_is_in_the_shell_category_at_low_risk() {
    use toolsmith::{RiskLevel, ToolCategory};
    let echo = registry().get("echo").unwrap();
    assert_eq!(echo.spec().category, Some(ToolCategory::Shell));
    assert_eq!(echo.spec().risk_level(), RiskLevel::Low);
    // Low risk, so a filter that leaves out high-risk tools still takes it.
    let all_safe = ToolRegistry::from_inventory(&ToolFilter::default()).unwrap();
    assert!(all_safe.contains("echo"));
}

#[tokio::test]
async fn a_message_goes_to_the_current_chat_as_a_reply() {
    let (sink, mut outbox) = ChannelSink::new(8);
    let ctx = ToolContext::new()
        .with_channel("telegram", "42")
        .with_message_id("m-7")
        .with_state(Messenger::new(sink));
    let out = registry()
        .call(
            "message",
            json!({"content": "Done!", "buttons": [["Yes", "No"], ["Later"]]}),
            &ctx,
        )
        .await;
    assert_eq!(out.content, "Message sent to telegram:42");
    let sent = outbox.recv().await.unwrap();
    let expected = OutboundMessage::new("telegram", "42", "Done!")
        .with_buttons(vec![vec!["Yes".into(), "No".into()], vec!["Later".into()]])
        .with_reply_to("m-7");
    assert_eq!(sent, expected);
}

#[tokio::test]
async fn a_message_to_another_chat_does_not_carry_the_message_id() {
    let (sink, mut outbox) = ChannelSink::new(8);
    let ctx = ToolContext::new()
        .with_channel("telegram", "42")
        .with_message_id("m-7")
        .with_state(Messenger::new(sink));
    let registry = registry();
    let out = registry
        .call("message", json!({"content": "hi", "chat_id": "43"}), &ctx)
        .await;
    assert_eq!(out.content, "Message sent to telegram:43");
    let sent = outbox.recv().await.unwrap();
    assert_eq!(
        (sent.channel.as_str(), sent.chat_id.as_str()),
        ("telegram", "43")
    );
    assert_eq!(sent.reply_to, None);

    let out = registry
        .call(
            "message",
            json!({"content": "hi", "channel": "slack", "chat_id": "42"}),
            &ctx,
        )
        .await;
    assert_eq!(out.content, "Message sent to slack:42");
    assert_eq!(outbox.recv().await.unwrap().reply_to, None);
}

#[tokio::test]
async fn another_channel_needs_its_own_chat_id() {
    let (sink, mut outbox) = ChannelSink::new(8);
    let ctx = ToolContext::new()
        .with_channel("telegram", "42")
        .with_state(Messenger::new(sink));
    let out = registry()
        .call(
            "message",
            json!({"content": "hi", "channel": "discord"}),
            &ctx,
        )
        .await;
    assert!(out.is_error);
    assert!(
        out.content
            .contains("chat_id is required when sending to another channel"),
        "{}",
        out.content
    );
    assert!(outbox.try_recv().is_err());
}

#[tokio::test]
async fn without_a_current_chat_the_target_must_be_named() {
    let (sink, mut outbox) = ChannelSink::new(8);
    let ctx = ToolContext::new().with_state(Messenger::new(sink));
    let registry = registry();
    let out = registry
        .call("message", json!({"content": "hi"}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("give both channel and chat_id"),
        "{}",
        out.content
    );
    let out = registry
        .call(
            "message",
            json!({"content": "hi", "channel": "cli", "chat_id": "direct"}),
            &ctx,
        )
        .await;
    assert_eq!(out.content, "Message sent to cli:direct");
    assert_eq!(outbox.recv().await.unwrap().chat_id, "direct");
}

#[tokio::test]
async fn attachments_are_files_inside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    std::fs::write(dir.path().join("out/chart.png"), b"png").unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"txt").unwrap();
    let (sink, mut outbox) = ChannelSink::new(8);
    let ctx = ToolContext::new()
        .with_workspace(dir.path())
        .with_channel("cli", "1")
        .with_state(Messenger::new(sink));
    let registry = registry();

    let out = registry
        .call(
            "message",
            json!({"content": "see", "media": ["out/chart.png", "notes.txt"]}),
            &ctx,
        )
        .await;
    assert_eq!(out.content, "Message sent to cli:1 with 2 attachments");
    let root = dir.path().canonicalize().unwrap();
    let media = outbox.recv().await.unwrap().media;
    let paths: Vec<_> = media.iter().map(|a| a.path().to_path_buf()).collect();
    assert_eq!(
        paths,
        vec![root.join("out/chart.png"), root.join("notes.txt")]
    );

    // A link out, and a FIFO a channel reading it would wait on forever.
    std::os::unix::fs::symlink(outside.path(), dir.path().join("link.png")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        dir.path().join("pipe.png"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    for bad in [
        outside.path().display().to_string(),
        "../escape.txt".to_owned(),
        "missing.png".to_owned(),
        "link.png".to_owned(),
        "pipe.png".to_owned(),
        "out".to_owned(),
    ] {
        let out = registry
            .call("message", json!({"content": "x", "media": [bad]}), &ctx)
            .await;
        assert!(out.is_error, "{bad} was attached");
    }
    assert!(
        outbox.try_recv().is_err(),
        "a refused message was sent anyway"
    );
}

#[tokio::test]
async fn a_closed_outbox_is_an_error_result() {
    let (sink, outbox) = ChannelSink::new(1);
    drop(outbox);
    let ctx = ToolContext::new()
        .with_channel("cli", "1")
        .with_state(Messenger::new(sink));
    let out = registry()
        .call("message", json!({"content": "hi"}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("the message was not sent"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn without_a_messenger_the_tool_says_it_is_not_set_up() {
    let ctx = ToolContext::new().with_channel("cli", "1");
    let out = registry()
        .call("message", json!({"content": "hi"}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(out.content.contains("Messenger"), "{}", out.content);
}

#[test]
fn the_message_schema_names_every_parameter() {
    let tool = registry().get("message").unwrap();
    let schema = &tool.spec().input_schema;
    let mut names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    names.sort();
    assert_eq!(names, ["buttons", "channel", "chat_id", "content", "media"]);
    assert_eq!(schema["required"], json!(["content"]));
}

/// A message is bounded in its size, its attachments and its buttons: a
/// model cannot send a chat a 20 MB text, 50,000 attachments or a row of
/// thousands of buttons. Nothing is sent when refused.
#[tokio::test]
async fn oversized_messages_are_refused_and_nothing_is_sent() {
    let (sink, mut outbox) = ChannelSink::new(8);
    let ctx = ToolContext::new()
        .with_channel("telegram", "42")
        .with_state(Messenger::new(sink));
    let labels = |n: usize| vec![vec!["b"; n]];
    for (what, args) in [
        ("long text", json!({"content": "x".repeat(20_001)})),
        (
            "many attachments",
            json!({"content": "hi", "media": vec!["a.txt"; 11]}),
        ),
        (
            "many rows",
            json!({"content": "hi", "buttons": vec![vec!["b"]; 11]}),
        ),
        (
            "a long row",
            json!({"content": "hi", "buttons": labels(11)}),
        ),
        (
            "a long label",
            json!({"content": "hi", "buttons": [["b".repeat(101)]]}),
        ),
        (
            "a long channel",
            json!({"content": "hi", "channel": "c".repeat(257), "chat_id": "1"}),
        ),
        (
            "a long chat id",
            json!({"content": "hi", "chat_id": "1".repeat(1 << 20)}),
        ),
    ] {
        let out = registry().call("message", args, &ctx).await;
        assert!(out.is_error, "{what}: {}", out.content);
        assert!(out.content.len() < 2000, "{what}: echoed back whole");
    }
    drop(ctx);
    assert!(outbox.recv().await.is_none(), "something was sent");
}
