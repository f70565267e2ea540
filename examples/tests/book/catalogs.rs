//! Chapter: large catalogs and toolsets.

use serde_json::json;
use toolsmith::{DefinitionFormat, ToolContext, ToolRegistry, tool};

/// Search the tickets of a project.
#[tool(read_only)]
pub async fn search_tickets(
    /// The project.
    project: String,
    /// What to look for.
    query: String,
    /// How many tickets at most.
    #[arg(maximum = 100)]
    limit: Option<u32>,
) -> String {
    format!("{} results for {query} in {project}", limit.unwrap_or(10))
}

/// Close a ticket.
#[tool]
pub async fn close_ticket(
    /// The project.
    project: String,
    /// The ticket's number.
    number: u64,
) -> String {
    format!("closed {project}#{number}")
}

// ANCHOR: toolset
use toolsmith::pipeline::Pipeline;
use toolsmith::toolset::{ArgTransform, Toolbox, Toolset};

fn tickets() -> Toolbox {
    Toolset::new()
        .with_tool(SearchTicketsTool)
        .with_tool(CloseTicketTool)
        // `search_tickets` becomes `tracker_search_tickets`, and so on.
        .prefix("tracker_")
        // This agent only ever works on one project: the model never sees
        // the parameter, and cannot set it.
        .transform_arg_everywhere("project", ArgTransform::fixed(json!("ACME")))
        // A shorter name for the model, and a default it can rely on.
        .rename("tracker_search_tickets", "find_tickets")
        .transform_arg(
            "find_tickets",
            "limit",
            ArgTransform::new().rename("max").default(json!(5)),
        )
        // Closing tickets is for the triage agent only.
        .prepare(|ctx, spec| {
            spec.name != "tracker_close_ticket" || ctx.agent_id() == Some("triage")
        })
        .build()
        .expect("every tool and parameter named exists")
}
// ANCHOR_END: toolset

#[tokio::test]
async fn toolsets_offer_per_context() {
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        // ANCHOR: offer
        let tickets = tickets();
        let registry = ToolRegistry::new().with_pipeline(Pipeline::new().layer(tickets.gate()));
        tickets.register(&registry).unwrap();

        let writer = ToolContext::new().with_agent_id("writer");
        let triage = ToolContext::new().with_agent_id("triage");
        assert_eq!(tickets.offered(&writer), ["find_tickets"]);
        assert_eq!(
            tickets.offered(&triage),
            ["find_tickets", "tracker_close_ticket"]
        );
        // What to send the model this turn:
        let definitions = tickets.definitions(&registry, &writer, DefinitionFormat::OpenAi);
        assert_eq!(definitions.len(), 1);

        let out = registry
            .call("find_tickets", json!({"query": "login"}), &writer)
            .await;
        assert_eq!(out.content, "5 results for login in ACME");
        // Cast and validated against the new schema like any call.
        let out = registry
            .call(
                "find_tickets",
                json!({"query": "login", "max": "500"}),
                &writer,
            )
            .await;
        assert!(
            out.content.contains("max must be <= 100"),
            "{}",
            out.content
        );
        // A hidden parameter is an unknown one.
        let out = registry
            .call(
                "find_tickets",
                json!({"query": "x", "project": "EVIL"}),
                &writer,
            )
            .await;
        assert!(
            out.content.contains("project is not a parameter"),
            "{}",
            out.content
        );
        // Not offered, so refused.
        let out = registry
            .call("tracker_close_ticket", json!({"number": 7}), &writer)
            .await;
        assert!(out.is_error);
        let out = registry
            .call("tracker_close_ticket", json!({"number": 7}), &triage)
            .await;
        assert_eq!(out.content, "closed ACME#7");

        // Taken away from everyone for a while, and back, without
        // touching the registry.
        tickets.hide("find_tickets");
        assert!(tickets.offered(&writer).is_empty());
        tickets.show("find_tickets");
        // ANCHOR_END: offer
    })
    .await
    .expect("the test took too long");
}
