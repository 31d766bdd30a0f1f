//! The single-table key schema of the marketplace: one table, three GSIs.
//!
//! Pure code, no AWS calls. It owns every key string the application writes
//! or queries: [`schema`] (attribute names, indexes, key templates),
//! [`keys`] (key functions per entity), [`access`] (every access pattern as
//! one request), [`ids`] (validated typed ids), [`model`] (entities and value
//! types), [`time`] (timestamps and ULID range bounds) and [`shard`].

pub mod access;
pub mod doc;
pub mod ids;
pub mod keys;
pub mod model;
pub mod schema;
pub mod shard;
pub mod time;
pub mod write;

pub use access::{KeyQuery, SortKey};
pub use keys::{ItemKeys, Key};
pub use model::Entity;
pub use schema::{EntityType, Index};
