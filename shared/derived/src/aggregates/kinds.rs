//! The three kinds of aggregate: a user's ratings, a category's rating and
//! a listing's favorite count, each with its base items, markers and holder.

use domain::ids::{CategoryId, ListingId, UserId};
use domain::model::Review;
use domain::shard::{CATEGORY_RATING_MARKER_SHARDS, FAVORITE_MARKER_SHARDS};
use keyschema::records::{CategoryRatingMarker, FavoriteMarker, MarkerState, RatingMarker};
use keyschema::table::{EntityType, ENTITY_TYPE};
use keyschema::write::attr;
use keyschema::{access, keys, Cond, Value};

use super::{Aggregate, AggregateKind, Count, Counted, Instance};
use crate::image::{Body, Image};
use crate::DerivedError;

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

impl UserRatings {
    /// The aggregate of `user`.
    pub fn of(user: &UserId) -> Result<Aggregate, DerivedError> {
        Ok(Aggregate {
            kind: AggregateKind::UserRatings,
            key: keys::user(user)?.into(),
            sum: Some(attr::RATING_SUM),
            count: attr::REVIEW_COUNT,
            markers: vec![access::rating_markers_of(user)?],
            init: vec![],
        })
    }
}

impl Counted for UserRatings {
    const KIND: AggregateKind = AggregateKind::UserRatings;

    fn count(image: &Image, inserted: bool) -> Result<Option<Count>, DerivedError> {
        let Some(review) = review(image)? else { return Ok(None) };
        let weight = u32::from(review.rating);
        let marker = RatingMarker {
            review_id: review.review_id,
            reviewed_user_id: review.reviewed_user_id.clone(),
            state: MarkerState::Counted,
            weight,
        };
        Ok(Some(Count {
            aggregate: Self::of(&review.reviewed_user_id)?,
            marker: keys::rating_marker(&review.reviewed_user_id, &review.review_id)?.into(),
            marker_item: store::item::to_item(&marker)?,
            version: None,
            weight,
            inserted,
        }))
    }

    fn marker(image: &Image) -> Result<Option<(Aggregate, Instance)>, DerivedError> {
        let Body::RatingMarker(m) = &image.body else { return Ok(None) };
        let instance = Instance {
            marker: keys::rating_marker(&m.reviewed_user_id, &m.review_id)?.into(),
            base: keys::review(&m.reviewed_user_id, &m.review_id)?.into(),
        };
        Ok(Some((Self::of(&m.reviewed_user_id)?, instance)))
    }

    fn held(image: &Image) -> Result<Option<Aggregate>, DerivedError> {
        match &image.body {
            Body::User(user) => Ok(Some(Self::of(user)?)),
            _ => Ok(None),
        }
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
                .map(|shard| access::category_rating_markers_of(category, shard))
                .collect::<Result<_, _>>()?,
            init: vec![
                (ENTITY_TYPE, Value::s(EntityType::CategoryRating.as_str())),
                ("categoryId", Value::s(category.as_str())),
            ],
        })
    }
}

impl Counted for CategoryRatings {
    const KIND: AggregateKind = AggregateKind::CategoryRatings;

    fn count(image: &Image, inserted: bool) -> Result<Option<Count>, DerivedError> {
        let Some(review) = review(image)? else { return Ok(None) };
        let Some(category) = &review.category_id else { return Ok(None) };
        let weight = u32::from(review.rating);
        let marker = CategoryRatingMarker {
            review_id: review.review_id,
            reviewed_user_id: review.reviewed_user_id.clone(),
            category_id: category.clone(),
            shard: domain::shard::category_rating_marker_shard(&review.review_id),
            state: MarkerState::Counted,
            weight,
        };
        Ok(Some(Count {
            aggregate: Self::of(category)?,
            marker: keys::category_rating_marker(category, &review.review_id)?.into(),
            marker_item: store::item::to_item(&marker)?,
            version: None,
            weight,
            inserted,
        }))
    }

    fn marker(image: &Image) -> Result<Option<(Aggregate, Instance)>, DerivedError> {
        let Body::CategoryRatingMarker(m) = &image.body else { return Ok(None) };
        let instance = Instance {
            marker: keys::category_rating_marker(&m.category_id, &m.review_id)?.into(),
            base: keys::review(&m.reviewed_user_id, &m.review_id)?.into(),
        };
        Ok(Some((Self::of(&m.category_id)?, instance)))
    }

    fn held(image: &Image) -> Result<Option<Aggregate>, DerivedError> {
        match &image.body {
            Body::CategoryRating(category) => Ok(Some(Self::of(category)?)),
            _ => Ok(None),
        }
    }
}

impl ListingFavorites {
    /// The favorite count of `listing` and where its markers are (its shards).
    pub fn of(listing: &ListingId) -> Result<Aggregate, DerivedError> {
        Ok(Aggregate {
            kind: AggregateKind::ListingFavorites,
            key: keys::listing(listing)?.into(),
            sum: None,
            count: attr::FAVORITE_COUNT,
            markers: (0..FAVORITE_MARKER_SHARDS)
                .map(|shard| access::favorite_markers_of(listing, shard))
                .collect::<Result<_, _>>()?,
            init: vec![],
        })
    }
}

impl Counted for ListingFavorites {
    const KIND: AggregateKind = AggregateKind::ListingFavorites;

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
            aggregate: Self::of(&favorite.listing_id)?,
            marker: keys::favorite_marker(&favorite.user_id, &favorite.listing_id)?.into(),
            marker_item: store::item::to_item(&marker)?,
            version: Some(favorite.favorite_id.ulid()),
            weight: 1,
            inserted,
        }))
    }

    fn marker(image: &Image) -> Result<Option<(Aggregate, Instance)>, DerivedError> {
        let Body::FavoriteMarker(m) = &image.body else { return Ok(None) };
        let instance = Instance {
            marker: keys::favorite_marker(&m.user_id, &m.listing_id)?.into(),
            base: keys::favorite(&m.user_id, &m.listing_id)?.into(),
        };
        Ok(Some((Self::of(&m.listing_id)?, instance)))
    }

    fn held(image: &Image) -> Result<Option<Aggregate>, DerivedError> {
        match image.listing_id() {
            Some(listing) if image.entity == EntityType::Listing => Ok(Some(Self::of(&listing)?)),
            _ => Ok(None),
        }
    }
}

/// What a base item must still be for a count decided from this read of it
/// to stand: it exists, with what its counts read (a review's rating and
/// category, a favorite's id) as read.
pub(crate) fn as_read(image: &Image) -> Vec<Cond> {
    let mut out = vec![Cond::ItemExists];
    let read: &[&'static str] = match image.entity {
        EntityType::Review => &[attr::RATING, attr::CATEGORY_ID],
        EntityType::Favorite => &[attr::FAVORITE_ID],
        _ => &[],
    };
    for attr in read {
        match image.attrs.get(*attr) {
            Some(value) => out.push(Cond::Eq(attr, value.clone())),
            // A review without a category: it must not have gained one.
            None => out.push(Cond::NotExists(attr)),
        }
    }
    out
}
