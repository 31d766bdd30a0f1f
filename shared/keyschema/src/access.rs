//! The queries of the access patterns, each one request described by a
//! [`KeyQuery`] and built from the index declarations of
//! [`crate::entities`] (the partition and the sort-key prefix from the
//! leading composites given); a pattern that is a `GetItem` reads a key of
//! [`crate::keys`]. The registry, [`crate::patterns::PATTERNS`], names each
//! pattern and renders its key condition into docs/key-schema.md; the key
//! templates these comments restate are checked against the declarations
//! (tools/docs, `doc_comments`).

use domain::ids::{BrandId, CategoryId, Email, ListingId, OrderId, ProductId, UserId};
use domain::values::{ListingStatus, OrderStatus};

use crate::decl::{EntityDecl, IndexDecl, KeyDecl, SchemaError};
use crate::entities::{
    brand, category, details, favorite, listing, order, order_item, order_message, product, review, user,
};
use crate::query::{DetailsQuery, EntityQuery, KeyQuery};
use crate::records;
use crate::table::{EntityType, Index};
use crate::value::Value;
use domain::model;

pub use crate::query::SortKey;

/// A query of `E`s: what a typed read of it decodes ([`EntityQuery`]).
fn typed<E>(query: Result<KeyQuery, SchemaError>) -> Result<EntityQuery<E>, SchemaError> {
    query.map(EntityQuery::new)
}

fn v(part: impl std::fmt::Display) -> Value {
    Value::S(part.to_string())
}

fn query(entity: EntityType, key: &KeyDecl, parts: &[(&str, Value)]) -> Result<KeyQuery, SchemaError> {
    key.query(parts).map_err(|source| SchemaError::Template { entity, index: "query", source })
}

/// One partition of a sharded index, newest first, optionally limited to
/// the items whose id (`field`) lies in `range`.
fn shard_newest_first(
    entity: EntityType,
    index: &IndexDecl,
    partition: &[(&str, Value)],
    field: &str,
    range: Option<(Value, Value)>,
) -> Result<KeyQuery, SchemaError> {
    let q = match range {
        None => query(entity, &index.key, partition)?,
        Some((low, high)) => index
            .key
            .between(partition, &[(field, low)], &[(field, high)])
            .map_err(|source| SchemaError::Template { entity, index: index.name, source })?,
    };
    Ok(q.newest_first())
}

// ---- Catalog (seed 003) -------------------------------------------------

/// Catalog AP1: all brands. `pk = BRANDS AND begins_with(sk, BRAND#)`.
pub fn brands() -> Result<EntityQuery<model::Brand>, SchemaError> {
    typed(brand::ENTITY.query(&[]))
}

/// Catalog AP2: all categories. `pk = CATEGORIES AND begins_with(sk, CATEGORY#)`.
pub fn categories() -> Result<EntityQuery<model::Category>, SchemaError> {
    typed(category::ENTITY.query(&[]))
}

/// Catalog AP6: a brand's products.
/// `GSI6: gsi1pk = BRAND#<brandId> AND begins_with(gsi1sk, CATEGORY#)`.
pub fn products_by_brand(brand: &BrandId) -> Result<EntityQuery<model::Product>, SchemaError> {
    products(&product::BY_BRAND, &[("brandId", v(brand))])
}

/// A query of products on one of their indexes.
fn products(index: &IndexDecl, parts: &[(&str, Value)]) -> Result<EntityQuery<model::Product>, SchemaError> {
    typed(query(EntityType::Product, &index.key, parts))
}

/// Catalog AP7: a brand's products in one category.
/// `GSI6: gsi1pk = BRAND#<brandId> AND begins_with(gsi1sk, CATEGORY#<categoryId>#PRODUCT#)`.
pub fn products_by_brand_and_category(
    brand: &BrandId,
    category: &CategoryId,
) -> Result<EntityQuery<model::Product>, SchemaError> {
    products(&product::BY_BRAND, &[("brandId", v(brand)), ("categoryId", v(category))])
}

/// Catalog AP8: a category's products (its listings are in partitions of
/// their own, `CATEGORY#<categoryId>#<shard>`; the `BRAND#` prefix selects
/// products only).
/// `GSI7: gsi2pk = CATEGORY#<categoryId> AND begins_with(gsi2sk, BRAND#)`.
pub fn products_by_category(category: &CategoryId) -> Result<EntityQuery<model::Product>, SchemaError> {
    products(&product::BY_CATEGORY, &[("categoryId", v(category))])
}

/// Catalog AP9: a category's products of one brand.
/// `GSI7: gsi2pk = CATEGORY#<categoryId> AND begins_with(gsi2sk, BRAND#<brandId>#PRODUCT#)`.
pub fn products_by_category_and_brand(
    category: &CategoryId,
    brand: &BrandId,
) -> Result<EntityQuery<model::Product>, SchemaError> {
    products(&product::BY_CATEGORY, &[("categoryId", v(category)), ("brandId", v(brand))])
}

/// An item and its details ([`crate::entities::details`]) in one `Query`:
/// the item's partition, and the beginning its sort key and the details'
/// share (`#`), both derived from the two declarations.
fn with_details<E, D>(
    item: &EntityDecl,
    details: &EntityDecl,
    parts: &[(&str, Value)],
) -> Result<DetailsQuery<E, D>, SchemaError> {
    let pk = item.key(parts)?.pk;
    let shared = item.key.sk.chars().zip(details.key.sk.chars()).take_while(|(a, b)| a == b).count();
    let prefix: String = item.key.sk.chars().take(shared).collect();
    Ok(DetailsQuery::new(KeyQuery { index: Index::Table, pk, sk: SortKey::BeginsWith(prefix), newest_first: false }))
}

/// Catalog AP3: a product with its details (its description); catalog
/// AP4-5 reads it again after a stock change.
/// `pk = PRODUCT#<productId> AND begins_with(sk, #)`.
pub fn product_with_details(
    id: &ProductId,
) -> Result<DetailsQuery<model::Product, model::ProductDetails>, SchemaError> {
    with_details(&product::ENTITY, &details::PRODUCT, &[("productId", v(id))])
}

/// Beyond the seeds: a product's shares of stock beyond the first (the
/// first is on the product item), by shard.
/// `pk = PRODUCT#<productId> AND begins_with(sk, #STOCK#)`.
pub fn product_shares(id: &ProductId) -> Result<EntityQuery<domain::stock::ProductStock>, SchemaError> {
    typed(query(EntityType::ProductStock, &product::STOCK.key, &[("productId", v(id))]))
}

// ---- Marketplace (seed 000) ---------------------------------------------

/// Marketplace AP3: a listing with its details (its description).
/// `pk = LISTING#<listingId> AND begins_with(sk, #)`.
pub fn listing_with_details(
    id: &ListingId,
) -> Result<DetailsQuery<model::Listing, model::ListingDetails>, SchemaError> {
    with_details(&listing::ENTITY, &details::LISTING, &[("listingId", v(id))])
}

/// Marketplace AP2: a user by email (admin).
/// `GSI6: gsi1pk = USER_EMAIL#<email> AND begins_with(gsi1sk, USER#)`.
pub fn user_by_email(email: &Email) -> Result<EntityQuery<model::User>, SchemaError> {
    typed(query(EntityType::User, &user::BY_EMAIL.key, &[("email", v(email))]))
}

/// Marketplace AP4/AP5: a seller's listings, all statuses or one.
/// `GSI6: gsi1pk = SELLER#<sellerId> AND begins_with(gsi1sk, LISTING#[<status>#])`.
pub fn seller_listings(
    seller: &UserId,
    status: Option<ListingStatus>,
) -> Result<EntityQuery<model::Listing>, SchemaError> {
    let mut parts = vec![("sellerId", v(seller))];
    parts.extend(status.map(|s| ("status", v(s))));
    typed(query(EntityType::Listing, &listing::BY_SELLER.key, &parts))
}

/// Marketplace AP6: one shard of a category's active listings, newest
/// first (sparse GSI7, write-sharded), optionally limited to a range of
/// ids. One query per shard; the reader fans out over the category's
/// `0..listingShards` and merges by id (`fanout`).
/// `GSI7: gsi2pk = CATEGORY#<categoryId>#<shard> AND begins_with(gsi2sk, LISTING#)` or
/// `gsi2sk BETWEEN LISTING#<low> AND LISTING#<high>`, descending.
pub fn category_listings(
    category: &CategoryId,
    shard: u16,
    range: Option<(ListingId, ListingId)>,
) -> Result<EntityQuery<model::Listing>, SchemaError> {
    let partition = [("categoryId", v(category)), ("shard", v(shard))];
    let range = range.map(|(low, high)| (v(low), v(high)));
    typed(shard_newest_first(EntityType::Listing, &listing::BROWSE, &partition, "listingId", range))
}

/// Beyond AP2 (beyond the seeds): one shard of a category's active listings by price,
/// cheapest first (sparse GSI8, price in zero-padded cents, write-sharded
/// as `browse`), from `(cents, id)` to `(cents, id)`, both inclusive; the
/// reader fans out and merges by price, then id.
/// `GSI8: gsi3pk = PRICE#<categoryId>#<shard> AND gsi3sk BETWEEN
/// LISTING#<cents>#<id> AND LISTING#<cents>#<id>`.
pub fn listings_by_price(
    category: &CategoryId,
    shard: u16,
    from: (u64, ListingId),
    to: (u64, ListingId),
) -> Result<EntityQuery<model::Listing>, SchemaError> {
    let amount = |cents: u64| Value::N(format!("{}.{:02}", cents / 100, cents % 100));
    typed(
        listing::BY_PRICE
            .key
            .between(
                &[("categoryId", v(category)), ("shard", v(shard))],
                &[("price", amount(from.0)), ("listingId", v(from.1))],
                &[("price", amount(to.0)), ("listingId", v(to.1))],
            )
            .map_err(|source| SchemaError::Template { entity: EntityType::Listing, index: "by_price", source }),
    )
}

/// Beyond AP4 (beyond the seeds): the active listings of one geohash cell (a prefix
/// within one partition: [`domain::geo::partition::partition`]; the
/// partition of a cell holding dense cells holds none of theirs) in
/// geohash order, after a
/// sort key and below a smaller cell if given; the reader sweeps the
/// cells of each ring in key order (`fanout::nearest`).
/// `GSI5` (the cards): `gsi4pk = GEO#<geohash:cell> AND begins_with(gsi4sk, <geohash prefix>)` or
/// `gsi4sk BETWEEN <after>! AND <geohash prefix>~` (`<prefix>` for no after,
/// `<before>` for a cell below which).
pub fn listings_near(
    prefix: &str,
    after: Option<&str>,
    before: Option<&str>,
) -> Result<EntityQuery<model::Listing>, SchemaError> {
    let mut q = query(EntityType::Listing, &listing::NEAR.key, &[("geohash", v(prefix))])?;
    q.sk = near_sort_key(prefix, after, before);
    typed(Ok(q))
}

/// [`listings_near`] of a cell within a dense cell, in the partition that
/// held it before the cell was declared dense (its first
/// [`domain::geo::CELL_LEN`] characters), where a listing not written since
/// keeps its key until a repair moves it (docs/operations.md, "A dense
/// cell"). The key is the declaration's for a geohash of that partition
/// beside the dense cells.
pub fn listings_near_before_dense(
    prefix: &str,
    after: Option<&str>,
    before: Option<&str>,
) -> Result<EntityQuery<model::Listing>, SchemaError> {
    use domain::geo::partition::{is_dense, DENSE_LEN};
    let invalid = |why: &'static str| SchemaError::Template {
        entity: EntityType::Listing,
        index: "GSI5",
        source: crate::template::TemplateError::Invalid { field: "geohash".to_owned(), why },
    };
    let cell = prefix.get(..DENSE_LEN).filter(|_| is_dense(prefix)).ok_or_else(|| invalid("not in a dense cell"))?;
    let beside = "0123456789bcdefghjkmnpqrstuvwxyz"
        .chars()
        .map(|c| format!("{}{c}", &cell[..domain::geo::CELL_LEN]))
        .find(|probe| !is_dense(probe))
        .ok_or_else(|| invalid("every cell beside it is dense"))?;
    let mut q = query(EntityType::Listing, &listing::NEAR.key, &[("geohash", v(&beside))])?;
    q.sk = near_sort_key(prefix, after, before);
    typed(Ok(q))
}

/// The sort key condition of a near query of `prefix`.
fn near_sort_key(prefix: &str, after: Option<&str>, before: Option<&str>) -> SortKey {
    match (after, before) {
        (None, None) => SortKey::BeginsWith(prefix.to_owned()),
        // `!` sorts below every character of a key part, `~` above; a key
        // below a cell's is below the cell itself (no key is a bare cell).
        (after, before) => SortKey::Between(
            after.map_or_else(|| prefix.to_owned(), |a| format!("{a}!")),
            before.map_or_else(|| format!("{prefix}~"), str::to_owned),
        ),
    }
}

/// Beyond the seeds: the partitions of a dense cell that hold listings, at
/// most 32 (near me queries no other partition of the cell).
/// `pk = GEOCELLS#<dense> AND begins_with(sk, CELL#)`.
pub fn near_cells(dense: &str) -> Result<EntityQuery<records::NearCell>, SchemaError> {
    typed(Ok(crate::entities::near_cell::ENTITY.query(&[("dense", v(dense))])?))
}

/// Beyond AP5 (beyond the seeds): the active listings posted in a search
/// term's list (the first 1 to 3 characters of an indexed word of the title
/// and `*`, and for one character the split's digit), newest first; the
/// reader reads the rarest list of a query and filters (`fanout::search`).
/// `pk = SEARCH#<term> AND begins_with(sk, LISTING#)`, descending.
pub fn postings(term: &str) -> Result<EntityQuery<records::Posting>, SchemaError> {
    typed(Ok(crate::entities::posting::ENTITY.query(&[("term", v(term))])?.newest_first()))
}

/// Beyond AP1 (beyond the seeds): a user's favorite listings, newest first.
/// `GSI6: gsi1pk = FAVORITES#<userId> AND begins_with(gsi1sk, FAVORITE#)`, descending.
pub fn favorites_of(user: &UserId) -> Result<EntityQuery<model::Favorite>, SchemaError> {
    typed(Ok(query(EntityType::Favorite, &favorite::NEWEST.key, &[("userId", v(user))])?.newest_first()))
}

/// Marketplace AP8 / e-commerce AP2: a buyer's orders, newest first.
/// `GSI6: gsi1pk = BUYER#<buyerId> AND begins_with(gsi1sk, ORDER#)`, descending.
pub fn buyer_orders(buyer: &UserId) -> Result<EntityQuery<model::Order>, SchemaError> {
    typed(Ok(query(EntityType::Order, &order::BY_BUYER.key, &[("buyerId", v(buyer))])?.newest_first()))
}

/// Marketplace AP9: a seller's sales, newest first.
/// `GSI7: gsi2pk = SELLER#<sellerId> AND begins_with(gsi2sk, ORDER#)`, descending.
pub fn seller_orders(seller: &UserId) -> Result<EntityQuery<model::Order>, SchemaError> {
    typed(Ok(query(EntityType::Order, &order::BY_SELLER.key, &[("sellerId", v(seller))])?.newest_first()))
}

/// Marketplace AP10: reviews about a user, newest first (primary table).
/// `pk = USER#<userId> AND begins_with(sk, REVIEW#)`, descending.
pub fn reviews_about(user: &UserId) -> Result<EntityQuery<model::Review>, SchemaError> {
    typed(Ok(review::ENTITY.query(&[("reviewedUserId", v(user))])?.newest_first()))
}

/// Marketplace AP11: reviews written by a user, newest first.
/// `GSI6: gsi1pk = AUTHOR#<authorId> AND begins_with(gsi1sk, REVIEW#)`, descending.
pub fn reviews_by(author: &UserId) -> Result<EntityQuery<model::Review>, SchemaError> {
    typed(Ok(query(EntityType::Review, &review::BY_AUTHOR.key, &[("authorId", v(author))])?.newest_first()))
}

// ---- E-commerce orders (seed 001) ---------------------------------------

/// E-commerce AP4: an order with the items beside it (those it does not
/// hold: [`model::Order::held_items`]), and nothing else of its partition
/// (its messages sort after them), in one query.
/// `pk = ORDER#<orderId> AND sk BETWEEN #METADATA AND ITEM$`.
pub fn order_with_items(id: &OrderId) -> Result<DetailsQuery<model::Order, model::OrderItem>, SchemaError> {
    let parts = [("orderId", v(id))];
    let pk = order::ENTITY.key(&parts)?.pk;
    let low = order::ENTITY.key(&parts)?.sk;
    // Just past every `ITEM#...`: the item template's literal prefix, its
    // last character the next one (`ITEM$`).
    let mut high = order_item::ENTITY.key.sk.split('<').next().unwrap_or_default().to_owned();
    let last = high.pop().map_or(char::MAX, |c| char::from_u32(u32::from(c) + 1).unwrap_or(char::MAX));
    high.push(last);
    let sk = crate::query::SortKey::Between(low, high);
    Ok(DetailsQuery::new(KeyQuery { index: Index::Table, pk, sk, newest_first: false }))
}

/// Beyond AP3 (beyond the seeds): the messages of an order, oldest first.
/// `pk = ORDER#<orderId> AND begins_with(sk, MESSAGE#)`.
pub fn order_messages(id: &OrderId) -> Result<EntityQuery<model::OrderMessage>, SchemaError> {
    typed(order_message::ENTITY.query(&[("orderId", v(id))]))
}

// ---- Maintenance (the reconcile job) ------------------------------------

/// The rating slots of a user's aggregates.
/// `pk = USER#<userId> AND begins_with(sk, RATEDBY#)`.
pub fn rating_slots_of(user: &UserId) -> Result<KeyQuery, SchemaError> {
    crate::entities::rating_slot::ENTITY.query(&[("reviewedUserId", v(user))])
}

/// One shard of the rating slots of a category.
/// `pk = CATRATED#<categoryId>#<shard> AND begins_with(sk, PAIR#)`.
pub fn category_rating_slots_of(category: &CategoryId, shard: u16) -> Result<KeyQuery, SchemaError> {
    crate::entities::category_rating_slot::ENTITY.query(&[("categoryId", v(category)), ("shard", v(shard))])
}

/// The rating markers of a user's aggregates (retired).
/// `pk = USER#<userId> AND begins_with(sk, RATED#)`.
pub fn rating_markers_of(user: &UserId) -> Result<KeyQuery, SchemaError> {
    crate::entities::rating_marker::ENTITY.query(&[("reviewedUserId", v(user))])
}

/// The parts of an aggregate (`aggregate`: its kind's tag; `of`: the holder's id).
/// `pk = PARTS#<aggregate>#<of> AND begins_with(sk, PART#)`.
pub fn aggregate_parts(aggregate: &str, of: &str) -> Result<KeyQuery, SchemaError> {
    crate::entities::aggregate_part::ENTITY.query(&[("aggregate", v(aggregate)), ("of", v(of))])
}

/// One shard of the favorite markers of a listing.
/// `pk = FAVED#<listingId>#<shard> AND begins_with(sk, USER#)`.
pub fn favorite_markers_of(listing: &domain::ids::ListingId, shard: u16) -> Result<KeyQuery, SchemaError> {
    crate::entities::favorite_marker::ENTITY.query(&[("listingId", v(listing)), ("shard", v(shard))])
}

/// E-commerce AP3/AP7/AP8: one shard of a status, newest first, optionally
/// limited to a ULID range (from `domain::time::ulid_bounds`). One query per
/// shard; the reader fans out over `0..shard_count` and merges by id.
/// `GSI8: gsi3pk = STATUS#<status>#<shard> AND begins_with(gsi3sk, ORDER#)` or
/// `gsi3sk BETWEEN ORDER#<low> AND ORDER#<high>`, descending.
pub fn orders_by_status_shard(
    status: OrderStatus,
    shard: u16,
    range: Option<(OrderId, OrderId)>,
) -> Result<EntityQuery<model::Order>, SchemaError> {
    let partition = [("status", v(status)), ("shard", v(shard))];
    let range = range.map(|(low, high)| (v(low), v(high)));
    typed(shard_newest_first(EntityType::Order, &order::BY_STATUS, &partition, "orderId", range))
}

/// One shard of the rating markers of a category.
/// `pk = CATRATED#<categoryId>#<shard> AND begins_with(sk, REVIEW#)`.
pub fn category_rating_markers_of(category: &CategoryId, shard: u16) -> Result<KeyQuery, SchemaError> {
    crate::entities::category_rating_marker::ENTITY.query(&[("categoryId", v(category)), ("shard", v(shard))])
}

/// A maintenance job's checkpoints, one per scan segment.
/// `pk = MAINTENANCE#<job> AND begins_with(sk, SEGMENT#)`.
pub fn checkpoints_of(job: &str) -> Result<KeyQuery, SchemaError> {
    crate::entities::checkpoint::ENTITY.query(&[("job", v(job))])
}
