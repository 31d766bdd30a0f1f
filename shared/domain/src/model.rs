//! Entities as stored and as answered by the API (camelCase JSON). The
//! value types they are built from live in [`crate::values`], the catalog's
//! entities in [`crate::catalog`] (both re-exported here). Their keys are
//! `keyschema`'s.

use serde::{Deserialize, Serialize};

use crate::ids::{CategoryId, Email, FavoriteId, ListingId, MessageId, OrderId, ReviewId, UserId};

pub use crate::catalog::{Brand, Category, Product, ProductDetails};
pub use crate::values::{counter, ListingStatus, Money, OrderStatus, UserRole};

/// A listing's long text, beside the listing in its partition: never in an
/// index copy or a list, so every list of listings reads items of bounded
/// size, and a price, status or counter change rewrites no description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingDetails {
    /// The listing.
    pub listing_id: ListingId,
    /// Its description (up to 4,000 characters).
    pub description: String,
}

/// A marketplace user: buyer, seller or both. The id is the caller's JWT `sub`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct User {
    /// The `sub` claim of the user's tokens.
    pub user_id: UserId,
    /// Display name.
    pub name: String,
    /// Unique (case-insensitive) email; shown only to the user and admins.
    pub email: Email,
    /// `buyer` at sign-up, `both` after the first listing.
    pub role: UserRole,
    /// Sum of the ratings of reviews about the user (kept by the stream processor).
    #[serde(default, deserialize_with = "counter::u64")]
    pub rating_sum: u64,
    /// Number of reviews about the user (kept by the stream processor).
    #[serde(default, deserialize_with = "counter::u32")]
    pub review_count: u32,
    /// The home region of what the user sells (chosen at sign-up: the
    /// region that served it); the user item itself lives in the primary (docs/regions.md): set only in
    /// a global table of several regions; none: the primary region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last change.
    pub updated_at: String,
}

impl User {
    /// Average rating, if the user has reviews.
    pub fn rating(&self) -> Option<f64> {
        (self.review_count > 0).then(|| (self.rating_sum as f64 / f64::from(self.review_count) * 100.0).round() / 100.0)
    }
}

/// A one-off item for sale by a user.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// ULID id.
    pub listing_id: ListingId,
    /// The user selling it.
    pub seller_id: UserId,
    /// Title.
    pub title: String,
    /// Asking price.
    pub price: Money,
    /// Category (shared with the catalog).
    pub category_id: CategoryId,
    /// The shard of its category's browse and price keys (from its id and
    /// the category's `listingShards` at creation; 0 for older listings).
    #[serde(default)]
    pub shard: u16,
    /// Its description, if its item stays within one write unit with it
    /// (else in its [`ListingDetails`]); on listings written before
    /// descriptions moved out, whatever its length (reconcile moves one
    /// past the unit there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where it is, if the seller said ("listings near me").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<crate::geo::Location>,
    /// The location's geohash ([`crate::geo::HASH_LEN`] characters), set
    /// with it ([`Listing::locate`]): the `near` index's keys derive from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geohash: Option<String>,
    /// active, sold or removed.
    pub status: ListingStatus,
    /// How many users have it as a favorite (kept by the stream processor).
    #[serde(default, deserialize_with = "counter::u32")]
    pub favorite_count: u32,
    /// Its home region (its seller's), where it, its sale and what is
    /// derived from it are written (docs/regions.md): set only in
    /// a global table of several regions; none: the primary region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last change.
    pub updated_at: String,
}

impl Listing {
    /// Places the listing at `location` (or nowhere), with its geohash: the
    /// one place the hash is derived from the location.
    pub fn locate(mut self, location: Option<crate::geo::Location>) -> Listing {
        self.geohash = location.map(|l| l.geohash(crate::geo::HASH_LEN));
        self.location = location;
        self
    }
}

/// One line of an order as the order record summarizes it (enough to undo
/// the order: restore stock or relist).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderLine {
    /// The product or listing id.
    pub item_id: String,
    /// Units.
    pub qty: u32,
    /// Where the units came from, if the product's stock is shared (never
    /// answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stock: Option<crate::stock::LineStock>,
}

impl OrderLine {
    /// A line of `qty` of `item_id`, from a stock of one item.
    pub fn new(item_id: impl Into<String>, qty: u32) -> OrderLine {
        OrderLine { item_id: item_id.into(), qty, stock: None }
    }
}

/// An order: of one listing (marketplace) or of catalog products (e-commerce).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    /// ULID id: sorts by creation time.
    pub order_id: OrderId,
    /// Who bought.
    pub buyer_id: UserId,
    /// Who sold (listing orders); catalog orders are the platform's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seller_id: Option<UserId>,
    /// The listing bought (listing orders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing_id: Option<ListingId>,
    /// The listing's category (listing orders placed since categories are
    /// rated): where the buyer's review of the seller counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_id: Option<CategoryId>,
    /// Lifecycle status.
    pub status: OrderStatus,
    /// Sum of the lines.
    pub total: Money,
    /// What was ordered.
    pub lines: Vec<OrderLine>,
    /// The GSI8 shard (from the id and the shard count at placement).
    pub shard: u16,
    /// The buyer's review of the seller, once written (delivered listing orders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyer_review_id: Option<ReviewId>,
    /// The seller's review of the buyer, once written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seller_review_id: Option<ReviewId>,
    /// Its items, held here when they fit the order's write unit with it
    /// (most orders: a listing, a few products), so placing it writes one
    /// item less; else empty, and each is an [`OrderItem`] beside it.
    /// In no card index's copy (no projection names it; the retired GSI1-3,
    /// while a stack has them, copy everything), never answered with the
    /// order: `GET /orders/{orderId}/items` answers them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_items: Vec<HeldItem>,
    /// Its home region (its listing's; a catalog order's is the
    /// primary), where it, its items, messages and reviews are written (docs/regions.md): set only in
    /// a global table of several regions; none: the primary region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last change.
    pub updated_at: String,
}

/// A party of an order, as a reviewer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Party {
    /// The buyer (reviews the seller).
    Buyer,
    /// The seller (reviews the buyer).
    Seller,
}

impl Order {
    /// The items it holds, as items of their own would read.
    pub fn held(&self) -> impl Iterator<Item = OrderItem> + '_ {
        self.held_items.iter().map(|h| OrderItem {
            order_id: self.order_id,
            item_id: h.item_id.clone(),
            name: h.name.clone(),
            qty: h.qty,
            price: h.price,
            buyer_id: self.buyer_id.clone(),
            seller_id: self.seller_id.clone(),
        })
    }

    /// The review a party wrote about this order, if any.
    pub fn review_by(&self, party: Party) -> Option<&ReviewId> {
        match party {
            Party::Buyer => self.buyer_review_id.as_ref(),
            Party::Seller => self.seller_review_id.as_ref(),
        }
    }
}

/// An item of an order held in the order's own item ([`Order::held_items`]):
/// an [`OrderItem`] but for the order's fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldItem {
    /// The product or listing id.
    pub item_id: String,
    /// Product name or listing title at the time of the order.
    pub name: String,
    /// Units.
    pub qty: u32,
    /// Unit price at the time of the order.
    pub price: Money,
}

impl From<&OrderItem> for HeldItem {
    fn from(i: &OrderItem) -> Self {
        HeldItem { item_id: i.item_id.clone(), name: i.name.clone(), qty: i.qty, price: i.price }
    }
}

/// One item of an order, with the parties (so its own reads can be authorized).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderItem {
    /// The order.
    pub order_id: OrderId,
    /// The product or listing id.
    pub item_id: String,
    /// Product name or listing title at the time of the order.
    pub name: String,
    /// Units.
    pub qty: u32,
    /// Unit price at the time of the order.
    pub price: Money,
    /// The order's buyer.
    pub buyer_id: UserId,
    /// The order's seller (listing orders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seller_id: Option<UserId>,
}

/// A review of one party of a delivered order by the other, stored in the
/// reviewed user's partition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    /// ULID id: sorts by creation time.
    pub review_id: ReviewId,
    /// Who is reviewed.
    pub reviewed_user_id: UserId,
    /// Who wrote it.
    pub author_id: UserId,
    /// The delivered order it is about.
    pub order_id: OrderId,
    /// The category whose rating it counts in: the listing's, for a buyer's
    /// review of the seller (a seller's review of the buyer rates no category).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_id: Option<CategoryId>,
    /// 1 to 5.
    pub rating: u8,
    /// The text.
    pub body: String,
    /// Its home region (its order's), where it is written and deleted
    /// (docs/regions.md); none: the primary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// RFC 3339 creation time.
    pub created_at: String,
}

impl Review {
    /// The lowest rating.
    pub const MIN_RATING: u8 = 1;
    /// The highest rating.
    pub const MAX_RATING: u8 = 5;
    /// The longest body, in characters.
    pub const MAX_BODY_CHARS: usize = 2000;
}

/// A message between the buyer and the seller of an order, in the order's
/// partition. It carries the parties, so reading messages needs no read of
/// the order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderMessage {
    /// ULID id: sorts by creation time.
    pub message_id: MessageId,
    /// The order.
    pub order_id: OrderId,
    /// Who wrote it (the buyer or the seller).
    pub author_id: UserId,
    /// The text.
    pub body: String,
    /// The order's buyer.
    pub buyer_id: UserId,
    /// The order's seller.
    pub seller_id: UserId,
    /// RFC 3339 creation time.
    pub created_at: String,
}

impl OrderMessage {
    /// The longest body, in characters.
    pub const MAX_BODY_CHARS: usize = 2000;
}

/// A listing a user marked as a favorite, in the user's partition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Favorite {
    /// Whose favorite.
    pub user_id: UserId,
    /// The listing.
    pub listing_id: ListingId,
    /// This favoriting (new each time it is added again): orders the list
    /// and identifies it to the stream processor's count.
    pub favorite_id: FavoriteId,
    /// The listing's home region, where its count is kept (docs/regions.md);
    /// none: the primary. The favorite itself lives with its user, in the
    /// primary region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing_home: Option<String>,
    /// RFC 3339 time it was added.
    pub created_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_listings_use_the_previous_shard_count_until_a_raise_settles() {
        let from = "2026-11-24T00:00:00.000Z";
        let at = crate::time::parse_rfc3339(from).unwrap();
        let mut c = Category {
            category_id: "c".parse().unwrap(),
            name: "C".into(),
            listing_shards: 8,
            listing_shards_before: Some(2),
            listing_shards_from: Some(from.into()),
            created_at: from.into(),
        };
        assert_eq!(c.shards_for_new_listing(at - 1), 2);
        assert_eq!(c.shards_for_new_listing(at), 8);
        c.listing_shards_from = Some("not a time".into());
        assert_eq!(c.shards_for_new_listing(at - 1), 8, "an unreadable time: the count");
        c.listing_shards_before = None;
        assert_eq!(c.shards_for_new_listing(0), 8);
        let old: Category = serde_json::from_str(r#"{"categoryId":"c","name":"C","createdAt":"t"}"#).unwrap();
        assert_eq!(old.shards_for_new_listing(0), 1, "categories from before the shards");
    }
}
