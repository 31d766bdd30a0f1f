//! Records the table holds for its own bookkeeping, never answered by the
//! API as they are: email guards, idempotency records, the markers that make
//! the stream processor's counts exactly once, a category's rating item,
//! search postings and a maintenance job's checkpoints. The business
//! entities are `domain::model`'s; the keys of both are [`crate::entities`]'.

use domain::ids::{CategoryId, Email, FavoriteId, ListingId, OrderId, ReviewId, UserId};
use domain::model::{Listing, ListingStatus};
use domain::values::counter;
use serde::{Deserialize, Serialize};

/// Claims an email for one user (the item a GSI cannot replace: uniqueness).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmailGuard {
    /// The claimed address.
    pub email: Email,
    /// Who holds it.
    pub user_id: UserId,
}

/// Remembers an `Idempotency-Key`: the request it came with and, for an
/// order or a listing, the order or listing it created.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdempotencyRecord {
    /// Whose key.
    pub caller_id: UserId,
    /// The route it was sent to (a short name such as `orders`).
    pub route: String,
    /// The key.
    pub key: String,
    /// SHA-256 of the request, to refuse the key with another request.
    pub request_hash: String,
    /// The order the first request created (order placements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_id: Option<OrderId>,
    /// The listing the first request created (listing creations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing_id: Option<ListingId>,
    /// Epoch seconds after which DynamoDB's TTL deletes it.
    pub expires_at: u64,
}

/// Whether a counted instance (a review's rating, a favorite) is in its
/// aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkerState {
    /// Counted in `ratingSum` and `reviewCount`.
    Counted,
    /// Not counted, for good: the review was removed (perhaps before its
    /// insert was seen, when records arrive out of order).
    Removed,
}

impl MarkerState {
    /// The stored text.
    pub const fn as_str(self) -> &'static str {
        match self {
            MarkerState::Counted => "counted",
            MarkerState::Removed => "removed",
        }
    }
}

/// Retired: the stream processor's record of one review's rating in its
/// user's aggregates, before the pair and week rule ([`RatingSlot`]);
/// reconcile deletes what is left of them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RatingMarker {
    /// The review.
    pub review_id: ReviewId,
    /// Whose aggregates.
    pub reviewed_user_id: UserId,
    /// Counted or removed.
    pub state: MarkerState,
    /// What it added to `ratingSum` while counted.
    pub weight: u32,
}

/// A category's rating over the buyers' reviews of its listings' orders,
/// in an item of its own (kept by the stream processor, created by the
/// first review counted).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoryRating {
    /// The category.
    pub category_id: CategoryId,
    /// Sum of the counted ratings.
    #[serde(default, deserialize_with = "counter::u64")]
    pub rating_sum: u64,
    /// How many reviews are counted.
    #[serde(default, deserialize_with = "counter::u64")]
    pub review_count: u64,
}

impl CategoryRating {
    /// Average rating, if the category has reviews.
    pub fn rating(&self) -> Option<f64> {
        (self.review_count > 0).then(|| (self.rating_sum as f64 / self.review_count as f64 * 100.0).round() / 100.0)
    }
}

/// Retired: whether a review's rating was counted in its category's rating,
/// before the pair and week rule ([`CategoryRatingSlot`]); reconcile
/// deletes what is left of them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoryRatingMarker {
    /// The review.
    pub review_id: ReviewId,
    /// Whose partition the review is in.
    pub reviewed_user_id: UserId,
    /// The category.
    pub category_id: CategoryId,
    /// Its marker shard ([`domain::shard::category_rating_marker_shard`]).
    pub shard: u16,
    /// Counted or removed.
    pub state: MarkerState,
    /// What it added to `ratingSum` while counted.
    pub weight: u32,
}

/// The reviews of one slot (one author of one user in one ISO week): every
/// review seen inserted, with its rating, and every review seen removed
/// (a removal can be seen before its insert). The first review (by id, so
/// by time) of those seen and not removed counts; the others are shown,
/// not counted. Applying a record is adding to a set, so a replayed,
/// duplicated or reordered record changes nothing; `rev` goes up at every
/// write, which is conditioned on the `rev` read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Slot {
    /// The reviews seen and not removed, with their ratings.
    #[serde(default)]
    pub reviews: std::collections::BTreeMap<ReviewId, u32>,
    /// The reviews seen removed.
    #[serde(default)]
    pub gone: std::collections::BTreeSet<ReviewId>,
    /// Writes so far.
    #[serde(default)]
    pub rev: u64,
}

impl Slot {
    /// The review that counts and its rating: the first seen and not removed.
    pub fn counted(&self) -> Option<(ReviewId, u32)> {
        self.reviews.iter().next().map(|(id, w)| (*id, *w))
    }
}

/// A user's rating slot: an author's reviews of the user in one ISO week,
/// of which the first counts in the user's `ratingSum` and `reviewCount`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RatingSlot {
    /// Whose aggregates.
    pub reviewed_user_id: UserId,
    /// Who wrote the reviews.
    pub author_id: UserId,
    /// The ISO week (`2026-W48`) of the reviews' ids.
    pub week: String,
    /// Its reviews.
    #[serde(flatten)]
    pub slot: Slot,
}

/// A category's rating slot: an author's buyer reviews of one seller in one
/// ISO week in the category, of which the first counts in its rating.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoryRatingSlot {
    /// The category.
    pub category_id: CategoryId,
    /// Its marker shard ([`domain::shard::category_rating_slot_shard`] of the author).
    pub shard: u16,
    /// The pair, the week and their reviews (as the user's slot has them).
    #[serde(flatten)]
    pub pair: RatingSlot,
}

/// A listing's posting under one search term ([`domain::words::Term`]),
/// kept by the stream processor from the listing's current state while it
/// is active (and, once sold, while its order is pending). It carries what
/// a search filters on, so a page reads the listings only for the postings
/// it returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Posting {
    /// The list it is kept in ([`domain::words::Term::key_for`] its listing).
    pub term: String,
    /// The listing.
    pub listing_id: ListingId,
    /// The title's indexed words, space-separated.
    pub words: String,
    /// The listing's category.
    pub category_id: CategoryId,
}

impl Posting {
    /// The postings a listing must have: one per term of its title while
    /// it is active, none otherwise (a sold one may keep its title's while
    /// its order is pending: `derived::postings`).
    pub fn of_listing(listing: &Listing) -> Vec<Posting> {
        if listing.status != ListingStatus::Active {
            return Vec::new();
        }
        Posting::of_title(listing)
    }

    /// One posting per term of the listing's title, whatever its status.
    pub fn of_title(listing: &Listing) -> Vec<Posting> {
        let words = domain::words::indexed(&listing.title);
        let joined = words.iter().map(String::as_str).collect::<Vec<_>>().join(" ");
        domain::words::terms(&words)
            .iter()
            .map(|term| Posting {
                term: term.key_for(listing.listing_id.ulid()),
                listing_id: listing.listing_id,
                words: joined.clone(),
                category_id: listing.category_id.clone(),
            })
            .collect()
    }

    /// The posting's indexed words.
    pub fn word_set(&self) -> std::collections::BTreeSet<String> {
        self.words.split(' ').filter(|w| !w.is_empty()).map(str::to_owned).collect()
    }
}

/// The stream processor's record of whether a user's favorite of a listing
/// is counted in the listing's `favoriteCount`: one per user and listing,
/// whatever the number of add/remove cycles, outside the listing's partition
/// (which many users favorite at once), in one of the listing's marker
/// shards. `version` is the latest favoriting seen (each add is a new
/// [`FavoriteId`]), so a record of an older one changes nothing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FavoriteMarker {
    /// Whose favorite.
    pub user_id: UserId,
    /// The listing counted.
    pub listing_id: ListingId,
    /// Its marker shard ([`domain::shard::favorite_marker_shard`] of the user).
    pub shard: u16,
    /// The latest favoriting seen.
    pub version: FavoriteId,
    /// Counted or removed.
    pub state: MarkerState,
    /// What it added to `favoriteCount` while counted (1).
    pub weight: u32,
}

/// One part of an aggregate's numbers (docs/stream-processor.md, "Folded
/// counts"): the stream processor adds each batch's counts to one part,
/// chosen at random, with the markers that decide them, in one transaction;
/// so many writers of a hot aggregate meet on one part only as often as a
/// part's share of them. It then folds the parts into the item people read
/// (a part's records all arrive in one stream shard; a fold adds what the
/// parts gained since the last one, conditioned on it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AggregatePart {
    /// Which kind of aggregate (its tag: `favorites`, `ratings`, `categoryRatings`).
    pub aggregate: String,
    /// Whose: the holder's id (a listing, a user, a category).
    pub of: String,
    /// Which part.
    pub part: u16,
    /// What it adds to the aggregate's sum (ratings; 0 for a count alone).
    #[serde(default)]
    pub sum: i64,
    /// What it adds to the aggregate's count.
    #[serde(default)]
    pub count: i64,
    /// One more at every write of it.
    #[serde(default)]
    pub rev: u64,
    /// The home region of its aggregate (docs/regions.md); none: the primary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
}

/// A partition of a dense cell of the near index (`domain::geo::partition`)
/// that holds, or once held, an active listing: put by the stream processor
/// and reconcile before the first listing's key there (the same item
/// whoever puts it, in whichever region), never removed; a search of the
/// dense cell queries only these of its 32 partitions, so an empty one
/// costs it no query.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NearCell {
    /// The dense cell ([`domain::geo::partition::DENSE_LEN`] characters).
    pub dense: String,
    /// The partition's cell ([`domain::geo::partition::FINE_LEN`] characters).
    pub cell: String,
}

impl NearCell {
    /// The partition of a dense cell a listing at `geohash` is keyed in,
    /// if its geohash is in a dense cell.
    pub fn of(geohash: &str) -> Option<NearCell> {
        use domain::geo::partition::{is_dense, partition, DENSE_LEN};
        let cell = partition(geohash).filter(|_| is_dense(geohash))?;
        Some(NearCell { dense: geohash.get(..DENSE_LEN)?.to_owned(), cell: cell.to_owned() })
    }
}

/// Where one segment of a maintenance job's scan has got to, so an
/// interrupted run resumes (the job's own item; it changes nothing else).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    /// The job (`reconcile`).
    pub job: String,
    /// The segment of the parallel scan.
    pub segment: u16,
    /// Segments of the run (a checkpoint of another count is not resumed).
    pub segments: u16,
    /// The scan's `LastEvaluatedKey` as JSON (string attributes); `None`:
    /// the segment is done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// RFC 3339 time of the last page.
    pub updated_at: String,
}
