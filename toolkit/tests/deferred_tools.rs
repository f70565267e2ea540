//! Deferred loading: tools found by `tool_search` are loaded per session,
//! appended after what was already sent, ranked so the obviously right
//! tool comes first, and rendered natively for Anthropic and OpenAI
//! Responses.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith::{
    Arguments, DeferredTools, Definition, DefinitionFormat, TOOL_SEARCH, Tool, ToolCategory,
    ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSearch, ToolSpec, async_trait,
};

/// A tool known only by its spec, as one mounted from an MCP server is.
struct Listed(ToolSpec);

#[async_trait]
impl Tool for Listed {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(self.0.name.to_string().into())
    }
}

fn tool(name: &str, description: &str, parameters: &[&str]) -> Listed {
    let properties: serde_json::Map<String, Value> = parameters
        .iter()
        .map(|p| ((*p).to_owned(), json!({"type": "string"})))
        .collect();
    Listed(ToolSpec::new(
        name.to_owned(),
        description.to_owned(),
        json!({"type": "object", "properties": properties}),
    ))
}

/// A realistic catalog: a few local tools and three MCP servers' worth.
fn catalog() -> Vec<Listed> {
    vec![
        tool("read_file", "Read a file in the workspace.", &["path"]),
        tool(
            "write_file",
            "Write a file in the workspace.",
            &["path", "content"],
        ),
        tool(
            "mcp_github_create_issue",
            "Open a new issue in a GitHub repository.",
            &["owner", "repo", "title", "body"],
        ),
        tool(
            "mcp_github_list_issues",
            "List the issues of a GitHub repository, filtered by state and labels.",
            &["owner", "repo", "state", "labels"],
        ),
        tool(
            "mcp_github_create_pull_request",
            "Open a pull request from a branch.",
            &["owner", "repo", "head", "base", "title"],
        ),
        tool(
            "mcp_github_list_pull_requests",
            "List the pull requests of a repository.",
            &["owner", "repo", "state"],
        ),
        tool(
            "mcp_github_merge_pull_request",
            "Merge a pull request.",
            &["owner", "repo", "number", "method"],
        ),
        tool(
            "mcp_github_get_file_contents",
            "Get the contents of a file or directory in a repository.",
            &["owner", "repo", "path", "ref"],
        ),
        tool(
            "mcp_github_search_code",
            "Search code across GitHub repositories.",
            &["query"],
        ),
        tool(
            "mcp_github_add_comment",
            "Add a comment to an issue or pull request.",
            &["owner", "repo", "number", "body"],
        ),
        tool(
            "mcp_slack_send_message",
            "Send a message to a Slack channel or user.",
            &["channel", "text"],
        ),
        tool(
            "mcp_slack_list_channels",
            "List the channels of the Slack workspace.",
            &["limit"],
        ),
        tool(
            "mcp_slack_channel_history",
            "Read the recent messages of a Slack channel.",
            &["channel", "limit"],
        ),
        tool(
            "mcp_slack_add_reaction",
            "Add an emoji reaction to a message.",
            &["channel", "timestamp", "emoji"],
        ),
        tool(
            "mcp_slack_user_profile",
            "Get a Slack user's profile.",
            &["user"],
        ),
        tool(
            "mcp_calendar_create_event",
            "Create an event in the calendar, with attendees and a time.",
            &["title", "start", "end", "attendees"],
        ),
        tool(
            "mcp_calendar_list_events",
            "List the calendar's events between two dates.",
            &["from", "to"],
        ),
        tool(
            "mcp_calendar_delete_event",
            "Delete an event from the calendar.",
            &["event_id"],
        ),
        tool(
            "mcp_calendar_find_free_time",
            "Find free time slots shared by several people.",
            &["attendees", "duration"],
        ),
        tool(
            "mcp_drive_upload_file",
            "Upload a file to the shared drive.",
            &["path", "folder"],
        ),
        tool(
            "mcp_drive_search_files",
            "Search files in the shared drive by name or content.",
            &["query"],
        ),
        tool(
            "mcp_drive_share_file",
            "Share a drive file with people.",
            &["file_id", "emails"],
        ),
        tool(
            "mcp_weather_forecast",
            "The weather forecast for a city: temperature, rain and wind.",
            &["city", "days"],
        ),
        tool(
            "mcp_jira_create_ticket",
            "Create a Jira ticket in a project.",
            &["project", "summary", "description"],
        ),
        tool(
            "mcp_jira_transition_ticket",
            "Move a Jira ticket to another status.",
            &["ticket", "status"],
        ),
        tool(
            "mcp_email_send",
            "Send an email.",
            &["to", "subject", "body"],
        ),
        tool(
            "mcp_email_search",
            "Search the mailbox for emails.",
            &["query"],
        ),
    ]
}

fn registry_with(deferred: DeferredTools) -> (Arc<ToolRegistry>, Arc<DeferredTools>) {
    let registry = Arc::new(ToolRegistry::new());
    for tool in catalog() {
        registry.register(tool).unwrap();
    }
    let deferred = Arc::new(deferred);
    registry
        .register(ToolSearch::new(&registry, deferred.clone()))
        .unwrap();
    (registry, deferred)
}

fn names(definitions: &[Definition]) -> Vec<String> {
    definitions
        .iter()
        .map(|d| {
            d.get("function").unwrap_or(d)["name"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn session(key: &str) -> ToolContext {
    ToolContext::new().with_session_key(key)
}

async fn search(registry: &ToolRegistry, ctx: &ToolContext, args: Value) -> ToolOutput {
    tokio::time::timeout(
        Duration::from_secs(10),
        registry.call(TOOL_SEARCH, args, ctx),
    )
    .await
    .expect("a search answers at once")
}

#[tokio::test]
async fn a_search_loads_for_its_own_session_only() {
    let (registry, deferred) = registry_with(DeferredTools::new().defer_prefix("mcp_"));
    let (alice, bob) = (session("alice"), session("bob"));
    let before = deferred.definitions(&registry, DefinitionFormat::OpenAi, &bob);
    assert_eq!(names(&before), ["read_file", "tool_search", "write_file"]);

    let out = search(
        &registry,
        &alice,
        json!({"query": "send a slack message", "limit": 1}),
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(
        out.content.contains("mcp_slack_send_message"),
        "{}",
        out.content
    );

    let for_alice = deferred.definitions(&registry, DefinitionFormat::OpenAi, &alice);
    assert_eq!(
        names(&for_alice),
        [
            "read_file",
            "tool_search",
            "write_file",
            "mcp_slack_send_message"
        ]
    );
    // Bob's turn is what it was.
    assert_eq!(
        deferred.definitions(&registry, DefinitionFormat::OpenAi, &bob),
        before
    );
    assert!(deferred.loaded("bob").is_empty());
    deferred.forget_session("alice");
    assert!(deferred.loaded("alice").is_empty());
}

#[tokio::test]
async fn loading_appends_and_never_reorders_what_was_sent() {
    // Without native deferral, so that the registry picks each turn's tools.
    let (registry, deferred) =
        registry_with(DeferredTools::new().defer_prefix("mcp_").with_native(false));
    let ctx = session("s");
    let mut previous = deferred.definitions(&registry, DefinitionFormat::Anthropic, &ctx);
    for query in [
        "create a calendar event",
        "merge pull request",
        "weather forecast",
        // Found again: stays where it was.
        "create calendar event",
    ] {
        let out = search(&registry, &ctx, json!({"query": query, "limit": 1})).await;
        assert!(!out.is_error, "{}", out.content);
        let now = deferred.definitions(&registry, DefinitionFormat::Anthropic, &ctx);
        assert!(now.len() >= previous.len());
        // What was sent is a prefix of what is sent now, byte for byte.
        assert_eq!(
            serde_json::to_string(&now[..previous.len()]).unwrap(),
            serde_json::to_string(&previous).unwrap(),
            "after {query:?}"
        );
        previous = now;
    }
    assert_eq!(
        names(&previous)[3..],
        [
            "mcp_calendar_create_event",
            "mcp_github_merge_pull_request",
            "mcp_weather_forecast"
        ]
    );
    assert_eq!(
        deferred.loaded("s"),
        [
            "mcp_calendar_create_event",
            "mcp_github_merge_pull_request",
            "mcp_weather_forecast"
        ]
    );
}

#[test]
fn the_obviously_right_tool_ranks_first() {
    let (registry, deferred) = registry_with(DeferredTools::new().defer_all());
    for (query, expected) in [
        (
            "send a message to a slack channel",
            "mcp_slack_send_message",
        ),
        (
            "create a calendar event with attendees",
            "mcp_calendar_create_event",
        ),
        ("list open pull requests", "mcp_github_list_pull_requests"),
        ("open a github issue", "mcp_github_create_issue"),
        (
            "what's the weather in Paris tomorrow",
            "mcp_weather_forecast",
        ),
        ("upload a file to the drive", "mcp_drive_upload_file"),
        (
            "move jira ticket to done status",
            "mcp_jira_transition_ticket",
        ),
        ("send an email", "mcp_email_send"),
        (
            "find a free slot for a meeting with attendees",
            "mcp_calendar_find_free_time",
        ),
        ("mcp_slack_user_profile", "mcp_slack_user_profile"),
    ] {
        let found = deferred.search(&registry, query, 5);
        assert_eq!(
            found.first().map(String::as_str),
            Some(expected),
            "{query:?}: {found:?}"
        );
    }
    // Nothing in common: nothing found, nothing made up.
    assert!(
        deferred
            .search(&registry, "quantum chromodynamics", 5)
            .is_empty()
    );
    // The search tool itself is never deferred, so never found.
    assert!(
        !deferred
            .search(&registry, "find tools", 20)
            .contains(&TOOL_SEARCH.to_owned())
    );
}

#[tokio::test]
async fn a_regex_search_is_bounded_and_a_hostile_one_is_refused() {
    let (registry, deferred) = registry_with(DeferredTools::new().defer_prefix("mcp_"));
    let ctx = session("r");
    let out = search(
        &registry,
        &ctx,
        json!({"query": "^mcp_slack_.*(send|post)", "regex": true}),
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(deferred.loaded("r"), ["mcp_slack_send_message"]);

    // Too large once compiled: refused, with the reason, and nothing loaded.
    for hostile in [
        "(a{1000}){1000}",
        "((((((((((((((((((a))))))))))))))))))",
        "x{100000}",
    ] {
        let out = search(&registry, &ctx, json!({"query": hostile, "regex": true})).await;
        assert!(out.is_error, "{hostile}: {}", out.content);
        assert!(
            out.content.contains("refused"),
            "{hostile}: {}",
            out.content
        );
    }
    // Too long: refused before compiling (the schema bounds it too).
    let long = "a|".repeat(200);
    let refused = deferred.search_regex(&registry, &long, 5);
    assert!(matches!(refused, Err(ToolError::InvalidArguments(_))));
    assert_eq!(deferred.loaded("r"), ["mcp_slack_send_message"]);

    // A pattern that backtracks exponentially elsewhere runs in linear time
    // here, over a long description.
    let long_text = Listed(ToolSpec::new(
        "mcp_long_text",
        format!("{}!", "a".repeat(50_000)),
        json!({"type": "object"}),
    ));
    registry.register(long_text).unwrap();
    let started = Instant::now();
    let found = deferred.search_regex(&registry, "(a+)+$", 5).unwrap();
    assert!(found.is_empty(), "{found:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn anthropic_and_openai_responses_defer_natively() {
    let (registry, deferred) = registry_with(DeferredTools::new().defer_mcp_server("github"));
    let ctx = session("n");
    let anthropic = deferred.definitions(&registry, DefinitionFormat::Anthropic, &ctx);
    assert_eq!(
        anthropic[0],
        json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    // Every tool but the registry's own search, in the registry's order.
    let expected: Vec<String> = registry
        .names()
        .into_iter()
        .filter(|n| n != TOOL_SEARCH)
        .collect();
    assert_eq!(names(&anthropic[1..]), expected);
    for definition in &anthropic[1..] {
        let github = definition["name"]
            .as_str()
            .unwrap()
            .starts_with("mcp_github_");
        assert_eq!(
            definition.get("defer_loading"),
            github.then_some(&json!(true)),
            "{definition}"
        );
    }

    let responses = deferred.definitions(&registry, DefinitionFormat::OpenAiResponses, &ctx);
    assert_eq!(responses[0], json!({"type": "tool_search"}));
    let issue = responses
        .iter()
        .find(|d| d["name"] == "mcp_github_create_issue")
        .unwrap();
    assert_eq!(issue["defer_loading"], json!(true));
    assert_eq!(issue["type"], json!("function"));

    let regex = DeferredTools::new().defer_all().with_native_regex();
    let regex = regex.definitions(&registry, DefinitionFormat::Anthropic, &ctx);
    assert_eq!(
        regex[0],
        json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"})
    );

    // Other providers: the registry defers, and offers its own search.
    let gemini = deferred.definitions(&registry, DefinitionFormat::Gemini, &ctx);
    assert!(names(&gemini).contains(&TOOL_SEARCH.to_owned()));
    assert!(!names(&gemini).iter().any(|n| n.starts_with("mcp_github_")));
    assert!(gemini.iter().all(|d| d.get("defer_loading").is_none()));
}

#[test]
fn the_loaded_set_and_the_sessions_are_bounded() {
    let (registry, deferred) = registry_with(
        DeferredTools::new()
            .defer_category(ToolCategory::Messaging)
            .defer_prefix("mcp_")
            .with_max_loaded(2)
            .with_max_sessions(2),
    );
    let loaded = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    deferred.load("a", &loaded(&["mcp_email_send", "mcp_email_search"]));
    deferred.load("a", &loaded(&["mcp_weather_forecast"]));
    // The one loaded first made room.
    assert_eq!(
        deferred.loaded("a"),
        ["mcp_email_search", "mcp_weather_forecast"]
    );
    deferred.load("b", &loaded(&["mcp_email_send"]));
    deferred.loaded("a");
    // A third session forgets the one used longest ago: b.
    deferred.load("c", &loaded(&["mcp_email_send"]));
    assert!(deferred.loaded("b").is_empty());
    assert_eq!(deferred.loaded("a").len(), 2);
    let turn = deferred.definitions(&registry, DefinitionFormat::OpenAi, &session("a"));
    assert_eq!(
        names(&turn)[3..],
        ["mcp_email_search", "mcp_weather_forecast"]
    );
}
