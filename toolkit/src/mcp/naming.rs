//! Names of mounted MCP tools: `mcp_{server}_{tool}`, valid everywhere.

use std::collections::{HashMap, HashSet};

use crate::DefinitionFormat;
use crate::schema::sanitize_tool_name;

/// What a mounted tool stands for on its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A tool, `mcp_{server}_{tool}`.
    Tool,
    /// A resource or a resource template, `mcp_{server}_resource_{name}`.
    Resource,
    /// A prompt, `mcp_{server}_prompt_{name}`.
    Prompt,
}

/// The name the model sees for `name` of `kind` on `server`: only
/// `[A-Za-z0-9_-]`, at most 64 characters, a short hash of the full name when
/// it had to be cut.
pub(crate) fn wrapped_name(server: &str, kind: Kind, name: &str) -> String {
    let infix = match kind {
        Kind::Tool => "",
        Kind::Resource => "resource_",
        Kind::Prompt => "prompt_",
    };
    let full = format!("mcp_{server}_{infix}{name}");
    sanitize(&full)
}

fn sanitize(name: &str) -> String {
    sanitize_tool_name(name, DefinitionFormat::OpenAi).into_owned()
}

/// Hands out wrapped names for one server, keeping them unique: two names
/// that sanitize alike (`a.b` and `a_b`) get a hash of the original.
#[derive(Debug, Default)]
pub(crate) struct NameAllocator {
    taken: HashSet<String>,
    /// The first salt not yet tried for each name that collided, so that
    /// the 10,000th tool a server lists under one name does not try the
    /// 9,999 salts before it again.
    salts: HashMap<String, u32>,
}

impl NameAllocator {
    /// The wrapped name for `name`, unique among those handed out so far.
    pub(crate) fn allocate(&mut self, server: &str, kind: Kind, name: &str) -> String {
        let wrapped = wrapped_name(server, kind, name);
        if self.taken.insert(wrapped.clone()) {
            return wrapped;
        }
        // A collision: tag the name with a hash of what it stands for, cut so
        // the whole stays within 64 characters.
        let salt = self.salts.entry(format!("{kind:?}:{name}")).or_insert(0);
        loop {
            let suffix = format!(
                "_{:08x}",
                fnv1a(format!("{kind:?}:{name}:{salt}").as_bytes())
            );
            *salt = salt.wrapping_add(1);
            let mut unique = wrapped.clone();
            unique.truncate(64 - suffix.len());
            unique.push_str(&suffix);
            if self.taken.insert(unique.clone()) {
                return unique;
            }
        }
    }
}

fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::is_valid_tool_name;

    #[test]
    fn names_are_prefixed_and_sanitized() {
        assert_eq!(
            wrapped_name("everything", Kind::Tool, "echo"),
            "mcp_everything_echo"
        );
        assert_eq!(
            wrapped_name("a.b", Kind::Tool, "get/thing"),
            "mcp_a_b_get_thing"
        );
        assert_eq!(
            wrapped_name("s", Kind::Prompt, "simple-prompt"),
            "mcp_s_prompt_simple-prompt"
        );
        assert_eq!(
            wrapped_name("s", Kind::Resource, "Résumé"),
            "mcp_s_resource_R_sum_"
        );
        assert_eq!(
            wrapped_name("my server", Kind::Resource, "notes.txt"),
            "mcp_my_server_resource_notes_txt"
        );
        assert_eq!(wrapped_name("fs", Kind::Tool, &"x".repeat(100)).len(), 64);
    }

    #[test]
    fn long_names_are_cut_with_a_hash_and_stay_distinct() {
        let a = wrapped_name("server", Kind::Tool, &format!("{}a", "x".repeat(80)));
        let b = wrapped_name("server", Kind::Tool, &format!("{}b", "x".repeat(80)));
        assert_eq!(a.len(), 64);
        assert_eq!(b.len(), 64);
        assert_ne!(a, b);
        assert!(is_valid_tool_name(&a) && is_valid_tool_name(&b));
    }

    #[test]
    fn names_that_sanitize_alike_are_kept_unique() {
        let mut names = NameAllocator::default();
        let first = names.allocate("s", Kind::Tool, "a.b");
        let second = names.allocate("s", Kind::Tool, "a_b");
        let third = names.allocate("s", Kind::Tool, "a b");
        assert_eq!(first, "mcp_s_a_b");
        assert!(second.starts_with("mcp_s_a_b_") && second.len() == "mcp_s_a_b_".len() + 8);
        assert_ne!(second, third);
        for name in [&first, &second, &third] {
            assert!(is_valid_tool_name(name));
        }
        let long = "y".repeat(90);
        let x = names.allocate("s", Kind::Tool, &long);
        let y = names.allocate("s", Kind::Tool, &long);
        assert_ne!(x, y);
        assert_eq!(y.len(), 64);
    }
}
