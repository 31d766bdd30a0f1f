//! Every access pattern of the design, each one request: a `GetItem` on a
//! [`Key`] or a `Query` described by a [`KeyQuery`]. The key condition of each
//! pattern is written next to its name; [`PATTERNS`] lists them for the docs
//! and a test checks every function against its listed condition.

use crate::ids::{BrandId, CategoryId, Email, OrderId, UserId};
use crate::keys::{self, brand, category, listing, order, product, review, ItemKeys, Key};
use crate::schema::{EntityType, Index};
use crate::values::{ListingStatus, Money, OrderStatus};

/// A condition on the sort key of a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// `begins_with(sk, prefix)`.
    BeginsWith(String),
    /// `sk BETWEEN low AND high` (inclusive).
    Between(String, String),
}

/// One `Query` request: an index, a partition, a sort-key condition, an order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyQuery {
    /// Which index.
    pub index: Index,
    /// The partition key value.
    pub pk: String,
    /// The sort key condition.
    pub sk: SortKey,
    /// Descending sort key order (newest first for ULID keys).
    pub newest_first: bool,
}

impl KeyQuery {
    fn new(index: Index, pk: impl Into<String>, prefix: impl Into<String>) -> Self {
        KeyQuery { index, pk: pk.into(), sk: SortKey::BeginsWith(prefix.into()), newest_first: false }
    }

    fn newest_first(mut self) -> Self {
        self.newest_first = true;
        self
    }

    /// A stable description of the query, used to bind a pagination cursor to it.
    pub fn fingerprint(&self) -> String {
        let sk = match &self.sk {
            SortKey::BeginsWith(p) => format!("begins_with({p})"),
            SortKey::Between(l, h) => format!("between({l},{h})"),
        };
        format!("{}|{}|{}|{}", self.index, self.pk, sk, if self.newest_first { "desc" } else { "asc" })
    }

    /// Whether an item with these keys is selected by the query.
    pub fn selects(&self, item: &ItemKeys) -> bool {
        item.on(self.index).is_some_and(|k| {
            k.pk == self.pk
                && match &self.sk {
                    SortKey::BeginsWith(p) => k.sk.starts_with(p.as_str()),
                    SortKey::Between(l, h) => l <= &k.sk && &k.sk <= h,
                }
        })
    }

    /// Whether a key on the query's index (from a cursor) lies in the
    /// query's partition and sort-key range.
    pub fn contains(&self, key: &Key) -> bool {
        key.pk == self.pk
            && match &self.sk {
                SortKey::BeginsWith(p) => key.sk.starts_with(p.as_str()),
                SortKey::Between(l, h) => l <= &key.sk && &key.sk <= h,
            }
    }
}

// ---- Catalog (seed 003) -------------------------------------------------

/// Catalog AP1: all brands. `pk = BRANDS AND begins_with(sk, BRAND#)`.
pub fn brands() -> KeyQuery {
    KeyQuery::new(Index::Table, brand::PARTITION, brand::PREFIX)
}

/// Catalog AP2: all categories. `pk = CATEGORIES AND begins_with(sk, CATEGORY#)`.
pub fn categories() -> KeyQuery {
    KeyQuery::new(Index::Table, category::PARTITION, category::PREFIX)
}

/// Catalog AP6: a brand's products.
/// `GSI1: gsi1pk = BRAND#<brandId> AND begins_with(gsi1sk, CATEGORY#)`.
pub fn products_by_brand(brand: &BrandId) -> KeyQuery {
    KeyQuery::new(Index::Gsi1, product::brand_partition(brand), product::category_prefix(None))
}

/// Catalog AP7: a brand's products in one category.
/// `GSI1: gsi1pk = BRAND#<brandId> AND begins_with(gsi1sk, CATEGORY#<categoryId>#PRODUCT#)`.
pub fn products_by_brand_and_category(brand: &BrandId, category: &CategoryId) -> KeyQuery {
    KeyQuery::new(Index::Gsi1, product::brand_partition(brand), product::category_prefix(Some(category)))
}

/// Catalog AP8: a category's products (the same partition also holds
/// active listings; the `BRAND#` prefix selects products only).
/// `GSI2: gsi2pk = CATEGORY#<categoryId> AND begins_with(gsi2sk, BRAND#)`.
pub fn products_by_category(category: &CategoryId) -> KeyQuery {
    KeyQuery::new(Index::Gsi2, keys::category_partition(category), product::brand_prefix(None))
}

/// Catalog AP9: a category's products of one brand.
/// `GSI2: gsi2pk = CATEGORY#<categoryId> AND begins_with(gsi2sk, BRAND#<brandId>#PRODUCT#)`.
pub fn products_by_category_and_brand(category: &CategoryId, brand: &BrandId) -> KeyQuery {
    KeyQuery::new(Index::Gsi2, keys::category_partition(category), product::brand_prefix(Some(brand)))
}

// ---- Marketplace (seed 000) ---------------------------------------------

/// Marketplace AP2: a user by email (admin).
/// `GSI1: gsi1pk = USER_EMAIL#<email> AND begins_with(gsi1sk, USER#)`.
pub fn user_by_email(email: &Email) -> KeyQuery {
    KeyQuery::new(Index::Gsi1, keys::user::email_partition(email), keys::user::BY_EMAIL_PREFIX)
}

/// Marketplace AP4/AP5: a seller's listings, all statuses or one.
/// `GSI1: gsi1pk = SELLER#<sellerId> AND begins_with(gsi1sk, LISTING#[<status>#])`.
pub fn seller_listings(seller: &UserId, status: Option<ListingStatus>) -> KeyQuery {
    KeyQuery::new(Index::Gsi1, keys::seller_partition(seller), listing::status_prefix(status))
}

/// Marketplace AP6: a category's active listings, newest first (sparse GSI2).
/// `GSI2: gsi2pk = CATEGORY#<categoryId> AND begins_with(gsi2sk, LISTING#)`, descending.
pub fn category_listings(category: &CategoryId) -> KeyQuery {
    KeyQuery::new(Index::Gsi2, keys::category_partition(category), listing::PREFIX).newest_first()
}

/// Beyond the seeds: a category's active listings, cheapest first, with
/// inclusive price bounds (sparse GSI3, price in zero-padded cents).
/// `GSI3: gsi3pk = PRICE#<categoryId> AND gsi3sk BETWEEN LISTING#<min>#
/// AND LISTING#<max>#~`.
pub fn listings_by_price(category: &CategoryId, min: Money, max: Money) -> KeyQuery {
    let mut q = KeyQuery::new(Index::Gsi3, listing::price_partition(category), listing::PREFIX);
    // `~` sorts after every ULID character: the high bound takes every
    // listing priced exactly `max`.
    q.sk = SortKey::Between(listing::price_prefix(min), format!("{}~", listing::price_prefix(max)));
    q
}

/// Beyond the seeds: a user's favorite listings, newest first.
/// `GSI1: gsi1pk = FAVORITES#<userId> AND begins_with(gsi1sk, FAVORITE#)`, descending.
pub fn favorites_of(user: &UserId) -> KeyQuery {
    KeyQuery::new(Index::Gsi1, keys::favorite::newest_partition(user), keys::favorite::PREFIX).newest_first()
}

/// Marketplace AP8 / e-commerce AP2: a buyer's orders, newest first.
/// `GSI1: gsi1pk = BUYER#<buyerId> AND begins_with(gsi1sk, ORDER#)`, descending.
pub fn buyer_orders(buyer: &UserId) -> KeyQuery {
    KeyQuery::new(Index::Gsi1, order::buyer_partition(buyer), order::PREFIX).newest_first()
}

/// Marketplace AP9: a seller's sales, newest first.
/// `GSI2: gsi2pk = SELLER#<sellerId> AND begins_with(gsi2sk, ORDER#)`, descending.
pub fn seller_orders(seller: &UserId) -> KeyQuery {
    KeyQuery::new(Index::Gsi2, keys::seller_partition(seller), order::PREFIX).newest_first()
}

/// Marketplace AP10: reviews about a user, newest first (primary table).
/// `pk = USER#<userId> AND begins_with(sk, REVIEW#)`, descending.
pub fn reviews_about(user: &UserId) -> KeyQuery {
    KeyQuery::new(Index::Table, keys::user_partition(user), review::PREFIX).newest_first()
}

/// Marketplace AP11: reviews written by a user, newest first.
/// `GSI1: gsi1pk = AUTHOR#<authorId> AND begins_with(gsi1sk, REVIEW#)`, descending.
pub fn reviews_by(author: &UserId) -> KeyQuery {
    KeyQuery::new(Index::Gsi1, review::author_partition(author), review::PREFIX).newest_first()
}

// ---- E-commerce orders (seed 001) ---------------------------------------

/// E-commerce AP4: the items of an order.
/// `pk = ORDER#<orderId> AND begins_with(sk, ITEM#)`.
pub fn order_items(id: &OrderId) -> KeyQuery {
    KeyQuery::new(Index::Table, order::partition(id), keys::order_item::PREFIX)
}

/// Beyond the seeds: the messages of an order, oldest first.
/// `pk = ORDER#<orderId> AND begins_with(sk, MESSAGE#)`.
pub fn order_messages(id: &OrderId) -> KeyQuery {
    KeyQuery::new(Index::Table, order::partition(id), keys::order_message::PREFIX)
}

/// E-commerce AP3/AP7/AP8: one shard of a status, newest first, optionally
/// limited to a ULID range (from [`crate::time::ulid_bounds`]). One query per
/// shard; the reader fans out over `0..shard_count` and merges by id.
/// `GSI3: gsi3pk = STATUS#<status>#<shard> AND begins_with(gsi3sk, ORDER#)` or
/// `gsi3sk BETWEEN ORDER#<low> AND ORDER#<high>`, descending.
pub fn orders_by_status_shard(status: OrderStatus, shard: u16, range: Option<(OrderId, OrderId)>) -> KeyQuery {
    let mut q = KeyQuery::new(Index::Gsi3, order::status_partition(status, shard), order::PREFIX).newest_first();
    if let Some((low, high)) = range {
        q.sk = SortKey::Between(order::sort_value(&low), order::sort_value(&high));
    }
    q
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
            Request::Query(q) => {
                let sk = match &q.sk {
                    SortKey::BeginsWith(p) => format!("begins_with({}, {p})", q.index.sk()),
                    SortKey::Between(l, h) => format!("{} BETWEEN {l} AND {h}", q.index.sk()),
                };
                let order = if q.newest_first { ", descending" } else { "" };
                format!("{} = {}, {sk}{order}", q.index.pk(), q.pk)
            }
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
    pub request: fn() -> Request,
    /// The HTTP route serving it.
    pub route: &'static str,
}

impl Pattern {
    /// The index it reads.
    pub fn index(&self) -> Index {
        (self.request)().index()
    }

    /// The key condition with placeholders, rendered from the request.
    pub fn condition(&self) -> String {
        samples::placeholders(&(self.request)().condition())
    }
}

const fn p(
    id: &'static str,
    what: &'static str,
    operation: &'static str,
    entity: EntityType,
    request: fn() -> Request,
    route: &'static str,
) -> Pattern {
    Pattern { id, what, operation, entity, request, route }
}

use samples::{brand as sb, category as sc, email as se, ulid as su, user as suser};
use Request::{Get, Query};

/// Every access pattern, for the generated docs.
pub const PATTERNS: &[Pattern] = &[
    p("catalog AP1", "all brands", "Query", EntityType::Brand, || Query(brands()), "GET /brands"),
    p("catalog AP2", "all categories", "Query", EntityType::Category, || Query(categories()), "GET /categories"),
    p(
        "catalog AP3",
        "product by id",
        "GetItem",
        EntityType::Product,
        || Get(product::key(&crate::ids::ProductId::from_ulid(su("P")))),
        "GET /products/{productId}",
    ),
    p(
        "catalog AP4-5",
        "change stock (never below zero)",
        "TransactWriteItems (token) + GetItem",
        EntityType::Product,
        || Get(product::key(&crate::ids::ProductId::from_ulid(su("P")))),
        "POST /products/{productId}/stock",
    ),
    p(
        "catalog AP6",
        "products of a brand",
        "Query",
        EntityType::Product,
        || Query(products_by_brand(&sb())),
        "GET /brands/{brandId}/products",
    ),
    p(
        "catalog AP7",
        "products of a brand in a category",
        "Query",
        EntityType::Product,
        || Query(products_by_brand_and_category(&sb(), &sc())),
        "GET /brands/{brandId}/products?categoryId=",
    ),
    p(
        "catalog AP8",
        "products of a category",
        "Query",
        EntityType::Product,
        || Query(products_by_category(&sc())),
        "GET /categories/{categoryId}/products",
    ),
    p(
        "catalog AP9",
        "products of a category by a brand",
        "Query",
        EntityType::Product,
        || Query(products_by_category_and_brand(&sc(), &sb())),
        "GET /categories/{categoryId}/products?brandId=",
    ),
    p(
        "marketplace AP1",
        "user by id",
        "GetItem",
        EntityType::User,
        || Get(keys::user::key(&suser("user"))),
        "GET /users/{userId}",
    ),
    p(
        "marketplace AP2",
        "user by email (admin)",
        "Query",
        EntityType::User,
        || Query(user_by_email(&se())),
        "GET /users?email=",
    ),
    p(
        "marketplace AP3",
        "listing by id",
        "GetItem",
        EntityType::Listing,
        || Get(listing::key(&crate::ids::ListingId::from_ulid(su("K")))),
        "GET /listings/{listingId}",
    ),
    p(
        "marketplace AP4",
        "a seller's listings, any status",
        "Query",
        EntityType::Listing,
        || Query(seller_listings(&suser("seller"), None)),
        "GET /sellers/{sellerId}/listings",
    ),
    p(
        "marketplace AP5",
        "a seller's active listings",
        "Query",
        EntityType::Listing,
        || Query(seller_listings(&suser("seller"), Some(ListingStatus::Active))),
        "GET /sellers/{sellerId}/listings?status=active",
    ),
    p(
        "marketplace AP6",
        "active listings of a category, newest first",
        "Query",
        EntityType::Listing,
        || Query(category_listings(&sc())),
        "GET /categories/{categoryId}/listings",
    ),
    p(
        "beyond AP1",
        "a user's favorite listings, newest first",
        "Query",
        EntityType::Favorite,
        || Query(favorites_of(&suser("user"))),
        "GET /users/me/favorites",
    ),
    p(
        "beyond AP2",
        "active listings of a category by price, cheapest first",
        "Query",
        EntityType::Listing,
        || Query(listings_by_price(&sc(), Money::from_cents(1200), Money::from_cents(3400))),
        "GET /categories/{categoryId}/listings?sort=price&minPrice=&maxPrice=",
    ),
    p(
        "marketplace AP7, e-commerce AP1",
        "order by id",
        "GetItem",
        EntityType::Order,
        || Get(order::key(&OrderId::from_ulid(su("R")))),
        "GET /orders/{orderId}",
    ),
    p(
        "marketplace AP8, e-commerce AP2",
        "a buyer's orders, newest first",
        "Query",
        EntityType::Order,
        || Query(buyer_orders(&suser("buyer"))),
        "GET /buyers/{buyerId}/orders",
    ),
    p(
        "marketplace AP9",
        "a seller's sales, newest first",
        "Query",
        EntityType::Order,
        || Query(seller_orders(&suser("seller"))),
        "GET /sellers/{sellerId}/orders",
    ),
    p(
        "marketplace AP10",
        "reviews about a user, newest first",
        "Query",
        EntityType::Review,
        || Query(reviews_about(&suser("user"))),
        "GET /users/{userId}/reviews",
    ),
    p(
        "marketplace AP11",
        "reviews written by a user, newest first",
        "Query",
        EntityType::Review,
        || Query(reviews_by(&suser("author"))),
        "GET /users/{userId}/reviews/written",
    ),
    p(
        "beyond AP3",
        "messages of an order, oldest first",
        "Query",
        EntityType::OrderMessage,
        || Query(order_messages(&OrderId::from_ulid(su("R")))),
        "GET /orders/{orderId}/messages",
    ),
    p(
        "e-commerce AP3",
        "orders by status, newest first",
        "Query x shards",
        EntityType::Order,
        || Query(orders_by_status_shard(OrderStatus::Pending, 7, None)),
        "GET /orders?status=",
    ),
    p(
        "e-commerce AP4",
        "items of an order",
        "Query",
        EntityType::OrderItem,
        || Query(order_items(&OrderId::from_ulid(su("R")))),
        "GET /orders/{orderId}/items",
    ),
    p(
        "e-commerce AP5",
        "one item of an order",
        "GetItem",
        EntityType::OrderItem,
        || Get(keys::order_item::key(&OrderId::from_ulid(su("R")), &su("E").to_string())),
        "GET /orders/{orderId}/items/{itemId}",
    ),
    p(
        "e-commerce AP6",
        "customer profile",
        "GetItem",
        EntityType::User,
        || Get(keys::user::key(&suser("user"))),
        "GET /users/{userId}",
    ),
    p(
        "e-commerce AP7",
        "recent orders, all statuses",
        "Query x statuses x shards",
        EntityType::Order,
        || Query(orders_by_status_shard(OrderStatus::Pending, 7, None)),
        "GET /orders",
    ),
    p(
        "e-commerce AP8",
        "orders in a date range",
        "Query x shards",
        EntityType::Order,
        || {
            Query(orders_by_status_shard(
                OrderStatus::Pending,
                7,
                Some((OrderId::from_ulid(su("A")), OrderId::from_ulid(su("H")))),
            ))
        },
        "GET /orders?status=&from=&to=",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::tests::any_item;
    use proptest::prelude::*;

    fn ids() -> (BrandId, CategoryId, UserId, Email, OrderId) {
        (
            "acme".parse().unwrap(),
            "pottery".parse().unwrap(),
            "u1".parse().unwrap(),
            "a@b.co".parse().unwrap(),
            OrderId::generate(),
        )
    }

    /// Each query function paired with the entity it must return.
    fn queries() -> Vec<(&'static str, KeyQuery, EntityType)> {
        let (b, c, u, e, o) = ids();
        vec![
            ("catalog AP1", brands(), EntityType::Brand),
            ("catalog AP2", categories(), EntityType::Category),
            ("catalog AP6", products_by_brand(&b), EntityType::Product),
            ("catalog AP7", products_by_brand_and_category(&b, &c), EntityType::Product),
            ("catalog AP8", products_by_category(&c), EntityType::Product),
            ("catalog AP9", products_by_category_and_brand(&c, &b), EntityType::Product),
            ("marketplace AP2", user_by_email(&e), EntityType::User),
            ("marketplace AP4", seller_listings(&u, None), EntityType::Listing),
            ("marketplace AP5", seller_listings(&u, Some(ListingStatus::Active)), EntityType::Listing),
            ("marketplace AP6", category_listings(&c), EntityType::Listing),
            ("beyond AP2", listings_by_price(&c, Money::from_cents(0), Money::MAX), EntityType::Listing),
            ("marketplace AP8, e-commerce AP2", buyer_orders(&u), EntityType::Order),
            ("marketplace AP9", seller_orders(&u), EntityType::Order),
            ("marketplace AP10", reviews_about(&u), EntityType::Review),
            ("marketplace AP11", reviews_by(&u), EntityType::Review),
            ("e-commerce AP3", orders_by_status_shard(OrderStatus::Pending, 3, None), EntityType::Order),
            ("e-commerce AP4", order_items(&o), EntityType::OrderItem),
            ("beyond AP3", order_messages(&o), EntityType::OrderMessage),
            ("beyond AP1", favorites_of(&u), EntityType::Favorite),
            ("e-commerce AP8", orders_by_status_shard(OrderStatus::Pending, 3, Some((o, o))), EntityType::Order),
        ]
    }

    /// Every documented pattern renders from its own request: no sample is
    /// left unreplaced, the index and entity agree with the query functions
    /// the handlers call, and every query function is documented.
    #[test]
    fn patterns_render_from_their_requests() {
        for pattern in PATTERNS {
            let condition = pattern.condition();
            assert!(!condition.contains("sample"), "{}: {condition}", pattern.id);
            assert!(!condition.contains("0000000"), "{}: {condition}", pattern.id);
        }
        for (id, q, entity) in queries() {
            let doc = PATTERNS.iter().find(|p| p.id == id).unwrap_or_else(|| panic!("{id} undocumented"));
            assert_eq!((doc.index(), doc.entity), (q.index, entity), "{id}");
            let Request::Query(documented) = (doc.request)() else { panic!("{id} is documented as a GetItem") };
            let shape = |q: &KeyQuery| {
                let kind = matches!(q.sk, SortKey::Between(..));
                (q.index, q.pk.split('#').next().map(str::to_owned), kind, q.newest_first)
            };
            assert_eq!(shape(&q), shape(&documented), "{id}");
        }
        let ap6 = PATTERNS.iter().find(|p| p.id == "catalog AP6").unwrap();
        assert_eq!(ap6.condition(), "gsi1pk = BRAND#<brandId>, begins_with(gsi1sk, CATEGORY#)");
        let ap8 = PATTERNS.iter().find(|p| p.id == "e-commerce AP8").unwrap();
        assert_eq!(
            ap8.condition(),
            "gsi3pk = STATUS#<status>#<shard>, gsi3sk BETWEEN ORDER#<low> AND ORDER#<high>, descending"
        );
    }

    proptest! {
        /// A query never selects an item of another entity: a shared
        /// partition (such as GSI2's `CATEGORY#`) is split by sort-key prefix.
        #[test]
        fn queries_select_only_their_entity((item, _) in any_item()) {
            for (id, q, entity) in queries() {
                if item.entity != entity {
                    prop_assert!(!q.selects(&item), "{id} selects a {:?}", item.entity);
                }
            }
        }

        /// A category's product queries and its listing browse split one
        /// partition between them.
        #[test]
        fn category_partition_is_split_by_prefix(b in "[a-z]{1,8}", l in any::<u128>()) {
            let (_, c, u, _, _) = ids();
            let brand: BrandId = b.parse().unwrap();
            let pid = crate::ids::ProductId::from_ulid(ulid::Ulid::from_parts(1, l));
            let lid = crate::ids::ListingId::from_ulid(ulid::Ulid::from_parts(1, l));
            let product = crate::keys::product::item_keys(&pid, &brand, &c);
            let listing = crate::keys::listing::browse_keys(&lid, &u, ListingStatus::Active, &c, crate::values::Money::from_cents(2800));
            prop_assert!(products_by_category(&c).selects(&product));
            prop_assert!(!products_by_category(&c).selects(&listing));
            prop_assert!(category_listings(&c).selects(&listing));
            prop_assert!(!category_listings(&c).selects(&product));
        }
    }

    #[test]
    fn fingerprints_differ_between_queries() {
        let qs = queries();
        for (i, (a, qa, _)) in qs.iter().enumerate() {
            for (b, qb, _) in &qs[i + 1..] {
                assert_ne!(qa.fingerprint(), qb.fingerprint(), "{a} vs {b}");
            }
        }
    }
}
