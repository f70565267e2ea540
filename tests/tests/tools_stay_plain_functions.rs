//! `#[tool]` leaves the function an ordinary function: tests and other code
//! call it directly, with its own types, injected parameters passed by hand.

use std::path::PathBuf;

use tk::{CancellationToken, Tool, ToolContext};
use toolsmith_tests::attributes::{create_account, fetch, purge_cache};
use toolsmith_tests::collections::{Color, Tree, paint};
use toolsmith_tests::injection::{Counter, cancel_status, count_visit, whoami};
use toolsmith_tests::numbers::ping;
use toolsmith_tests::returns::{ShoutTool, divide, shout, weather, word_count};
use toolsmith_tests::whole::{Kind, SearchArgs, search};

#[tokio::test]
async fn async_tools_are_awaited_like_any_function() {
    assert_eq!(shout("hi".into()).await, "HI!");
    assert_eq!(ping().await, "pong");
    assert_eq!(
        paint(Color::Red, Some(Color::Green)).await,
        "color=Red trim=Some(Green)"
    );
    assert_eq!(
        divide(1.0, 0.0).await,
        Err("cannot divide by zero".to_owned())
    );
    assert_eq!(weather("Rome".into()).await.celsius, -6);
    assert_eq!(
        purge_cache(false).await,
        Err("nothing done: set confirm to true".to_owned())
    );
    assert_eq!(
        fetch("https://example.org".into()).await,
        Ok("text of https://example.org".to_owned())
    );
}

#[test]
fn sync_tools_are_called_without_a_runtime() {
    assert_eq!(word_count("a b c".into()), 3);
    let tree = Tree {
        label: "root".into(),
        children: vec![],
    };
    assert_eq!(
        toolsmith_tests::collections::count_nodes(tree),
        "1 nodes: root"
    );
}

#[tokio::test]
async fn defaults_do_not_apply_to_direct_calls() {
    assert_eq!(
        create_account(
            "ada".into(),
            30,
            vec!["x".into()],
            "Hey".into(),
            PathBuf::from("/tmp/ada"),
            0.1,
            2
        )
        .await,
        r#"handle=ada age=30 tags=["x"] greeting=Hey home=/tmp/ada quota=0.1 expires_in_days=2"#
    );
}

#[tokio::test]
async fn injected_parameters_are_passed_by_hand() {
    let counter = Counter::default();
    assert_eq!(count_visit(&counter, 2).await, "visits=2");
    assert_eq!(count_visit(&counter, 3).await, "visits=5");
    let ctx = ToolContext::new().with_channel("cli", "7");
    assert_eq!(whoami(&ctx).await, "channel=cli chat=7 workspace=-");
    let token = CancellationToken::new();
    token.cancel();
    assert_eq!(
        cancel_status(&ctx, &token).await,
        "context=false token=true"
    );
}

#[tokio::test]
async fn a_whole_arguments_struct_is_passed_as_one_value() {
    let args = SearchArgs {
        query: "fn main".into(),
        limit: 2,
        kinds: vec![Kind::Code],
    };
    assert_eq!(search(args).await, "query=fn main limit=2 kinds=[Code]");
}

#[test]
fn the_generated_tool_type_sits_beside_the_function() {
    let tool = ShoutTool;
    assert_eq!(tool.spec().name, "shout");
    assert_eq!(tool.spec().description, "Repeat the text in capitals.");
    // A unit struct: cheap to copy, and the spec is built once.
    let copy = tool;
    assert!(std::ptr::eq(tool.spec(), copy.spec()));
}
