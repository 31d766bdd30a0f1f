//! The partitions of the near index's dense cells that hold listings.

use super::*;

/// The declaration.
pub const ENTITY: EntityDecl = EntityDecl {
    entity: EntityType::NearCell,
    key: key(Index::Table, "GEOCELLS#<dense>", "CELL#<cell>"),
    indexes: &[],
    defaults: &[],
    note: "a partition of a dense cell (`GEO#<5 characters>`) that holds or held an active listing; put by the stream processor (and reconcile) before the first listing's near key there, the same item in any region, never removed; a page near me reads those of each dense cell it meets (a query each) and queries no other partition of the cell",
};
