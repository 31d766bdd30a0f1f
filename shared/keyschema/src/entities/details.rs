//! A product's description, and a listing's that would take the listing's
//! item past one write unit (1 KB; a shorter one is held in the item): an
//! item of its own beside the `#METADATA` item in the same partition, so
//! that a change of the item never rewrites a long text (no index copy and
//! no list holds a description either way); the item and its details are
//! read in one `Query` of the partition
//! ([`crate::access::listing_with_details`]).

use super::*;

const NOTE: &str = "the description, beside its item in its partition (never in an index copy or a list); written with it; read with it in one Query of the partition";
const LISTING_NOTE: &str = "the description, if it would take the listing's item past 1 KB (a shorter one is in the item), beside it in its partition (never in an index copy or a list); written with it; read with it in one Query of the partition";

/// A listing's details.
pub const LISTING: EntityDecl = EntityDecl {
    entity: EntityType::ListingDetails,
    key: key(Index::Table, "LISTING#<listingId>", "#DETAILS"),
    indexes: &[],
    defaults: &[],
    note: LISTING_NOTE,
};

/// A product's details.
pub const PRODUCT: EntityDecl = EntityDecl {
    entity: EntityType::ProductDetails,
    key: key(Index::Table, "PRODUCT#<productId>", "#DETAILS"),
    indexes: &[],
    defaults: &[],
    note: NOTE,
};
