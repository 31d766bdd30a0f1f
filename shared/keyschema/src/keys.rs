//! Primary keys from typed ids, each rendered from its entity's declaration
//! ([`crate::entities`]): no key string is spelled here.

use domain::ids::{BrandId, CategoryId, Email, ListingId, MessageId, OrderId, ProductId, ReviewId, UserId};

use crate::decl::SchemaError;
use crate::entities;
use crate::key::Key;
use crate::value::Value;

fn v(part: impl std::fmt::Display) -> Value {
    Value::S(part.to_string())
}

/// Typed primary key functions: `name(arg: Type => "field", ...) of module`.
macro_rules! primary_keys {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty => $field:literal),+) of $module:ident;)+) => {
        $(
            $(#[$doc])*
            pub fn $name($($arg: $ty),+) -> Result<Key, SchemaError> {
                entities::$module::ENTITY.key(&[$(($field, v($arg))),+])
            }
        )+
    };
}

primary_keys! {
    /// A user.
    user(id: &UserId => "userId") of user;
    /// The guard of an email.
    email_guard(email: &Email => "email") of email_guard;
    /// A listing.
    listing(id: &ListingId => "listingId") of listing;
    /// An order.
    order(id: &OrderId => "orderId") of order;
    /// One item of an order (`item`: the product or listing id).
    order_item(order: &OrderId => "orderId", item: &str => "itemId") of order_item;
    /// A message of an order.
    order_message(order: &OrderId => "orderId", id: &MessageId => "messageId") of order_message;
    /// A review, in the reviewed user's partition.
    review(reviewed: &UserId => "reviewedUserId", id: &ReviewId => "reviewId") of review;
    /// The marker of a review's rating.
    rating_marker(reviewed: &UserId => "reviewedUserId", review: &ReviewId => "reviewId") of rating_marker;
    /// A brand.
    brand(id: &BrandId => "brandId") of brand;
    /// A category.
    category(id: &CategoryId => "categoryId") of category;
    /// A category's rating.
    category_rating(id: &CategoryId => "categoryId") of category_rating;
    /// A product.
    product(id: &ProductId => "productId") of product;
    /// A user's favorite of a listing.
    favorite(user: &UserId => "userId", listing: &ListingId => "listingId") of favorite;
    /// A listing's posting under a search term ([`domain::words::Term::key`]).
    posting(term: &str => "term", listing: &ListingId => "listingId") of posting;
    /// A caller's idempotency record on a route.
    idempotency(caller: &UserId => "callerId", route: &str => "route", key: &str => "key") of idempotency;
    /// A maintenance job's checkpoint of one scan segment.
    checkpoint(job: &str => "job", segment: &u16 => "segment") of checkpoint;
}

/// The marker of a user's favorite of a listing, in the user's shard of the
/// listing's markers.
pub fn favorite_marker(user: &UserId, listing: &ListingId) -> Result<Key, SchemaError> {
    let shard = domain::shard::favorite_marker_shard(user);
    entities::favorite_marker::ENTITY.key(&[("listingId", v(listing)), ("shard", v(shard)), ("userId", v(user))])
}

/// The marker of a review's rating in its category, in the review's shard
/// of the category's markers.
pub fn category_rating_marker(category: &CategoryId, review: &ReviewId) -> Result<Key, SchemaError> {
    let shard = domain::shard::category_rating_marker_shard(review);
    entities::category_rating_marker::ENTITY.key(&[
        ("categoryId", v(category)),
        ("shard", v(shard)),
        ("reviewId", v(review)),
    ])
}
