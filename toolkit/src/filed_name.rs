//! The key a registry files its tools under: a tool's name, compared by
//! [`same_name`] rather than `==`.
//!
//! A registry looks a tool up on every call. Tool names are short, and for
//! them the C library's `memcmp`, which `str`'s `==` calls, costs more than
//! comparing the bytes: a call, and the registers saved around it. The
//! comparison is the same; only how it is made differs.

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};

use crate::args::same_name;

/// A tool's name, as a registry's key.
#[derive(Debug, Clone)]
pub(crate) struct FiledName(String);

/// A name looked up among [`FiledName`]s: a `str`, compared and hashed as
/// they are.
#[derive(Debug)]
#[repr(transparent)]
pub(crate) struct Name(str);

impl Name {
    /// `name` as a key to look up.
    pub(crate) fn of(name: &str) -> &Name {
        // SAFETY: `Name` is a `str` alone (`repr(transparent)`), so the
        // pointer cast keeps its length and lifetime.
        unsafe { &*(std::ptr::from_ref::<str>(name) as *const Name) }
    }
}

impl FiledName {
    /// `name`, to file a tool under.
    pub(crate) fn new(name: String) -> Self {
        Self(name)
    }

    /// The name as text.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl Borrow<Name> for FiledName {
    fn borrow(&self) -> &Name {
        Name::of(&self.0)
    }
}

impl PartialEq for Name {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        same_name(&self.0, &other.0)
    }
}

impl Eq for Name {}

impl Hash for Name {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

// `Borrow` asks the owned key to compare and hash as its borrowed form does.
impl PartialEq for FiledName {
    fn eq(&self, other: &Self) -> bool {
        Name::of(&self.0) == Name::of(&other.0)
    }
}

impl Eq for FiledName {}

impl Hash for FiledName {
    fn hash<H: Hasher>(&self, state: &mut H) {
        Name::of(&self.0).hash(state);
    }
}
