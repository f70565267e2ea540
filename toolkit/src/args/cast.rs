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

/// Where the casts made go: every one written out (a list of [`Cast`]s
/// for the host), or only counted, for a caller that has no use for the
/// list. Casting decides which casts exist, once; the log only decides
/// whether their descriptions (a path, a description of the old value) are
/// written, which costs more than the casts themselves.
pub(super) trait CastLog: Default {
    /// Note a cast; `cast` is only called if the cast is written out.
    fn record(&mut self, cast: impl FnOnce() -> Cast);
    /// Whether no cast was noted.
    fn is_empty(&self) -> bool;
    /// Take over the casts of `other`, after those noted so far.
    fn append(&mut self, other: Self);
}

impl CastLog for Vec<Cast> {
    fn record(&mut self, cast: impl FnOnce() -> Cast) {
        self.push(cast());
    }
    fn is_empty(&self) -> bool {
        <[Cast]>::is_empty(self)
    }
    fn append(&mut self, mut other: Self) {
        Vec::append(self, &mut other);
    }
}

/// Counts casts without writing them out.
#[derive(Default)]
pub(super) struct Unwritten(usize);

impl CastLog for Unwritten {
    #[inline]
    fn record(&mut self, _: impl FnOnce() -> Cast) {
        self.0 += 1;
    }
    fn is_empty(&self) -> bool {
        self.0 == 0
    }
    fn append(&mut self, other: Self) {
        self.0 += other.0;
    }
}

/// Cast `value` in place against the root of `nodes`; returns what changed.
#[cfg(test)]
pub(super) fn cast(nodes: &Nodes, value: &mut Value) -> Vec<Cast> {
    cast_logged(nodes, value, &Budget::new())
}

/// [`cast`] within the steps left in `budget`.
#[cfg(test)]
pub(super) fn cast_within(nodes: &Nodes, value: &mut Value, budget: &Budget) -> Vec<Cast> {
    cast_logged(nodes, value, budget)
}

/// Cast `value` in place against the root of `nodes`, within the steps
/// left in `budget`; what changed goes to a log of type `L`.
pub(super) fn cast_logged<L: CastLog>(nodes: &Nodes, value: &mut Value, budget: &Budget) -> L {
    let mut casts = L::default();
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
    fn node<L: CastLog>(
        &self,
        id: NodeId,
        value: &mut Value,
        path: &Path<'_>,
        depth: usize,
        casts: &mut L,
    ) {
        let node = self.nodes.get(id);
        if node.never || depth > MAX_DEPTH || !self.budget.spend() {
            return;
        }
        if wants_cast(node.cast_to, value)
            && let Some((new, to)) = convert(value, node.cast_to)
        {
            casts.record(|| Cast {
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
    fn drop_null_optionals<L: CastLog>(
        &self,
        rules: &ObjectRules,
        map: &mut Map<String, Value>,
        path: &Path<'_>,
        depth: usize,
        casts: &mut L,
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
                casts.record(|| Cast {
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
        if changes(node.cast_to, value, Types::of(value)) {
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
    fn alternatives<L: CastLog>(
        &self,
        node: &Node,
        value: &mut Value,
        path: &Path<'_>,
        depth: usize,
        casts: &mut L,
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
            let mut trial_casts = L::default();
            self.node(branch, &mut trial, path, depth, &mut trial_casts);
            if trial_casts.is_empty() || (a_branch_takes_the_number && trial.is_string()) {
                continue;
            }
            if is_valid(self.nodes, branch, &trial, depth, self.budget) {
                *value = trial;
                casts.append(trial_casts);
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
        if let Some((trial, trial_casts)) = fallback {
            *value = trial;
            casts.append(trial_casts);
        }
    }
}

impl Caster<'_> {
    /// Every integral float in `value` as an integer, each a cast; one step
    /// of the budget a value, so the pass is as long as the value at most.
    fn integral_floats_as_integers<L: CastLog>(
        &self,
        value: &mut Value,
        path: &Path<'_>,
        depth: usize,
        casts: &mut L,
    ) {
        if depth > MAX_DEPTH || !self.budget.spend() {
            return;
        }
        match value {
            Value::Number(n) => {
                if let Some(integer) = integral_float_of(n) {
                    casts.record(|| Cast {
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
fn rename_spelling_variants<L: CastLog>(
    rules: &ObjectRules,
    map: &mut Map<String, Value>,
    path: &Path<'_>,
    casts: &mut L,
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
            casts.record(|| Cast {
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
fn wants_cast(want: Types, value: &Value) -> bool {
    wants_cast_of(want, value, Types::of(value))
}

/// Whether casting against a node that wants `want` replaces `value`,
/// whose narrowest type is `kind`: it wants a cast, and the cast has a
/// result.
#[inline]
pub(super) fn changes(want: Types, value: &Value, kind: Types) -> bool {
    wants_cast_of(want, value, kind) && convert(value, want).is_some()
}

/// [`wants_cast`] for a value whose narrowest type is already known.
#[inline]
fn wants_cast_of(want: Types, value: &Value, kind: Types) -> bool {
    match value {
        Value::Number(n) if n.is_f64() => {
            want != Types::ANY
                && (!want.allows_kind(kind)
                    || (want.contains(Types::INTEGER) && !want.contains(Types::NUMBER)))
        }
        _ => kind_wants_cast(want, kind),
    }
}

/// Whether a value of `kind`, not a float, is cast against a node that
/// wants `want`: when its type is not wanted.
#[inline]
pub(super) fn kind_wants_cast(want: Types, kind: Types) -> bool {
    want != Types::ANY && !want.allows_kind(kind)
}

/// The value `value` unambiguously stands for in one of the wanted types,
/// and that type's name.
fn convert(value: &Value, want: Types) -> Option<(Value, &'static str)> {
    match value {
        Value::String(text) => from_text(text.trim(), want),
        Value::Number(n) => {
            let integral = integral_float_of(n).filter(|_| want.contains(Types::INTEGER));
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

/// A number written as a float with no fraction (`2.0`, `-0`), as the
/// integer casting writes instead: only if it fits i64 or u64 exactly.
#[inline]
pub(super) fn integral_float_of(n: &Number) -> Option<Number> {
    n.as_f64().filter(|_| n.is_f64()).and_then(integral_float)
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
#[path = "tests/cast.rs"]
mod tests;
