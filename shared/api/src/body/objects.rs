//! A body's JSON value read into its type, objects as objects only.
//!
//! serde's derived structs accept a JSON array of their fields in order as
//! well as an object, unless the deserializer refuses it: through
//! serde_json's own, `"location":[45,170]` is lat 45, lon 170 (and a GeoJSON
//! `[lon, lat]` is silently swapped). [`Objects`] is serde_json's reading of
//! a [`Value`] but for that: a struct, a struct variant or a map given an
//! array is an error, and every nested value is read by it too, so the rule
//! holds at every depth of every body type. (A type that buffers its input,
//! `#[serde(flatten)]` or `#[serde(untagged)]`, would pass around it; no
//! request body has one.)

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Error, Map, Value};

/// What an array where an object belongs is told.
const NOT_AN_ARRAY: &str = "must be a JSON object, not an array";

/// A JSON value to read into a type; see the module docs.
pub(super) struct Objects(pub(super) Value);

fn not_an_array() -> Error {
    de::Error::custom(NOT_AN_ARRAY)
}

impl<'de> Deserializer<'de> for Objects {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => {
                let len = items.len();
                let mut seq = Items(items.into_iter());
                let out = visitor.visit_seq(&mut seq)?;
                // As serde_json: every element read (a tuple of 2 given 3 is an error).
                match seq.0.len() {
                    0 => Ok(out),
                    _ => Err(de::Error::invalid_length(len, &"fewer elements in array")),
                }
            }
            Value::Object(members) => {
                let len = members.len();
                let mut map = Members { members: members.into_iter(), value: None };
                let out = visitor.visit_map(&mut map)?;
                match map.members.len() {
                    0 => Ok(out),
                    _ => Err(de::Error::invalid_length(len, &"fewer elements in map")),
                }
            }
            scalar => scalar.deserialize_any(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_map(visitor)
    }

    /// Maps, structs and (through serde's enum access) struct variants.
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(_) => Err(not_an_array()),
            other => Objects(other).deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(Objects(other)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    /// A unit variant is a string (serde_json's reading); a variant with
    /// content an object of one member, the content read by [`Objects`].
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(members) if members.len() == 1 => {
                let map = Members { members: members.into_iter(), value: None };
                visitor.visit_enum(de::value::MapAccessDeserializer::new(map))
            }
            other => other.deserialize_enum(name, variants, visitor),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct identifier ignored_any
    }
}

/// An array's elements, each read by [`Objects`].
struct Items(std::vec::IntoIter<Value>);

impl<'de> SeqAccess<'de> for Items {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        self.0.next().map(|item| seed.deserialize(Objects(item))).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// An object's members, each value read by [`Objects`].
struct Members {
    members: <Map<String, Value> as IntoIterator>::IntoIter,
    value: Option<Value>,
}

impl<'de> MapAccess<'de> for Members {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        match self.members.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(IntoDeserializer::<Error>::into_deserializer(key)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(Objects(value)),
            None => Err(de::Error::custom("a member's value asked for before its name")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.members.len())
    }
}
