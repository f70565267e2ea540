//! Step 5 for `#[tool]` functions: a call's arguments read into a tuple of
//! the parameters' types, by name, each value by its type's `Deserialize`.
//!
//! A tool's arguments could be read by a struct deriving `Deserialize`, and
//! once were. But a derive writes a dozen functions per tool (a visitor, a
//! field identifier, their `expecting`s), and the compiler checks each
//! again whenever the tool moves in its file: after an edit above it, every
//! tool below it moves. Here the reading is written once, generically over
//! tuples, and a tool brings only data: its parameters' names and what a
//! missing one becomes ([`Fields`]). The instances for a tuple of types are
//! shared by every tool with the same parameter types.
//!
//! The rules are serde's derive's for a struct with `deny_unknown_fields`:
//! an unknown key is `unknown field`, a missing parameter takes its default
//! if it has one, `None` if it is an `Option`, and is `missing field`
//! otherwise; the messages are serde's own. A key cannot come twice: the
//! arguments are a JSON object, whose keys are unique.

use std::fmt;

use crate::args::same_name;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::Value;

/// The parameters of a tool: their names as sent, in order, and for each
/// the function that makes its default, if it has one. `T` is the tuple of
/// the parameters' types.
pub struct Fields<T: Tuple> {
    names: &'static [&'static str],
    defaults: T::Defaults,
}

impl<T: Tuple> Fields<T> {
    /// The parameters named `names`, in the tuple's order, with `defaults`.
    pub const fn new(names: &'static [&'static str], defaults: T::Defaults) -> Self {
        Self { names, defaults }
    }

    /// The name of parameter `index`, for an error message.
    fn name(&self, index: usize) -> &'static str {
        self.names.get(index).copied().unwrap_or("")
    }
}

/// A tuple of parameter types, whatever the types: what a [`Fields`] can
/// describe. Asks nothing of the types, so a tool whose types are wrong
/// gets no error from here, only from the checks written for it.
pub trait Tuple: Sized {
    /// The function that makes each parameter's default, if it has one.
    type Defaults;
}

/// A tuple of parameter types that can be read from a call's arguments.
pub trait ArgTuple: Tuple + Send + 'static {
    /// Each parameter's value as read so far.
    type Slots;

    /// Nothing read yet.
    fn empty() -> Self::Slots;

    /// Read `value` into the slot of parameter `index`. A JSON object
    /// names each parameter at most once, so the slot is empty.
    fn read(slots: &mut Self::Slots, index: usize, value: Value) -> Result<(), serde_json::Error>;

    /// The parameters, each read, defaulted or refused as missing.
    fn finish(slots: Self::Slots, fields: &Fields<Self>) -> Result<Self, serde_json::Error>;
}

impl<T: ArgTuple> Fields<T> {
    /// The parameters read from a call's arguments, which must be an
    /// object (serde's derive would also read an array by position). The
    /// errors are those of serde's derive, word for word but for what they
    /// say was expected: "an object of the tool's arguments", not a
    /// struct's name.
    ///
    /// Reads the object's entries directly rather than through serde's map
    /// visitor: the keys are matched here anyway, and the detour cost a
    /// third of the reading. Each value is still read by its type's own
    /// `Deserialize`.
    pub fn read(&self, arguments: Value) -> Result<T, serde_json::Error> {
        let map = match arguments {
            Value::Object(map) => map,
            // serde_json's own refusal of anything else, naming what it got.
            other => {
                let Err(refusal) = other.deserialize_map(AnObject);
                return Err(refusal);
            }
        };
        let mut slots = T::empty();
        let mut next = 0;
        for (key, value) in map {
            let index = self.index_of(&key, next)?;
            T::read(&mut slots, index, value)?;
            next = index + 1;
        }
        T::finish(slots, self)
    }

    /// The index of the parameter `key` names; any other key is `unknown
    /// field`. Models mostly send the parameters in their declared order,
    /// so the one after the last found (`next`) is tried first.
    #[inline]
    fn index_of(&self, key: &str, next: usize) -> Result<usize, serde_json::Error> {
        if let Some(name) = self.names.get(next)
            && same_name(name, key)
        {
            return Ok(next);
        }
        match self.names.iter().position(|name| same_name(name, key)) {
            Some(index) => Ok(index),
            None => Err(de::Error::unknown_field(key, self.names)),
        }
    }
}

/// Expects the arguments object: its only use is the error for a value
/// that is not one.
struct AnObject;

impl<'de> Visitor<'de> for AnObject {
    /// Nothing: every value is refused.
    type Value = std::convert::Infallible;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of the tool's arguments")
    }
}

/// What a missing parameter is read from: `None` for an `Option`, and
/// `missing field` for anything else (as serde's derive does).
struct MissingField(&'static str);

impl<'de> Deserializer<'de> for MissingField {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// A missing parameter: its default, `None`, or `missing field`.
fn missing<T: DeserializeOwned>(
    default: Option<fn() -> T>,
    name: &'static str,
) -> Result<T, serde_json::Error> {
    match default {
        Some(make) => Ok(make()),
        None => T::deserialize(MissingField(name)),
    }
}

/// The `Tuple` and `ArgTuple` impls of tuples of each length listed, each
/// element written as its type parameter and its index. Up to 16: a tool
/// with more parameters reads them with a derived struct (the macro's
/// `expand::MAX_FIELDS`).
macro_rules! tuples {
    ($( ( $($ty:ident $index:tt),* ) )*) => {$(
        impl<$($ty,)*> Tuple for ($($ty,)*) {
            type Defaults = ($(Option<fn() -> $ty>,)*);
        }

        impl<$($ty: DeserializeOwned + Send + 'static,)*> ArgTuple for ($($ty,)*) {
            type Slots = ($(Option<$ty>,)*);

            #[allow(clippy::unused_unit)]
            fn empty() -> Self::Slots {
                ($(None::<$ty>,)*)
            }

            #[allow(unused_variables)]
            #[inline]
            fn read(
                slots: &mut Self::Slots,
                index: usize,
                value: Value,
            ) -> Result<(), serde_json::Error> {
                match index {
                    $($index => slots.$index = Some(<$ty as de::Deserialize>::deserialize(value)?),)*
                    // `index_of` gives no other index.
                    _ => {}
                }
                Ok(())
            }

            #[allow(unused_variables, clippy::unused_unit)]
            #[inline]
            fn finish(
                slots: Self::Slots,
                fields: &Fields<Self>,
            ) -> Result<Self, serde_json::Error> {
                Ok(($(
                    match slots.$index {
                        Some(value) => value,
                        None => missing(fields.defaults.$index, fields.name($index))?,
                    },
                )*))
            }
        }
    )*};
}

tuples! {
    ()
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15)
}

#[cfg(test)]
#[path = "fields_tests.rs"]
mod tests;
