//! Where each entity's items live in a global table of several regions
//! (docs/regions.md): every item is written in one region, its home, named
//! here once per entity type ([`EntityType::home`]). The code that writes
//! an item routes it by this rule; the stream processor derives at the
//! home of what it derives; the two-region simulation checks every write
//! against it.

use crate::table::EntityType;

/// How an item's home region is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HomeRule {
    /// The `home` attribute it carries (absent: the primary region).
    Named,
    /// The primary region (the first of `REGIONS`).
    Primary,
    /// Its order's home (the item names `orderId`).
    OfOrder,
    /// Its listing's home (the item names `listingId`).
    OfListing,
    /// Its caller's home (the item names `callerId`: the user's `home`,
    /// where what they sell lives; none: the primary).
    OfCaller,
    /// Any region: a marker only ever put, the same item whoever puts it
    /// (last writer wins changes nothing), never updated or deleted.
    Anywhere,
}

/// The attribute naming an item's own home.
pub const HOME: &str = "home";

impl EntityType {
    /// Where items of this entity live.
    pub const fn home(self) -> HomeRule {
        match self {
            // A part carries its aggregate's home.
            EntityType::Listing | EntityType::Order | EntityType::Review | EntityType::AggregatePart => HomeRule::Named,
            // Put by whichever region's stream processor keys a listing there.
            EntityType::NearCell => HomeRule::Anywhere,
            EntityType::User
            | EntityType::EmailGuard
            | EntityType::Favorite
            | EntityType::Brand
            | EntityType::Category
            | EntityType::Product
            | EntityType::ProductDetails
            | EntityType::ProductStock
            | EntityType::RatingMarker
            | EntityType::CategoryRating
            | EntityType::CategoryRatingMarker
            | EntityType::RatingSlot
            | EntityType::CategoryRatingSlot
            | EntityType::Checkpoint => HomeRule::Primary,
            // What it creates is reserved there first when that is written
            // elsewhere (docs/regions.md).
            EntityType::Idempotency => HomeRule::OfCaller,
            EntityType::OrderItem | EntityType::OrderMessage => HomeRule::OfOrder,
            EntityType::ListingDetails | EntityType::FavoriteMarker | EntityType::Posting => HomeRule::OfListing,
        }
    }
}
