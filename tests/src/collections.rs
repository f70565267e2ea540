//! Compound shapes: options, lists, maps, string enums, nested, optional
//! nested and recursive structs.

use std::collections::{BTreeMap, HashMap};

use tk::schemars::JsonSchema;
use tk::serde::{Deserialize, Serialize};
use tk::tool;

/// A colour, sent as a plain string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(crate = "tk::serde", rename_all = "snake_case")]
#[schemars(crate = "tk::schemars")]
pub enum Color {
    /// Warm.
    Red,
    /// Calm.
    Green,
    /// Cold.
    DeepBlue,
}

/// Who owns an item. Closed: unknown fields are refused, not ignored.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(crate = "tk::serde", deny_unknown_fields)]
#[schemars(crate = "tk::schemars")]
pub struct Person {
    /// The person's name.
    pub name: String,
    /// Their e-mail address, if known.
    pub email: Option<String>,
}

/// Facts about an item.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(crate = "tk::serde")]
#[schemars(crate = "tk::schemars")]
pub struct Meta {
    /// Free-form flags.
    pub flags: Vec<String>,
    /// Priority from 0 to 9.
    #[schemars(range(max = 9))]
    pub level: u8,
    /// The owner, when there is one.
    pub owner: Option<Person>,
}

/// A tree of labels; children are trees too.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(crate = "tk::serde")]
#[schemars(crate = "tk::schemars")]
pub struct Tree {
    /// This node's label.
    pub label: String,
    /// The subtrees.
    #[serde(default)]
    pub children: Vec<Tree>,
}

impl Tree {
    /// How many nodes the tree has, itself included.
    pub fn size(&self) -> usize {
        1 + self.children.iter().map(Tree::size).sum::<usize>()
    }

    /// The labels, depth first.
    pub fn labels(&self) -> Vec<String> {
        let mut out = vec![self.label.clone()];
        for child in &self.children {
            out.extend(child.labels());
        }
        out
    }
}

/// Echo an optional name, a list and two kinds of map.
#[tool(read_only)]
pub async fn lists_and_maps(
    /// A nickname; optional.
    nickname: Option<String>,
    /// Tags in order.
    tags: Vec<String>,
    /// A count per word.
    counts: HashMap<String, u32>,
    /// Switches by name, sorted.
    switches: BTreeMap<String, bool>,
    /// Optional scores.
    scores: Option<Vec<i32>>,
) -> String {
    let mut counts: Vec<_> = counts.into_iter().collect();
    counts.sort();
    format!(
        "nickname={nickname:?} tags={tags:?} counts={counts:?} switches={switches:?} scores={scores:?}"
    )
}

/// Paint something in a colour.
#[tool]
pub async fn paint(
    /// The colour to use.
    color: Color,
    /// A second colour for the trim; optional.
    trim: Option<Color>,
) -> String {
    format!("color={color:?} trim={trim:?}")
}

/// Tag an item with metadata.
///
/// The metadata is a nested object.
#[tool]
pub async fn tag_item(
    /// The item's id.
    id: u32,
    /// What to record about the item.
    meta: Meta,
    /// Who last touched the item; optional.
    editor: Option<Person>,
) -> String {
    format!("id={id} meta={meta:?} editor={editor:?}")
}

/// Count the nodes of a tree.
#[tool(read_only)]
pub fn count_nodes(
    /// The tree to count.
    tree: Tree,
) -> String {
    format!("{} nodes: {}", tree.size(), tree.labels().join(","))
}
