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
        _patterns: Default::default(),
        flat_root: None,
    };
    assert!(nodes.get(7).is_unconstrained());
}

/// Bounds of every kind: integers and floats, whole and not, inclusive and
/// exclusive, near zero, near the ends of `i64`, `u64` and `i128`, beyond
/// them, and at the edges of a float's exact integers.
fn bounds() -> Vec<Bound> {
    let mut ats = vec![
        Num::Int(0),
        Num::Int(1),
        Num::Int(-1),
        Num::Int(14),
        Num::Int(i128::from(i64::MIN)),
        Num::Int(i128::from(i64::MAX)),
        Num::Int(i128::from(u64::MAX)),
        Num::Int(i128::MIN),
        Num::Int(i128::MAX),
    ];
    for float in [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        14.0,
        13.999,
        1e15,
        9_007_199_254_740_993.0,
        1e19,
        -1e19,
        1e30,
        -1e30,
        1.7e38,
        -1.7e38,
        1e300,
        -1e300,
        f64::NAN,
    ] {
        ats.push(Num::Float(float));
    }
    ats.into_iter()
        .flat_map(|at| {
            [false, true].map(|exclusive| Bound {
                limit: serde_json::Number::from(0),
                at,
                exclusive,
            })
        })
        .collect()
}

/// Integers around `bound` and at the ends of the range.
fn integers_near(bound: &Bound) -> Vec<i128> {
    let centre = match bound.at {
        Num::Int(int) => int,
        Num::Float(float) if float.is_nan() => 0,
        Num::Float(float) => float as i128,
    };
    let mut near: Vec<i128> = (-3..=3)
        .filter_map(|step| centre.checked_add(step))
        .collect();
    near.extend([
        i128::MIN,
        i128::MAX,
        0,
        i128::from(i64::MAX),
        i128::from(u64::MAX),
    ]);
    near
}

#[test]
fn the_integer_range_of_two_bounds_agrees_with_the_bounds() {
    let bounds = bounds();
    let mut pairs = 0;
    for lower in bounds.iter().cloned().map(Some).chain([None]) {
        for upper in bounds.iter().cloned().map(Some).chain([None]) {
            let rules = NumberRules::new(lower.clone(), upper.clone(), None);
            let mut probes: Vec<i128> = Vec::new();
            for bound in lower.iter().chain(&upper) {
                probes.extend(integers_near(bound));
            }
            probes.extend([0, 1, -1, i128::MIN, i128::MAX]);
            for int in probes {
                let num = Num::Int(int);
                let by_bounds = !lower.as_ref().is_some_and(|b| b.falls_short(num))
                    && !upper.as_ref().is_some_and(|b| b.goes_past(num));
                assert_eq!(
                    rules.bounds_admit(num),
                    by_bounds,
                    "{int} between {lower:?} and {upper:?}"
                );
            }
            pairs += 1;
        }
    }
    assert_eq!(pairs, (bounds.len() + 1).pow(2));
}
