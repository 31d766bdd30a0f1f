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

/// A user.
pub fn user(id: &UserId) -> Result<Key, SchemaError> {
    entities::user::ENTITY.key(&[("userId", v(id))])
}

/// The guard of an email.
pub fn email_guard(email: &Email) -> Result<Key, SchemaError> {
    entities::email_guard::ENTITY.key(&[("email", v(email))])
}

/// A listing.
pub fn listing(id: &ListingId) -> Result<Key, SchemaError> {
    entities::listing::ENTITY.key(&[("listingId", v(id))])
}

/// An order.
pub fn order(id: &OrderId) -> Result<Key, SchemaError> {
    entities::order::ENTITY.key(&[("orderId", v(id))])
}

/// One item of an order (`item`: the product or listing id).
pub fn order_item(order: &OrderId, item: &str) -> Result<Key, SchemaError> {
    entities::order_item::ENTITY.key(&[("orderId", v(order)), ("itemId", v(item))])
}

/// A message of an order.
pub fn order_message(order: &OrderId, id: &MessageId) -> Result<Key, SchemaError> {
    entities::order_message::ENTITY.key(&[("orderId", v(order)), ("messageId", v(id))])
}

/// A review, in the reviewed user's partition.
pub fn review(reviewed: &UserId, id: &ReviewId) -> Result<Key, SchemaError> {
    entities::review::ENTITY.key(&[("reviewedUserId", v(reviewed)), ("reviewId", v(id))])
}

/// The marker of a review's rating.
pub fn rating_marker(reviewed: &UserId, review: &ReviewId) -> Result<Key, SchemaError> {
    entities::rating_marker::ENTITY.key(&[("reviewedUserId", v(reviewed)), ("reviewId", v(review))])
}

/// A brand.
pub fn brand(id: &BrandId) -> Result<Key, SchemaError> {
    entities::brand::ENTITY.key(&[("brandId", v(id))])
}

/// A category.
pub fn category(id: &CategoryId) -> Result<Key, SchemaError> {
    entities::category::ENTITY.key(&[("categoryId", v(id))])
}

/// A product.
pub fn product(id: &ProductId) -> Result<Key, SchemaError> {
    entities::product::ENTITY.key(&[("productId", v(id))])
}

/// A user's favorite of a listing.
pub fn favorite(user: &UserId, listing: &ListingId) -> Result<Key, SchemaError> {
    entities::favorite::ENTITY.key(&[("userId", v(user)), ("listingId", v(listing))])
}

/// The marker of a user's favorite of a listing.
pub fn favorite_marker(user: &UserId, listing: &ListingId) -> Result<Key, SchemaError> {
    entities::favorite_marker::ENTITY.key(&[("userId", v(user)), ("listingId", v(listing))])
}

/// A caller's idempotency record on a route.
pub fn idempotency(caller: &UserId, route: &str, key: &str) -> Result<Key, SchemaError> {
    entities::idempotency::ENTITY.key(&[("callerId", v(caller)), ("route", v(route)), ("key", v(key))])
}
