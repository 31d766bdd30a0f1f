//! The registry of access patterns ([`PATTERNS`]), the one list the docs
//! (docs/key-schema.md), the explorer and the key tests derive from: each
//! pattern's name in the seeds, what it answers, its route, and the
//! request it sends, built by the pattern's own function
//! ([`crate::access`]) from sample ids that the docs show as placeholders
//! ([`samples`]). The capacity tests (tests/integration/capacity.rs) and
//! the capacity model's request kinds (tools/capacity) keep lists of their
//! own, checked against this one. Tests fail on a duplicate id, a route
//! the contract does not have, a sample left in a rendering, or a pattern
//! without a budget in the capacity tests.

use domain::ids::{ListingId, OrderId};
use domain::values::{ListingStatus, OrderStatus};

use crate::access::*;
use crate::decl::SchemaError;
use crate::key::Key;
use crate::keys;
use crate::query::KeyQuery;
use crate::table::{EntityType, Index};

/// One request of an access pattern, as the docs show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// `GetItem` (or a single-item write) on a primary key.
    Get(Key),
    /// `Query`.
    Query(KeyQuery),
}

impl Request {
    /// The index it reads.
    pub fn index(&self) -> Index {
        match self {
            Request::Get(_) => Index::Table,
            Request::Query(q) => q.index,
        }
    }

    /// The key condition, such as
    /// `gsi1pk = BRAND#acme, begins_with(gsi1sk, CATEGORY#), descending`.
    pub fn condition(&self) -> String {
        match self {
            Request::Get(k) => format!("{} = {}, {} = {}", Index::Table.pk(), k.pk, Index::Table.sk(), k.sk),
            Request::Query(q) => q.condition(),
        }
    }
}

pub mod samples;

/// One access pattern as documented.
#[derive(Clone, Copy, Debug)]
pub struct Pattern {
    /// Which design and number, for example `catalog AP6`.
    pub id: &'static str,
    /// What it answers.
    pub what: &'static str,
    /// The requests it sends, as the docs show them: `GetItem`, `Query`,
    /// `Query x shards` (a fan-out), or several joined by ` + `.
    pub operation: &'static str,
    /// The entity it returns.
    pub entity: EntityType,
    /// The request, built with [`samples`] by the pattern's own function.
    pub request: fn() -> Result<Request, SchemaError>,
    /// The HTTP route serving it.
    pub route: &'static str,
}

impl Pattern {
    /// The index it reads.
    pub fn index(&self) -> Result<Index, SchemaError> {
        Ok((self.request)()?.index())
    }

    /// The key condition with placeholders, rendered from the request.
    pub fn condition(&self) -> Result<String, SchemaError> {
        Ok(samples::placeholders(&(self.request)()?.condition()))
    }
}

const fn p(
    id: &'static str,
    what: &'static str,
    operation: &'static str,
    entity: EntityType,
    request: fn() -> Result<Request, SchemaError>,
    route: &'static str,
) -> Pattern {
    Pattern { id, what, operation, entity, request, route }
}

use samples::{brand as sb, category as sc, email as se, ulid as su, user as suser};
use Request::{Get, Query};

/// Every access pattern, for the generated docs.
pub const PATTERNS: &[Pattern] = &[
    p("catalog AP1", "all brands", "Query", EntityType::Brand, || Ok(Query(brands()?.into_query())), "GET /brands"),
    p(
        "catalog AP2",
        "all categories",
        "Query",
        EntityType::Category,
        || Ok(Query(categories()?.into_query())),
        "GET /categories",
    ),
    p(
        "catalog AP3",
        "product by id, with its description",
        "Query",
        EntityType::Product,
        || Ok(Query(product_with_details(&domain::ids::ProductId::from_ulid(su("P")))?.into_query())),
        "GET /products/{productId}",
    ),
    p(
        "catalog AP4-5",
        "change stock (never below zero)",
        "TransactWriteItems (token) + Query",
        EntityType::Product,
        || Ok(Query(product_with_details(&domain::ids::ProductId::from_ulid(su("P")))?.into_query())),
        "POST /products/{productId}/stock",
    ),
    p(
        "catalog AP6",
        "products of a brand",
        "Query",
        EntityType::Product,
        || Ok(Query(products_by_brand(&sb())?.into_query())),
        "GET /brands/{brandId}/products",
    ),
    p(
        "catalog AP7",
        "products of a brand in a category",
        "Query",
        EntityType::Product,
        || Ok(Query(products_by_brand_and_category(&sb(), &sc())?.into_query())),
        "GET /brands/{brandId}/products?categoryId=",
    ),
    p(
        "catalog AP8",
        "products of a category",
        "Query",
        EntityType::Product,
        || Ok(Query(products_by_category(&sc())?.into_query())),
        "GET /categories/{categoryId}/products",
    ),
    p(
        "catalog AP9",
        "products of a category by a brand",
        "Query",
        EntityType::Product,
        || Ok(Query(products_by_category_and_brand(&sc(), &sb())?.into_query())),
        "GET /categories/{categoryId}/products?brandId=",
    ),
    p(
        "marketplace AP1",
        "user by id",
        "GetItem",
        EntityType::User,
        || Ok(Get(keys::user(&suser("user"))?.into())),
        "GET /users/{userId}",
    ),
    p(
        "marketplace AP2",
        "user by email (admin)",
        "Query",
        EntityType::User,
        || Ok(Query(user_by_email(&se())?.into_query())),
        "GET /users?email=",
    ),
    p(
        "marketplace AP3",
        "listing by id, with its description",
        "Query",
        EntityType::Listing,
        || Ok(Query(listing_with_details(&domain::ids::ListingId::from_ulid(su("K")))?.into_query())),
        "GET /listings/{listingId}",
    ),
    p(
        "marketplace AP4",
        "a seller's listings, any status",
        "Query",
        EntityType::Listing,
        || Ok(Query(seller_listings(&suser("seller"), None)?.into_query())),
        "GET /sellers/{sellerId}/listings",
    ),
    p(
        "marketplace AP5",
        "a seller's active listings",
        "Query",
        EntityType::Listing,
        || Ok(Query(seller_listings(&suser("seller"), Some(ListingStatus::Active))?.into_query())),
        "GET /sellers/{sellerId}/listings/active",
    ),
    p(
        "marketplace AP6",
        "active listings of a category, newest first",
        "Query x shards",
        EntityType::Listing,
        || {
            Ok(Query(
                category_listings(&sc(), 7, Some((ListingId::from_ulid(su("A")), ListingId::from_ulid(su("H")))))?
                    .into_query(),
            ))
        },
        "GET /categories/{categoryId}/listings",
    ),
    p(
        "beyond AP1",
        "a user's favorite listings, newest first",
        "Query",
        EntityType::Favorite,
        || Ok(Query(favorites_of(&suser("user"))?.into_query())),
        "GET /users/me/favorites",
    ),
    p(
        "beyond AP2",
        "active listings of a category by price, cheapest first",
        "Query x shards",
        EntityType::Listing,
        || {
            Ok(Query(
                listings_by_price(
                    &sc(),
                    7,
                    (1200, ListingId::from_ulid(su("A"))),
                    (3400, ListingId::from_ulid(su("H"))),
                )?
                .into_query(),
            ))
        },
        "GET /categories/{categoryId}/listings?sort=price&minPrice=&maxPrice=",
    ),
    p(
        "beyond AP4",
        "active listings near a point, nearest first",
        "Query x cells (of GSI5, the cards)",
        EntityType::Listing,
        || Ok(Query(listings_near("u4pru", None, None)?.into_query())),
        "GET /listings/near?lat=&lon=&radiusKm=",
    ),
    p(
        "beyond AP5",
        "active listings whose title holds words, newest first",
        "Query x lists + BatchGetItem",
        EntityType::Posting,
        || Ok(Query(postings(&samples::term())?.into_query())),
        "GET /search/listings?q=",
    ),
    p(
        "marketplace AP7, e-commerce AP1",
        "order by id",
        "GetItem",
        EntityType::Order,
        || Ok(Get(keys::order(&OrderId::from_ulid(su("R")))?.into())),
        "GET /orders/{orderId}",
    ),
    p(
        "marketplace AP8, e-commerce AP2",
        "a buyer's orders, newest first",
        "Query",
        EntityType::Order,
        || Ok(Query(buyer_orders(&suser("buyer"))?.into_query())),
        "GET /buyers/{buyerId}/orders",
    ),
    p(
        "marketplace AP9",
        "a seller's sales, newest first",
        "Query",
        EntityType::Order,
        || Ok(Query(seller_orders(&suser("seller"))?.into_query())),
        "GET /sellers/{sellerId}/orders",
    ),
    p(
        "marketplace AP10",
        "reviews about a user, newest first",
        "Query",
        EntityType::Review,
        || Ok(Query(reviews_about(&suser("user"))?.into_query())),
        "GET /users/{userId}/reviews",
    ),
    p(
        "marketplace AP11",
        "reviews written by a user, newest first",
        "Query",
        EntityType::Review,
        || Ok(Query(reviews_by(&suser("author"))?.into_query())),
        "GET /users/{userId}/reviews/written",
    ),
    p(
        "beyond AP3",
        "messages of an order, oldest first",
        "Query",
        EntityType::OrderMessage,
        || Ok(Query(order_messages(&OrderId::from_ulid(su("R")))?.into_query())),
        "GET /orders/{orderId}/messages",
    ),
    p(
        "e-commerce AP3",
        "orders by status, newest first",
        "Query x shards",
        EntityType::Order,
        || Ok(Query(orders_by_status_shard(OrderStatus::Pending, 7, None)?.into_query())),
        "GET /orders?status=",
    ),
    p(
        "e-commerce AP4",
        "items of an order",
        "Query",
        EntityType::OrderItem,
        || Ok(Query(order_items(&OrderId::from_ulid(su("R")))?.into_query())),
        "GET /orders/{orderId}/items",
    ),
    p(
        "e-commerce AP5",
        "one item of an order",
        "GetItem",
        EntityType::OrderItem,
        || Ok(Get(keys::order_item(&OrderId::from_ulid(su("R")), &su("E").to_string())?.into())),
        "GET /orders/{orderId}/items/{itemId}",
    ),
    p(
        "e-commerce AP6",
        "customer profile",
        "GetItem",
        EntityType::User,
        || Ok(Get(keys::user(&suser("user"))?.into())),
        "GET /users/{userId}",
    ),
    p(
        "e-commerce AP7",
        "recent orders, all statuses",
        "Query x statuses x shards",
        EntityType::Order,
        || Ok(Query(orders_by_status_shard(OrderStatus::Pending, 7, None)?.into_query())),
        "GET /orders",
    ),
    p(
        "e-commerce AP8",
        "orders in a date range",
        "Query x shards",
        EntityType::Order,
        || {
            Ok(Query(
                orders_by_status_shard(
                    OrderStatus::Pending,
                    7,
                    Some((OrderId::from_ulid(su("A")), OrderId::from_ulid(su("H")))),
                )?
                .into_query(),
            ))
        },
        "GET /orders?status=&from=&to=",
    ),
];
