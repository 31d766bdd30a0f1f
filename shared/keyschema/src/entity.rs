//! Entities stored as one item each: the [`Entity`] trait tying a record
//! type to its declaration ([`crate::entities`]), and [`ReadAs`], what a
//! read of an entity's key may decode into.

use domain::model;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::decl::{EntityDecl, SchemaError};
use crate::entities;
use crate::key::ItemKeys;
use crate::records;
use crate::value::{attrs_of, Attrs};

/// An entity stored as one item: its record type and its declaration.
pub trait Entity: Serialize + DeserializeOwned {
    /// Its declaration.
    const DECL: &'static EntityDecl;

    /// Its stored fields.
    fn attrs(&self) -> Result<Attrs, SchemaError> {
        attrs_of(self).ok_or(SchemaError::NotAnObject(Self::DECL.entity))
    }

    /// The keys a write of it puts with it ([`EntityDecl::written_keys`]).
    fn item_keys(&self) -> Result<ItemKeys, SchemaError> {
        Self::DECL.written_keys(&self.attrs()?)
    }
}

/// A type a read of an `E`'s item decodes into: `E` itself, or a part of it
/// (a few of its fields, declared with `impl ReadAs<E> for Part`), or a
/// JSON value (a cache of any item).
pub trait ReadAs<E: Entity>: DeserializeOwned {}

impl<E: Entity> ReadAs<E> for E {}

impl<E: Entity> ReadAs<E> for serde_json::Value {}

impl<E: Entity> ReadAs<E> for serde::de::IgnoredAny {}

/// A list of listings reads cards.
impl ReadAs<model::Listing> for domain::answers::ListingCard {}

/// A list of products reads cards.
impl ReadAs<model::Product> for domain::answers::ProductCard {}

macro_rules! entities {
    ($($record:path => $module:ident),+ $(,)?) => {
        $(impl Entity for $record {
            const DECL: &'static EntityDecl = &entities::$module::ENTITY;
        })+
    };
}

entities!(
    model::User => user,
    records::EmailGuard => email_guard,
    model::Listing => listing,
    model::Order => order,
    model::OrderItem => order_item,
    model::Review => review,
    model::Brand => brand,
    model::Category => category,
    model::Product => product,
    model::Favorite => favorite,
    records::FavoriteMarker => favorite_marker,
    model::OrderMessage => order_message,
    records::RatingMarker => rating_marker,
    records::CategoryRating => category_rating,
    records::CategoryRatingMarker => category_rating_marker,
    records::RatingSlot => rating_slot,
    records::CategoryRatingSlot => category_rating_slot,
    records::AggregatePart => aggregate_part,
    records::NearCell => near_cell,
    records::Posting => posting,
    records::IdempotencyRecord => idempotency,
    records::Checkpoint => checkpoint,
);

impl Entity for model::ListingDetails {
    const DECL: &'static EntityDecl = &entities::details::LISTING;
}

impl Entity for model::ProductDetails {
    const DECL: &'static EntityDecl = &entities::details::PRODUCT;
}

impl Entity for domain::stock::ProductStock {
    const DECL: &'static EntityDecl = &entities::product::STOCK;
}
