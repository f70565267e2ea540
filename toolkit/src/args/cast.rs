//! Step 3: lenient casting of what models really send.
//!
//! Models write `"60"` for an integer, `"true"` for a boolean and a JSON
//! string for a nested object. Where the schema wants the other type and the
//! text says exactly one value of it, the value is replaced and the change
//! recorded. A number where text is wanted becomes its JSON text (`4` for
//! an id becomes `"4"`). Nothing is guessed: a value that already has an
//! allowed type is left alone, a scalar is never wrapped into an array, a
//! boolean never becomes a number or text, and what cannot be read
//! unambiguously stays as it was for validation to report.

use serde_json::{Map, Number, Value};

use super::Cast;
use super::budget::Budget;
use super::describe;
use super::node::{Additional, MAX_DEPTH, Node, NodeId, Nodes, ObjectRules, Types};
use super::path::Path;
use super::validate::is_valid;

/// Cast `value` in place against the root of `nodes`; returns what changed.
pub(super) fn cast(nodes: &Nodes, value: &mut Value) -> Vec<Cast> {
    cast_within(nodes, value, &Budget::new())
}

/// [`cast`] within the steps left in `budget`.
pub(super) fn cast_within(nodes: &Nodes, value: &mut Value, budget: &Budget) -> Vec<Cast> {
    let mut casts = Vec::new();
    Caster {
        nodes,
        budget,
        every_branch: false,
    }
    .node(nodes.root, value, &Path::ROOT, 0, &mut casts);
    casts
}

/// [`cast_within`], trying every `anyOf` branch on a copy, as if
/// [`Caster::touches`] always said yes: what the shortcut must agree with.
#[cfg(test)]
pub(super) fn cast_trying_every_branch(
    nodes: &Nodes,
    value: &mut Value,
    budget: &Budget,
) -> Vec<Cast> {
    let mut casts = Vec::new();
    Caster {
        nodes,
        budget,
        every_branch: true,
    }
    .node(nodes.root, value, &Path::ROOT, 0, &mut casts);
    casts
}

#[cfg(test)]
thread_local! {
    /// How many values casting copied on this thread.
    pub(super) static COPIES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

struct Caster<'n> {
    nodes: &'n Nodes,
    budget: &'n Budget,
    /// Copy the value for every `anyOf` branch (tests only).
    every_branch: bool,
}

impl Caster<'_> {
    fn node(
        &self,
        id: NodeId,
        value: &mut Value,
        path: &Path<'_>,
        depth: usize,
        casts: &mut Vec<Cast>,
    ) {
        let node = self.nodes.get(id);
        if node.never || depth > MAX_DEPTH || !self.budget.spend() {
            return;
        }
        if wants_cast(node.cast_to, value)
            && let Some((new, to)) = convert(value, node.cast_to)
        {
            casts.push(Cast {
                path: path.render(),
                from: describe::value(value),
                to: to.into(),
            });
            *value = new;
        }
        match value {
            Value::Object(map) => {
                if let Some(rules) = &node.object {
                    rename_spelling_variants(rules, map, path, casts);
                    self.drop_null_optionals(rules, map, path, depth, casts);
                    for (position, (key, child)) in map.iter_mut().enumerate() {
                        let path = path.key(key);
                        rules.schemas_for(position, key, |schema| {
                            self.node(schema, child, &path, depth + 1, casts);
                        });
                    }
                }
            }
            Value::Array(items) => {
                if let Some(rules) = &node.array {
                    for (index, item) in items.iter_mut().enumerate() {
                        if let Some(schema) = rules.item(index) {
                            self.node(schema, item, &path.index(index), depth + 1, casts);
                        }
                    }
                }
            }
            _ => {}
        }
        for &branch in &node.all_of {
            self.node(branch, value, path, depth, casts);
        }
        if !node.any_of.is_empty() && !value.is_null() {
            self.alternatives(node, value, path, depth, casts);
        }
    }

    /// A `null` for an optional parameter whose own schema refuses `null`
    /// means "not given": providers in strict mode (OpenAI's) must send
    /// every parameter, and send `null` for the ones they leave out. Removing
    /// it lets the parameter's default apply instead of failing validation.
    fn drop_null_optionals(
        &self,
        rules: &ObjectRules,
        map: &mut Map<String, Value>,
        path: &Path<'_>,
        depth: usize,
        casts: &mut Vec<Cast>,
    ) {
        if !map.values().any(Value::is_null) {
            return;
        }
        map.retain(|key, child| {
            let absent = child.is_null()
                && rules.property(key).is_some_and(|property| {
                    !property.required
                        && !is_valid(self.nodes, property.schema, child, depth + 1, self.budget)
                });
            if absent {
                casts.push(Cast {
                    path: path.key(key).render(),
                    from: describe::value(child),
                    to: "absent".into(),
                });
            }
            !absent
        });
    }

    /// Whether casting `value` against node `id` might change it: a
    /// question answered without copying or changing anything, which errs
    /// only towards yes. It takes steps from the same budget as the walk.
    fn touches(&self, id: NodeId, value: &Value, depth: usize) -> bool {
        let node = self.nodes.get(id);
        if node.never || depth > MAX_DEPTH || !self.budget.spend() {
            return false;
        }
        if wants_cast(node.cast_to, value) && convert(value, node.cast_to).is_some() {
            return true;
        }
        let inside = match value {
            Value::Object(map) => node.object.as_ref().is_some_and(|rules| {
                map.iter().enumerate().any(|(position, (key, child))| {
                    // A key in another spelling may be renamed, a `null`
                    // for an optional parameter may be dropped.
                    let unknown = !rules.schemas_for(position, key, |_| {});
                    let mut touched = (unknown
                        && matches!(rules.additional, Additional::Forbidden))
                        || (child.is_null() && rules.property(key).is_some_and(|p| !p.required));
                    if !touched {
                        rules.schemas_for(position, key, |schema| {
                            touched = touched || self.touches(schema, child, depth + 1);
                        });
                    }
                    touched
                })
            }),
            Value::Array(items) => node.array.as_ref().is_some_and(|rules| {
                items.iter().enumerate().any(|(index, item)| {
                    rules
                        .item(index)
                        .is_some_and(|schema| self.touches(schema, item, depth + 1))
                })
            }),
            _ => false,
        };
        inside
            || node
                .all_of
                .iter()
                .any(|&branch| self.touches(branch, value, depth))
            || (!value.is_null()
                && node
                    .any_of
                    .iter()
                    .any(|&branch| self.touches(branch, value, depth)))
    }

    /// `anyOf`/`oneOf`: leave a value that fits a branch as it is (but for
    /// integral floats, written as integers); otherwise take the first
    /// branch that casting makes it fit, with that branch's casts only.
    fn alternatives(
        &self,
        node: &Node,
        value: &mut Value,
        path: &Path<'_>,
        depth: usize,
        casts: &mut Vec<Cast>,
    ) {
        if node
            .any_of
            .iter()
            .any(|&b| is_valid(self.nodes, b, value, depth, self.budget))
        {
            // Fitting is not enough: `-0` or `2.0` fits `{"type": "integer"}`
            // but serde refuses it for an `i8`. Such floats are written as
            // integers, in one pass over the value, which a number anywhere
            // in it accepts as well. (Casting into the branch instead would
            // walk every nested `anyOf` again, which costs more than the
            // value is long.)
            self.integral_floats_as_integers(value, path, depth, casts);
            return;
        }
        // A number is text only where no branch is for numbers: `300` for
        // `Index(u8) | Name(String)` is an index out of range, not a name.
        let kind = Types::of(value);
        let a_branch_takes_the_number = value.is_number()
            && node
                .any_of
                .iter()
                .any(|&b| self.nodes.get(b).cast_to.allows_kind(kind));
        let mut fallback = None;
        for &branch in &node.any_of {
            // A copy only for a branch that may change something: casting
            // against any other leaves the value as it is, which was
            // already found to fit no branch.
            if self.nodes.get(branch).is_null_only()
                || !(self.every_branch || self.touches(branch, value, depth))
            {
                continue;
            }
            #[cfg(test)]
            COPIES.with(|copies| copies.set(copies.get() + 1));
            let mut trial = value.clone();
            let mut trial_casts = Vec::new();
            self.node(branch, &mut trial, path, depth, &mut trial_casts);
            if trial_casts.is_empty() || (a_branch_takes_the_number && trial.is_string()) {
                continue;
            }
            if is_valid(self.nodes, branch, &trial, depth, self.budget) {
                *value = trial;
                casts.append(&mut trial_casts);
                return;
            }
            if fallback.is_none() && self.nodes.only_branch_for(node, &trial) == Some(branch) {
                fallback = Some((trial, trial_casts));
            }
        }
        // Nothing fits even after casting. When one branch alone is for the
        // value's type (`Option<T>`), validation will report that branch's
        // errors, so its casts are kept: the errors left are then the real
        // ones, not `"5"` where an integer was wanted.
        if let Some((trial, mut trial_casts)) = fallback {
            *value = trial;
            casts.append(&mut trial_casts);
        }
    }
}

impl Caster<'_> {
    /// Every integral float in `value` as an integer, each a cast; one step
    /// of the budget a value, so the pass is as long as the value at most.
    fn integral_floats_as_integers(
        &self,
        value: &mut Value,
        path: &Path<'_>,
        depth: usize,
        casts: &mut Vec<Cast>,
    ) {
        if depth > MAX_DEPTH || !self.budget.spend() {
            return;
        }
        match value {
            Value::Number(n) if n.is_f64() => {
                if let Some(integer) = n.as_f64().and_then(integral_float) {
                    casts.push(Cast {
                        path: path.render(),
                        from: describe::value(value),
                        to: "integer".into(),
                    });
                    *value = Value::Number(integer);
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    self.integral_floats_as_integers(item, &path.index(index), depth + 1, casts);
                }
            }
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    self.integral_floats_as_integers(child, &path.key(key), depth + 1, casts);
                }
            }
            _ => {}
        }
    }
}

/// A key that is not a parameter but names one in another spelling
/// (`oldText`, `old-text` or `OLD_TEXT` for `old_text`) is renamed to it, so
/// models that write parameters in camelCase are understood. Only when the
/// spelling points at exactly one parameter, that parameter was not also
/// sent, and the key is not allowed as it is (`additionalProperties: false`
/// and no `patternProperties` match); anything else is left for validation
/// to report, with its did-you-mean.
fn rename_spelling_variants(
    rules: &ObjectRules,
    map: &mut Map<String, Value>,
    path: &Path<'_>,
    casts: &mut Vec<Cast>,
) {
    // Where extra keys are allowed, a key the schema does not declare is
    // valid as it is, and is kept as sent.
    if !matches!(rules.additional, Additional::Forbidden) {
        return;
    }
    let is_variant = |key: &String| {
        rules.property(key).is_none()
            && !rules
                .pattern_properties
                .iter()
                .any(|(re, _)| re.is_match(key))
    };
    if !map.keys().any(is_variant) {
        return;
    }
    let renames: Vec<(String, String)> = map
        .keys()
        .filter(|key| is_variant(key))
        .filter_map(|key| {
            let folded = fold_spelling(key);
            let mut matches = rules
                .properties
                .iter()
                .filter(|p| fold_spelling(&p.name) == folded);
            match (matches.next(), matches.next()) {
                (Some(property), None) if !map.contains_key(&property.name) => {
                    Some((key.clone(), property.name.clone()))
                }
                _ => None,
            }
        })
        .collect();
    for (from, to) in renames {
        if map.contains_key(&to) {
            continue; // two spellings of one parameter: validation reports both
        }
        if let Some(value) = map.remove(&from) {
            casts.push(Cast {
                path: path.key(&to).render(),
                from: format!("parameter name \"{from}\""),
                to: "renamed".into(),
            });
            map.insert(to, value);
        }
    }
}

/// A parameter name without case, `_` and `-`: `oldText`, `old-text` and
/// `old_text` fold alike.
fn fold_spelling(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether the value's type is not what the schema wants, or is an
/// integral float where only integers are wanted.
pub(super) fn wants_cast(want: Types, value: &Value) -> bool {
    wants_cast_of(want, value, Types::of(value))
}

/// [`wants_cast`] for a value whose narrowest type is already known.
#[inline]
pub(super) fn wants_cast_of(want: Types, value: &Value, kind: Types) -> bool {
    if want == Types::ANY {
        return false;
    }
    let allowed = want.allows_kind(kind);
    match value {
        Value::Number(n) if n.is_f64() => {
            !allowed || (want.contains(Types::INTEGER) && !want.contains(Types::NUMBER))
        }
        _ => !allowed,
    }
}

/// The value `value` unambiguously stands for in one of the wanted types,
/// and that type's name.
fn convert(value: &Value, want: Types) -> Option<(Value, &'static str)> {
    match value {
        Value::String(text) => from_text(text.trim(), want),
        Value::Number(n) => {
            let integral = n
                .as_f64()
                .filter(|_| n.is_f64() && want.contains(Types::INTEGER))
                .and_then(integral_float);
            match integral {
                Some(n) => Some((Value::Number(n), "integer")),
                None if want.contains(Types::STRING) => {
                    exact_text(n).map(|text| (Value::String(text), "string"))
                }
                None => None,
            }
        }
        _ => None,
    }
}

/// A number where text is wanted (`4` for an id), as the text the model
/// must have written: integers always; other numbers only when their
/// shortest form has at most 15 significant digits and no exponent, since
/// beyond that the parsed value may not print as it was sent
/// (`12345678901234567890123` reads back as `1.2345678901234568e22`).
fn exact_text(n: &Number) -> Option<String> {
    if n.is_i64() || n.is_u64() {
        return Some(n.to_string());
    }
    let text = n.to_string();
    let digits = text
        .bytes()
        .filter(u8::is_ascii_digit)
        .skip_while(|&d| d == b'0')
        .count();
    (!text.contains(['e', 'E']) && digits <= 15).then_some(text)
}

fn from_text(text: &str, want: Types) -> Option<(Value, &'static str)> {
    if want.contains(Types::INTEGER)
        && let Some(n) = integer(text)
    {
        return Some((Value::Number(n), "integer"));
    }
    if want.contains(Types::NUMBER)
        && let Some(n) = number(text)
    {
        return Some((Value::Number(n), "number"));
    }
    if want.contains(Types::BOOLEAN)
        && let Some(b) = boolean(text)
    {
        return Some((Value::Bool(b), "boolean"));
    }
    let container = match text.as_bytes().first() {
        Some(b'{') if want.contains(Types::OBJECT) => "object",
        Some(b'[') if want.contains(Types::ARRAY) => "array",
        _ => return None,
    };
    match serde_json::from_str::<Value>(text).ok()? {
        parsed @ (Value::Object(_) | Value::Array(_)) => Some((parsed, container)),
        _ => None,
    }
}

/// An integer written as one: `60`, `-3`, or a whole number in decimal or
/// exponent form (`30.0`, `1e3`) that fits i64 or u64.
fn integer(text: &str) -> Option<Number> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(i.into());
    }
    if let Ok(u) = text.parse::<u64>() {
        return Some(u.into());
    }
    whole_decimal(text)
}

/// A whole number in decimal or exponent form, read digit by digit: going
/// through f64 would turn `9223372036854775809` or `2.0000000000000001`
/// into a neighbouring integer, which is a guess.
fn whole_decimal(text: &str) -> Option<Number> {
    let (sign, unsigned) = match text.as_bytes().first()? {
        b'-' => ("-", text.get(1..)?),
        b'+' => ("", text.get(1..)?),
        _ => ("", text),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i32>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = whole
        .bytes()
        .chain(fraction.bytes())
        .all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !all_digits {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    // The value is `digits` times ten to the `scale`.
    let scale = i64::from(exponent) - i64::try_from(fraction.len()).ok()?;
    let exact = if scale >= 0 {
        // u64::MAX has 20 digits; anything longer cannot fit.
        if i64::try_from(digits.len()).ok()? + scale > 20 {
            return None;
        }
        let zeros = usize::try_from(scale).ok()?;
        format!("{digits}{}", "0".repeat(zeros))
    } else {
        let dropped = usize::try_from(-scale).ok()?;
        let keep = digits.len().saturating_sub(dropped);
        let (kept, cut) = digits.split_at_checked(keep)?;
        if !cut.bytes().all(|b| b == b'0') {
            return None;
        }
        kept.to_owned()
    };
    let exact = if exact.is_empty() { "0" } else { &exact };
    let signed = format!("{sign}{exact}");
    if let Ok(i) = signed.parse::<i64>() {
        return Some(i.into());
    }
    signed.parse::<u64>().ok().map(Number::from)
}

/// A whole float as an integer, if it fits i64 or u64 exactly.
fn integral_float(f: f64) -> Option<Number> {
    // 2^63 and 2^64: the first floats past i64 and u64.
    const I64_END: f64 = 9_223_372_036_854_775_808.0;
    const U64_END: f64 = 18_446_744_073_709_551_616.0;
    if !f.is_finite() || f.fract() != 0.0 {
        return None;
    }
    if (-I64_END..I64_END).contains(&f) {
        // Exact: whole and within range.
        Some(Number::from(f as i64))
    } else if (0.0..U64_END).contains(&f) {
        Some(Number::from(f as u64))
    } else {
        None
    }
}

/// A number written as one; integers keep their exact form.
fn number(text: &str) -> Option<Number> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(i.into());
    }
    if let Ok(u) = text.parse::<u64>() {
        return Some(u.into());
    }
    Number::from_f64(finite_float(text)?)
}

/// A finite float; Rust also reads `inf` and `NaN`, which JSON cannot hold.
fn finite_float(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|f| f.is_finite())
}

fn boolean(text: &str) -> Option<bool> {
    let is = |word: &str| text.eq_ignore_ascii_case(word);
    if is("true") || is("yes") || is("1") {
        Some(true)
    } else if is("false") || is("no") || is("0") {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::compile::compile;
    use super::*;
    use serde_json::json;

    /// Cast `args` against `schema`; the result and the casts as text.
    fn run(schema: Value, mut args: Value) -> (Value, Vec<String>) {
        let nodes = compile(&schema).expect("schema compiles");
        let casts = cast(&nodes, &mut args);
        (args, casts.iter().map(ToString::to_string).collect())
    }

    fn property(schema: Value) -> Value {
        json!({"type": "object", "properties": {"x": schema}})
    }

    /// Cast `x` against `schema` and return the new `x`.
    fn x(schema: Value, value: Value) -> Value {
        let (args, _) = run(property(schema), json!({"x": value}));
        args["x"].clone()
    }

    #[test]
    fn a_branch_that_cannot_change_the_value_costs_no_copy() {
        let nodes = compile(&property(json!({"anyOf": [
            {"type": "integer"},
            {"type": "array", "items": {"type": "integer", "minimum": 5}},
            {"type": "object", "properties": {"n": {"type": "boolean"}}}
        ]})))
        .unwrap();
        let big: Vec<Value> = (0..10_000).map(|i| json!(i % 5)).collect();
        for value in [json!("abc"), Value::Array(big), json!({"n": "maybe"})] {
            let mut args = json!({"x": value});
            let before = COPIES.with(std::cell::Cell::get);
            assert!(cast(&nodes, &mut args).is_empty());
            assert_eq!(COPIES.with(std::cell::Cell::get), before, "{}", &args["x"]);
        }
        // A branch that does cast is tried on a copy.
        let mut args = json!({"x": ["7", 8]});
        let before = COPIES.with(std::cell::Cell::get);
        assert_eq!(cast(&nodes, &mut args).len(), 1);
        assert_eq!(args, json!({"x": [7, 8]}));
        assert_eq!(COPIES.with(std::cell::Cell::get), before + 1);
    }

    #[test]
    fn integer_strings_become_integers() {
        let int = json!({"type": "integer"});
        assert_eq!(x(int.clone(), json!("60")), json!(60));
        assert_eq!(x(int.clone(), json!(" 60 ")), json!(60));
        assert_eq!(x(int.clone(), json!("-3")), json!(-3));
        assert_eq!(
            x(int.clone(), json!("18446744073709551615")),
            json!(u64::MAX)
        );
        assert_eq!(x(int, json!("1e3")), json!(1000));
    }

    #[test]
    fn whole_numbers_in_other_forms_become_integers_exactly() {
        for (text, value) in [
            ("30.0", json!(30)),
            ("1e3", json!(1000)),
            ("2.50e1", json!(25)),
            ("1000e-3", json!(1)),
            ("-4.0", json!(-4)),
            ("+7", json!(7)),
            ("0.0", json!(0)),
            ("1.", json!(1)),
            ("1.8446744073709551615e19", json!(u64::MAX)),
        ] {
            assert_eq!(whole_decimal(text), value.as_number().cloned(), "{text}");
        }
        for text in [
            "2.0000000000000001",
            "0.5",
            "1e-3",
            "1e21",
            ".",
            "1e",
            "e5",
            "1.2.3",
            "-",
            "1e99999999999",
        ] {
            assert_eq!(whole_decimal(text), None, "{text}");
        }
    }

    #[test]
    fn number_strings_become_numbers() {
        let num = json!({"type": "number"});
        assert_eq!(x(num.clone(), json!("2.5")), json!(2.5));
        assert_eq!(x(num.clone(), json!("1e3")), json!(1000.0));
        assert_eq!(x(num.clone(), json!("60")), json!(60));
        assert_eq!(x(num, json!("-0.5")), json!(-0.5));
    }

    #[test]
    fn numbers_become_their_text_where_text_is_wanted() {
        let text = json!({"type": "string"});
        assert_eq!(x(text.clone(), json!(4)), json!("4"));
        assert_eq!(x(text.clone(), json!(-12)), json!("-12"));
        assert_eq!(x(text.clone(), json!(2.5)), json!("2.5"));
        assert_eq!(
            x(text.clone(), json!(u64::MAX)),
            json!("18446744073709551615")
        );
        assert_eq!(x(text.clone(), json!(0.000125)), json!("0.000125"));
        // Too long to be sure it prints as it was sent: left for validation.
        let long: Value = serde_json::from_str("12345678901234567890123").unwrap();
        assert_eq!(x(text.clone(), long.clone()), long);
        assert_eq!(x(text.clone(), json!(0.1 + 0.2)), json!(0.1 + 0.2));
        // Booleans and containers are not text.
        assert_eq!(x(text.clone(), json!(true)), json!(true));
        assert_eq!(x(text, json!([1])), json!([1]));
        // An integer is preferred where both are allowed; text is left alone.
        let either = json!({"type": ["integer", "string"]});
        assert_eq!(x(either.clone(), json!(3.0)), json!(3));
        assert_eq!(x(either.clone(), json!(3.5)), json!("3.5"));
        assert_eq!(x(either, json!("7")), json!("7"));
        // A number that is already allowed stays a number.
        assert_eq!(
            x(json!({"type": ["number", "string"]}), json!(2.5)),
            json!(2.5)
        );
    }

    #[test]
    fn a_number_is_not_text_where_another_branch_is_for_numbers() {
        // `#[serde(untagged)] enum Selector { Index(u8), Name(String) }`
        let selector = json!({"anyOf": [
            {"type": "integer", "minimum": 0, "maximum": 255},
            {"type": "string"}
        ]});
        assert_eq!(x(selector.clone(), json!(300)), json!(300));
        assert_eq!(x(selector, json!(7)), json!(7));
        // With no branch for numbers, the text branch takes it.
        let text_or_list = json!({"anyOf": [
            {"type": "string"},
            {"type": "array", "items": {"type": "string"}}
        ]});
        assert_eq!(x(text_or_list, json!(300)), json!("300"));
        // `Option<String>`
        let optional = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
        assert_eq!(x(optional, json!(4)), json!("4"));
    }

    #[test]
    fn fractions_do_not_become_integers() {
        assert_eq!(x(json!({"type": "integer"}), json!("2.5")), json!("2.5"));
        assert_eq!(x(json!({"type": "integer"}), json!(30.5)), json!(30.5));
    }

    #[test]
    fn non_finite_strings_stay_strings() {
        for text in ["NaN", "nan", "inf", "-inf", "infinity", "Infinity"] {
            assert_eq!(x(json!({"type": "number"}), json!(text)), json!(text));
            assert_eq!(x(json!({"type": "integer"}), json!(text)), json!(text));
        }
    }

    #[test]
    fn overflowing_integer_strings_stay_strings() {
        let int = json!({"type": "integer"});
        assert_eq!(
            x(int.clone(), json!("18446744073709551616")),
            json!("18446744073709551616")
        );
        assert_eq!(
            x(int.clone(), json!("-9223372036854775809")),
            json!("-9223372036854775809")
        );
        assert_eq!(x(int, json!("1e30")), json!("1e30"));
    }

    #[test]
    fn text_that_is_not_a_number_stays() {
        for text in ["", "abc", "12abc", "0x10", "1_000", "1,5"] {
            assert_eq!(x(json!({"type": "integer"}), json!(text)), json!(text));
        }
    }

    #[test]
    fn integral_floats_become_integers() {
        assert_eq!(x(json!({"type": "integer"}), json!(30.0)), json!(30));
        assert_eq!(x(json!({"type": "integer"}), json!(-2.0)), json!(-2));
        assert_eq!(
            x(json!({"type": ["integer", "null"]}), json!(1e19)),
            json!(10_000_000_000_000_000_000_u64)
        );
        // Past u64 there is no integer to become.
        assert_eq!(x(json!({"type": "integer"}), json!(1e30)), json!(1e30));
    }

    #[test]
    fn floats_stay_floats_where_numbers_are_wanted() {
        assert_eq!(x(json!({"type": "number"}), json!(30.0)), json!(30.0));
        assert_eq!(
            x(json!({"type": ["integer", "number"]}), json!(30.0)),
            json!(30.0)
        );
    }

    #[test]
    fn boolean_words_become_booleans() {
        let b = json!({"type": "boolean"});
        for text in ["true", "TRUE", " yes ", "Yes", "1"] {
            assert_eq!(x(b.clone(), json!(text)), json!(true), "{text}");
        }
        for text in ["false", "False", "no", "NO", "0"] {
            assert_eq!(x(b.clone(), json!(text)), json!(false), "{text}");
        }
        for text in ["y", "on", "2", "truthy"] {
            assert_eq!(x(b.clone(), json!(text)), json!(text), "{text}");
        }
    }

    #[test]
    fn booleans_never_become_numbers() {
        assert_eq!(x(json!({"type": "integer"}), json!(true)), json!(true));
        assert_eq!(x(json!({"type": "number"}), json!(false)), json!(false));
    }

    #[test]
    fn numbers_never_become_booleans() {
        assert_eq!(x(json!({"type": "boolean"}), json!(1)), json!(1));
        assert_eq!(x(json!({"type": "boolean"}), json!(0.0)), json!(0.0));
    }

    #[test]
    fn json_strings_become_objects_and_arrays() {
        assert_eq!(
            x(json!({"type": "object"}), json!("{\"a\": 1}")),
            json!({"a": 1})
        );
        assert_eq!(
            x(json!({"type": "array"}), json!(" [1, 2] ")),
            json!([1, 2])
        );
        // The wrong container, or broken JSON, stays.
        assert_eq!(x(json!({"type": "object"}), json!("[1]")), json!("[1]"));
        assert_eq!(x(json!({"type": "array"}), json!("{}")), json!("{}"));
        assert_eq!(x(json!({"type": "array"}), json!("[1,")), json!("[1,"));
    }

    #[test]
    fn parsed_json_is_cast_inside() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let (args, casts) = run(property(schema), json!({"x": "{\"n\": \"5\"}"}));
        assert_eq!(args, json!({"x": {"n": 5}}));
        assert_eq!(
            casts,
            [
                r#"x: string "{\"n\": \"5\"}" -> object"#,
                r#"x.n: string "5" -> integer"#
            ]
        );
    }

    #[test]
    fn scalars_are_never_wrapped_into_arrays() {
        let list = json!({"type": "array", "items": {"type": "string"}});
        assert_eq!(x(list.clone(), json!("a")), json!("a"));
        assert_eq!(x(list, json!(5)), json!(5));
    }

    #[test]
    fn null_for_an_optional_parameter_that_refuses_null_means_absent() {
        let schema = json!({
            "type": "object",
            "properties": {
                "page": {"type": "integer", "default": 1},
                "limit": {"type": ["integer", "null"]},
                "query": {"type": "string"}
            },
            "required": ["query"]
        });
        let (value, casts) = run(schema, json!({"query": null, "page": null, "limit": null}));
        // `page` refuses null and is optional: dropped, so its default applies.
        // `limit` accepts null; `query` is required: both stay for validation.
        assert_eq!(value, json!({"query": null, "limit": null}));
        assert_eq!(casts, ["page: null -> absent"]);
    }

    #[test]
    fn objects_never_become_strings() {
        assert_eq!(
            x(json!({"type": "string"}), json!({"a": 1})),
            json!({"a": 1})
        );
    }

    #[test]
    fn values_of_an_allowed_type_are_left_alone() {
        assert_eq!(
            x(json!({"type": ["string", "integer"]}), json!("60")),
            json!("60")
        );
        assert_eq!(
            x(json!({"type": ["boolean", "string"]}), json!("yes")),
            json!("yes")
        );
        assert_eq!(x(json!({"type": "string"}), json!("[1]")), json!("[1]"));
        let (_, casts) = run(property(json!({"type": "integer"})), json!({"x": 60}));
        assert!(casts.is_empty());
    }

    #[test]
    fn untyped_schemas_cast_nothing() {
        assert_eq!(x(json!({}), json!("60")), json!("60"));
        assert_eq!(x(json!(true), json!("60")), json!("60"));
    }

    #[test]
    fn enum_values_say_what_to_cast_to() {
        assert_eq!(x(json!({"enum": [1, 2, 3]}), json!("2")), json!(2));
        assert_eq!(x(json!({"enum": ["1", "2"]}), json!("2")), json!("2"));
    }

    #[test]
    fn nullable_types_cast_and_null_stays() {
        let schema = json!({"type": ["integer", "null"]});
        assert_eq!(x(schema.clone(), json!("7")), json!(7));
        assert_eq!(x(schema, json!(null)), json!(null));
        assert_eq!(
            x(json!({"type": "integer", "nullable": true}), json!("7")),
            json!(7)
        );
    }

    #[test]
    fn other_spellings_of_a_parameter_name_are_renamed() {
        let schema = json!({"type": "object", "additionalProperties": false,
            "properties": {"old_text": {"type": "string"}, "start_line": {"type": "integer"}}});
        let (value, casts) = run(schema.clone(), json!({"oldText": "a", "Start-Line": "3"}));
        assert_eq!(value, json!({"old_text": "a", "start_line": 3}));
        assert_eq!(
            casts,
            [
                "old_text: parameter name \"oldText\" -> renamed",
                "start_line: parameter name \"Start-Line\" -> renamed",
                "start_line: string \"3\" -> integer",
            ]
        );
        // Both spellings sent, or a name that is no spelling of a parameter:
        // left for validation to report.
        let (value, casts) = run(schema.clone(), json!({"oldText": "a", "old_text": "b"}));
        assert_eq!(value, json!({"oldText": "a", "old_text": "b"}));
        assert!(casts.is_empty());
        let (_, casts) = run(schema, json!({"oldTxt": "a"}));
        assert!(casts.is_empty());
    }

    #[test]
    fn where_extra_keys_are_allowed_they_are_kept_as_sent() {
        let schema = json!({"type": "object", "properties": {"old_text": {"type": "string"}}});
        let (value, casts) = run(schema, json!({"oldText": "a"}));
        assert_eq!(value, json!({"oldText": "a"}));
        assert!(casts.is_empty());
    }

    #[test]
    fn spellings_that_fit_two_parameters_are_not_guessed() {
        let schema = json!({"type": "object", "additionalProperties": false,
            "properties": {"old_text": {"type": "string"}, "oldtext": {"type": "string"}}});
        let (value, casts) = run(schema, json!({"OldText": "a"}));
        assert_eq!(value, json!({"OldText": "a"}));
        assert!(casts.is_empty());
    }

    #[test]
    fn casting_recurses_into_arrays_and_objects() {
        let schema = json!({
            "type": "object",
            "properties": {
                "meta": {
                    "type": "object",
                    "properties": {
                        "flags": {"type": "array", "items": {"type": "boolean"}},
                        "sizes": {"type": "object", "additionalProperties": {"type": "integer"}}
                    }
                }
            }
        });
        let (args, casts) = run(
            schema,
            json!({"meta": {"flags": ["yes", false, "0"], "sizes": {"a": "1", "b": 2}}}),
        );
        assert_eq!(
            args,
            json!({"meta": {"flags": [true, false, false], "sizes": {"a": 1, "b": 2}}})
        );
        assert_eq!(
            casts,
            [
                r#"meta.flags[0]: string "yes" -> boolean"#,
                r#"meta.flags[2]: string "0" -> boolean"#,
                r#"meta.sizes.a: string "1" -> integer"#,
            ]
        );
    }

    #[test]
    fn tuple_items_cast_by_position() {
        let schema = json!({"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "boolean"}});
        assert_eq!(x(schema, json!(["1", "2", "no"])), json!(["1", 2, false]));
    }

    #[test]
    fn pattern_properties_cast_matching_keys() {
        let schema = json!({"type": "object", "patternProperties": {"^n_": {"type": "integer"}}});
        let (args, _) = run(schema, json!({"n_a": "1", "s": "2"}));
        assert_eq!(args, json!({"n_a": 1, "s": "2"}));
    }

    #[test]
    fn refs_are_followed() {
        let schema = json!({
            "type": "object",
            "properties": {"inner": {"$ref": "#/$defs/Inner"}},
            "$defs": {"Inner": {"type": "object", "properties": {"n": {"type": "integer"}}}}
        });
        let (args, casts) = run(schema, json!({"inner": {"n": "3"}}));
        assert_eq!(args, json!({"inner": {"n": 3}}));
        assert_eq!(casts, [r#"inner.n: string "3" -> integer"#]);
    }

    #[test]
    fn recursive_schemas_cast_at_every_depth() {
        let schema = json!({
            "$ref": "#/$defs/Node",
            "$defs": {"Node": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                }
            }}
        });
        let (args, casts) = run(
            schema,
            json!({"size": "1", "children": [{"size": "2", "children": [{"size": "3", "children": []}]}]}),
        );
        assert_eq!(
            args,
            json!({"size": 1, "children": [{"size": 2, "children": [{"size": 3, "children": []}]}]})
        );
        assert_eq!(
            casts.last().unwrap(),
            r#"children[0].children[0].size: string "3" -> integer"#
        );
    }

    #[test]
    fn any_of_leaves_a_value_that_fits_a_branch() {
        let schema = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
        assert_eq!(x(schema, json!("60")), json!("60"));
    }

    #[test]
    fn any_of_writes_integral_floats_in_the_fitting_branch_as_integers() {
        // An untagged enum `Id(u32) | Pair { a: i8 }`: `{"a": -0}` fits the
        // pair, and must reach serde as an integer.
        let schema = json!({"anyOf": [
            {"type": "integer", "format": "uint32"},
            {"type": "object", "properties": {"a": {"type": "integer", "format": "int8"}}, "required": ["a"]}
        ]});
        let (args, casts) = run(property(schema.clone()), json!({"x": {"a": -0.0}}));
        assert_eq!(args["x"], json!({"a": 0}));
        assert_eq!(casts, ["x.a: number -0.0 -> integer"]);
        assert_eq!(x(schema, json!(7.0)), json!(7));
    }

    #[test]
    fn any_of_takes_the_first_branch_casting_makes_fit() {
        let schema = json!({"anyOf": [{"type": "boolean"}, {"type": "integer"}]});
        let (args, casts) = run(property(schema.clone()), json!({"x": "5"}));
        assert_eq!(args["x"], json!(5));
        assert_eq!(casts, [r#"x: string "5" -> integer"#]);
        assert_eq!(x(schema, json!("1")), json!(true));
    }

    #[test]
    fn any_of_records_only_the_chosen_branch() {
        // The first branch casts `a` but then fails on `b`; only the second's casts count.
        let schema = json!({"oneOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}}, "required": ["a", "b"]},
            {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}
        ]});
        let (args, casts) = run(property(schema), json!({"x": {"a": "1", "b": "maybe"}}));
        assert_eq!(args["x"], json!({"a": 1, "b": "maybe"}));
        assert_eq!(casts, [r#"x.a: string "1" -> number"#]);
    }

    #[test]
    fn any_of_leaves_null_alone() {
        let schema = json!({"anyOf": [{"type": "integer"}, {"type": "null"}]});
        assert_eq!(x(schema, json!(null)), json!(null));
    }

    #[test]
    fn option_of_a_struct_casts_inside_even_when_still_invalid() {
        let schema = json!({
            "type": "object",
            "properties": {"x": {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "null"}]}},
            "$defs": {"S": {"type": "object", "properties": {"n": {"type": "integer"}, "m": {"type": "string"}}, "required": ["n", "m"]}}
        });
        let (args, casts) = run(schema, json!({"x": {"n": "4"}}));
        assert_eq!(args, json!({"x": {"n": 4}}));
        assert_eq!(casts, [r#"x.n: string "4" -> integer"#]);
    }

    #[test]
    fn the_one_branch_for_the_type_keeps_its_casts_even_when_still_invalid() {
        let schema = json!({"anyOf": [
            {"type": "integer"},
            {"type": "object", "properties": {"n": {"type": "integer"}, "m": {}}, "required": ["n", "m"]}
        ]});
        let (args, casts) = run(property(schema), json!({"x": {"n": "5"}}));
        assert_eq!(args["x"], json!({"n": 5}));
        assert_eq!(casts, [r#"x.n: string "5" -> integer"#]);
    }

    #[test]
    fn all_of_casts_through_every_branch() {
        let schema = json!({"allOf": [
            {"properties": {"a": {"type": "integer"}}},
            {"properties": {"b": {"type": "boolean"}}}
        ]});
        let (args, _) = run(schema, json!({"a": "1", "b": "no"}));
        assert_eq!(args, json!({"a": 1, "b": false}));
    }

    #[test]
    fn casts_record_path_from_and_to() {
        let (_, casts) = run(
            json!({"type": "object", "properties": {"timeout": {"type": "integer"}, "odd key": {"type": "number"}}}),
            json!({"odd key": "0.5", "timeout": "60"}),
        );
        assert_eq!(
            casts,
            [
                r#"["odd key"]: string "0.5" -> number"#,
                r#"timeout: string "60" -> integer"#
            ]
        );
        let nodes = compile(&property(json!({"type": "integer"}))).unwrap();
        let mut args = json!({"x": 30.0});
        assert_eq!(
            cast(&nodes, &mut args),
            [Cast {
                path: "x".into(),
                from: "number 30.0".into(),
                to: "integer".into()
            }]
        );
    }

    #[test]
    fn a_false_schema_casts_nothing() {
        assert_eq!(x(json!(false), json!("1")), json!("1"));
    }

    #[test]
    fn alternatives_that_would_take_exponential_time_are_cut_short() {
        use super::super::validate::tests::{deep_misfit, exponential_schema};
        let (args, casts) = run(exponential_schema(), deep_misfit(60));
        assert_eq!(args, deep_misfit(60));
        assert!(casts.is_empty());
    }

    #[test]
    fn values_nested_past_the_limit_are_left_alone() {
        let schema = json!({"$ref": "#/$defs/L", "$defs": {"L": {"type": ["array", "integer"], "items": {"$ref": "#/$defs/L"}}}});
        let nodes = compile(&schema).unwrap();
        let mut value = json!("1");
        for _ in 0..(MAX_DEPTH + 5) {
            value = Value::Array(vec![value]);
        }
        let casts = cast(&nodes, &mut value);
        assert!(casts.is_empty());
        let mut shallow = json!([["1"]]);
        assert_eq!(cast(&nodes, &mut shallow).len(), 1);
    }
}
