//! The counted instances and their aggregates, in one place: a review
//! counts its rating into its user's `ratingSum`/`reviewCount` and, when it
//! names a category (a buyer's review of a listing order), into the
//! category's rating item; a favorite counts 1 into its listing's
//! `favoriteCount`; each count has a marker (see [`crate::counters`]). The stream processor reads instances from records;
//! the maintenance job reads them, their markers and the aggregates from a
//! scan, to bring each in line with the base items.

use domain::model::{CategoryRatingMarker, Favorite, FavoriteMarker, MarkerState, RatingMarker, Review};
use domain::shard::{CATEGORY_RATING_MARKER_SHARDS, FAVORITE_MARKER_SHARDS};
use keyschema::table::{EntityType, ENTITY_TYPE};
use keyschema::write::attr;
use keyschema::{access, keys, Cond, Key, Value};
use store::item::entity_type;

use crate::counters::{Aggregate, CountChange};
use crate::decode::RecordError;

fn decode<T: serde::de::DeserializeOwned>(what: &str, image: serde_dynamo::Item) -> Result<T, RecordError> {
    serde_dynamo::from_item(image)
        .map_err(|e| RecordError::Malformed(format!("{what} image: {}", telemetry::redacted(&e))))
}

/// A user's rating aggregates and where their markers are.
pub fn ratings_of(user: &domain::ids::UserId) -> Result<Aggregate, RecordError> {
    Ok(Aggregate {
        name: "user ratings",
        key: keys::user(user)?,
        sum: Some(attr::RATING_SUM),
        count: attr::REVIEW_COUNT,
        markers: vec![access::rating_markers_of(user)?],
        init: vec![],
    })
}

/// A category's rating (an item of its own, created by its first review)
/// and where its markers are (its shards).
pub fn category_ratings_of(category: &domain::ids::CategoryId) -> Result<Aggregate, RecordError> {
    Ok(Aggregate {
        name: "category ratings",
        key: keys::category_rating(category)?,
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

/// A listing's favorite count and where its markers are (its shards).
pub fn favorites_of(listing: &domain::ids::ListingId) -> Result<Aggregate, RecordError> {
    Ok(Aggregate {
        name: "listing favorites",
        key: keys::listing(listing)?,
        sum: None,
        count: attr::FAVORITE_COUNT,
        markers: (0..FAVORITE_MARKER_SHARDS)
            .map(|shard| access::favorite_markers_of(listing, shard))
            .collect::<Result<_, _>>()?,
        init: vec![],
    })
}

/// The count changes of a base item of `entity` (a review: its user's and,
/// if it names one, its category's; a favorite: its listing's) inserted or
/// removed; none for any other entity.
pub fn instances(
    entity: &str,
    image: serde_dynamo::Item,
    sequence_number: String,
    inserted: bool,
) -> Result<Vec<CountChange>, RecordError> {
    if entity == EntityType::Review.as_str() {
        let review: Review = decode("review", image)?;
        if !(Review::MIN_RATING..=Review::MAX_RATING).contains(&review.rating) {
            return Err(RecordError::Malformed(format!("review rating {} out of range", review.rating)));
        }
        let weight = u32::from(review.rating);
        let marker = RatingMarker {
            review_id: review.review_id,
            reviewed_user_id: review.reviewed_user_id.clone(),
            state: MarkerState::Counted,
            weight,
        };
        let mut out = vec![CountChange {
            sequence_number: sequence_number.clone(),
            aggregate: ratings_of(&review.reviewed_user_id)?,
            marker: keys::rating_marker(&review.reviewed_user_id, &review.review_id)?,
            marker_item: store::item::to_item(&marker)?,
            version: None,
            weight,
            inserted,
        }];
        if let Some(category) = &review.category_id {
            let marker = CategoryRatingMarker {
                review_id: review.review_id,
                reviewed_user_id: review.reviewed_user_id.clone(),
                category_id: category.clone(),
                shard: domain::shard::category_rating_marker_shard(&review.review_id),
                state: MarkerState::Counted,
                weight,
            };
            out.push(CountChange {
                sequence_number,
                aggregate: category_ratings_of(category)?,
                marker: keys::category_rating_marker(category, &review.review_id)?,
                marker_item: store::item::to_item(&marker)?,
                version: None,
                weight,
                inserted,
            });
        }
        return Ok(out);
    }
    if entity == EntityType::Favorite.as_str() {
        let favorite: Favorite = decode("favorite", image)?;
        let marker = FavoriteMarker {
            user_id: favorite.user_id.clone(),
            listing_id: favorite.listing_id,
            shard: domain::shard::favorite_marker_shard(&favorite.user_id),
            version: favorite.favorite_id,
            state: MarkerState::Counted,
            weight: 1,
        };
        return Ok(vec![CountChange {
            sequence_number,
            aggregate: favorites_of(&favorite.listing_id)?,
            marker: keys::favorite_marker(&favorite.user_id, &favorite.listing_id)?,
            marker_item: store::item::to_item(&marker)?,
            version: Some(favorite.favorite_id.ulid()),
            weight: 1,
            inserted,
        }]);
    }
    Ok(Vec::new())
}

/// For a marker item: its key, the key of the base item it counts, and the
/// aggregate it counts into; `None` for any other entity.
pub fn marker(entity: &str, image: serde_dynamo::Item) -> Result<Option<(Key, Key, Aggregate)>, RecordError> {
    if entity == EntityType::RatingMarker.as_str() {
        let m: RatingMarker = decode("rating marker", image)?;
        let marker = keys::rating_marker(&m.reviewed_user_id, &m.review_id)?;
        return Ok(Some((marker, keys::review(&m.reviewed_user_id, &m.review_id)?, ratings_of(&m.reviewed_user_id)?)));
    }
    if entity == EntityType::CategoryRatingMarker.as_str() {
        let m: CategoryRatingMarker = decode("category rating marker", image)?;
        let marker = keys::category_rating_marker(&m.category_id, &m.review_id)?;
        let base = keys::review(&m.reviewed_user_id, &m.review_id)?;
        return Ok(Some((marker, base, category_ratings_of(&m.category_id)?)));
    }
    if entity == EntityType::FavoriteMarker.as_str() {
        let m: FavoriteMarker = decode("favorite marker", image)?;
        let marker = keys::favorite_marker(&m.user_id, &m.listing_id)?;
        return Ok(Some((marker, keys::favorite(&m.user_id, &m.listing_id)?, favorites_of(&m.listing_id)?)));
    }
    Ok(None)
}

/// The aggregate an item of `entity` holds (a user's ratings, a listing's
/// favorite count, a category's rating), from its id in `image`; `None`
/// for any other entity.
pub fn aggregate_held(entity: &str, image: serde_dynamo::Item) -> Result<Option<Aggregate>, RecordError> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct UserId {
        user_id: domain::ids::UserId,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct ListingId {
        listing_id: domain::ids::ListingId,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct CategoryId {
        category_id: domain::ids::CategoryId,
    }
    if entity == EntityType::User.as_str() {
        let u: UserId = decode("user", image)?;
        return Ok(Some(ratings_of(&u.user_id)?));
    }
    if entity == EntityType::Listing.as_str() {
        let l: ListingId = decode("listing", image)?;
        return Ok(Some(favorites_of(&l.listing_id)?));
    }
    if entity == EntityType::CategoryRating.as_str() {
        let c: CategoryId = decode("category rating", image)?;
        return Ok(Some(category_ratings_of(&c.category_id)?));
    }
    Ok(None)
}

/// What a base item must still be for a count decided from this read of it
/// to stand: it exists, with the attributes [`instances`] reads (a
/// review's rating and category, a favorite's id) as read.
pub fn as_read(item: &store::Item) -> Vec<Cond> {
    let attrs = store::item::attrs(item);
    let mut out = vec![Cond::ItemExists];
    for attr in ["rating", "categoryId", "favoriteId"] {
        match attrs.get(attr) {
            Some(value) => out.push(Cond::Eq(attr, value.clone())),
            // A review without a category: it must not have gained one.
            None if attr == "categoryId" && entity_type(item) == Some(EntityType::Review.as_str()) => {
                out.push(Cond::NotExists(attr));
            }
            None => {}
        }
    }
    out
}
