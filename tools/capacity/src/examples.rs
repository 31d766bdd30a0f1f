//! The entities one evaluation draws ([`Ids`]) and the example items the
//! request kinds write and change (a listing, a user, a product, an order
//! of those ids), and their attributes.

use domain::ids::{BrandId, CategoryId, ListingId, OrderId, ProductId, ReviewId, UserId};
use domain::model::{ListingStatus, Money, OrderStatus, UserRole};
use keyschema::value::Attrs;

/// The entities one evaluation uses: the hot ones of each skew dimension,
/// and fresh ids (new listings, orders, buyers) that spread over the table.
pub struct Ids {
    pub category: CategoryId,
    /// The category's `listingShards`.
    pub category_shards: u16,
    pub brand: BrandId,
    pub seller: UserId,
    pub listing: ListingId,
    pub product: ProductId,
    /// The product's `stockShards`.
    pub product_shards: u16,
    /// The share of its stock this draw's order takes from.
    pub stock_shard: u16,
    pub buyer: UserId,
    pub new_listing: ListingId,
    /// The listing an order buys: each is sold once, so never a hot one.
    pub sold_listing: ListingId,
    pub order: OrderId,
    pub review: ReviewId,
    /// The list a new listing's posting of the drawn term is in: of the
    /// hottest term (`s`, in a quarter of the corpus's titles) in its
    /// share, a cold one otherwise.
    pub term: String,
    /// The lists a search reads the heads of: a hot draw is `q=s` alone
    /// (the four lists of `s`), a cold one two lists.
    pub searched: Vec<String>,
    /// Where listings are made and looked for near: in the hot city in its
    /// share (each draw a place of the city's, as its listings spread), a
    /// place of its own otherwise.
    pub place: domain::geo::Location,
    /// Whether the draw is in the hot city.
    pub in_city: bool,
    /// Whether the draw's listing sale is accepted (confirmed) rather than
    /// cancelled while pending: the mix's listing orders less its cancels
    /// (every cancel is of a pending listing order here), as a share of
    /// the draws.
    pub sale_accepted: bool,
}

pub(crate) fn attrs<E: serde::Serialize>(record: &E) -> Attrs {
    keyschema::value::attrs_of(record).unwrap_or_default()
}

pub(crate) const NOW: &str = "2026-11-23T00:00:00.000Z";

pub(crate) fn listing(ids: &Ids, id: &ListingId, status: ListingStatus) -> domain::model::Listing {
    domain::model::Listing {
        home: None,
        listing_id: *id,
        seller_id: ids.seller.clone(),
        title: "A title".into(),
        price: Money::from_cents(2500),
        category_id: ids.category.clone(),
        shard: domain::shard::listing_shard(id, ids.category_shards),
        description: None,
        location: None,
        geohash: None,
        status,
        favorite_count: 3,
        created_at: NOW.into(),
        updated_at: NOW.into(),
    }
    .locate(Some(ids.place))
}

pub(crate) fn user(id: &UserId, role: UserRole) -> domain::model::User {
    domain::model::User {
        home: None,
        user_id: id.clone(),
        name: "A name".into(),
        email: format!("{id}@example.com").parse().unwrap_or_else(|_| "x@example.com".parse().expect("an email")),
        role,
        rating_sum: 40,
        review_count: 10,
        created_at: NOW.into(),
        updated_at: NOW.into(),
    }
}

pub(crate) fn product(ids: &Ids) -> domain::model::Product {
    domain::model::Product {
        product_id: ids.product,
        name: "A product".into(),
        brand_id: ids.brand.clone(),
        category_id: ids.category.clone(),
        price: Money::from_cents(1999),
        stock_level: 500,
        stock_shards: 1,
        description: None,
        created_at: NOW.into(),
        updated_at: NOW.into(),
    }
}

pub(crate) fn order(ids: &Ids, listing: bool, status: OrderStatus) -> domain::model::Order {
    domain::model::Order {
        home: None,
        order_id: ids.order,
        buyer_id: ids.buyer.clone(),
        seller_id: listing.then(|| ids.seller.clone()),
        listing_id: listing.then_some(ids.sold_listing),
        category_id: listing.then(|| ids.category.clone()),
        lines: if listing { Vec::new() } else { vec![domain::model::OrderLine::new(ids.product.to_string(), 1)] },
        status,
        total: Money::from_cents(2500),
        shard: domain::shard::order_shard(&ids.order, domain::shard::DEFAULT_SHARD_COUNT),
        buyer_review_id: None,
        seller_review_id: None,
        held_items: Vec::new(),
        created_at: NOW.into(),
        updated_at: NOW.into(),
    }
}
