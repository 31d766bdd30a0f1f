//! What the API answers of the stored entities: their fields without the
//! storage bookkeeping (shard numbers, geohashes), so a change of the key
//! design is never a change of the contract. A list of listings answers a
//! bounded [`ListingCard`] per listing; the listing itself answers the rest.

use serde::{Deserialize, Serialize};

use crate::geo::Location;
use crate::ids::{CategoryId, ListingId, OrderId, ReviewId, UserId};
use crate::model::{Listing, ListingDetails, ListingStatus, Money, Order, OrderLine, OrderStatus, Product};

/// A listing as `GET /listings/{listingId}` and its writes answer it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingAnswer {
    listing_id: ListingId,
    seller_id: UserId,
    title: String,
    price: Money,
    category_id: CategoryId,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    location: Option<Location>,
    status: ListingStatus,
    favorite_count: u32,
    created_at: String,
    updated_at: String,
}

impl From<Listing> for ListingAnswer {
    fn from(l: Listing) -> Self {
        ListingAnswer {
            listing_id: l.listing_id,
            seller_id: l.seller_id,
            title: l.title,
            price: l.price,
            category_id: l.category_id,
            description: l.description,
            location: l.location,
            status: l.status,
            favorite_count: l.favorite_count,
            created_at: l.created_at,
            updated_at: l.updated_at,
        }
    }
}

impl ListingAnswer {
    /// The listing with its description: its own if it holds one (a short
    /// one, or one written before details), else its details'. (No write
    /// makes both; reconcile reports an item that has both, and a change of
    /// the listing, which reads no details then, answers the same.)
    pub fn of(listing: Listing, details: Option<ListingDetails>) -> Self {
        let mut answer = ListingAnswer::from(listing);
        if answer.description.is_none() {
            answer.description = details.map(|d| d.description);
        }
        answer
    }
}

/// A product in a list (a brand's, a category's): what a list shows of it,
/// of bounded size, read from an index copy or a product item alike (other
/// attributes are left). No description and no stock: the stock changes
/// with every order, so the index copies do not hold it (a copy rewritten
/// per sale); `GET /products/{productId}` answers both, the stock exact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProductCard {
    /// ULID id.
    pub product_id: crate::ids::ProductId,
    /// Name.
    pub name: String,
    /// Brand.
    pub brand_id: crate::ids::BrandId,
    /// Category.
    pub category_id: CategoryId,
    /// Unit price.
    pub price: Money,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last change of the product's catalog fields
    /// (a stock change is not one).
    pub updated_at: String,
}

impl ProductCard {
    /// The attributes a card reads (what an index holding cards projects).
    pub const ATTRIBUTES: &'static [&'static str] =
        &["productId", "name", "brandId", "categoryId", "price", "createdAt", "updatedAt"];
}

impl From<&Product> for ProductCard {
    fn from(p: &Product) -> Self {
        ProductCard {
            product_id: p.product_id,
            name: p.name.clone(),
            brand_id: p.brand_id.clone(),
            category_id: p.category_id.clone(),
            price: p.price,
            created_at: p.created_at.clone(),
            updated_at: p.updated_at.clone(),
        }
    }
}

/// A listing in a list (browse, price, storefront, a seller's listings,
/// search, near): what a list shows of it, of bounded size (no
/// description, counter or `updatedAt`: the listing answers those). Read
/// from an index copy or a listing item alike (other attributes are left).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingCard {
    /// ULID id.
    pub listing_id: ListingId,
    /// The seller.
    pub seller_id: UserId,
    /// Title.
    pub title: String,
    /// Asking price.
    pub price: Money,
    /// Category.
    pub category_id: CategoryId,
    /// active, sold or removed.
    pub status: ListingStatus,
    /// Where it is, if the seller said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// RFC 3339 creation time.
    pub created_at: String,
}

impl ListingCard {
    /// The attributes a card reads (what an index holding cards projects).
    pub const ATTRIBUTES: &'static [&'static str] =
        &["listingId", "sellerId", "title", "price", "categoryId", "status", "location", "createdAt"];
    /// The most a card's index copy can weigh, by DynamoDB's item size
    /// (names and values, with the keys): the longest title in 4-byte
    /// characters under the longest ids (tests/integration/bounds.rs holds
    /// the copies read to it).
    pub const MAX_STORED_BYTES: usize = 1536;
}

impl From<&Listing> for ListingCard {
    fn from(l: &Listing) -> Self {
        ListingCard {
            listing_id: l.listing_id,
            seller_id: l.seller_id.clone(),
            title: l.title.clone(),
            price: l.price,
            category_id: l.category_id.clone(),
            status: l.status,
            location: l.location,
            created_at: l.created_at.clone(),
        }
    }
}

/// An order as the API answers it (without its status shard).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderAnswer {
    order_id: OrderId,
    buyer_id: UserId,
    #[serde(skip_serializing_if = "Option::is_none")]
    seller_id: Option<UserId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    listing_id: Option<ListingId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    category_id: Option<CategoryId>,
    status: OrderStatus,
    total: Money,
    lines: Vec<OrderLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    buyer_review_id: Option<ReviewId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seller_review_id: Option<ReviewId>,
    created_at: String,
    updated_at: String,
}

impl From<Order> for OrderAnswer {
    fn from(o: Order) -> Self {
        OrderAnswer {
            order_id: o.order_id,
            buyer_id: o.buyer_id,
            seller_id: o.seller_id,
            listing_id: o.listing_id,
            category_id: o.category_id,
            status: o.status,
            total: o.total,
            // Where a line's units came from is the store's business.
            lines: o.lines.into_iter().map(|l| OrderLine { stock: None, ..l }).collect(),
            buyer_review_id: o.buyer_review_id,
            seller_review_id: o.seller_review_id,
            created_at: o.created_at,
            updated_at: o.updated_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answers carry every field of the entity but the bookkeeping.
    #[test]
    fn answers_leave_out_only_the_bookkeeping() {
        let listing = serde_json::from_value::<Listing>(serde_json::json!({
            "listingId": "01JF8Z6A000000000000000001", "sellerId": "s", "title": "T", "price": 9.5,
            "categoryId": "c", "shard": 3, "description": "D", "location": {"lat": 1.0, "lon": 2.0},
            "status": "active", "favoriteCount": 4, "createdAt": "t", "updatedAt": "u"
        }))
        .unwrap()
        .locate(Location::new(1.0, 2.0));
        let stored = serde_json::to_value(&listing).unwrap();
        let answered = serde_json::to_value(ListingAnswer::from(listing.clone())).unwrap();
        let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        let mut expected = keys(&stored);
        expected.retain(|k| k != "shard" && k != "geohash");
        assert_eq!(keys(&answered), expected);
        let card = serde_json::to_value(ListingCard::from(&listing)).unwrap();
        assert_eq!(keys(&card).len(), ListingCard::ATTRIBUTES.len());
        assert!(keys(&card).iter().all(|k| ListingCard::ATTRIBUTES.contains(&k.as_str())));
    }
}
