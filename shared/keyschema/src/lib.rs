//! The single-table key schema of the marketplace: one table, three GSIs.
//!
//! Pure code, no AWS calls. It owns every key string the application writes
//! or queries. Layered bottom-up: [`ids`] (validated typed ids) and
//! [`values`] (statuses, money); [`schema`] (attribute names, indexes, key
//! templates); [`keys`] (key functions per entity); [`model`] (entity
//! records and their keys); [`access`] (every access pattern as one request)
//! and [`write`] (every state change with the keys it moves); [`time`]
//! (timestamps and ULID range bounds) and [`shard`].

pub mod access;
pub mod doc;
pub mod ids;
pub mod keys;
pub mod model;
pub mod schema;
pub mod shard;
pub mod time;
pub mod values;
pub mod write;

pub use access::{KeyQuery, SortKey};
pub use keys::{ItemKeys, Key};
pub use model::Entity;
pub use schema::{EntityType, Index};
