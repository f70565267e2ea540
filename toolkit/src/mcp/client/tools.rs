//! A server's tools, resources and prompts as tools of ours.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
use serde_json::{Map, Value, json};

use super::link::{ServerLink, Session};
use super::template::UriTemplate;
use crate::args::ArgumentSchema;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::json_size::json_size;
use crate::mcp::convert::{
    add_content_block, cut_description, cut_text, output_from_tool_call_result, spec_from_mcp_tool,
};
use crate::mcp::naming::{Kind, NameAllocator};
use crate::output::ToolOutput;
use crate::tool::{Arguments, Tool, ToolAnnotations, ToolSpec};

/// Read-only, idempotent: what reading a resource or a prompt is.
const READS: ToolAnnotations = ToolAnnotations {
    read_only: true,
    exclusive: false,
    destructive: false,
    idempotent: true,
    open_world: false,
};

/// Why a server's tools could not be mounted.
pub(crate) struct MountFailure {
    /// What to tell.
    pub(crate) message: String,
    /// The server refused the listing for want of authorization: signing
    /// in again may let it pass.
    #[cfg(feature = "mcp-oauth")]
    pub(crate) refusal: Option<super::oauth::Refusal>,
}

impl MountFailure {
    /// The listing failed with `error`, told as `message`.
    fn listing(
        message: String,
        #[cfg_attr(not(feature = "mcp-oauth"), allow(unused_variables))] error: &rmcp::ServiceError,
    ) -> Self {
        Self {
            message,
            #[cfg(feature = "mcp-oauth")]
            refusal: super::oauth::refusal_of(error),
        }
    }
}

impl From<String> for MountFailure {
    fn from(message: String) -> Self {
        Self {
            message,
            #[cfg(feature = "mcp-oauth")]
            refusal: None,
        }
    }
}

/// The tools to mount for a server: its enabled tools, then one read-only
/// tool per enabled resource, resource template and prompt.
///
/// A server that cannot list its tools fails; one that cannot list its
/// resources, resource templates or prompts (an error, a malformed answer,
/// no answer within its `toolTimeout`) keeps its tools, and the failure is
/// logged as a warning. Lists it could give are mounted either way.
pub(crate) async fn mount_all(
    link: &Arc<ServerLink>,
    session: &Session,
) -> Result<Vec<Arc<dyn Tool>>, MountFailure> {
    let server = link.name().to_owned();
    let failed = |what: &str, e: &rmcp::ServiceError| match super::answers::unreadable(e) {
        Some(why) => format!("the MCP server `{server}` could not list its {what}: {why}"),
        None => format!("the MCP server `{server}` could not list its {what}: {e}"),
    };
    // A server that never answers a list must not hold up `connect`.
    let limit = link.config().tool_timeout;
    let within = |what: &str, _: tokio::time::error::Elapsed| {
        format!("the MCP server `{server}` did not list its {what} within {limit:?}")
    };
    let capabilities = session
        .peer_info()
        .map(|info| serde_json::to_value(&info.capabilities).unwrap_or_default())
        .unwrap_or_default();
    let offers = |what: &str| capabilities.get(what).is_some_and(|c| !c.is_null());
    let enabled = &link.config().enabled_tools;
    let mut names = NameAllocator::default();
    let mut mounted: Vec<Arc<dyn Tool>> = Vec::new();
    if offers("tools") {
        let tools = tokio::time::timeout(
            limit,
            every_page(|cursor| async move {
                let page = session.list_tools(Some(page_after(cursor))).await?;
                Ok((page.tools, page.next_cursor))
            }),
        )
        .await
        .map_err(|e| MountFailure::from(within("tools", e)))?
        .map_err(|e| MountFailure::listing(failed("tools", &e), &e))?;
        for tool in tools {
            let definition = serde_json::to_value(&tool).unwrap_or_default();
            let raw = tool.name.to_string();
            let wrapped = names.allocate(&server, Kind::Tool, &raw);
            if !enabled.allows(&raw, &wrapped) {
                continue;
            }
            // The pipeline stops the call at its whole time; the link, at a
            // silence of `toolTimeout`.
            let spec = spec_from_mcp_tool(&wrapped, &server, &definition)
                .with_timeout(link.config().call_timeout());
            let output = output_check(&spec, &server);
            let tool: Arc<dyn Tool> = Arc::new(McpTool {
                link: Arc::clone(link),
                spec,
                remote: raw,
                output,
            });
            // One tool whose schema no registry takes (a `$ref` to another
            // document, which is never fetched) does not cost the server
            // its other tools.
            match crate::registry::refusal(&tool) {
                None => mounted.push(tool),
                Some(e) => tracing::warn!(server = %server, "tool left out: {e}"),
            }
        }
    }
    // What a server lists besides its tools is extra: a failure here is
    // logged and that list left out, never the server.
    let optional = |what: &str, listed: Listed<Value>| {
        listed
            .map_err(|e| within(what, e))
            .and_then(|listed| listed.map_err(|e| failed(what, &e)))
            .unwrap_or_else(|e| {
                tracing::warn!(server = %server, "{e}; its {what} are left out, its tools kept");
                Vec::new()
            })
    };
    if offers("resources") {
        let listed = tokio::time::timeout(
            limit,
            every_page(|cursor| async move {
                let page = session.list_resources(Some(page_after(cursor))).await?;
                Ok((page.resources, page.next_cursor))
            }),
        )
        .await;
        for resource in optional("resources", as_values(listed)) {
            let str_of = |k: &str| resource.get(k).and_then(Value::as_str).unwrap_or_default();
            let (name, uri) = (str_of("name"), str_of("uri"));
            let wrapped = names.allocate(&server, Kind::Resource, name);
            if !enabled.allows(name, &wrapped) {
                continue;
            }
            let description = resource_description(&server, uri, str_of("description"));
            let spec = ToolSpec::new(
                wrapped,
                description,
                json!({"type": "object", "properties": {}}),
            )
            .with_annotations(READS)
            .with_timeout(link.config().tool_timeout);
            mounted.push(Arc::new(McpResourceTool {
                link: Arc::clone(link),
                spec,
                address: Address::Fixed(uri.to_owned()),
            }));
        }
        // Templates came later to the protocol than resources: a server
        // that does not know the method keeps its other tools.
        let listed = tokio::time::timeout(
            limit,
            every_page(|cursor| async move {
                let page = session
                    .list_resource_templates(Some(page_after(cursor)))
                    .await?;
                Ok((page.resource_templates, page.next_cursor))
            }),
        )
        .await;
        for template in optional("resource templates", as_values(listed)) {
            match template_tool(link, &mut names, &template) {
                Ok((raw, tool)) if enabled.allows(&raw, &tool.spec.name) => {
                    mounted.push(Arc::new(tool));
                }
                Ok(_) => {}
                // One template we cannot read does not cost the server its other tools.
                Err(e) => tracing::warn!(server = %server, "resource template left out: {e}"),
            }
        }
    }
    if offers("prompts") {
        let listed = tokio::time::timeout(
            limit,
            every_page(|cursor| async move {
                let page = session.list_prompts(Some(page_after(cursor))).await?;
                Ok((page.prompts, page.next_cursor))
            }),
        )
        .await;
        for prompt in optional("prompts", as_values(listed)) {
            let name = prompt
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let wrapped = names.allocate(&server, Kind::Prompt, &name);
            if !enabled.allows(&name, &wrapped) {
                continue;
            }
            let description = prompt_description(
                &server,
                &name,
                prompt.get("description").and_then(Value::as_str),
            );
            let spec = ToolSpec::new(wrapped, description, prompt_schema(&prompt))
                .with_annotations(READS)
                .with_timeout(link.config().tool_timeout);
            mounted.push(Arc::new(McpPromptTool {
                link: Arc::clone(link),
                spec,
                remote: name,
            }));
        }
    }
    Ok(mounted)
}

/// A list the server was asked for: the answer, if it came in time.
type Listed<T> = Result<Result<Vec<T>, rmcp::ServiceError>, tokio::time::error::Elapsed>;

/// The most items of one kind (tools, resources, templates, prompts) taken
/// from a server, and the most pages they may come in. Each page is bounded
/// by the transport (16 MiB a message); the number of pages is not, and a
/// server paging without end would have the host hold everything it sends
/// until the list's timeout.
const MAX_LISTED: usize = 10_000;
const MAX_PAGES: usize = 1_000;

/// The most bytes of JSON a list's items may take, all pages together: a
/// few tools with descriptions of megabytes, or schemas of thousands of
/// tiny objects (which take many times their text's size once read), would
/// otherwise be held for as long as they are mounted.
const MAX_LISTED_BYTES: usize = 8 << 20;

/// The request for the page after `cursor` (the first page without one).
fn page_after(cursor: Option<String>) -> rmcp::model::PaginatedRequestParams {
    rmcp::model::PaginatedRequestParams::default().with_cursor(cursor)
}

/// Every page of a list, `page` fetching the one after a cursor. A server
/// that gives a cursor it gave before (a loop), or lists more than
/// [`MAX_LISTED`] items, [`MAX_LISTED_BYTES`] or [`MAX_PAGES`] pages, fails
/// the list with what it did.
async fn every_page<T, F, Fut>(mut page: F) -> Result<Vec<T>, rmcp::ServiceError>
where
    T: serde::Serialize,
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), rmcp::ServiceError>>,
{
    use std::hash::BuildHasher;
    let refused =
        |what: String| rmcp::ServiceError::McpError(rmcp::ErrorData::internal_error(what, None));
    let mut items = Vec::new();
    let mut bytes = 0;
    // Hashes, not the cursors: a cursor may be as long as a message.
    let hasher = std::collections::hash_map::RandomState::new();
    let mut seen = std::collections::HashSet::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let (listed, next) = page(cursor).await?;
        if listed.len() > MAX_LISTED - items.len() {
            return Err(refused(format!(
                "the server lists more than {MAX_LISTED}; no more are taken"
            )));
        }
        bytes += json_size(&listed);
        if bytes > MAX_LISTED_BYTES {
            return Err(refused(format!(
                "the server lists more than {} MiB; no more are taken",
                MAX_LISTED_BYTES >> 20
            )));
        }
        items.extend(listed);
        let Some(next) = next else {
            return Ok(items);
        };
        if !seen.insert(hasher.hash_one(&next)) {
            return Err(refused(
                "the server gave a cursor it gave before: its pages go round in a loop".into(),
            ));
        }
        cursor = Some(next);
    }
    Err(refused(format!(
        "the server lists in more than {MAX_PAGES} pages; no more are taken"
    )))
}

/// The items of a list as JSON, read the same way whatever their type.
fn as_values<T: serde::Serialize>(listed: Listed<T>) -> Listed<Value> {
    listed.map(|listed| {
        listed.map(|items| {
            items
                .iter()
                .map(|item| serde_json::to_value(item).unwrap_or_default())
                .collect()
        })
    })
}

/// A read-only tool for a resource template: its variables are the
/// parameters, the URI they make is read as a resource's is. Returned with
/// the template's own name.
fn template_tool(
    link: &Arc<ServerLink>,
    names: &mut NameAllocator,
    template: &Value,
) -> Result<(String, McpResourceTool), String> {
    let server = link.name();
    let str_of = |k: &str| template.get(k).and_then(Value::as_str).unwrap_or_default();
    let (name, uri_template) = (str_of("name"), str_of("uriTemplate"));
    let parsed = UriTemplate::parse(uri_template)?;
    let wrapped = names.allocate(server, Kind::Resource, name);
    let description = template_description(server, uri_template, str_of("description"));
    let spec = ToolSpec::new(wrapped, description, parsed.schema(name))
        .with_annotations(READS)
        .with_timeout(link.config().tool_timeout);
    let tool = McpResourceTool {
        link: Arc::clone(link),
        spec,
        address: Address::Template(parsed),
    };
    Ok((name.to_owned(), tool))
}

/// What the model is told of the resource at `uri`: the server's
/// `description` (if any), then what the tool does. Both of the server's
/// texts are cut to their bounds, as a tool's description is.
fn resource_description(server: &str, uri: &str, description: &str) -> String {
    let ours = format!(
        "Read the resource `{}` of the MCP server `{server}`.",
        cut_text(uri)
    );
    before(description, ours)
}

/// What the model is told of a resource template: as
/// [`resource_description`].
fn template_description(server: &str, uri_template: &str, description: &str) -> String {
    let ours = format!(
        "Read a resource of the MCP server `{server}` from the template `{}`: the parameters fill it in.",
        cut_text(uri_template)
    );
    before(description, ours)
}

/// What the model is told of a prompt: its description, cut to its bound,
/// and whose prompt it is.
fn prompt_description(server: &str, name: &str, description: Option<&str>) -> String {
    let name = cut_text(name);
    match description {
        Some(d) if !d.trim().is_empty() => format!(
            "{} (the prompt `{name}` of the MCP server `{server}`)",
            cut_description(d)
        ),
        _ => format!("Get the prompt `{name}` of the MCP server `{server}`."),
    }
}

/// A server's `description`, cut to its bound, then `ours`; `ours` alone if
/// the server gave none.
fn before(description: &str, ours: String) -> String {
    if description.trim().is_empty() {
        ours
    } else {
        format!("{} {ours}", cut_description(description))
    }
}

/// A prompt's arguments as a parameters schema: all strings, as MCP has them.
fn prompt_schema(prompt: &Value) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for argument in prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(name) = argument.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut property = json!({"type": "string"});
        if let Some(d) = argument.get("description").and_then(Value::as_str) {
            property["description"] = json!(cut_text(d));
        }
        properties.insert(name.to_owned(), property);
        if argument.get("required").and_then(Value::as_bool) == Some(true) {
            required.push(json!(name));
        }
    }
    json!({"type": "object", "properties": properties, "required": required})
}

/// A tool of an MCP server, called under its original name.
struct McpTool {
    link: Arc<ServerLink>,
    spec: ToolSpec,
    remote: String,
    /// The output schema the server declared, compiled: what each of the
    /// tool's structured results must be.
    output: Option<ArgumentSchema>,
}

/// The most problems of a structured result named to the model.
const MAX_OUTPUT_PROBLEMS: usize = 5;

/// The output schema of `spec`, compiled to check the tool's structured
/// results; `None` if it has none, or one that does not compile (a `$ref`
/// to another document): its results then pass unchecked, as a tool's
/// without a schema do, and the host is told once, here.
fn output_check(spec: &ToolSpec, server: &str) -> Option<ArgumentSchema> {
    let schema = spec.output_schema.as_ref()?;
    match ArgumentSchema::compile(schema) {
        Ok(compiled) => Some(compiled),
        Err(e) => {
            tracing::warn!(
                server = %server,
                tool = %spec.name,
                "the tool's output schema does not compile ({e}); its results are passed on unchecked"
            );
            None
        }
    }
}

/// What is wrong with a successful `result` of the tool `name`, whose
/// output schema is `schema`: MCP has a server give structured content
/// that its declared output schema allows, and a client check it. A result
/// that is not what the schema says is not passed on as if it were (a host
/// reading the structured content would read what it was promised); the
/// model is told what the server got wrong. A failure (`isError`) carries
/// no promise.
fn output_refusal(schema: &ArgumentSchema, name: &str, result: &Value) -> Option<String> {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    // The server's name for its tool, unbounded as it sent it.
    let name = cut_text(name);
    let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) else {
        return Some(format!(
            "the MCP server's tool `{name}` declares an output schema, and returned no structured content"
        ));
    };
    let problems = schema.validate(structured).err()?;
    if problems.iter().any(crate::args::ran_out_of_steps) {
        // Too large to check through (millions of values, well within a
        // message): nothing is known to be wrong with it, and a result
        // refused for its size would be lost. It passes unchecked, as a
        // result of a schema that does not compile does.
        tracing::warn!(
            tool = %name,
            "a structured result too large to check against its output schema is passed on unchecked"
        );
        return None;
    }
    let mut said: Vec<String> = problems
        .iter()
        .take(MAX_OUTPUT_PROBLEMS)
        .map(|problem| cut_text(&problem.to_string()))
        .collect();
    if problems.len() > MAX_OUTPUT_PROBLEMS {
        said.push(format!("and {} more", problems.len() - MAX_OUTPUT_PROBLEMS));
    }
    Some(format!(
        "the MCP server's tool `{name}` returned structured content its own output schema does not allow: {}",
        said.join("; ")
    ))
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Arguments, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let started = tokio::time::Instant::now();
        let arguments = match args.into_json() {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let params = CallToolRequestParams::new(self.remote.clone()).with_arguments(arguments);
        let params = crate::mcp::trace_context::inject(params);
        let link = &self.link;
        // Progress is always asked for: it reaches the caller's context, and
        // starts the server's `toolTimeout` again.
        let result = link
            .request(ctx, |session| {
                let params = params.clone();
                async move {
                    link.call_tool_reporting_progress(&session, params, ctx, started)
                        .await
                }
            })
            .await?;
        let result = serde_json::to_value(&result).unwrap_or_default();
        if let Some(refusal) = self
            .output
            .as_ref()
            .and_then(|schema| output_refusal(schema, &self.remote, &result))
        {
            return Err(ToolError::Failed(refusal));
        }
        Ok(output_from_tool_call_result(
            &result,
            self.spec.output_schema.as_ref(),
        ))
    }
}

/// A resource of an MCP server, read as a tool: a fixed resource without
/// parameters, or a resource template whose variables are the parameters.
struct McpResourceTool {
    link: Arc<ServerLink>,
    spec: ToolSpec,
    address: Address,
}

/// Which resource a resource tool reads.
enum Address {
    /// A resource the server listed.
    Fixed(String),
    /// A resource template, filled in with the call's arguments.
    Template(UriTemplate),
}

impl Address {
    fn uri(&self, args: Arguments) -> Result<String, ToolError> {
        match self {
            Self::Fixed(uri) => Ok(uri.clone()),
            Self::Template(template) => {
                let arguments = match args.into_json() {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                template.expand(&arguments)
            }
        }
    }
}

#[async_trait]
impl Tool for McpResourceTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Arguments, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let params = ReadResourceRequestParams::new(self.address.uri(args)?);
        let result = self
            .link
            .request(ctx, |session| {
                let params = params.clone();
                async move { session.read_resource(params).await }
            })
            .await?;
        let result = serde_json::to_value(&result).unwrap_or_default();
        let mut out = ToolOutput::default();
        let mut texts = Vec::new();
        for contents in result
            .get("contents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            add_content_block(
                &mut out,
                &mut texts,
                &json!({"type": "resource", "resource": contents}),
            );
        }
        // The attachments repeat what the text says for text resources; keep
        // only the binary ones beside the text.
        out.attachments
            .retain(|a| !matches!(a, crate::output::Attachment::Resource { text: Some(_), .. }));
        out.content = texts.join("\n");
        Ok(out)
    }
}

/// A prompt of an MCP server: its arguments are the parameters, its messages the result.
struct McpPromptTool {
    link: Arc<ServerLink>,
    spec: ToolSpec,
    remote: String,
}

#[async_trait]
impl Tool for McpPromptTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Arguments, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // Prompt arguments are strings on the wire; a number the model sent stays readable.
        let arguments: Map<String, Value> = match args.into_json() {
            Value::Object(map) => map
                .into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| match v {
                    Value::String(s) => (k, Value::String(s)),
                    other => (k, Value::String(other.to_string())),
                })
                .collect(),
            _ => Map::new(),
        };
        let params: GetPromptRequestParams = serde_json::from_value(json!({
            "name": self.remote, "arguments": arguments
        }))
        .map_err(|e| ToolError::internal(e.to_string()))?;
        let result = self
            .link
            .request(ctx, |session| {
                let params = params.clone();
                async move { session.get_prompt(params).await }
            })
            .await?;
        let result = serde_json::to_value(&result).unwrap_or_default();
        let mut out = ToolOutput::default();
        let mut texts = Vec::new();
        if let Some(d) = result.get("description").and_then(Value::as_str) {
            texts.push(d.to_owned());
        }
        for message in result
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let role = message
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("user");
            let mut parts = Vec::new();
            if let Some(content) = message.get("content") {
                add_content_block(&mut out, &mut parts, content);
            }
            if parts.is_empty() {
                parts.push(String::from("[image]"));
            }
            texts.push(format!("{role}: {}", parts.join("\n")));
        }
        out.content = texts.join("\n\n");
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_arguments_become_string_parameters() {
        let schema = prompt_schema(&json!({"name": "p", "arguments": [
            {"name": "city", "description": "Where", "required": true},
            {"name": "style"}
        ]}));
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {
            "city": {"type": "string", "description": "Where"},
            "style": {"type": "string"}
        }, "required": ["city"]})
        );
    }

    #[test]
    fn a_servers_texts_are_cut_in_what_the_model_is_shown() {
        let huge = "d".repeat(7 << 20);
        let long = |text: &str| text.chars().count() < 40 * 1024;
        assert!(long(&resource_description("s", &huge, &huge)));
        assert!(long(&template_description("s", &huge, &huge)));
        assert!(long(&prompt_description("s", &huge, Some(&huge))));
        assert!(long(&prompt_description("s", &huge, None)));
        let schema = prompt_schema(&json!({"name": "p", "arguments": [
            {"name": "a", "description": huge}
        ]}));
        let shown = schema["properties"]["a"]["description"].as_str().unwrap();
        assert!(shown.chars().count() < 2_000, "{}", shown.len());
        assert!(shown.ends_with("is left out]"), "the cut is said");
        // Short texts are shown whole.
        assert_eq!(
            resource_description("s", "file:///a", "The a file."),
            "The a file. Read the resource `file:///a` of the MCP server `s`."
        );
        assert_eq!(
            prompt_description("s", "p", Some("  ")),
            "Get the prompt `p` of the MCP server `s`."
        );
    }

    #[test]
    fn a_structured_result_its_output_schema_does_not_allow_is_refused() {
        let schema = ArgumentSchema::compile(&json!({"type": "object",
            "properties": {"n": {"type": "integer"}}, "required": ["n"],
            "additionalProperties": false}))
        .unwrap();
        let refused = |result: Value| output_refusal(&schema, "count", &result);
        assert_eq!(
            refused(json!({"content": [], "structuredContent": {"n": 3}})),
            None
        );
        let wrong = refused(json!({"content": [], "structuredContent": {"n": "3", "extra": 1}}))
            .expect("a string where an integer was promised");
        assert!(
            wrong.contains("`count`") && wrong.contains("n should be integer"),
            "{wrong}"
        );
        let missing = refused(json!({"content": [{"type": "text", "text": "3"}]}))
            .expect("no structured content");
        assert!(missing.contains("no structured content"), "{missing}");
        assert_eq!(
            refused(json!({"content": [], "structuredContent": null, "isError": true})),
            None,
            "a failure carries no promise"
        );
        // However many problems, a few are named.
        let many = ArgumentSchema::compile(&json!({"type": "object",
            "additionalProperties": {"type": "integer"}}))
        .unwrap();
        let wide: Map<String, Value> = (0..10_000).map(|i| (format!("k{i}"), json!("x"))).collect();
        let said = output_refusal(&many, "t", &json!({"structuredContent": wide})).unwrap();
        // (The check itself stops at a bound of its own.)
        assert!(said.len() < 2_000 && said.ends_with(" more"), "{said}");
        // The server's name for its tool is its own, as long as it likes.
        let said = output_refusal(&schema, &"n".repeat(7 << 20), &json!({"content": []})).unwrap();
        assert!(said.len() < 2_000, "{}", said.len());
    }

    #[test]
    fn a_result_of_many_keys_against_many_names_is_checked_in_bounded_work() {
        // Every key is one of 20,000 required names but one, and none is
        // declared: each used to be measured against all 20,000 for a
        // did-you-mean (135 s), and one of 20,000 characters against 20
        // names of 2,000 (23 s).
        let mut required: Vec<String> = (0..20_000).map(|i| format!("r{i:07}")).collect();
        required.push("zz".into());
        let schema =
            ArgumentSchema::compile(&json!({"type": "object", "required": required})).unwrap();
        let keys: Map<String, Value> = (0..20_000)
            .map(|i| (format!("r{i:07}"), json!(1)))
            .collect();
        let said = output_refusal(&schema, "t", &json!({"structuredContent": keys})).unwrap();
        assert!(said.ends_with("zz is required"), "{said}");
        let names: Map<String, Value> = (0..20)
            .map(|i| (format!("p{i}{}", "x".repeat(2_000)), json!({})))
            .collect();
        let schema = ArgumentSchema::compile(
            &json!({"type": "object", "properties": names, "additionalProperties": false}),
        )
        .unwrap();
        let key = "y".repeat(20_000);
        let said = output_refusal(&schema, "t", &json!({"structuredContent": {key: 1}})).unwrap();
        assert!(said.contains("is not a parameter"), "{said}");
    }

    #[test]
    fn a_long_string_checked_many_times_over_runs_out_of_steps() {
        // 10,000 references to one pattern, each of which reads a string of
        // a megabyte to its end (20 s): the steps count the bytes read.
        let branches: Vec<Value> = (0..10_000).map(|_| json!({"$ref": "#/$defs/p"})).collect();
        let schema = ArgumentSchema::compile(&json!({"type": "object",
            "properties": {"s": {"allOf": branches}},
            "$defs": {"p": {"pattern": "[b-z]0", "maxLength": 5_000_000}}}))
        .unwrap();
        let long = json!({"s": format!("{}b0", "a".repeat(1 << 20))});
        let problems = schema.validate(&long).unwrap_err();
        assert!(
            problems.iter().any(crate::args::ran_out_of_steps),
            "{problems:?}"
        );
        let result = json!({"content": [], "structuredContent": long});
        assert_eq!(output_refusal(&schema, "t", &result), None);
        // Checked once, a string of megabytes is well within the steps.
        let once = ArgumentSchema::compile(&json!({"type": "object",
            "properties": {"s": {"$ref": "#/$defs/p"}},
            "$defs": {"p": {"pattern": "[b-z]0", "maxLength": 5_000_000}}}))
        .unwrap();
        assert!(once.validate(&long).is_ok());
    }

    #[test]
    fn a_long_string_compared_many_times_over_runs_out_of_steps() {
        // 500 allowed values of 8 KB alike but at their ends, through 1,000
        // references: each reached compares the string with all of them.
        let entries: Vec<String> = (0..500)
            .map(|i| format!("{}{i:03}", "a".repeat(8_000)))
            .collect();
        let last = json!({"s": entries[499]});
        let through = |n: usize| {
            let branches: Vec<Value> = (0..n).map(|_| json!({"$ref": "#/$defs/p"})).collect();
            ArgumentSchema::compile(&json!({"type": "object",
                "properties": {"s": {"allOf": branches}}, "$defs": {"p": {"enum": entries}}}))
            .unwrap()
        };
        let problems = through(1_000).validate(&last).unwrap_err();
        assert!(
            problems.iter().any(crate::args::ran_out_of_steps),
            "{problems:?}"
        );
        assert!(through(1).validate(&last).is_ok());
    }

    #[test]
    fn an_unknown_key_lists_a_few_of_the_names_it_is_not() {
        // Each unknown key's problem held every declared name: 50 copies
        // of 100,000 names took half a gigabyte.
        let names: Map<String, Value> = (0..1_000).map(|i| (format!("p{i}"), json!({}))).collect();
        let schema = ArgumentSchema::compile(
            &json!({"type": "object", "properties": names, "additionalProperties": false}),
        )
        .unwrap();
        let problems = schema.validate(&json!({"zzz": 1})).unwrap_err();
        let said = problems[0].to_string();
        assert!(
            said.contains("allowed: p0, p1, ") && said.ends_with(", p49"),
            "{said}"
        );
    }

    #[test]
    fn a_structured_result_too_large_to_check_is_passed_on_unchecked() {
        let schema = ArgumentSchema::compile(&json!({"type": "object",
            "properties": {"rows": {"type": "array", "items": {"type": "integer"}}}}))
        .unwrap();
        // More values than a check takes steps, in some 10 MB of JSON: a
        // message may be 16 MiB. Nothing is known to be wrong with it.
        let rows = vec![json!(0); 5_000_000];
        let result = json!({"content": [], "structuredContent": {"rows": rows}});
        assert_eq!(output_refusal(&schema, "t", &result), None);
        // One small enough to check is still held to its schema.
        let small = json!({"content": [], "structuredContent": {"rows": ["x"]}});
        assert!(output_refusal(&schema, "t", &small).is_some());
    }

    #[test]
    fn outputs_from_results_are_converted() {
        let out = output_from_tool_call_result(
            &json!({"content": [{"type": "text", "text": "x"}]}),
            None,
        );
        assert_eq!(out.content, "x");
    }
}
