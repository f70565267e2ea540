//! Every supported argument shape arrives in the Rust function intact,
//! through `call`, `try_call` and `prepare` + `run`.

use serde_json::{Value, json};
use tk::{ToolContext, ToolOutput, ToolRegistry};
use toolsmith_tests::registry_of;

fn registry() -> ToolRegistry {
    registry_of(&[
        "integer_widths",
        "scalars",
        "ping",
        "lists_and_maps",
        "paint",
        "tag_item",
        "count_nodes",
        "search",
        "create_account",
        "read_file",
        "list_dir",
        "launch",
        "sixteen",
        "seventeen",
    ])
}

async fn ok(name: &str, payload: Value) -> String {
    let out = registry().call(name, payload, &ToolContext::new()).await;
    assert!(!out.is_error, "{name} failed: {}", out.content);
    out.content
}

#[tokio::test]
async fn every_integer_width_takes_its_extremes() {
    let out = ok(
        "integer_widths",
        json!({
            "a_i8": -128, "a_i16": -32768, "a_i32": -2147483648_i64,
            "a_i64": i64::MIN, "a_isize": isize::MIN,
            "a_u8": 255, "a_u16": 65535, "a_u32": 4294967295_u64,
            "a_u64": u64::MAX, "a_usize": usize::MAX,
        }),
    )
    .await;
    assert_eq!(
        out,
        format!(
            "i8=-128 i16=-32768 i32=-2147483648 i64={} isize={} u8=255 u16=65535 u32=4294967295 u64={} usize={}",
            i64::MIN,
            isize::MIN,
            u64::MAX,
            usize::MAX
        )
    );
}

#[tokio::test]
async fn floats_booleans_strings_and_paths_arrive() {
    let out = ok(
        "scalars",
        json!({"ratio": 0.25, "precise": 1e-9, "verbose": true, "label": "ünï", "path": "src/lib.rs"}),
    )
    .await;
    assert_eq!(
        out,
        "ratio=0.25 precise=0.000000001 verbose=true label=ünï path=src/lib.rs"
    );
}

#[tokio::test]
async fn a_tool_without_parameters_takes_an_empty_object() {
    assert_eq!(ok("ping", json!({})).await, "pong");
}

#[tokio::test]
async fn options_lists_and_maps_arrive() {
    let out = ok(
        "lists_and_maps",
        json!({
            "nickname": "ace",
            "tags": ["a", "b"],
            "counts": {"y": 2, "x": 1},
            "switches": {"on": true, "off": false},
            "scores": [3, -4],
        }),
    )
    .await;
    assert_eq!(
        out,
        r#"nickname=Some("ace") tags=["a", "b"] counts=[("x", 1), ("y", 2)] switches={"off": false, "on": true} scores=Some([3, -4])"#
    );
}

#[tokio::test]
async fn absent_and_null_options_are_none() {
    let absent = ok(
        "lists_and_maps",
        json!({"tags": [], "counts": {}, "switches": {}}),
    )
    .await;
    let null = ok(
        "lists_and_maps",
        json!({"nickname": null, "tags": [], "counts": {}, "switches": {}, "scores": null}),
    )
    .await;
    let expected = "nickname=None tags=[] counts=[] switches={} scores=None";
    assert_eq!(absent, expected);
    assert_eq!(null, expected);
}

#[tokio::test]
async fn unit_enums_arrive_as_variants() {
    assert_eq!(
        ok("paint", json!({"color": "deep_blue", "trim": "red"})).await,
        "color=DeepBlue trim=Some(Red)"
    );
    assert_eq!(
        ok("paint", json!({"color": "green"})).await,
        "color=Green trim=None"
    );
}

#[tokio::test]
async fn nested_and_optional_nested_structs_arrive() {
    let out = ok(
        "tag_item",
        json!({
            "id": 7,
            "meta": {"flags": ["x"], "level": 3, "owner": {"name": "Ada", "email": "ada@example.org"}},
            "editor": {"name": "Bob"},
        }),
    )
    .await;
    assert_eq!(
        out,
        r#"id=7 meta=Meta { flags: ["x"], level: 3, owner: Some(Person { name: "Ada", email: Some("ada@example.org") }) } editor=Some(Person { name: "Bob", email: None })"#
    );
}

#[tokio::test]
async fn recursive_structs_arrive_at_any_depth() {
    let out = ok(
        "count_nodes",
        json!({"tree": {"label": "a", "children": [
            {"label": "b", "children": [{"label": "c"}]},
            {"label": "d"},
        ]}}),
    )
    .await;
    assert_eq!(out, "4 nodes: a,b,c,d");
}

#[tokio::test]
async fn a_flattened_struct_takes_the_whole_payload_with_serde_defaults() {
    assert_eq!(
        ok("search", json!({"query": "todo"})).await,
        "query=todo limit=10 kinds=[]"
    );
    assert_eq!(
        ok(
            "search",
            json!({"query": "todo", "limit": 3, "kinds": ["code", "docs"]})
        )
        .await,
        "query=todo limit=3 kinds=[Code, Docs]"
    );
}

#[tokio::test]
async fn renamed_parameters_and_defaults_arrive() {
    assert_eq!(
        ok(
            "create_account",
            json!({"handle": "ada", "age": 36, "tags": ["admin"]})
        )
        .await,
        r#"handle=ada age=36 tags=["admin"] greeting=Hello home=/home/guest quota=0.5 expires_in_days=30"#
    );
    assert_eq!(
        ok(
            "create_account",
            json!({
                "handle": "bob_2", "age": 13, "tags": ["a", "b", "c"], "greeting": "Hi",
                "home": "/srv/bob", "quota": 1, "expires_in_days": 7,
            })
        )
        .await,
        r#"handle=bob_2 age=13 tags=["a", "b", "c"] greeting=Hi home=/srv/bob quota=1 expires_in_days=7"#
    );
}

#[tokio::test]
async fn try_call_returns_the_output_as_a_value() {
    let out = registry()
        .try_call(
            "read_file",
            json!({"path": "a.txt", "limit": 5}),
            &ToolContext::new(),
        )
        .await
        .expect("the call succeeds");
    assert_eq!(
        out,
        ToolOutput::text("read a.txt from line 1 limit Some(5)")
    );
}

#[tokio::test]
async fn prepare_binds_first_and_runs_later() {
    let registry = registry();
    let prepared = registry
        .prepare("list_dir", json!({"path": "docs"}))
        .expect("the arguments are valid");
    assert_eq!(prepared.spec().name, "list_dir");
    assert_eq!(prepared.tool().spec().name, "list_dir");
    assert!(prepared.casts().is_empty());
    // The registry can change in between: the prepared call keeps its tool.
    assert!(registry.unregister("list_dir").is_some());
    let out = prepared
        .run(&ToolContext::new())
        .await
        .expect("the call runs");
    assert_eq!(out.content, "listing docs");
}

#[tokio::test]
async fn a_parameter_named_arguments_is_an_ordinary_parameter() {
    assert_eq!(
        ok("launch", json!({"arguments": ["-l", "-a"]})).await,
        "ls -l -a"
    );
    assert_eq!(
        ok("launch", json!({"program": "git", "arguments": ["status"]})).await,
        "git status"
    );
}

#[tokio::test]
async fn sixteen_and_seventeen_parameters_arrive_renamed_defaulted_and_optional() {
    // Sixteen parameters are read as a tuple, seventeen by a derived
    // struct: the same rules either way.
    for (name, count) in [("sixteen", 16), ("seventeen", 17)] {
        let mut args = serde_json::Map::new();
        for i in 1..=count {
            let key = match i {
                2 => "second".to_owned(),
                _ => format!("n{i:02}"),
            };
            args.insert(key, json!(i));
        }
        let all: Vec<String> = (1..=count)
            .map(|i| {
                if i == 4 {
                    format!("Some({i})")
                } else {
                    i.to_string()
                }
            })
            .collect();
        assert_eq!(ok(name, Value::Object(args.clone())).await, all.join(" "));

        // The default, and `None`, when left out.
        args.remove("n03");
        args.remove("n04");
        let mut expected = all.clone();
        expected[3] = "None".to_owned();
        assert_eq!(
            ok(name, Value::Object(args.clone())).await,
            expected.join(" ")
        );

        // The Rust name of the renamed one is not its name.
        let mut wrong = args.clone();
        let second = wrong.remove("second").unwrap();
        wrong.insert("n02".into(), second);
        let out = registry()
            .call(name, Value::Object(wrong), &ToolContext::new())
            .await;
        assert!(out.is_error, "{name}: {}", out.content);
        assert!(out.content.contains("second"), "{name}: {}", out.content);
    }
}

/// Two tools whose parameters are of the same types.
mod same_types {
    use tk::tool;

    /// Read a file.
    #[tool(read_only)]
    pub async fn read_note(path: String) -> String {
        format!("read {path}")
    }

    /// Delete a file.
    #[tool(destructive)]
    pub async fn delete_note(path: String) -> String {
        format!("deleted {path}")
    }
}

#[tokio::test]
async fn arguments_bound_by_one_tool_are_refused_by_another_of_the_same_parameter_types() {
    use same_types::{DeleteNoteTool, ReadNoteTool};
    use tk::{Tool, ToolError};
    let ctx = ToolContext::new();
    let bound = ReadNoteTool.bind(json!({"path": "notes.txt"})).unwrap();
    match DeleteNoteTool.call(bound, &ctx).await {
        Err(ToolError::Internal(message)) => {
            assert!(message.contains("bound to another type"), "{message}");
        }
        other => panic!("another tool's arguments were taken: {other:?}"),
    }
    // Its own arguments, bound or not, it takes.
    let bound = ReadNoteTool.bind(json!({"path": "notes.txt"})).unwrap();
    let out = ReadNoteTool.call(bound, &ctx).await.unwrap();
    assert_eq!(out.content, "read notes.txt");
    let json = tk::Arguments::json(json!({"path": "a"}));
    assert_eq!(
        DeleteNoteTool.call(json, &ctx).await.unwrap().content,
        "deleted a"
    );
}
