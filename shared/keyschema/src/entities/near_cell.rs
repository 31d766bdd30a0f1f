//! The partitions of the near index's dense cells that hold listings.

use super::*;

/// The declaration.
pub const ENTITY: EntityDecl = EntityDecl {
    entity: EntityType::NearCell,
    key: key(Index::Table, "GEOCELLS#<parent>", "CELL#<cell>"),
    indexes: &[],
    defaults: &[],
    note: "a partition of a dense cell (`GEO#<5 characters>`) that holds or held an active listing, under the cell of 3 characters holding it; written by the stream processor (and reconcile) before the first listing's near key there, never removed; a page near me reads them (one query per cell of 3 characters) and queries no other partition of a dense cell",
};
