//! The three kinds of aggregate: a user's ratings, a category's rating and
//! a listing's favorite count, each with its base items, markers and holder.
//!
//! Ratings count, toward a user's and a category's `ratingSum` and
//! `reviewCount`, the first review by one author of one reviewed user in an
//! ISO week (of the review's id, so of its creation): later ones of that pair
//! and week are shown, not counted, and if the counted one is moderated
//! away the next counts (after eBay's rule: feedback from one buyer for
//! several purchases from one seller in a week counts once). The marker of
//! such a pair and week is a slot ([`keyschema::records::Slot`]); in a
//! category, the slot is also per category.

use domain::ids::{CategoryId, ListingId, ReviewId, UserId};
use domain::model::Review;
use domain::shard::{CATEGORY_RATING_MARKER_SHARDS, FAVORITE_MARKER_SHARDS};
use keyschema::records::{CategoryRatingSlot, FavoriteMarker, MarkerState, RatingSlot, Slot};
use keyschema::table::{EntityType, ENTITY_TYPE};
use keyschema::write::attr;
use keyschema::{access, keys, Cond, Entity, EntityKey, Key, Value};

use super::{Aggregate, AggregateKind, Count, Counted, Instance, Marked};
use crate::image::{Body, Image};
use crate::DerivedError;

/// Parts of a user's ratings: the mega-seller's reviews (0.1 a second at
/// the mix's 1x) meet on one part a fifth of each second only past 1000x
/// (docs/capacity.md).
pub const USER_RATING_PARTS: u16 = 16;
/// Parts of a category's rating (the top category's: 0.2 a second at 1x).
pub const CATEGORY_RATING_PARTS: u16 = 32;
/// Parts of a listing's favorite count (the viral listing's: 0.8 a second at 1x).
pub const LISTING_FAVORITE_PARTS: u16 = 128;

/// A user's ratings: the reviews about them.
pub struct UserRatings;
/// A category's rating: the buyers' reviews of its listings' orders.
pub struct CategoryRatings;
/// A listing's favorite count: its favorites.
pub struct ListingFavorites;

fn review(image: &Image) -> Result<Option<&Review>, DerivedError> {
    match &image.body {
        Body::Review(review) if (Review::MIN_RATING..=Review::MAX_RATING).contains(&review.rating) => Ok(Some(review)),
        Body::Review(review) => Err(DerivedError::malformed(format!("review rating {} out of range", review.rating))),
        _ if image.entity == EntityType::Review => Err(image.unreadable().unwrap_or(DerivedError::malformed("review"))),
        _ => Ok(None),
    }
}

/// The ISO week of a review (of its id's time): its slot.
pub fn week_of(review: &ReviewId) -> String {
    domain::time::iso_week(review.ulid().timestamp_ms())
}

/// The user's slot a review is in (no reviews held yet).
fn pair_of(review: &Review) -> RatingSlot {
    RatingSlot {
        reviewed_user_id: review.reviewed_user_id.clone(),
        author_id: review.author_id.clone(),
        week: week_of(&review.review_id),
        slot: Slot::default(),
    }
}

/// A count of a review into a slot marker.
fn slot_count<E: Entity>(
    aggregate: Aggregate,
    marker: EntityKey<E>,
    slot: &E,
    review: &Review,
    inserted: bool,
) -> Result<Count, DerivedError> {
    Ok(Count {
        aggregate,
        marker: marker.into(),
        marker_item: store::item::to_item(slot)?,
        version: None,
        member: Some(review.review_id),
        weight: u32::from(review.rating),
        inserted,
    })
}

/// The instances a slot records: every review it has seen (kept or gone).
fn slot_instances(marker: Key, reviewed: &UserId, slot: &Slot) -> Result<Vec<Instance>, DerivedError> {
    slot.reviews
        .keys()
        .chain(slot.gone.iter())
        .map(|id| Ok(Instance { marker: marker.clone(), base: keys::review(reviewed, id)?.into(), member: Some(*id) }))
        .collect()
}

/// The aggregate an item holds: `of` the id `select` finds in its body, if any.
fn held<'a, T: 'a>(
    image: &'a Image,
    select: impl Fn(&'a Body) -> Option<&'a T>,
    of: impl Fn(&T) -> Result<Aggregate, DerivedError>,
) -> Result<Option<Aggregate>, DerivedError> {
    select(&image.body).map(of).transpose()
}

impl UserRatings {
    /// The aggregate of `user`.
    pub fn of(user: &UserId) -> Result<Aggregate, DerivedError> {
        Ok(Aggregate {
            kind: AggregateKind::UserRatings,
            key: keys::user(user)?.into(),
            sum: Some(attr::RATING_SUM),
            count: attr::REVIEW_COUNT,
            markers: vec![access::rating_slots_of(user)?],
            home: None,
            init: vec![],
            of: user.to_string(),
            parts: AggregateKind::UserRatings.parts(),
            folded: attr::RATINGS_FOLDED,
        })
    }
}

impl Counted for UserRatings {
    fn count(image: &Image, inserted: bool) -> Result<Option<Count>, DerivedError> {
        let Some(review) = review(image)? else { return Ok(None) };
        let slot = pair_of(review);
        let marker = keys::rating_slot(&slot.reviewed_user_id, &slot.author_id, &slot.week)?;
        Ok(Some(slot_count(Self::of(&slot.reviewed_user_id)?, marker, &slot, review, inserted)?))
    }

    fn marker(image: &Image) -> Result<Option<Marked>, DerivedError> {
        let Body::RatingSlot(s) = &image.body else { return Ok(None) };
        let marker = keys::rating_slot(&s.reviewed_user_id, &s.author_id, &s.week)?.into();
        Ok(Some((Self::of(&s.reviewed_user_id)?, slot_instances(marker, &s.reviewed_user_id, &s.slot)?)))
    }

    fn held(image: &Image) -> Result<Option<Aggregate>, DerivedError> {
        held(image, |b| if let Body::User(user) = b { Some(user) } else { None }, Self::of)
    }

    fn of_id(of: &str, _home: Option<&str>) -> Result<Aggregate, DerivedError> {
        Self::of(&parse_id(of)?)
    }
}

impl CategoryRatings {
    /// The aggregate of `category` (an item of its own, created by its
    /// first count) and where its markers are (its shards).
    pub fn of(category: &CategoryId) -> Result<Aggregate, DerivedError> {
        Ok(Aggregate {
            kind: AggregateKind::CategoryRatings,
            key: keys::category_rating(category)?.into(),
            sum: Some(attr::RATING_SUM),
            count: attr::REVIEW_COUNT,
            markers: (0..CATEGORY_RATING_MARKER_SHARDS)
                .map(|shard| access::category_rating_slots_of(category, shard))
                .collect::<Result<_, _>>()?,
            home: None,
            init: vec![
                (ENTITY_TYPE, Value::s(EntityType::CategoryRating.as_str())),
                ("categoryId", Value::s(category.as_str())),
            ],
            of: category.to_string(),
            parts: AggregateKind::CategoryRatings.parts(),
            folded: attr::RATINGS_FOLDED,
        })
    }
}

impl Counted for CategoryRatings {
    fn count(image: &Image, inserted: bool) -> Result<Option<Count>, DerivedError> {
        let Some(review) = review(image)? else { return Ok(None) };
        let Some(category) = &review.category_id else { return Ok(None) };
        let pair = pair_of(review);
        let marker = keys::category_rating_slot(category, &pair.author_id, &pair.reviewed_user_id, &pair.week)?;
        let shard = domain::shard::category_rating_slot_shard(&pair.author_id);
        let slot = CategoryRatingSlot { category_id: category.clone(), shard, pair };
        Ok(Some(slot_count(Self::of(category)?, marker, &slot, review, inserted)?))
    }

    fn marker(image: &Image) -> Result<Option<Marked>, DerivedError> {
        let Body::CategoryRatingSlot(CategoryRatingSlot { category_id, pair: p, .. }) = &image.body else {
            return Ok(None);
        };
        let marker = keys::category_rating_slot(category_id, &p.author_id, &p.reviewed_user_id, &p.week)?.into();
        Ok(Some((Self::of(category_id)?, slot_instances(marker, &p.reviewed_user_id, &p.slot)?)))
    }

    fn held(image: &Image) -> Result<Option<Aggregate>, DerivedError> {
        held(image, |b| if let Body::CategoryRating(category) = b { Some(category) } else { None }, Self::of)
    }

    fn of_id(of: &str, _home: Option<&str>) -> Result<Aggregate, DerivedError> {
        Self::of(&parse_id(of)?)
    }
}

impl ListingFavorites {
    /// The favorite count of `listing` (homed in `home`) and where its
    /// markers are (its shards).
    pub fn of(listing: &ListingId, home: Option<&str>) -> Result<Aggregate, DerivedError> {
        Ok(Aggregate {
            kind: AggregateKind::ListingFavorites,
            key: keys::listing(listing)?.into(),
            sum: None,
            count: attr::FAVORITE_COUNT,
            markers: (0..FAVORITE_MARKER_SHARDS)
                .map(|shard| access::favorite_markers_of(listing, shard))
                .collect::<Result<_, _>>()?,
            home: home.map(str::to_owned),
            init: vec![],
            of: listing.to_string(),
            parts: AggregateKind::ListingFavorites.parts(),
            folded: attr::FAVORITES_FOLDED,
        })
    }
}

impl Counted for ListingFavorites {
    fn count(image: &Image, inserted: bool) -> Result<Option<Count>, DerivedError> {
        let favorite = match &image.body {
            Body::Favorite(f) => f,
            _ if image.entity == EntityType::Favorite => {
                return Err(image.unreadable().unwrap_or(DerivedError::malformed("favorite")))
            }
            _ => return Ok(None),
        };
        let marker = FavoriteMarker {
            user_id: favorite.user_id.clone(),
            listing_id: favorite.listing_id,
            shard: domain::shard::favorite_marker_shard(&favorite.user_id),
            version: favorite.favorite_id,
            state: MarkerState::Counted,
            weight: 1,
        };
        Ok(Some(Count {
            aggregate: Self::of(&favorite.listing_id, favorite.listing_home.as_deref())?,
            marker: keys::favorite_marker(&favorite.user_id, &favorite.listing_id)?.into(),
            marker_item: store::item::to_item(&marker)?,
            version: Some(favorite.favorite_id.ulid()),
            member: None,
            weight: 1,
            inserted,
        }))
    }

    fn marker(image: &Image) -> Result<Option<Marked>, DerivedError> {
        let Body::FavoriteMarker(m) = &image.body else { return Ok(None) };
        let instance = Instance {
            marker: keys::favorite_marker(&m.user_id, &m.listing_id)?.into(),
            base: keys::favorite(&m.user_id, &m.listing_id)?.into(),
            member: None,
        };
        // Reconcile settles markers where it runs (its region's replica).
        Ok(Some((Self::of(&m.listing_id, None)?, vec![instance])))
    }

    fn held(image: &Image) -> Result<Option<Aggregate>, DerivedError> {
        match image.listing_id() {
            Some(listing) if image.entity == EntityType::Listing => Ok(Some(Self::of(&listing, image.home())?)),
            _ => Ok(None),
        }
    }

    fn of_id(of: &str, home: Option<&str>) -> Result<Aggregate, DerivedError> {
        Self::of(&parse_id(of)?, home)
    }
}

/// A holder's id as a part names it.
fn parse_id<T: std::str::FromStr>(of: &str) -> Result<T, DerivedError> {
    of.parse().map_err(|_| DerivedError::malformed(format!("aggregate part of `{of}`")))
}

/// What a base item must still be for a count decided from this read of it
/// to stand: it exists, with what its counts read (a review's rating and
/// category, a favorite's id) as read.
pub(crate) fn as_read(image: &Image) -> Vec<Cond> {
    let mut out = vec![Cond::ItemExists];
    let attrs = image.attrs();
    let read: &[&'static str] = match image.entity {
        EntityType::Review => &[attr::RATING, attr::CATEGORY_ID],
        EntityType::Favorite => &[attr::FAVORITE_ID],
        _ => &[],
    };
    for attr in read {
        match attrs.get(*attr) {
            Some(value) => out.push(Cond::Eq(attr, value.clone())),
            // A review without a category: it must not have gained one.
            None => out.push(Cond::NotExists(attr)),
        }
    }
    out
}
