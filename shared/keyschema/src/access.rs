//! Every access pattern of the design, each one request: a `GetItem` on a
//! [`Key`] or a `Query` described by a [`KeyQuery`], built from the index
//! declarations of [`crate::entities`] (the partition and the sort-key
//! prefix from the leading composites given). The key condition of each
//! pattern is written next to its name; [`PATTERNS`] lists them for the
//! docs and a test checks every function against its listed condition.

use domain::ids::{BrandId, CategoryId, Email, OrderId, UserId};
use domain::values::{ListingStatus, Money, OrderStatus};

use crate::decl::{KeyDecl, SchemaError};
use crate::entities::{brand, category, favorite, listing, order, order_item, order_message, product, review, user};
use crate::key::Key;
use crate::keys;
use crate::query::KeyQuery;
use crate::table::{EntityType, Index};
use crate::value::Value;

pub use crate::query::SortKey;

fn v(part: impl std::fmt::Display) -> Value {
    Value::S(part.to_string())
}

fn query(entity: EntityType, key: &KeyDecl, parts: &[(&str, Value)]) -> Result<KeyQuery, SchemaError> {
    key.query(parts).map_err(|source| SchemaError::Template { entity, index: "query", source })
}

// ---- Catalog (seed 003) -------------------------------------------------

/// Catalog AP1: all brands. `pk = BRANDS AND begins_with(sk, BRAND#)`.
pub fn brands() -> Result<KeyQuery, SchemaError> {
    brand::ENTITY.query(&[])
}

/// Catalog AP2: all categories. `pk = CATEGORIES AND begins_with(sk, CATEGORY#)`.
pub fn categories() -> Result<KeyQuery, SchemaError> {
    category::ENTITY.query(&[])
}

/// Catalog AP6: a brand's products.
/// `GSI1: gsi1pk = BRAND#<brandId> AND begins_with(gsi1sk, CATEGORY#)`.
pub fn products_by_brand(brand: &BrandId) -> Result<KeyQuery, SchemaError> {
    query(EntityType::Product, &product::BY_BRAND.key, &[("brandId", v(brand))])
}

/// Catalog AP7: a brand's products in one category.
/// `GSI1: gsi1pk = BRAND#<brandId> AND begins_with(gsi1sk, CATEGORY#<categoryId>#PRODUCT#)`.
pub fn products_by_brand_and_category(brand: &BrandId, category: &CategoryId) -> Result<KeyQuery, SchemaError> {
    query(EntityType::Product, &product::BY_BRAND.key, &[("brandId", v(brand)), ("categoryId", v(category))])
}

/// Catalog AP8: a category's products (the same partition also holds
/// active listings; the `BRAND#` prefix selects products only).
/// `GSI2: gsi2pk = CATEGORY#<categoryId> AND begins_with(gsi2sk, BRAND#)`.
pub fn products_by_category(category: &CategoryId) -> Result<KeyQuery, SchemaError> {
    query(EntityType::Product, &product::BY_CATEGORY.key, &[("categoryId", v(category))])
}

/// Catalog AP9: a category's products of one brand.
/// `GSI2: gsi2pk = CATEGORY#<categoryId> AND begins_with(gsi2sk, BRAND#<brandId>#PRODUCT#)`.
pub fn products_by_category_and_brand(category: &CategoryId, brand: &BrandId) -> Result<KeyQuery, SchemaError> {
    query(EntityType::Product, &product::BY_CATEGORY.key, &[("categoryId", v(category)), ("brandId", v(brand))])
}

// ---- Marketplace (seed 000) ---------------------------------------------

/// Marketplace AP2: a user by email (admin).
/// `GSI1: gsi1pk = USER_EMAIL#<email> AND begins_with(gsi1sk, USER#)`.
pub fn user_by_email(email: &Email) -> Result<KeyQuery, SchemaError> {
    query(EntityType::User, &user::BY_EMAIL.key, &[("email", v(email))])
}

/// Marketplace AP4/AP5: a seller's listings, all statuses or one.
/// `GSI1: gsi1pk = SELLER#<sellerId> AND begins_with(gsi1sk, LISTING#[<status>#])`.
pub fn seller_listings(seller: &UserId, status: Option<ListingStatus>) -> Result<KeyQuery, SchemaError> {
    let mut parts = vec![("sellerId", v(seller))];
    parts.extend(status.map(|s| ("status", v(s))));
    query(EntityType::Listing, &listing::BY_SELLER.key, &parts)
}

/// Marketplace AP6: a category's active listings, newest first (sparse GSI2).
/// `GSI2: gsi2pk = CATEGORY#<categoryId> AND begins_with(gsi2sk, LISTING#)`, descending.
pub fn category_listings(category: &CategoryId) -> Result<KeyQuery, SchemaError> {
    Ok(query(EntityType::Listing, &listing::BROWSE.key, &[("categoryId", v(category))])?.newest_first())
}

/// Beyond the seeds: a category's active listings, cheapest first, with
/// inclusive price bounds (sparse GSI3, price in zero-padded cents).
/// `GSI3: gsi3pk = PRICE#<categoryId> AND gsi3sk BETWEEN LISTING#<min>#
/// AND LISTING#<max>#~`.
pub fn listings_by_price(category: &CategoryId, min: Money, max: Money) -> Result<KeyQuery, SchemaError> {
    listing::BY_PRICE
        .key
        .between(&[("categoryId", v(category))], &[("price", Value::n(min))], &[("price", Value::n(max))])
        .map_err(|source| SchemaError::Template { entity: EntityType::Listing, index: "by_price", source })
}

/// Beyond the seeds: a user's favorite listings, newest first.
/// `GSI1: gsi1pk = FAVORITES#<userId> AND begins_with(gsi1sk, FAVORITE#)`, descending.
pub fn favorites_of(user: &UserId) -> Result<KeyQuery, SchemaError> {
    Ok(query(EntityType::Favorite, &favorite::NEWEST.key, &[("userId", v(user))])?.newest_first())
}

/// Marketplace AP8 / e-commerce AP2: a buyer's orders, newest first.
/// `GSI1: gsi1pk = BUYER#<buyerId> AND begins_with(gsi1sk, ORDER#)`, descending.
pub fn buyer_orders(buyer: &UserId) -> Result<KeyQuery, SchemaError> {
    Ok(query(EntityType::Order, &order::BY_BUYER.key, &[("buyerId", v(buyer))])?.newest_first())
}

/// Marketplace AP9: a seller's sales, newest first.
/// `GSI2: gsi2pk = SELLER#<sellerId> AND begins_with(gsi2sk, ORDER#)`, descending.
pub fn seller_orders(seller: &UserId) -> Result<KeyQuery, SchemaError> {
    Ok(query(EntityType::Order, &order::BY_SELLER.key, &[("sellerId", v(seller))])?.newest_first())
}

/// Marketplace AP10: reviews about a user, newest first (primary table).
/// `pk = USER#<userId> AND begins_with(sk, REVIEW#)`, descending.
pub fn reviews_about(user: &UserId) -> Result<KeyQuery, SchemaError> {
    Ok(review::ENTITY.query(&[("reviewedUserId", v(user))])?.newest_first())
}

/// Marketplace AP11: reviews written by a user, newest first.
/// `GSI1: gsi1pk = AUTHOR#<authorId> AND begins_with(gsi1sk, REVIEW#)`, descending.
pub fn reviews_by(author: &UserId) -> Result<KeyQuery, SchemaError> {
    Ok(query(EntityType::Review, &review::BY_AUTHOR.key, &[("authorId", v(author))])?.newest_first())
}

// ---- E-commerce orders (seed 001) ---------------------------------------

/// E-commerce AP4: the items of an order.
/// `pk = ORDER#<orderId> AND begins_with(sk, ITEM#)`.
pub fn order_items(id: &OrderId) -> Result<KeyQuery, SchemaError> {
    order_item::ENTITY.query(&[("orderId", v(id))])
}

/// Beyond the seeds: the messages of an order, oldest first.
/// `pk = ORDER#<orderId> AND begins_with(sk, MESSAGE#)`.
pub fn order_messages(id: &OrderId) -> Result<KeyQuery, SchemaError> {
    order_message::ENTITY.query(&[("orderId", v(id))])
}

/// E-commerce AP3/AP7/AP8: one shard of a status, newest first, optionally
/// limited to a ULID range (from `domain::time::ulid_bounds`). One query per
/// shard; the reader fans out over `0..shard_count` and merges by id.
/// `GSI3: gsi3pk = STATUS#<status>#<shard> AND begins_with(gsi3sk, ORDER#)` or
/// `gsi3sk BETWEEN ORDER#<low> AND ORDER#<high>`, descending.
pub fn orders_by_status_shard(
    status: OrderStatus,
    shard: u16,
    range: Option<(OrderId, OrderId)>,
) -> Result<KeyQuery, SchemaError> {
    let partition = [("status", v(status)), ("shard", v(shard))];
    let q = match range {
        None => query(EntityType::Order, &order::BY_STATUS.key, &partition)?,
        Some((low, high)) => order::BY_STATUS
            .key
            .between(&partition, &[("orderId", v(low))], &[("orderId", v(high))])
            .map_err(|source| SchemaError::Template { entity: EntityType::Order, index: "by_status", source })?,
    };
    Ok(q.newest_first())
}

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

/// Sample ids the documented patterns are built with; the docs show each as
/// its `<placeholder>`.
pub mod samples {
    use super::*;
    use ulid::Ulid;

    /// `(sample text, placeholder)`, longest first so none shadows another.
    pub const PLACEHOLDERS: &[(&str, &str)] = &[
        ("sample-category", "<categoryId>"),
        ("sample-seller", "<sellerId>"),
        ("sample-author", "<authorId>"),
        ("sample-buyer", "<buyerId>"),
        ("sample-brand", "<brandId>"),
        ("sample-user", "<userId>"),
        ("sample@email.example", "<email>"),
        ("0000000000000000000000000H", "<high>"),
        ("0000000000000000000000000A", "<low>"),
        ("0000000000000000000000000E", "<itemId>"),
        ("0000000000000000000000000P", "<productId>"),
        ("0000000000000000000000000K", "<listingId>"),
        ("0000000000000000000000000R", "<orderId>"),
        ("0000001200", "<minCents>"),
        ("0000003400", "<maxCents>"),
        ("STATUS#pending#7", "STATUS#<status>#<shard>"),
        ("LISTING#active#", "LISTING#<status>#"),
    ];

    fn parse<T: std::str::FromStr>(s: &str) -> T
    where
        T::Err: std::fmt::Debug,
    {
        // The samples are constants that parse: checked by the docs test.
        s.parse().unwrap_or_else(|e| panic!("sample `{s}`: {e:?}"))
    }

    /// A brand.
    pub fn brand() -> BrandId {
        parse("sample-brand")
    }
    /// A category.
    pub fn category() -> CategoryId {
        parse("sample-category")
    }
    /// A user in the role named by `who` (`user`, `seller`, `buyer`, `author`).
    pub fn user(who: &str) -> UserId {
        parse(&format!("sample-{who}"))
    }
    /// An email.
    pub fn email() -> Email {
        parse("sample@email.example")
    }
    /// A ULID ending in `tag`: `P` product, `K` listing, `R` order, `E`
    /// order item, `A`/`H` the low/high bound of a range.
    pub fn ulid(tag: &str) -> Ulid {
        parse(&format!("0000000000000000000000000{tag}"))
    }

    /// `text` with every sample replaced by its placeholder.
    pub fn placeholders(text: &str) -> String {
        PLACEHOLDERS.iter().fold(text.to_owned(), |t, (sample, name)| t.replace(sample, name))
    }
}

/// One access pattern as documented.
#[derive(Clone, Copy, Debug)]
pub struct Pattern {
    /// Which design and number, for example `catalog AP6`.
    pub id: &'static str,
    /// What it answers.
    pub what: &'static str,
    /// `GetItem`, `Query` or `Query xN` (fan-out).
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
    p("catalog AP1", "all brands", "Query", EntityType::Brand, || Ok(Query(brands()?)), "GET /brands"),
    p("catalog AP2", "all categories", "Query", EntityType::Category, || Ok(Query(categories()?)), "GET /categories"),
    p(
        "catalog AP3",
        "product by id",
        "GetItem",
        EntityType::Product,
        || Ok(Get(keys::product(&domain::ids::ProductId::from_ulid(su("P")))?)),
        "GET /products/{productId}",
    ),
    p(
        "catalog AP4-5",
        "change stock (never below zero)",
        "TransactWriteItems (token) + GetItem",
        EntityType::Product,
        || Ok(Get(keys::product(&domain::ids::ProductId::from_ulid(su("P")))?)),
        "POST /products/{productId}/stock",
    ),
    p(
        "catalog AP6",
        "products of a brand",
        "Query",
        EntityType::Product,
        || Ok(Query(products_by_brand(&sb())?)),
        "GET /brands/{brandId}/products",
    ),
    p(
        "catalog AP7",
        "products of a brand in a category",
        "Query",
        EntityType::Product,
        || Ok(Query(products_by_brand_and_category(&sb(), &sc())?)),
        "GET /brands/{brandId}/products?categoryId=",
    ),
    p(
        "catalog AP8",
        "products of a category",
        "Query",
        EntityType::Product,
        || Ok(Query(products_by_category(&sc())?)),
        "GET /categories/{categoryId}/products",
    ),
    p(
        "catalog AP9",
        "products of a category by a brand",
        "Query",
        EntityType::Product,
        || Ok(Query(products_by_category_and_brand(&sc(), &sb())?)),
        "GET /categories/{categoryId}/products?brandId=",
    ),
    p(
        "marketplace AP1",
        "user by id",
        "GetItem",
        EntityType::User,
        || Ok(Get(keys::user(&suser("user"))?)),
        "GET /users/{userId}",
    ),
    p(
        "marketplace AP2",
        "user by email (admin)",
        "Query",
        EntityType::User,
        || Ok(Query(user_by_email(&se())?)),
        "GET /users?email=",
    ),
    p(
        "marketplace AP3",
        "listing by id",
        "GetItem",
        EntityType::Listing,
        || Ok(Get(keys::listing(&domain::ids::ListingId::from_ulid(su("K")))?)),
        "GET /listings/{listingId}",
    ),
    p(
        "marketplace AP4",
        "a seller's listings, any status",
        "Query",
        EntityType::Listing,
        || Ok(Query(seller_listings(&suser("seller"), None)?)),
        "GET /sellers/{sellerId}/listings",
    ),
    p(
        "marketplace AP5",
        "a seller's active listings",
        "Query",
        EntityType::Listing,
        || Ok(Query(seller_listings(&suser("seller"), Some(ListingStatus::Active))?)),
        "GET /sellers/{sellerId}/listings?status=active",
    ),
    p(
        "marketplace AP6",
        "active listings of a category, newest first",
        "Query",
        EntityType::Listing,
        || Ok(Query(category_listings(&sc())?)),
        "GET /categories/{categoryId}/listings",
    ),
    p(
        "beyond AP1",
        "a user's favorite listings, newest first",
        "Query",
        EntityType::Favorite,
        || Ok(Query(favorites_of(&suser("user"))?)),
        "GET /users/me/favorites",
    ),
    p(
        "beyond AP2",
        "active listings of a category by price, cheapest first",
        "Query",
        EntityType::Listing,
        || Ok(Query(listings_by_price(&sc(), Money::from_cents(1200), Money::from_cents(3400))?)),
        "GET /categories/{categoryId}/listings?sort=price&minPrice=&maxPrice=",
    ),
    p(
        "marketplace AP7, e-commerce AP1",
        "order by id",
        "GetItem",
        EntityType::Order,
        || Ok(Get(keys::order(&OrderId::from_ulid(su("R")))?)),
        "GET /orders/{orderId}",
    ),
    p(
        "marketplace AP8, e-commerce AP2",
        "a buyer's orders, newest first",
        "Query",
        EntityType::Order,
        || Ok(Query(buyer_orders(&suser("buyer"))?)),
        "GET /buyers/{buyerId}/orders",
    ),
    p(
        "marketplace AP9",
        "a seller's sales, newest first",
        "Query",
        EntityType::Order,
        || Ok(Query(seller_orders(&suser("seller"))?)),
        "GET /sellers/{sellerId}/orders",
    ),
    p(
        "marketplace AP10",
        "reviews about a user, newest first",
        "Query",
        EntityType::Review,
        || Ok(Query(reviews_about(&suser("user"))?)),
        "GET /users/{userId}/reviews",
    ),
    p(
        "marketplace AP11",
        "reviews written by a user, newest first",
        "Query",
        EntityType::Review,
        || Ok(Query(reviews_by(&suser("author"))?)),
        "GET /users/{userId}/reviews/written",
    ),
    p(
        "beyond AP3",
        "messages of an order, oldest first",
        "Query",
        EntityType::OrderMessage,
        || Ok(Query(order_messages(&OrderId::from_ulid(su("R")))?)),
        "GET /orders/{orderId}/messages",
    ),
    p(
        "e-commerce AP3",
        "orders by status, newest first",
        "Query x shards",
        EntityType::Order,
        || Ok(Query(orders_by_status_shard(OrderStatus::Pending, 7, None)?)),
        "GET /orders?status=",
    ),
    p(
        "e-commerce AP4",
        "items of an order",
        "Query",
        EntityType::OrderItem,
        || Ok(Query(order_items(&OrderId::from_ulid(su("R")))?)),
        "GET /orders/{orderId}/items",
    ),
    p(
        "e-commerce AP5",
        "one item of an order",
        "GetItem",
        EntityType::OrderItem,
        || Ok(Get(keys::order_item(&OrderId::from_ulid(su("R")), &su("E").to_string())?)),
        "GET /orders/{orderId}/items/{itemId}",
    ),
    p(
        "e-commerce AP6",
        "customer profile",
        "GetItem",
        EntityType::User,
        || Ok(Get(keys::user(&suser("user"))?)),
        "GET /users/{userId}",
    ),
    p(
        "e-commerce AP7",
        "recent orders, all statuses",
        "Query x statuses x shards",
        EntityType::Order,
        || Ok(Query(orders_by_status_shard(OrderStatus::Pending, 7, None)?)),
        "GET /orders",
    ),
    p(
        "e-commerce AP8",
        "orders in a date range",
        "Query x shards",
        EntityType::Order,
        || {
            Ok(Query(orders_by_status_shard(
                OrderStatus::Pending,
                7,
                Some((OrderId::from_ulid(su("A")), OrderId::from_ulid(su("H")))),
            )?))
        },
        "GET /orders?status=&from=&to=",
    ),
];
