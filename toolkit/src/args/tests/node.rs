//! Tests of `args::node`.

use super::*;
use serde_json::json;

#[test]
fn integral_floats_are_integers() {
    assert_eq!(Types::of(&json!(30.0)), Types::INTEGER);
    assert_eq!(Types::of(&json!(30.5)), Types::NUMBER);
    assert_eq!(Types::of(&json!(u64::MAX)), Types::INTEGER);
}

#[test]
fn an_integer_is_also_a_number() {
    assert!(Types::NUMBER.allows(&json!(3)));
    assert!(!Types::INTEGER.allows(&json!(3.5)));
    assert!(Types::STRING.union(Types::NULL).allows(&json!(null)));
    assert!(!Types::STRING.allows(&json!(null)));
}

#[test]
fn properties_are_found_by_name() {
    let rules = ObjectRules {
        properties: ["b", "a", "c"]
            .iter()
            .enumerate()
            .map(|(i, n)| Property {
                name: (*n).into(),
                schema: i,
                required: false,
            })
            .collect(),
        by_name: vec![1, 0, 2],
        ..ObjectRules::default()
    };
    assert_eq!(rules.property("a").map(|p| p.schema), Some(1));
    assert_eq!(rules.property("c").map(|p| p.schema), Some(2));
    assert!(rules.property("d").is_none());
}

#[test]
fn many_properties_are_found_by_binary_search() {
    let names: Vec<String> = (0..20).rev().map(|i| format!("p{i:02}")).collect();
    let mut by_name: Vec<usize> = (0..names.len()).collect();
    by_name.sort_by_key(|&i| names[i].clone());
    let rules = ObjectRules {
        properties: names
            .iter()
            .enumerate()
            .map(|(i, n)| Property {
                name: n.clone(),
                schema: i,
                required: false,
            })
            .collect(),
        by_name,
        ..ObjectRules::default()
    };
    for (i, name) in names.iter().enumerate() {
        assert_eq!(rules.property(name).map(|p| p.schema), Some(i));
        // The position is only a hint: right, wrong or out of range.
        for position in [i, 0, 19, 100] {
            assert_eq!(rules.property_at(position, name).map(|p| p.schema), Some(i));
        }
    }
    assert!(rules.property("p20").is_none());
    assert!(rules.property_at(0, "p2").is_none());
}

#[test]
fn names_compare_by_every_byte() {
    let names = [
        "",
        "a",
        "ab",
        "abc",
        "abcd",
        "abcde",
        "abcdefg",
        "abcdefgh",
        "abcdefghi",
        "abcdefghijklmnop",
        "abcdefghijklmnopq",
        "é",
        "ée",
    ];
    for a in names {
        for b in names {
            assert_eq!(same_name(a, b), a == b, "{a:?} {b:?}");
        }
        // A difference in any one byte is seen.
        for at in 0..a.len() {
            let mut changed = a.as_bytes().to_vec();
            changed[at] ^= 1;
            let changed = String::from_utf8_lossy(&changed).into_owned();
            assert_eq!(same_name(a, &changed), a == changed, "{a:?} at {at}");
        }
    }
}

#[test]
fn a_missing_node_is_the_true_schema() {
    let nodes = Nodes {
        nodes: Vec::new(),
        root: 0,
    };
    assert!(nodes.get(7).is_unconstrained());
}
