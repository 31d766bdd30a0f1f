//! The one parse at the boundary: a stream record or a scanned item becomes
//! an [`Image`] (its entity, parsed from `entityType`, decoded where a
//! derivation reads more than its keys) and a record a [`Record`] (its
//! [`Event`], parsed from `eventName`). Everything after matches on types.

use std::str::FromStr;

use aws_lambda_events::dynamodb::EventRecord;
use domain::ids::{CategoryId, ListingId, UserId};
use domain::model::{Favorite, ListingStatus, OrderStatus, Review};
use keyschema::records::{AggregatePart, CategoryRatingSlot, FavoriteMarker, Posting, RatingSlot};
use keyschema::table::{EntityType, ENTITY_TYPE};
use keyschema::{Attrs, Value};

use crate::DerivedError;

/// What happened to an item (a stream record's `eventName`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Created.
    Insert,
    /// Changed.
    Modify,
    /// Deleted (by the API, moderation or TTL).
    Remove,
}

impl FromStr for Event {
    type Err = DerivedError;
    fn from_str(s: &str) -> Result<Self, DerivedError> {
        match s {
            "INSERT" => Ok(Event::Insert),
            "MODIFY" => Ok(Event::Modify),
            "REMOVE" => Ok(Event::Remove),
            other => Err(DerivedError::malformed(format!("unknown event name `{other}`"))),
        }
    }
}

/// What the derivations read of a listing: what it is found by.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingImage {
    /// Its id.
    pub listing_id: ListingId,
    /// Its title (its search terms).
    pub title: String,
    /// active, sold or removed.
    pub status: ListingStatus,
    /// Its category.
    pub category_id: CategoryId,
}

/// What the derivations read of an order: whether it accepted a listing's
/// sale (a sold listing's search postings are kept until then).
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderImage {
    /// The listing it bought (a listing order).
    #[serde(default)]
    pub listing_id: Option<ListingId>,
    /// Its status.
    pub status: OrderStatus,
}

/// An entity decoded as far as the derivations read it.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// A listing: its postings, its favorite count, its index keys.
    Listing(ListingImage),
    /// An order: a listing order's sale accepted (confirmed) deletes the
    /// listing's search postings.
    Order(OrderImage),
    /// A review: counted into its user's and its category's ratings.
    Review(Box<Review>),
    /// A favorite: counted into its listing's favorite count.
    Favorite(Favorite),
    /// A user: holds its rating aggregate.
    User(UserId),
    /// A category's rating item: holds the category's aggregate.
    CategoryRating(CategoryId),
    /// An author's reviews of a user in one week, in the user's ratings.
    RatingSlot(RatingSlot),
    /// The same in a category's rating.
    CategoryRatingSlot(CategoryRatingSlot),
    /// A marker of a retired kind (per-review rating markers): reconcile
    /// deletes it.
    Retired,
    /// The marker of a user's favorite of a listing.
    FavoriteMarker(FavoriteMarker),
    /// A search posting.
    Posting(Posting),
    /// A part of an aggregate, folded into its holder.
    AggregatePart(AggregatePart),
    /// An entity nothing reads beyond its keys.
    Keys,
    /// An entity a derivation reads that does not decode (why): only its
    /// keys can be derived.
    Unreadable(String),
}

/// An item as the derivations read it.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// Its entity, parsed once from `entityType`.
    pub entity: EntityType,
    /// The entity, decoded.
    pub body: Body,
    /// The item as it came.
    item: serde_dynamo::Item,
}

fn decode<T: serde::de::DeserializeOwned>(item: &serde_dynamo::Item) -> Result<T, String> {
    serde_dynamo::from_item(item.clone()).map_err(|e| telemetry::redacted(&e))
}

/// Only the id of an aggregate's holder is read.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct UserRef {
    user_id: UserId,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct CategoryRef {
    category_id: CategoryId,
}

impl Image {
    /// Parses an item: `None` if it has no `entityType` or one the design
    /// does not have (nothing is derived from it).
    pub fn parse(item: &serde_dynamo::Item) -> Option<Image> {
        let entity: EntityType = match item.get(ENTITY_TYPE) {
            Some(serde_dynamo::AttributeValue::S(t)) => t.parse().ok()?,
            _ => return None,
        };
        let body = match entity {
            EntityType::Listing => decode(item).map(Body::Listing),
            EntityType::Order => decode(item).map(Body::Order),
            EntityType::Review => decode(item).map(|r| Body::Review(Box::new(r))),
            EntityType::Favorite => decode(item).map(Body::Favorite),
            EntityType::User => decode(item).map(|u: UserRef| Body::User(u.user_id)),
            EntityType::CategoryRating => decode(item).map(|c: CategoryRef| Body::CategoryRating(c.category_id)),
            EntityType::RatingSlot => decode(item).map(Body::RatingSlot),
            EntityType::CategoryRatingSlot => decode(item).map(Body::CategoryRatingSlot),
            EntityType::RatingMarker | EntityType::CategoryRatingMarker => Ok(Body::Retired),
            EntityType::FavoriteMarker => decode(item).map(Body::FavoriteMarker),
            EntityType::Posting => decode(item).map(Body::Posting),
            EntityType::AggregatePart => decode(item).map(Body::AggregatePart),
            _ => Ok(Body::Keys),
        };
        Some(Image { entity, body: body.unwrap_or_else(Body::Unreadable), item: item.clone() })
    }

    /// Parses a scanned or read item.
    pub fn of_item(item: &store::Item) -> Option<Image> {
        Image::parse(&serde_dynamo::Item::from(item.clone()))
    }

    /// Its scalar attributes, key attributes included (what index keys
    /// derive from), read from the item when asked.
    pub fn attrs(&self) -> Attrs {
        attrs(&self.item)
    }

    /// The listing id of a listing image (decoded or not: from its attributes).
    pub fn listing_id(&self) -> Option<ListingId> {
        match (&self.body, self.entity) {
            (Body::Listing(l), _) => Some(l.listing_id),
            (_, EntityType::Listing) => match self.item.get("listingId") {
                Some(serde_dynamo::AttributeValue::S(id)) => id.parse().ok(),
                _ => None,
            },
            _ => None,
        }
    }

    /// The home region the item names (`home`: a listing's, an order's, a
    /// review's; docs/regions.md), decoded or not; none: the primary.
    pub fn home(&self) -> Option<&str> {
        match self.item.get("home") {
            Some(serde_dynamo::AttributeValue::S(home)) => Some(home),
            _ => None,
        }
    }

    /// The item decoded as `T`: for a derivation that reads an entity
    /// [`Body`] does not decode (one needs no variant of its own here).
    pub fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T, DerivedError> {
        Ok(serde_dynamo::from_item(self.item.clone())?)
    }

    /// An error for a derivation that needs the body of an unreadable image.
    pub fn unreadable(&self) -> Option<DerivedError> {
        match &self.body {
            Body::Unreadable(why) => Some(DerivedError::malformed(format!("{} image: {why}", self.entity.as_str()))),
            _ => None,
        }
    }
}

/// A stream record, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// What happened.
    pub event: Event,
    /// Its sequence number in its shard (to report it if it fails).
    pub sequence_number: String,
    /// The item before (modifications and removals).
    pub old: Option<Image>,
    /// The item after (insertions and modifications).
    pub new: Option<Image>,
}

impl Record {
    /// Parses a record: its event, its sequence number and both images.
    /// A removal of an item without an entity type is a record of nothing
    /// (both images `None`); any other event needs a typed image.
    pub fn parse(record: &EventRecord) -> Result<Record, DerivedError> {
        let sequence_number =
            record.change.sequence_number.clone().ok_or_else(|| DerivedError::malformed("no sequence number"))?;
        let event: Event = record.event_name.parse()?;
        let image = |item: &serde_dynamo::Item| (!item.is_empty()).then(|| Image::parse(item)).flatten();
        let (old, new) = (image(&record.change.old_image), image(&record.change.new_image));
        let typed = |item: &serde_dynamo::Item| item.contains_key(ENTITY_TYPE);
        let missing = match event {
            Event::Insert | Event::Modify => !typed(&record.change.new_image),
            Event::Remove => false,
        };
        if missing {
            return Err(DerivedError::malformed("image without entityType"));
        }
        Ok(Record { event, sequence_number, old, new })
    }

    /// The image the record is about: the new one, or the old one of a removal.
    pub fn current(&self) -> Option<&Image> {
        match self.event {
            Event::Insert | Event::Modify => self.new.as_ref(),
            Event::Remove => self.old.as_ref(),
        }
    }
}

/// A stream image's scalar attributes, as the key design reads them.
pub fn attrs(image: &serde_dynamo::Item) -> Attrs {
    image
        .iter()
        .filter_map(|(k, v)| match v {
            serde_dynamo::AttributeValue::S(s) => Some((k.clone(), Value::S(s.clone()))),
            serde_dynamo::AttributeValue::N(n) => Some((k.clone(), Value::N(n.clone()))),
            _ => None,
        })
        .collect()
}
