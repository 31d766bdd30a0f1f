//! Scalar attribute values and items as attribute maps: what key templates
//! read and changes write, with no AWS types (the store converts).

use std::collections::BTreeMap;

use serde::Serialize;

/// A scalar attribute value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    /// A string.
    S(String),
    /// A number, as its decimal text.
    N(String),
}

impl Value {
    /// A string value.
    pub fn s(v: impl Into<String>) -> Value {
        Value::S(v.into())
    }
    /// A number value.
    pub fn n(v: impl std::fmt::Display) -> Value {
        Value::N(v.to_string())
    }
    /// The text (of a string or a number).
    pub fn text(&self) -> &str {
        match self {
            Value::S(s) | Value::N(s) => s,
        }
    }
}

/// An item's scalar attributes by name (lists and maps are left out: no key
/// is made of them).
pub type Attrs = BTreeMap<String, Value>;

/// The scalar attributes `entity` is stored with (its serde fields: the
/// names every key template and change uses), or `None` if it does not
/// serialize to an object.
pub fn attrs_of<T: Serialize>(entity: &T) -> Option<Attrs> {
    let serde_json::Value::Object(fields) = serde_json::to_value(entity).ok()? else { return None };
    Some(
        fields
            .into_iter()
            .filter_map(|(name, v)| match v {
                serde_json::Value::String(s) => Some((name, Value::S(s))),
                serde_json::Value::Number(n) => Some((name, Value::N(n.to_string()))),
                serde_json::Value::Bool(b) => Some((name, Value::S(b.to_string()))),
                _ => None,
            })
            .collect(),
    )
}

/// The names of the fields `entity` is stored with.
pub fn field_names<T: Serialize>(entity: &T) -> Vec<String> {
    match serde_json::to_value(entity) {
        Ok(serde_json::Value::Object(fields)) => fields.keys().cloned().collect(),
        _ => Vec::new(),
    }
}
