//! Arguments as models write them, generated from a tool's schema.

use serde_json::{Map, Number, Value, json};

use crate::args::{ArgumentSchema, SchemaError, read_payload};
use crate::tool::ToolSpec;

/// How many times a case is drawn before the generator gives up on it.
const ATTEMPTS: usize = 16;
/// How deep generated values nest at most.
const MAX_DEPTH: usize = 6;

/// What a [`Case`] is meant to test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaseKind {
    /// Arguments that fit the schema as they are.
    Valid,
    /// Arguments a model might write that casting turns into valid ones:
    /// numbers as text, `"yes"` for `true`, an object as JSON text, `null`
    /// for a parameter left out, a camelCase name, the whole arguments as
    /// a JSON string.
    Sloppy,
    /// Arguments the registry must refuse: a wrong type, a required
    /// parameter missing, a value out of range or not among those allowed,
    /// an unknown parameter, arguments that are not an object.
    Invalid,
}

/// One generated call's arguments, and what they are meant to test.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Valid, sloppy or invalid.
    pub kind: CaseKind,
    /// The payload, as a model would send it.
    pub arguments: Value,
    /// What the tool receives after casting (for valid and sloppy cases).
    pub expected: Option<Value>,
    /// The top-level parameter an invalid case gets wrong, when it is one:
    /// the error the model reads must name it.
    pub parameter: Option<String>,
    /// What was done to make the case, in words (`age as text`, `missing
    /// required name`).
    pub note: String,
}

/// A small, fast, deterministic source of randomness (SplitMix64): the
/// same seed gives the same cases on every platform and every run.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// True once in `n` times on average.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// A float in `0.0..1.0`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }
}

/// Generates arguments for one tool from its input schema: valid ones,
/// sloppy ones casting accepts, and invalid ones the registry refuses,
/// all deterministic from a seed.
///
/// Every case is checked against the tool's compiled schema before it is
/// handed out (a sloppy one after reading the payload and casting), so a
/// valid case is one the registry takes, a sloppy one one it takes after
/// casting, and an invalid one one it refuses. A schema the generator
/// cannot satisfy (a `pattern` beyond its simple sampler, say) yields
/// fewer valid cases, never wrong ones.
///
/// ```
/// use toolsmith::testing::{ArgumentGenerator, CaseKind};
/// use toolsmith::{Tool, tool};
///
/// /// Repeat a word.
/// #[tool]
/// async fn repeat(word: String, #[arg(minimum = 1, maximum = 5)] times: u8) -> String {
///     word.repeat(usize::from(times))
/// }
///
/// let mut generator = ArgumentGenerator::new(RepeatTool.spec(), 42).unwrap();
/// let cases = generator.cases(30);
/// assert_eq!(cases, ArgumentGenerator::new(RepeatTool.spec(), 42).unwrap().cases(30));
/// assert!(cases.iter().any(|c| c.kind == CaseKind::Sloppy));
/// let invalid = cases.iter().find(|c| c.kind == CaseKind::Invalid).unwrap();
/// println!("{}: {}", invalid.note, invalid.arguments);
/// ```
#[derive(Debug, Clone)]
pub struct ArgumentGenerator {
    root: Value,
    schema: ArgumentSchema,
    takes_arguments: bool,
    examples: Vec<Value>,
    rng: Rng,
}

impl ArgumentGenerator {
    /// A generator for the tool `spec` describes, started from `seed`.
    pub fn new(spec: &ToolSpec, seed: u64) -> Result<Self, SchemaError> {
        let mut generator = Self::from_schema(&spec.input_schema, seed)?;
        generator.examples = spec.input_examples.clone();
        Ok(generator)
    }

    /// A generator for an input schema, started from `seed`.
    pub fn from_schema(schema: &Value, seed: u64) -> Result<Self, SchemaError> {
        let compiled = ArgumentSchema::compile(schema)?;
        Ok(Self {
            root: schema.clone(),
            takes_arguments: compiled.has_parameter("arguments"),
            schema: compiled,
            examples: Vec::new(),
            rng: Rng::new(seed),
        })
    }

    /// `n` cases: about two in five valid, the rest sloppy and invalid in
    /// equal shares (fewer of a kind the schema does not allow, such as
    /// sloppy arguments for a tool without parameters).
    pub fn cases(&mut self, n: usize) -> Vec<Case> {
        let mut cases = Vec::with_capacity(n);
        let mut misses = 0;
        while cases.len() < n && misses < n.max(8) * 4 {
            let case = match self.rng.below(10) {
                0..=3 => self.valid(),
                4..=6 => self.sloppy(),
                _ => self.invalid(),
            };
            match case {
                Some(case) => cases.push(case),
                None => misses += 1,
            }
        }
        cases
    }

    /// Arguments that fit the schema as they are.
    pub fn valid(&mut self) -> Option<Case> {
        for _ in 0..ATTEMPTS {
            let (value, note) = if !self.examples.is_empty() && self.rng.one_in(4) {
                let example = self.rng.pick(&self.examples).cloned()?;
                (example, "an example of the tool's".to_owned())
            } else {
                let root = self.root.clone();
                (self.value(&root, 0), "generated from the schema".to_owned())
            };
            let mut checked = value.clone();
            if matches!(self.schema.check(&mut checked), Ok(casts) if casts.is_empty()) {
                return Some(Case {
                    kind: CaseKind::Valid,
                    arguments: value,
                    expected: Some(checked),
                    parameter: None,
                    note,
                });
            }
        }
        None
    }

    /// Arguments a model might write, that casting turns into valid ones.
    pub fn sloppy(&mut self) -> Option<Case> {
        for _ in 0..ATTEMPTS {
            let valid = self.valid()?;
            let expected = valid.expected.clone();
            let Some((arguments, note, changes_result)) = self.make_sloppy(valid.arguments) else {
                continue;
            };
            let Some(checked) = self.read_and_check(arguments.clone()) else {
                continue;
            };
            // Casting must give back what the valid arguments were, but
            // for a `null` dropped (the key is then absent).
            if !changes_result && expected.as_ref() != Some(&checked) {
                continue;
            }
            let expected = Some(checked);
            return Some(Case {
                kind: CaseKind::Sloppy,
                arguments,
                expected,
                parameter: None,
                note,
            });
        }
        None
    }

    /// Arguments the registry must refuse.
    pub fn invalid(&mut self) -> Option<Case> {
        for _ in 0..ATTEMPTS {
            let base = self.valid()?.arguments;
            let Some((arguments, note, parameter)) = self.make_invalid(base) else {
                continue;
            };
            if self.read_and_check(arguments.clone()).is_none() {
                return Some(Case {
                    kind: CaseKind::Invalid,
                    arguments,
                    expected: None,
                    parameter,
                    note,
                });
            }
        }
        None
    }

    /// Steps 1, 3 and 4 of a call: the arguments the tool would receive,
    /// or `None` when the registry would refuse them.
    fn read_and_check(&self, payload: Value) -> Option<Value> {
        let (mut args, _) = read_payload(payload, self.takes_arguments).ok()?;
        self.schema.check(&mut args).ok()?;
        Some(args)
    }

    /// The schema behind a `$ref` into the root's `$defs` or `definitions`.
    fn resolve<'s>(&'s self, schema: &'s Value) -> &'s Value {
        let mut schema = schema;
        for _ in 0..8 {
            let Some(target) = schema.get("$ref").and_then(Value::as_str) else {
                break;
            };
            let found = target
                .strip_prefix("#/")
                .map(|path| {
                    path.split('/')
                        .try_fold(&self.root, |at, key| at.get(key.replace("~1", "/")))
                })
                .unwrap_or_else(|| (target == "#").then_some(&self.root));
            match found {
                Some(next) => schema = next,
                None => break,
            }
        }
        schema
    }

    fn property_schema(&self, name: &str) -> Option<Value> {
        let root = self.resolve(&self.root);
        root.get("properties")?
            .get(name)
            .map(|s| self.resolve(s).clone())
    }

    fn required(&self) -> Vec<String> {
        let root = self.resolve(&self.root);
        root.get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A value `schema` accepts, as far as this simple generator can tell.
    fn value(&mut self, schema: &Value, depth: usize) -> Value {
        let schema = self.resolve(schema).clone();
        let Value::Object(map) = &schema else {
            return json!("text");
        };
        if let Some(value) = map.get("const") {
            return value.clone();
        }
        if let Some(Value::Array(options)) = map.get("enum")
            && let Some(option) = self.rng.pick(options)
        {
            return option.clone();
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(key)
                && !branches.is_empty()
            {
                // Prefer a branch that is not `null`.
                let not_null: Vec<&Value> = branches
                    .iter()
                    .filter(|b| self.resolve(b).get("type") != Some(&json!("null")))
                    .collect();
                let branch = if !not_null.is_empty() && !self.rng.one_in(6) {
                    not_null[self.rng.below(not_null.len())].clone()
                } else {
                    branches[self.rng.below(branches.len())].clone()
                };
                return self.value(&branch, depth + 1);
            }
        }
        if let Some(Value::Array(parts)) = map.get("allOf")
            && let Some(first) = parts.first()
        {
            let mut merged = self.resolve(first).clone();
            if let (Value::Object(merged), Value::Object(own)) = (&mut merged, &schema) {
                for (key, value) in own {
                    if key != "allOf" {
                        merged.entry(key.clone()).or_insert(value.clone());
                    }
                }
            }
            return self.value(&merged, depth + 1);
        }
        let kind = match map.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            Some(Value::Array(kinds)) => {
                let names: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
                let not_null: Vec<&str> = names.iter().copied().filter(|k| *k != "null").collect();
                let chosen = if !not_null.is_empty() && !self.rng.one_in(6) {
                    not_null[self.rng.below(not_null.len())]
                } else {
                    names
                        .get(self.rng.below(names.len()))
                        .copied()
                        .unwrap_or("string")
                };
                chosen.to_owned()
            }
            _ => infer_type(map).to_owned(),
        };
        match kind.as_str() {
            "null" => Value::Null,
            "boolean" => Value::Bool(self.rng.one_in(2)),
            "integer" => self.integer(map),
            "number" => self.number(map),
            "array" => self.array(map, depth),
            "object" => self.object(map, depth),
            _ => Value::String(self.string(map)),
        }
    }

    fn integer(&mut self, map: &Map<String, Value>) -> Value {
        let (lo, hi) = bounds(map, true);
        let lo = lo.unwrap_or(-20.0).max(-1e15).ceil() as i64;
        let hi = hi.unwrap_or((lo as f64).max(0.0) + 500.0).min(1e15).floor() as i64;
        if hi < lo {
            return json!(lo);
        }
        let step = map
            .get("multipleOf")
            .and_then(Value::as_f64)
            .filter(|m| m.fract() == 0.0 && *m >= 1.0)
            .map_or(1, |m| m as i64);
        let span = (hi - lo) as u64 / step as u64;
        let first = lo + (step - lo.rem_euclid(step)) % step;
        let n = first + step * (self.rng.next_u64() % (span + 1)) as i64;
        json!(n.min(hi))
    }

    fn number(&mut self, map: &Map<String, Value>) -> Value {
        if map.contains_key("multipleOf") {
            return self.integer(map);
        }
        let (lo, hi) = bounds(map, false);
        let lo = lo.unwrap_or(-100.0);
        let hi = hi.unwrap_or(lo.max(0.0) + 1000.0);
        let exclusive_lo = map.contains_key("exclusiveMinimum");
        let mut n = lo + self.rng.unit() * (hi - lo);
        n = (n * 100.0).round() / 100.0;
        if n < lo || (exclusive_lo && n <= lo) || n > hi {
            n = (lo + hi) / 2.0;
        }
        Number::from_f64(n).map_or(json!(0), Value::Number)
    }

    fn string(&mut self, map: &Map<String, Value>) -> String {
        let min = map.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = map
            .get("maxLength")
            .and_then(Value::as_u64)
            .map_or(min.max(1) + 11, |m| m as usize);
        if let Some(Value::Array(examples)) = map.get("examples")
            && let Some(Value::String(example)) = self.rng.pick(examples)
            && !self.rng.one_in(3)
        {
            return example.clone();
        }
        if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
            return pattern::sample(pattern, &mut self.rng);
        }
        if let Some(format) = map.get("format").and_then(Value::as_str) {
            let text = match format {
                "date-time" => Some("2024-05-01T12:30:00Z"),
                "date" => Some("2024-05-01"),
                "time" => Some("12:30:00"),
                "uri" | "url" => Some("https://example.com/a"),
                "email" => Some("ada@example.com"),
                "uuid" => Some("7b0e1f7e-6a0c-4d8e-9a3f-2f1c9d6e5b4a"),
                "ipv4" => Some("192.0.2.1"),
                _ => None,
            };
            if let Some(text) = text {
                return text.to_owned();
            }
        }
        const WORDS: [&str; 12] = [
            "alpha",
            "notes",
            "report",
            "main",
            "x",
            "data",
            "hello world",
            "readme",
            "42b",
            "q",
            "path/to",
            "zeta",
        ];
        let mut text = String::new();
        while text.chars().count() < min {
            text.push_str(WORDS[self.rng.below(WORDS.len())]);
        }
        if text.is_empty() && max > 0 {
            text.push_str(WORDS[self.rng.below(WORDS.len())]);
        }
        text.chars().take(max.max(min)).collect()
    }

    fn array(&mut self, map: &Map<String, Value>, depth: usize) -> Value {
        let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = map
            .get("maxItems")
            .and_then(Value::as_u64)
            .map_or(min + 3, |m| m as usize)
            .min(min + 3);
        let count = if depth >= MAX_DEPTH {
            min
        } else {
            min + self.rng.below(max.saturating_sub(min) + 1)
        };
        let prefix = map.get("prefixItems").and_then(Value::as_array).cloned();
        let items = map.get("items").cloned().unwrap_or(json!({}));
        let mut out = Vec::with_capacity(count);
        for index in 0..count {
            let schema = prefix
                .as_ref()
                .and_then(|p| p.get(index).cloned())
                .unwrap_or_else(|| items.clone());
            let mut value = self.value(&schema, depth + 1);
            if map.get("uniqueItems") == Some(&Value::Bool(true)) {
                for _ in 0..4 {
                    if !out.contains(&value) {
                        break;
                    }
                    value = self.value(&schema, depth + 1);
                }
            }
            out.push(value);
        }
        Value::Array(out)
    }

    fn object(&mut self, map: &Map<String, Value>, depth: usize) -> Value {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = Map::new();
        if let Some(Value::Object(properties)) = map.get("properties") {
            for (name, schema) in properties {
                let wanted =
                    required.contains(&name.as_str()) || (depth < MAX_DEPTH && self.rng.one_in(2));
                if wanted {
                    out.insert(name.clone(), self.value(schema, depth + 1));
                }
            }
        }
        Value::Object(out)
    }

    /// One or two changes casting undoes; whether the change alters what
    /// the tool receives (a `null` dropped) rather than restores it.
    fn make_sloppy(&mut self, valid: Value) -> Option<(Value, String, bool)> {
        let Value::Object(mut args) = valid else {
            return None;
        };
        let keys: Vec<String> = args.keys().cloned().collect();
        let required = self.required();
        let mut notes = Vec::new();
        let mut changes_result = false;
        let rounds = 1 + self.rng.below(2);
        for _ in 0..rounds {
            if self.rng.one_in(5) {
                // A parameter left out, sent as `null` (strict providers do).
                let optional: Vec<String> = self
                    .optional_parameters()
                    .into_iter()
                    .filter(|name| {
                        !required.contains(name)
                            && self.property_schema(name).is_some_and(|s| !allows_null(&s))
                    })
                    .collect();
                if let Some(name) = self.rng.pick(&optional).cloned() {
                    args.insert(name.clone(), Value::Null);
                    notes.push(format!("{name} as null"));
                    changes_result = true;
                    continue;
                }
            }
            let Some(key) = self.rng.pick(&keys).cloned() else {
                break;
            };
            let Some(value) = args.get(&key).cloned() else {
                continue;
            };
            let schema = self.property_schema(&key).unwrap_or(json!({}));
            if let Some((sloppy, note)) = self.sloppy_value(&value, &schema) {
                args.insert(key.clone(), sloppy);
                notes.push(format!("{key} {note}"));
            } else if let Some(variant) = camel_case(&key)
                && !args.contains_key(&variant)
                && self.rng.one_in(2)
            {
                let value = args.remove(&key).unwrap_or_default();
                args.insert(variant.clone(), value);
                notes.push(format!("{key} spelled {variant}"));
            }
        }
        let mut payload = Value::Object(args);
        if self.rng.one_in(6) {
            payload = Value::String(payload.to_string());
            notes.push("the arguments as a JSON string".into());
        }
        (!notes.is_empty()).then(|| (payload, notes.join(", "), changes_result))
    }

    fn optional_parameters(&self) -> Vec<String> {
        let root = self.resolve(&self.root);
        root.get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// `value` as a model might write it, when casting reads it back.
    fn sloppy_value(&mut self, value: &Value, schema: &Value) -> Option<(Value, String)> {
        let wants_string = allows_type(schema, "string");
        match value {
            Value::Bool(b) => {
                let words: [&str; 4] = if *b {
                    ["yes", "true", "1", "TRUE"]
                } else {
                    ["no", "false", "0", "No"]
                };
                let word = words[self.rng.below(4)];
                (!wants_string).then(|| (json!(word), format!("as \"{word}\"")))
            }
            Value::Number(n) if !wants_string => {
                let text = match (n.as_i64(), self.rng.below(3)) {
                    (Some(i), 1) => format!(" {i} "),
                    (Some(i), 2) if allows_type(schema, "integer") => format!("{i}.0"),
                    _ => n.to_string(),
                };
                Some((json!(text), format!("as the text \"{text}\"")))
            }
            Value::String(text)
                if wants_string
                    && !allows_type(schema, "integer")
                    && !allows_type(schema, "number")
                    && text.parse::<i64>().is_ok_and(|i| i.to_string() == *text) =>
            {
                let n: i64 = text.parse().ok()?;
                Some((json!(n), "as a number".into()))
            }
            Value::Object(_) | Value::Array(_) if !wants_string => {
                Some((json!(value.to_string()), "as JSON text".into()))
            }
            _ => None,
        }
    }

    /// One change the registry must refuse, and the parameter it is about.
    fn make_invalid(&mut self, valid: Value) -> Option<(Value, String, Option<String>)> {
        let Value::Object(mut args) = valid else {
            return None;
        };
        match self.rng.below(6) {
            0 => {
                let required = self.required();
                let name = self.rng.pick(&required)?.clone();
                args.remove(&name);
                Some((
                    Value::Object(args),
                    format!("missing required {name}"),
                    Some(name),
                ))
            }
            1 => {
                let name = "unexpected_parameter_zq".to_owned();
                args.insert(name.clone(), json!(1));
                Some((Value::Object(args), format!("unknown {name}"), Some(name)))
            }
            2 => {
                let payload = if self.rng.one_in(2) {
                    json!([1, 2, 3])
                } else {
                    json!(42)
                };
                Some((payload, "not an object".into(), None))
            }
            3 => {
                let (name, schema) = self.some_parameter(&args)?;
                let (value, note) = self.out_of_range(&schema)?;
                args.insert(name.clone(), value);
                Some((Value::Object(args), format!("{name} {note}"), Some(name)))
            }
            _ => {
                let (name, schema) = self.some_parameter(&args)?;
                let value = self.wrong_type(&schema);
                let note = format!("{name} of the wrong type ({value})");
                args.insert(name.clone(), value);
                Some((Value::Object(args), note, Some(name)))
            }
        }
    }

    fn some_parameter(&mut self, args: &Map<String, Value>) -> Option<(String, Value)> {
        let mut names = self.optional_parameters();
        names.extend(args.keys().cloned());
        names.sort();
        names.dedup();
        let name = self.rng.pick(&names)?.clone();
        let schema = self.property_schema(&name)?;
        Some((name, schema))
    }

    fn wrong_type(&mut self, schema: &Value) -> Value {
        let candidates = [
            json!("not a value of this kind"),
            json!({"unexpected": true}),
            json!([{"a": 1}]),
            json!(true),
            json!(12345),
        ];
        let start = self.rng.below(candidates.len());
        for offset in 0..candidates.len() {
            let candidate = &candidates[(start + offset) % candidates.len()];
            if !type_fits(schema, candidate) {
                return candidate.clone();
            }
        }
        candidates[start].clone()
    }

    fn out_of_range(&mut self, schema: &Value) -> Option<(Value, String)> {
        let map = schema.as_object()?;
        let mut options: Vec<(Value, String)> = Vec::new();
        for (key, below) in [
            ("minimum", true),
            ("exclusiveMinimum", true),
            ("maximum", false),
            ("exclusiveMaximum", false),
        ] {
            if let Some(limit) = map.get(key).and_then(Value::as_f64) {
                let value = if limit.fract() == 0.0 && limit.abs() < 1e15 {
                    let limit = limit as i64;
                    json!(if below { limit - 1 } else { limit + 1 })
                } else {
                    json!(if below { limit - 1.0 } else { limit + 1.0 })
                };
                options.push((value, format!("past its {key}")));
            }
        }
        if let Some(min) = map.get("minLength").and_then(Value::as_u64)
            && min > 0
        {
            options.push((json!("a".repeat(min as usize - 1)), "too short".into()));
        }
        if let Some(max) = map.get("maxLength").and_then(Value::as_u64) {
            options.push((json!("a".repeat(max as usize + 1)), "too long".into()));
        }
        if let Some(max) = map.get("maxItems").and_then(Value::as_u64) {
            let item = map.get("items").cloned().unwrap_or(json!({}));
            let item = self.value(&item, MAX_DEPTH);
            options.push((
                Value::Array(vec![item; max as usize + 1]),
                "with too many items".into(),
            ));
        }
        if let Some(min) = map.get("minItems").and_then(Value::as_u64)
            && min > 0
        {
            options.push((json!([]), "with too few items".into()));
        }
        if map.contains_key("enum") {
            options.push((
                json!("zz_not_an_option"),
                "not one of the values allowed".into(),
            ));
        }
        if map.contains_key("pattern") {
            options.push((json!("!! no match ~~"), "not matching its pattern".into()));
        }
        self.rng.pick(&options).cloned()
    }
}

/// The lower and upper bounds of a number schema (exclusive ones moved in
/// by one for integers, by a little for numbers).
fn bounds(map: &Map<String, Value>, integer: bool) -> (Option<f64>, Option<f64>) {
    let nudge = if integer { 1.0 } else { 0.01 };
    let lo = map.get("minimum").and_then(Value::as_f64).or_else(|| {
        map.get("exclusiveMinimum")
            .and_then(Value::as_f64)
            .map(|m| m + nudge)
    });
    let hi = map.get("maximum").and_then(Value::as_f64).or_else(|| {
        map.get("exclusiveMaximum")
            .and_then(Value::as_f64)
            .map(|m| m - nudge)
    });
    (lo, hi)
}

fn infer_type(map: &Map<String, Value>) -> &'static str {
    if map.contains_key("properties") {
        "object"
    } else if map.contains_key("items") || map.contains_key("prefixItems") {
        "array"
    } else if [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]
    .iter()
    .any(|k| map.contains_key(*k))
    {
        "number"
    } else {
        "string"
    }
}

fn types_of(schema: &Value) -> Vec<String> {
    let mut kinds = Vec::new();
    match schema.get("type") {
        Some(Value::String(kind)) => kinds.push(kind.clone()),
        Some(Value::Array(list)) => {
            kinds.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for branch in branches {
                kinds.extend(types_of(branch));
            }
        }
    }
    kinds
}

fn allows_type(schema: &Value, kind: &str) -> bool {
    types_of(schema)
        .iter()
        .any(|k| k == kind || (kind == "integer" && k == "number"))
}

fn allows_null(schema: &Value) -> bool {
    types_of(schema).iter().any(|k| k == "null")
}

/// Whether `value`'s JSON type is one the schema names (no types named: yes).
fn type_fits(schema: &Value, value: &Value) -> bool {
    let kinds = types_of(schema);
    if kinds.is_empty() {
        return true;
    }
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    kinds
        .iter()
        .any(|k| k == kind || (k == "number" && kind == "integer"))
}

/// `snake_case` as `camelCase`, when that is another spelling.
fn camel_case(name: &str) -> Option<String> {
    if !name.contains('_') || name.starts_with('_') {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    (out != name).then_some(out)
}

/// Strings for simple regular expressions: literals, classes (`[a-z]`,
/// `\d`, `\w`, `.`), groups with alternatives, and the usual quantifiers.
/// What it cannot read it samples as best it can; the schema's check then
/// decides whether the result is used.
mod pattern {
    use super::Rng;

    enum Node {
        Chars(Vec<char>),
        Group(Vec<Vec<(Node, usize, usize)>>),
    }

    pub(super) fn sample(pattern: &str, rng: &mut Rng) -> String {
        let chars: Vec<char> = pattern.chars().collect();
        let mut at = 0;
        let alternatives = parse_alternatives(&chars, &mut at);
        let mut out = String::new();
        emit(&Node::Group(alternatives), rng, &mut out);
        out
    }

    fn parse_alternatives(chars: &[char], at: &mut usize) -> Vec<Vec<(Node, usize, usize)>> {
        let mut alternatives = vec![Vec::new()];
        while *at < chars.len() {
            let c = chars[*at];
            *at += 1;
            let node = match c {
                '^' | '$' => continue,
                ')' => break,
                '|' => {
                    alternatives.push(Vec::new());
                    continue;
                }
                '(' => {
                    if chars.get(*at) == Some(&'?') {
                        // `(?:`, `(?i)` and the like: skip the marker.
                        while *at < chars.len() && chars[*at] != ':' && chars[*at] != ')' {
                            *at += 1;
                        }
                        if chars.get(*at) == Some(&':') {
                            *at += 1;
                        }
                    }
                    Node::Group(parse_alternatives(chars, at))
                }
                '[' => Node::Chars(class(chars, at)),
                '\\' => {
                    let e = chars.get(*at).copied().unwrap_or('\\');
                    *at += 1;
                    Node::Chars(escape(e))
                }
                '.' => Node::Chars(('a'..='z').collect()),
                other => Node::Chars(vec![other]),
            };
            let (min, max) = quantifier(chars, at);
            if let Some(last) = alternatives.last_mut() {
                last.push((node, min, max));
            }
        }
        alternatives
    }

    fn escape(e: char) -> Vec<char> {
        match e {
            'd' => ('0'..='9').collect(),
            'w' => ('a'..='z').chain('0'..='9').chain(['_']).collect(),
            's' => vec![' '],
            'D' | 'W' | 'S' => vec!['-'],
            other => vec![other],
        }
    }

    fn class(chars: &[char], at: &mut usize) -> Vec<char> {
        let negated = chars.get(*at) == Some(&'^');
        if negated {
            *at += 1;
        }
        let mut set = Vec::new();
        let mut first = true;
        while *at < chars.len() && (chars[*at] != ']' || first) {
            first = false;
            let c = chars[*at];
            *at += 1;
            if c == '\\' {
                let e = chars.get(*at).copied().unwrap_or('\\');
                *at += 1;
                set.extend(escape(e));
            } else if chars.get(*at) == Some(&'-') && chars.get(*at + 1).is_some_and(|n| *n != ']')
            {
                let end = chars[*at + 1];
                *at += 2;
                set.extend(c..=end);
            } else {
                set.push(c);
            }
        }
        *at += 1;
        if negated {
            let pool: Vec<char> = ('a'..='z').chain('0'..='9').collect();
            return pool.into_iter().filter(|c| !set.contains(c)).collect();
        }
        set
    }

    fn quantifier(chars: &[char], at: &mut usize) -> (usize, usize) {
        let range = match chars.get(*at) {
            Some('*') => (0, 3),
            Some('+') => (1, 4),
            Some('?') => (0, 1),
            Some('{') => {
                let end = chars[*at..].iter().position(|c| *c == '}');
                let Some(end) = end else { return (1, 1) };
                let inside: String = chars[*at + 1..*at + end].iter().collect();
                *at += end;
                let mut parts = inside.splitn(2, ',');
                let min = parts
                    .next()
                    .and_then(|m| m.trim().parse().ok())
                    .unwrap_or(1);
                let max = match parts.next() {
                    None => min,
                    Some(m) if m.trim().is_empty() => min + 3,
                    Some(m) => m.trim().parse().unwrap_or(min),
                };
                (min, max.max(min))
            }
            _ => return (1, 1),
        };
        *at += 1;
        // A lazy or possessive marker changes nothing here.
        if matches!(chars.get(*at), Some('?' | '+')) {
            *at += 1;
        }
        range
    }

    fn emit(node: &Node, rng: &mut Rng, out: &mut String) {
        match node {
            Node::Chars(set) => {
                if let Some(c) = set.get(rng.below(set.len())) {
                    out.push(*c);
                }
            }
            Node::Group(alternatives) => {
                let Some(sequence) = alternatives.get(rng.below(alternatives.len())) else {
                    return;
                };
                for (node, min, max) in sequence {
                    let count = min + rng.below(max - min + 1);
                    for _ in 0..count.min(64) {
                        emit(node, rng, out);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_sampled_to_match() {
        let mut rng = Rng::new(1);
        for pattern in [
            "^[cf]$",
            "^[a-z]{3}-\\d{2,4}$",
            "^(red|green|blue)$",
            "^\\w+@example\\.com$",
            "^v?[0-9]+(\\.[0-9]+)*$",
        ] {
            let regex = regex::Regex::new(pattern).unwrap();
            for _ in 0..50 {
                let text = pattern::sample(pattern, &mut rng);
                assert!(regex.is_match(&text), "{pattern}: {text:?}");
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_numbers() {
        let a: Vec<u64> = (0..5)
            .scan(Rng::new(9), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..5)
            .scan(Rng::new(9), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a[0], Rng::new(10).next_u64());
    }
}
