//! Entities as stored and as answered by the API (camelCase JSON), and the
//! value types they are built from.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::ids::{BrandId, CategoryId, Email, ListingId, OrderId, ProductId, UserId};
use crate::keys::{self, ItemKeys};
use crate::schema::EntityType;

/// An entity stored as one item: it knows its type and its keys.
pub trait Entity: Serialize + DeserializeOwned {
    /// The `entityType` attribute of its items.
    const TYPE: EntityType;
    /// Every key attribute of its item.
    fn item_keys(&self) -> ItemKeys;
}

/// Defines a string enum stored and sent in lower case.
macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The stored text.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(format!("must be one of: {}", [$($text),+].join(", "))),
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                s.parse().map_err(de::Error::custom)
            }
        }
    };
}

string_enum!(
    /// Status of a listing; part of its GSI1 sort key.
    ListingStatus {
        /// For sale; in the category browse index.
        Active = "active",
        /// Bought through an order.
        Sold = "sold",
        /// Taken down by its seller.
        Removed = "removed",
    }
);

string_enum!(
    /// Status of an order; part of its GSI3 partition key.
    OrderStatus {
        /// Placed, not yet confirmed by the seller.
        Pending = "pending",
        /// Accepted by the seller.
        Confirmed = "confirmed",
        /// On its way.
        Shipped = "shipped",
        /// Received; reviews may now be written.
        Delivered = "delivered",
        /// Cancelled before shipping; stock restored or listing relisted.
        Cancelled = "cancelled",
    }
);

string_enum!(
    /// What a user does on the marketplace.
    UserRole {
        /// Has only bought.
        Buyer = "buyer",
        /// Has only sold.
        Seller = "seller",
        /// Both bought and sold.
        Both = "both",
    }
);

/// An amount of money, held as integer cents so arithmetic is exact.
/// JSON and DynamoDB see a decimal number with at most two decimals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Money(u64);

impl Money {
    /// The largest accepted amount: 1,000,000.00.
    pub const MAX_CENTS: u64 = 100_000_000;

    /// From integer cents.
    pub const fn from_cents(cents: u64) -> Self {
        Money(cents)
    }

    /// Integer cents.
    pub const fn cents(self) -> u64 {
        self.0
    }

    /// The largest amount, the bound every read enforces.
    pub const MAX: Money = Money(Self::MAX_CENTS);

    /// Multiplies by a quantity, if the result is still an amount that reads
    /// back (at most [`Money::MAX`]).
    pub fn times(self, qty: u32) -> Option<Money> {
        self.0.checked_mul(u64::from(qty)).filter(|c| *c <= Self::MAX_CENTS).map(Money)
    }

    /// Adds two amounts, if the sum is still an amount that reads back (at
    /// most [`Money::MAX`]).
    pub fn plus(self, other: Money) -> Option<Money> {
        self.0.checked_add(other.0).filter(|c| *c <= Self::MAX_CENTS).map(Money)
    }

    fn from_decimal(value: f64) -> Result<Money, &'static str> {
        if !value.is_finite() || value < 0.0 {
            return Err("must be a non-negative amount");
        }
        let cents = (value * 100.0).round();
        if (value * 100.0 - cents).abs() > 1e-6 {
            return Err("must have at most two decimal places");
        }
        if cents > Self::MAX_CENTS as f64 {
            return Err("must be at most 1000000");
        }
        Ok(Money(cents as u64))
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 % 100 == 0 {
            s.serialize_u64(self.0 / 100)
        } else {
            // Exact for two decimals: the shortest f64 text round-trips.
            s.serialize_f64(self.0 as f64 / 100.0)
        }
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MoneyVisitor;
        impl Visitor<'_> for MoneyVisitor {
            type Value = Money;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an amount such as 28 or 29.99")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Money, E> {
                v.checked_mul(100)
                    .filter(|c| *c <= Money::MAX_CENTS)
                    .map(Money)
                    .ok_or_else(|| E::custom("must be at most 1000000"))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Money, E> {
                u64::try_from(v).map_err(|_| E::custom("must be a non-negative amount")).and_then(|v| self.visit_u64(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Money, E> {
                Money::from_decimal(v).map_err(E::custom)
            }
        }
        d.deserialize_any(MoneyVisitor)
    }
}

/// A catalog brand.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Brand {
    /// Slug id.
    pub brand_id: BrandId,
    /// Display name.
    pub name: String,
    /// RFC 3339 creation time.
    pub created_at: String,
}

impl Entity for Brand {
    const TYPE: EntityType = EntityType::Brand;
    fn item_keys(&self) -> ItemKeys {
        ItemKeys::table_only(Self::TYPE, keys::brand::key(&self.brand_id))
    }
}

/// A category of catalog products and marketplace listings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Category {
    /// Slug id.
    pub category_id: CategoryId,
    /// Display name.
    pub name: String,
    /// RFC 3339 creation time.
    pub created_at: String,
}

impl Entity for Category {
    const TYPE: EntityType = EntityType::Category;
    fn item_keys(&self) -> ItemKeys {
        ItemKeys::table_only(Self::TYPE, keys::category::key(&self.category_id))
    }
}

/// A catalog product with its stock level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Product {
    /// ULID id.
    pub product_id: ProductId,
    /// Display name.
    pub name: String,
    /// The brand it belongs to.
    pub brand_id: BrandId,
    /// The category it belongs to.
    pub category_id: CategoryId,
    /// Unit price.
    pub price: Money,
    /// Units in stock; never negative.
    pub stock_level: u32,
    /// Optional long text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last change.
    pub updated_at: String,
}

impl Product {
    /// The largest stock level a product may hold.
    pub const MAX_STOCK: u32 = 1_000_000_000;
}

impl Entity for Product {
    const TYPE: EntityType = EntityType::Product;
    fn item_keys(&self) -> ItemKeys {
        keys::product::item_keys(&self.product_id, &self.brand_id, &self.category_id)
    }
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
    #[serde(default)]
    pub rating_sum: u64,
    /// Number of reviews about the user (kept by the stream processor).
    #[serde(default)]
    pub review_count: u32,
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

impl Entity for User {
    const TYPE: EntityType = EntityType::User;
    fn item_keys(&self) -> ItemKeys {
        keys::user::item_keys(&self.user_id, &self.email)
    }
}

/// Claims an email for one user (the item a GSI cannot replace: uniqueness).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmailGuard {
    /// The claimed address.
    pub email: Email,
    /// Who holds it.
    pub user_id: UserId,
}

impl Entity for EmailGuard {
    const TYPE: EntityType = EntityType::EmailGuard;
    fn item_keys(&self) -> ItemKeys {
        ItemKeys::table_only(Self::TYPE, keys::email_guard::key(&self.email))
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
    /// Optional long text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// active, sold or removed.
    pub status: ListingStatus,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last change.
    pub updated_at: String,
}

impl Entity for Listing {
    const TYPE: EntityType = EntityType::Listing;
    /// The write path never sets the GSI2 (browse) keys: the stream processor
    /// adds them while the listing is active and removes them after.
    fn item_keys(&self) -> ItemKeys {
        keys::listing::item_keys(&self.listing_id, &self.seller_id, self.status)
    }
}

impl OrderStatus {
    /// Whether an order may move from `self` to `next`: pending -> confirmed
    /// -> shipped -> delivered, and cancelled from pending or confirmed.
    pub fn can_become(self, next: OrderStatus) -> bool {
        use OrderStatus::*;
        matches!(
            (self, next),
            (Pending, Confirmed) | (Confirmed, Shipped) | (Shipped, Delivered) | (Pending | Confirmed, Cancelled)
        )
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
    /// Lifecycle status.
    pub status: OrderStatus,
    /// Sum of the lines.
    pub total: Money,
    /// What was ordered.
    pub lines: Vec<OrderLine>,
    /// The GSI3 shard (from the id and the shard count at placement).
    pub shard: u16,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last change.
    pub updated_at: String,
}

impl Entity for Order {
    const TYPE: EntityType = EntityType::Order;
    fn item_keys(&self) -> ItemKeys {
        let mut keys = keys::order::item_keys(&self.order_id, &self.buyer_id, self.seller_id.as_ref(), self.status, 1);
        keys.keys[3] = Some(keys::Key {
            pk: keys::order::status_partition(self.status, self.shard),
            sk: keys::order::sort_value(&self.order_id),
        });
        keys
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

impl Entity for OrderItem {
    const TYPE: EntityType = EntityType::OrderItem;
    fn item_keys(&self) -> ItemKeys {
        ItemKeys::table_only(Self::TYPE, keys::order_item::key(&self.order_id, &self.item_id))
    }
}

/// Remembers an `Idempotency-Key`: the request it came with and the order
/// it created.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdempotencyRecord {
    /// Whose key.
    pub caller_id: UserId,
    /// The key.
    pub key: String,
    /// SHA-256 of the request, to refuse the key with another request.
    pub request_hash: String,
    /// The order the first request created.
    pub order_id: OrderId,
    /// Epoch seconds after which DynamoDB's TTL deletes it.
    pub expires_at: u64,
}

impl Entity for IdempotencyRecord {
    const TYPE: EntityType = EntityType::Idempotency;
    fn item_keys(&self) -> ItemKeys {
        ItemKeys::table_only(Self::TYPE, keys::idempotency::key(&self.caller_id, &self.key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_parses_exactly() {
        let parse = |s: &str| serde_json::from_str::<Money>(s).map_err(|e| e.to_string());
        assert_eq!(parse("28"), Ok(Money::from_cents(2800)));
        assert_eq!(parse("29.99"), Ok(Money::from_cents(2999)));
        assert_eq!(parse("0.1"), Ok(Money::from_cents(10)));
        assert!(parse("-1").unwrap_err().contains("non-negative"));
        assert!(parse("1.234").unwrap_err().contains("two decimal"));
        assert!(parse("1000000.01").is_err());
        assert!(parse("\"12\"").is_err(), "JSON strings are not amounts");
        assert_eq!(serde_json::to_string(&Money::from_cents(2999)).unwrap(), "29.99");
        assert_eq!(serde_json::to_string(&Money::from_cents(2800)).unwrap(), "28");
        assert_eq!(Money::from_cents(5).to_string(), "0.05");
    }

    /// Whatever arithmetic yields must deserialize again: sums and products
    /// stop at the bound reads enforce.
    #[test]
    fn money_arithmetic_stays_readable() {
        let big = Money::from_cents(60_000_000);
        assert_eq!(big.times(2), None);
        assert_eq!(big.plus(big), None);
        assert_eq!(Money::MAX.times(1), Some(Money::MAX));
        assert_eq!(Money::MAX.plus(Money::from_cents(1)), None);
        assert_eq!(Money::from_cents(u64::MAX).times(u32::MAX), None);
        for m in [Money::MAX, Money::from_cents(1), Money::default()] {
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<Money>(&json).unwrap(), m);
        }
    }

    #[test]
    fn order_lifecycle() {
        use OrderStatus::*;
        let allowed: Vec<_> = OrderStatus::ALL
            .iter()
            .flat_map(|a| OrderStatus::ALL.iter().map(move |b| (*a, *b)))
            .filter(|(a, b)| a.can_become(*b))
            .collect();
        assert_eq!(
            allowed,
            [
                (Pending, Confirmed),
                (Pending, Cancelled),
                (Confirmed, Shipped),
                (Confirmed, Cancelled),
                (Shipped, Delivered)
            ]
        );
    }

    #[test]
    fn statuses_parse_and_print() {
        assert_eq!("active".parse::<ListingStatus>(), Ok(ListingStatus::Active));
        assert!("Active".parse::<ListingStatus>().is_err());
        assert_eq!(OrderStatus::ALL.len(), 5);
        assert_eq!(serde_json::to_string(&OrderStatus::Cancelled).unwrap(), "\"cancelled\"");
    }
}
