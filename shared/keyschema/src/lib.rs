//! The single-table key design of the marketplace: one table, four GSIs.
//!
//! Pure code, no AWS calls. Each entity is declared once
//! ([`entities`]: its primary key and every index it joins, as templates
//! over its fields, with when an index is sparse and who keeps it); the
//! rest is derived from the declarations ([`decl`]): an item's keys, the
//! typed primary keys ([`keys`]), every access pattern as one request
//! ([`access`]; the docs' list: [`patterns`]), the key moves of every state change ([`write`](mod@write) holds only
//! the business conditions) and the stream processor's repairs. Below
//! them: [`table`] (attribute names, indexes, entity types), [`template`]
//! (rendering and matching key templates), [`value`] (items as attribute
//! maps), [`key`], [`query`] and [`change`] (what the store sends),
//! [`records`] (the bookkeeping items: markers, postings, guards) and
//! [`memory`] (changes applied in memory, for tests).

pub mod access;
pub mod change;
pub mod decl;
pub mod entities;
mod entity;
mod error;
pub mod homes;
pub mod key;
pub mod keys;
pub mod memory;
pub mod patterns;
pub mod query;
pub mod records;
pub mod table;
pub mod template;
pub mod value;
pub mod write;

#[cfg(test)]
mod tests;

pub use change::{Change, Cond};
pub use decl::SchemaError;
pub use entity::{Entity, ReadAs};
pub use key::{EntityKey, ItemKeys, Key};
pub use query::{DetailsQuery, EntityQuery, KeyQuery, SortKey};
pub use table::{EntityType, Index};
pub use value::{Attrs, Value};
