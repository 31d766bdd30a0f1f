//! What is derived from the base items, as one typed library that the
//! stream processor (reading records) and reconcile (scanning the table)
//! both drive:
//!
//! - [`image`]: the one parse at the boundary. A stream record becomes a
//!   [`Record`] (its [`Event`] and images), a stored item an [`Image`] (its
//!   entity type, its attributes, and its entity decoded).
//! - [`index_keys`]: the index keys an item's declaration derives from its
//!   fields (the stream processor keeps a listing's browse, price and near
//!   keys; reconcile every index).
//! - [`near_cells`]: the partitions of dense cells that hold listings,
//!   recorded before a listing's near key enters one.
//! - [`postings`]: a listing's search postings, from its current state.
//! - [`aggregates`]: each kind of aggregate (declared once, derived by an
//!   [`aggregates::Counted`]: a user's ratings, a category's rating, a
//!   listing's favorite count), kept exactly once with markers; reconcile's settling of markers and sums.
//! - [`DerivedError`]: `Malformed` (never retried), `Contended` and `Store`.

pub mod aggregates;
mod error;
pub mod image;
pub mod index_keys;
pub mod near_cells;
pub mod postings;

pub use error::DerivedError;
pub use image::{Body, Event, Image, Record};
