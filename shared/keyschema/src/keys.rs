//! Primary keys from typed ids, each rendered from its entity's declaration
//! ([`crate::entities`]) and typed by its entity ([`EntityKey`]): no key
//! string is spelled here.

use domain::ids::{BrandId, CategoryId, Email, ListingId, MessageId, OrderId, ProductId, ReviewId, UserId};

use crate::decl::SchemaError;
use crate::entities;
use crate::entity::Entity;
use crate::key::EntityKey;
use crate::records;
use crate::value::Value;
use domain::model;

fn v(part: impl std::fmt::Display) -> Value {
    Value::S(part.to_string())
}

/// Typed primary key functions: `name(arg: Type => "field", ...) of module`.
macro_rules! primary_keys {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty => $field:literal),+) of $entity:ty;)+) => {
        $(
            $(#[$doc])*
            pub fn $name($($arg: $ty),+) -> Result<EntityKey<$entity>, SchemaError> {
                typed(<$entity as Entity>::DECL.key(&[$(($field, v($arg))),+]))
            }
        )+
    };
}

fn typed<E>(key: Result<crate::key::Key, SchemaError>) -> Result<EntityKey<E>, SchemaError> {
    key.map(EntityKey::new)
}

primary_keys! {
    /// A user.
    user(id: &UserId => "userId") of model::User;
    /// The guard of an email.
    email_guard(email: &Email => "email") of records::EmailGuard;
    /// A listing.
    listing(id: &ListingId => "listingId") of model::Listing;
    /// A listing's details (its description).
    listing_details(id: &ListingId => "listingId") of model::ListingDetails;
    /// An order.
    order(id: &OrderId => "orderId") of model::Order;
    /// One item of an order (`item`: the product or listing id).
    order_item(order: &OrderId => "orderId", item: &str => "itemId") of model::OrderItem;
    /// A message of an order.
    order_message(order: &OrderId => "orderId", id: &MessageId => "messageId") of model::OrderMessage;
    /// A review, in the reviewed user's partition.
    review(reviewed: &UserId => "reviewedUserId", id: &ReviewId => "reviewId") of model::Review;
    /// The marker of a review's rating (retired).
    rating_marker(reviewed: &UserId => "reviewedUserId", review: &ReviewId => "reviewId") of records::RatingMarker;
    /// The slot of an author's reviews of a user in an ISO week (`2026-W48`).
    rating_slot(reviewed: &UserId => "reviewedUserId", author: &UserId => "authorId", week: &str => "week") of records::RatingSlot;
    /// A brand.
    brand(id: &BrandId => "brandId") of model::Brand;
    /// A category.
    category(id: &CategoryId => "categoryId") of model::Category;
    /// A category's rating.
    category_rating(id: &CategoryId => "categoryId") of records::CategoryRating;
    /// A product.
    product(id: &ProductId => "productId") of model::Product;
    /// A product's details (its description).
    product_details(id: &ProductId => "productId") of model::ProductDetails;
    /// A share of a product's stock beyond the first.
    product_stock(id: &ProductId => "productId", shard: &u16 => "shard") of domain::stock::ProductStock;
    /// A user's favorite of a listing.
    favorite(user: &UserId => "userId", listing: &ListingId => "listingId") of model::Favorite;
    /// A listing's posting in a search term's list ([`domain::words::Term::key_for`]).
    posting(term: &str => "term", listing: &ListingId => "listingId") of records::Posting;
    /// A caller's idempotency record on a route.
    idempotency(caller: &UserId => "callerId", route: &str => "route", key: &str => "key") of records::IdempotencyRecord;
    /// One part of an aggregate (`aggregate`: its kind's tag; `of`: the holder's id).
    aggregate_part(aggregate: &str => "aggregate", of: &str => "of", part: &u16 => "part") of records::AggregatePart;
    /// A partition of a dense cell that holds listings.
    near_cell(dense: &str => "dense", cell: &str => "cell") of records::NearCell;
    /// A maintenance job's checkpoint of one scan segment.
    checkpoint(job: &str => "job", segment: &u16 => "segment") of records::Checkpoint;
}

/// The marker of a user's favorite of a listing, in the user's shard of the
/// listing's markers.
pub fn favorite_marker(user: &UserId, listing: &ListingId) -> Result<EntityKey<records::FavoriteMarker>, SchemaError> {
    let shard = domain::shard::favorite_marker_shard(user);
    typed(entities::favorite_marker::ENTITY.key(&[("listingId", v(listing)), ("shard", v(shard)), ("userId", v(user))]))
}

/// The slot of an author's reviews of a user in an ISO week in a category,
/// in the author's shard of the category's markers.
pub fn category_rating_slot(
    category: &CategoryId,
    author: &UserId,
    reviewed: &UserId,
    week: &str,
) -> Result<EntityKey<records::CategoryRatingSlot>, SchemaError> {
    let shard = domain::shard::category_rating_slot_shard(author);
    typed(entities::category_rating_slot::ENTITY.key(&[
        ("categoryId", v(category)),
        ("shard", v(shard)),
        ("authorId", v(author)),
        ("reviewedUserId", v(reviewed)),
        ("week", v(week)),
    ]))
}

/// The marker of a review's rating in its category (retired), in the
/// review's shard of the category's markers.
pub fn category_rating_marker(
    category: &CategoryId,
    review: &ReviewId,
) -> Result<EntityKey<records::CategoryRatingMarker>, SchemaError> {
    let shard = domain::shard::category_rating_marker_shard(review);
    typed(entities::category_rating_marker::ENTITY.key(&[
        ("categoryId", v(category)),
        ("shard", v(shard)),
        ("reviewId", v(review)),
    ]))
}
