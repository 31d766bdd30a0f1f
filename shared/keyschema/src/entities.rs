//! One declaration per entity: its primary key and every index it joins,
//! each named after the access pattern it serves, with its templates, when
//! it is sparse, and who keeps it. Every key template of the design is
//! declared here; keys, queries, key moves, the stream processor's
//! repairs, the docs and the Workbench model are derived from these (see
//! [`crate::decl`]), and a template restated in a doc comment is checked
//! against them (tools/docs, `doc_comments`).

use crate::decl::{EntityDecl, IndexDecl, Keeper, Keeping, KeyDecl, BY_WRITE};
use crate::table::{EntityType, Index};

const fn key(index: Index, pk: &'static str, sk: &'static str) -> KeyDecl {
    KeyDecl { index, pk, sk }
}

const fn index(name: &'static str, key: KeyDecl) -> IndexDecl {
    IndexDecl { name, key, only_when: None, kept: BY_WRITE }
}

/// A sparse index of active listings: the write that creates one adds its
/// keys (it knows every field they derive from, so a new listing is found
/// at once and the stream processor's repair finds nothing to write); the
/// stream processor adds them when it becomes active again (a relisting, a
/// seller's reactivation: writes that know too little of the item) and
/// moves them; the write that takes a listing out of `active` removes them,
/// and one that changes only a sort key's composite (a price) moves that
/// sort key at once, active or not (the stream processor repairs drift).
const BROWSE: Keeping =
    Keeping { adds: Keeper::Both, removes: Keeper::Both, moves: Keeper::Stream, moves_sort_key: Keeper::Both };

/// Users: customer and seller are one entity with a role.
pub mod user {
    use super::*;
    /// GSI6: a user by email (admin lookup).
    pub const BY_EMAIL: IndexDecl = index("by_email", key(Index::Gsi6, "USER_EMAIL#<email>", "USER#<userId>"));
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::User,
        key: key(Index::Table, "USER#<userId>", "#METADATA"),
        indexes: &[BY_EMAIL],
        defaults: &[],
        note: "customer and seller are one entity with a role",
    };
}

/// Email guards: the item a GSI cannot replace (uniqueness).
pub mod email_guard {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::EmailGuard,
        key: key(Index::Table, "USER_EMAIL#<email>", "#UNIQUE"),
        indexes: &[],
        defaults: &[],
        note: "written in the same transaction as the user; keeps emails unique",
    };
}

/// Listings: a status is the prefix of the seller's sort key; the browse
/// indexes hold active listings only.
pub mod listing {
    use super::*;
    /// GSI6: a seller's listings, by status then age (AP4, AP5).
    pub const BY_SELLER: IndexDecl =
        index("by_seller", key(Index::Gsi6, "SELLER#<sellerId>", "LISTING#<status>#<listingId>"));
    /// GSI7: a category's active listings, newest first (AP6), write-sharded:
    /// the shard is recorded on the listing at creation (from its id and the
    /// category's `listingShards`) and a page merges the category's shards.
    pub const BROWSE: IndexDecl = IndexDecl {
        name: "browse",
        key: key(Index::Gsi7, "CATEGORY#<categoryId>#<shard>", "LISTING#<listingId>"),
        only_when: Some(("status", "active")),
        kept: super::BROWSE,
    };
    /// GSI8: a category's active listings, cheapest first (price in
    /// zero-padded cents, so string order is numeric order), in the
    /// listing's shard as `browse`.
    pub const BY_PRICE: IndexDecl = IndexDecl {
        name: "by_price",
        key: key(Index::Gsi8, "PRICE#<categoryId>#<shard>", "LISTING#<price:cents10>#<listingId>"),
        only_when: Some(("status", "active")),
        kept: super::BROWSE,
    };
    /// GSI5: active listings with a location, by geohash: the partition is
    /// the cell of about 156 km the hash begins with, of about 5 km in a
    /// dense cell (derived here, from the one stored hash:
    /// `domain::geo::partition`), the sort key the full hash, so a prefix
    /// of it is a smaller cell ("listings near me").
    pub const NEAR: IndexDecl = IndexDecl {
        name: "near",
        key: key(Index::Gsi5, "GEO#<geohash:cell>", "<geohash>#<listingId>"),
        only_when: Some(("status", "active")),
        kept: super::BROWSE,
    };
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::Listing,
        key: key(Index::Table, "LISTING#<listingId>", "#METADATA"),
        indexes: &[BY_SELLER, BROWSE, BY_PRICE, NEAR],
        // Listings written before the browse keys were sharded are in shard 0.
        defaults: &[("shard", "0")],
        note: "browse, by_price and near only while active (near: with a location); shard = listing id mod the category's listingShards, recorded at creation (older listings: 0)",
    };
}

pub mod details;

/// Orders: by buyer, by seller (listing orders), by status (write-sharded).
pub mod order {
    use super::*;
    /// GSI6: a buyer's orders, newest first.
    pub const BY_BUYER: IndexDecl = index("by_buyer", key(Index::Gsi6, "BUYER#<buyerId>", "ORDER#<orderId>"));
    /// GSI7: a seller's sales (listing orders: catalog orders have no seller).
    pub const BY_SELLER: IndexDecl = index("by_seller", key(Index::Gsi7, "SELLER#<sellerId>", "ORDER#<orderId>"));
    /// GSI8: orders by status, in the shard recorded at placement.
    pub const BY_STATUS: IndexDecl = index("by_status", key(Index::Gsi8, "STATUS#<status>#<shard>", "ORDER#<orderId>"));
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::Order,
        key: key(Index::Table, "ORDER#<orderId>", "#METADATA"),
        indexes: &[BY_BUYER, BY_SELLER, BY_STATUS],
        defaults: &[],
        note: "by_seller for listing orders only; shard = order id mod shard count, recorded at placement; holds its items (`heldItems`) when they fit its write unit",
    };
}

/// Order items: in the order's partition, when the order does not hold
/// them (its `heldItems`: those that fit its write unit with it).
pub mod order_item {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::OrderItem,
        key: key(Index::Table, "ORDER#<orderId>", "ITEM#<itemId>"),
        indexes: &[],
        defaults: &[],
        note: "itemId is the productId or listingId; written only when the order's items would take its item past one write unit with room for later writes (else the order holds them, `heldItems`, in no index copy); read with the order in one Query",
    };
}

/// Reviews: in the reviewed user's partition.
pub mod review {
    use super::*;
    /// GSI6: the reviews a user wrote (AP11).
    pub const BY_AUTHOR: IndexDecl = index("by_author", key(Index::Gsi6, "AUTHOR#<authorId>", "REVIEW#<reviewId>"));
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::Review,
        key: key(Index::Table, "USER#<reviewedUserId>", "REVIEW#<reviewId>"),
        indexes: &[BY_AUTHOR],
        defaults: &[],
        note: "lives in the reviewed user's partition",
    };
}

/// Brands: one partition.
pub mod brand {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::Brand,
        key: key(Index::Table, "BRANDS", "BRAND#<brandId>"),
        indexes: &[],
        defaults: &[],
        note: "",
    };
}

/// Categories: one partition.
pub mod category {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::Category,
        key: key(Index::Table, "CATEGORIES", "CATEGORY#<categoryId>"),
        indexes: &[],
        defaults: &[],
        note: "",
    };
}

pub mod near_cell;
pub mod product;

/// Favorites: in the user's partition, one per listing.
pub mod favorite {
    use super::*;
    /// GSI6: a user's favorites, newest first.
    pub const NEWEST: IndexDecl = index("newest", key(Index::Gsi6, "FAVORITES#<userId>", "FAVORITE#<favoriteId>"));
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::Favorite,
        key: key(Index::Table, "USER#<userId>", "FAVORITE#<listingId>"),
        indexes: &[NEWEST],
        defaults: &[],
        note: "in the user's partition, one per listing (PUT and DELETE are idempotent)",
    };
}

/// Favorite markers: one per user and listing, in one of the listing's
/// marker shards (never the listing's own partition).
pub mod favorite_marker {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::FavoriteMarker,
        key: key(Index::Table, "FAVED#<listingId>#<shard>", "USER#<userId>"),
        indexes: &[],
        defaults: &[],
        note: "one per user and listing (bounded whatever the add/remove cycles), outside the listing's partition, spread over 10 shards by user; written by the stream processor with one of the listing's favorite count parts; the latest favoriteId seen, counted or removed, and the weight counted",
    };
}

/// Checkpoints of a maintenance job's scan, one per segment.
pub mod checkpoint {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::Checkpoint,
        key: key(Index::Table, "MAINTENANCE#<job>", "SEGMENT#<segment>"),
        indexes: &[],
        defaults: &[],
        note: "where a maintenance job's scan segment got to, so an interrupted run resumes",
    };
}

/// Order messages: in the order's partition.
pub mod order_message {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::OrderMessage,
        key: key(Index::Table, "ORDER#<orderId>", "MESSAGE#<messageId>"),
        indexes: &[],
        defaults: &[],
        note: "in the order's own partition, beside its items; carries the parties",
    };
}

/// Rating markers (retired): one per review, beside it.
pub mod rating_marker {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::RatingMarker,
        key: key(Index::Table, "USER#<reviewedUserId>", "RATED#<reviewId>"),
        indexes: &[],
        defaults: &[],
        note: "retired: counted every review; reconcile deletes what is left of them (rating slots replace them)",
    };
}

/// Rating slots: one per author, reviewed user and ISO week, beside the
/// reviews.
pub mod rating_slot {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::RatingSlot,
        key: key(Index::Table, "USER#<reviewedUserId>", "RATEDBY#<authorId>#<week>"),
        indexes: &[],
        defaults: &[],
        note: "written by the stream processor with the user's rating sum and count: the reviews seen (id and rating) and the ones seen removed; the first review of the slot counts, once",
    };
}

/// Category rating slots: one per author, reviewed user, ISO week and
/// category, in one of the category's marker shards (by author).
pub mod category_rating_slot {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::CategoryRatingSlot,
        key: key(Index::Table, "CATRATED#<categoryId>#<shard>", "PAIR#<authorId>#<reviewedUserId>#<week>"),
        indexes: &[],
        defaults: &[],
        note: "written by the stream processor with the category's rating: the reviews seen and removed; the first counts, once; spread over 10 shards by author",
    };
}

/// Category ratings: one item per category, outside the `CATEGORIES`
/// partition that every category list reads.
pub mod category_rating {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::CategoryRating,
        key: key(Index::Table, "CATEGORY#<categoryId>", "#RATING"),
        indexes: &[],
        defaults: &[],
        note: "the buyers' reviews of orders of the category's listings: ratingSum and reviewCount, kept by the stream processor (created by the first review counted)",
    };
}

/// Category rating markers: one per counted review, in one of the
/// category's marker shards.
pub mod category_rating_marker {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::CategoryRatingMarker,
        key: key(Index::Table, "CATRATED#<categoryId>#<shard>", "REVIEW#<reviewId>"),
        indexes: &[],
        defaults: &[],
        note:
            "retired: counted every review; reconcile deletes what is left of them (category rating slots replace them)",
    };
}

/// Search postings: one per term of an active listing's title.
pub mod posting {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::Posting,
        key: key(Index::Table, "SEARCH#<term>", "LISTING#<listingId>"),
        indexes: &[],
        defaults: &[],
        note: "written and deleted by the stream processor (and reconcile) from the listing's current state (active; a sold listing keeps its own while its order is pending, until confirmed): one per beginning of 1 to 3 characters of an indexed word of the title (the first 24: `ce*`, `cer*`; a one-character beginning in one of four lists by listing id, `c*0` to `c*3`); newest first by listing id",
    };
}

/// Idempotency records: per caller and route.
pub mod idempotency {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::Idempotency,
        key: key(Index::Table, "IDEMPOTENCY#<callerId>#<route>#<key>", "#IDEMPOTENCY"),
        indexes: &[],
        defaults: &[],
        note: "per caller and route; written in the transaction of the request it remembers; expires (TTL expiresAt) after 24 h",
    };
}

/// Aggregate parts: a hot aggregate's numbers spread over parts, folded
/// into the item people read.
pub mod aggregate_part {
    use super::*;
    /// The declaration.
    pub const ENTITY: EntityDecl = EntityDecl {
        entity: EntityType::AggregatePart,
        key: key(Index::Table, "PARTS#<aggregate>#<of>", "PART#<part>"),
        indexes: &[],
        defaults: &[],
        note: "written by the stream processor with the markers that decide them (each batch's counts into one part, at random), folded into the holder (a listing's favoriteCount, a user's or a category's rating) by a conditional update adding the parts' gain since the last fold; outside the holder's partition",
    };
}

/// Every entity of the table, in the docs' order.
pub const ALL: &[&EntityDecl] = &[
    &user::ENTITY,
    &email_guard::ENTITY,
    &listing::ENTITY,
    &details::LISTING,
    &order::ENTITY,
    &order_item::ENTITY,
    &review::ENTITY,
    &brand::ENTITY,
    &category::ENTITY,
    &product::ENTITY,
    &details::PRODUCT,
    &product::STOCK,
    &favorite::ENTITY,
    &favorite_marker::ENTITY,
    &order_message::ENTITY,
    &rating_marker::ENTITY,
    &category_rating::ENTITY,
    &category_rating_marker::ENTITY,
    &rating_slot::ENTITY,
    &category_rating_slot::ENTITY,
    &aggregate_part::ENTITY,
    &near_cell::ENTITY,
    &posting::ENTITY,
    &idempotency::ENTITY,
    &checkpoint::ENTITY,
];

/// The declaration of an entity type.
pub fn of(entity: EntityType) -> Option<&'static EntityDecl> {
    ALL.iter().copied().find(|d| d.entity == entity)
}
