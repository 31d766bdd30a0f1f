//! The key functions as they were before the declarations (a copy, for
//! the test that compares the keys the declarations derive with these, byte
//! for byte, before the old code goes). Test-only.
#![allow(dead_code, missing_docs)]

use domain::ids::{BrandId, CategoryId, Email, FavoriteId, ListingId, MessageId, OrderId, ProductId, ReviewId, UserId};
use domain::values::{ListingStatus, Money, OrderStatus};

use crate::table::{EntityType, Index};

/// A key pair on one index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// Partition key value.
    pub pk: String,
    /// Sort key value.
    pub sk: String,
}

impl Key {
    fn new(pk: impl Into<String>, sk: impl Into<String>) -> Self {
        Key { pk: pk.into(), sk: sk.into() }
    }
}

/// All key attributes of one item: its primary key and its key on each GSI
/// it is in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemKeys {
    /// Which entity the item is.
    pub entity: EntityType,
    /// The primary key.
    pub table: Key,
    /// GSI1 key, if in GSI1.
    pub gsi1: Option<Key>,
    /// GSI2 key, if in GSI2.
    pub gsi2: Option<Key>,
    /// GSI3 key, if in GSI3.
    pub gsi3: Option<Key>,
}

impl ItemKeys {
    /// Keys of an item that is only on the base table.
    pub fn table_only(entity: EntityType, key: Key) -> Self {
        ItemKeys { entity, table: key, gsi1: None, gsi2: None, gsi3: None }
    }

    /// The same keys, also in `index` with `key` (the table key if `index`
    /// is the table).
    pub fn with(mut self, index: Index, key: Key) -> Self {
        match index {
            Index::Table => self.table = key,
            Index::Gsi1 => self.gsi1 = Some(key),
            Index::Gsi2 => self.gsi2 = Some(key),
            Index::Gsi3 => self.gsi3 = Some(key),
        }
        self
    }

    /// The key on one index, if the item is in it.
    pub fn on(&self, index: Index) -> Option<&Key> {
        match index {
            Index::Table => Some(&self.table),
            Index::Gsi1 => self.gsi1.as_ref(),
            Index::Gsi2 => self.gsi2.as_ref(),
            Index::Gsi3 => self.gsi3.as_ref(),
        }
    }

    /// `(attribute, value)` for every key attribute the item has.
    pub fn attributes(&self) -> impl Iterator<Item = (&'static str, &str)> {
        Index::ALL
            .into_iter()
            .filter_map(|i| self.on(i).map(|k| (i, k)))
            .flat_map(|(i, k)| [(i.pk(), k.pk.as_str()), (i.sk(), k.sk.as_str())])
    }
}

/// Sort key of every entity's main record.
pub const METADATA: &str = "#METADATA";

/// A user's partition on the table (`USER#<userId>`): the user's record and
/// the reviews about them.
pub fn user_partition(id: &UserId) -> String {
    format!("USER#{id}")
}

/// A seller's partition (`SELLER#<sellerId>`): their listings on GSI1 and
/// their sales on GSI2.
pub fn seller_partition(seller: &UserId) -> String {
    format!("SELLER#{seller}")
}

/// A category's browse partition on GSI2 (`CATEGORY#<categoryId>`): one
/// item collection of its products (`BRAND#...`) and active listings
/// (`LISTING#...`).
pub fn category_partition(category: &CategoryId) -> String {
    format!("CATEGORY#{category}")
}

/// User: `USER#<userId>` / `#METADATA`; GSI1 `USER_EMAIL#<email>` / `USER#<userId>`.
pub mod user {
    use super::*;
    /// Prefix of the GSI1 sort key of users (under their email).
    pub const BY_EMAIL_PREFIX: &str = "USER#";
    /// Primary key.
    pub fn key(id: &UserId) -> Key {
        Key::new(user_partition(id), METADATA)
    }
    /// GSI1 partition of an email.
    pub fn email_partition(email: &Email) -> String {
        format!("USER_EMAIL#{email}")
    }
    /// GSI1 key: lookup by email.
    pub fn by_email(email: &Email, id: &UserId) -> Key {
        Key::new(email_partition(email), format!("{BY_EMAIL_PREFIX}{id}"))
    }
    /// All keys of a user item.
    pub fn item_keys(id: &UserId, email: &Email) -> ItemKeys {
        ItemKeys::table_only(EntityType::User, key(id)).with(Index::Gsi1, by_email(email, id))
    }
}

/// Email guard: `USER_EMAIL#<email>` / `#UNIQUE`.
pub mod email_guard {
    use super::*;
    /// Primary key (and all keys) of the guard item.
    pub fn key(email: &Email) -> Key {
        Key::new(user::email_partition(email), "#UNIQUE")
    }
}

/// Listing: `LISTING#<listingId>` / `#METADATA`; GSI1 by seller and status;
/// GSI2 by category only while active (sparse).
pub mod listing {
    use super::*;
    /// Prefix of listing sort keys on GSI1 (by seller) and GSI2 (browse).
    pub const PREFIX: &str = "LISTING#";
    /// Primary key.
    pub fn key(id: &ListingId) -> Key {
        Key::new(format!("LISTING#{id}"), METADATA)
    }
    /// GSI1 sort-key prefix of a seller's listings, of one status or all.
    pub fn status_prefix(status: Option<ListingStatus>) -> String {
        match status {
            Some(s) => format!("{PREFIX}{s}#"),
            None => PREFIX.to_owned(),
        }
    }
    /// GSI1 key: a seller's listings, status as sort-key prefix.
    pub fn by_seller(seller: &UserId, status: ListingStatus, id: &ListingId) -> Key {
        Key::new(seller_partition(seller), format!("{}{id}", status_prefix(Some(status))))
    }
    /// GSI2 key: the category browse index; only active listings carry it.
    pub fn by_category(category: &CategoryId, id: &ListingId) -> Key {
        Key::new(category_partition(category), format!("{PREFIX}{id}"))
    }
    /// Keys a listing is written with: table and GSI1. Its GSI2 keys are
    /// added by the stream processor while it is active ([`browse_keys`]).
    pub fn item_keys(id: &ListingId, seller: &UserId, status: ListingStatus) -> ItemKeys {
        ItemKeys::table_only(EntityType::Listing, key(id)).with(Index::Gsi1, by_seller(seller, status, id))
    }
    /// GSI3 partition of a category's active listings ordered by price.
    pub fn price_partition(category: &CategoryId) -> String {
        format!("PRICE#{category}")
    }
    /// Prefix of the GSI3 sort key of a listing priced `price`: the cents,
    /// zero-padded to 10 digits, so string order is numeric order.
    pub fn price_prefix(price: Money) -> String {
        format!("{PREFIX}{:010}#", price.cents())
    }
    /// GSI3 key: a category's active listings, cheapest first.
    pub fn by_price(category: &CategoryId, price: Money, id: &ListingId) -> Key {
        Key::new(price_partition(category), format!("{}{id}", price_prefix(price)))
    }
    /// All keys of a listing once the stream processor has caught up: the
    /// browse keys (GSI2 by age, GSI3 by price) only while active.
    pub fn browse_keys(
        id: &ListingId,
        seller: &UserId,
        status: ListingStatus,
        category: &CategoryId,
        price: Money,
    ) -> ItemKeys {
        let keys = item_keys(id, seller, status);
        if status == ListingStatus::Active {
            keys.with(Index::Gsi2, by_category(category, id)).with(Index::Gsi3, by_price(category, price, id))
        } else {
            keys
        }
    }
}

/// Order: `ORDER#<orderId>` / `#METADATA`; GSI1 by buyer; GSI2 by seller
/// (listing orders); GSI3 by status, write-sharded.
pub mod order {
    use super::*;
    /// Prefix of order sort keys on GSI1-3.
    pub const PREFIX: &str = "ORDER#";
    /// The order's partition (its record and its items).
    pub fn partition(id: &OrderId) -> String {
        format!("ORDER#{id}")
    }
    /// Primary key.
    pub fn key(id: &OrderId) -> Key {
        Key::new(partition(id), METADATA)
    }
    /// GSI1 partition of a buyer's orders.
    pub fn buyer_partition(buyer: &UserId) -> String {
        format!("BUYER#{buyer}")
    }
    /// GSI1 key: a buyer's orders, newest first by ULID.
    pub fn by_buyer(buyer: &UserId, id: &OrderId) -> Key {
        Key::new(buyer_partition(buyer), sort_value(id))
    }
    /// GSI2 key: a seller's sales.
    pub fn by_seller(seller: &UserId, id: &OrderId) -> Key {
        Key::new(seller_partition(seller), sort_value(id))
    }
    /// GSI3 partition of one status shard.
    pub fn status_partition(status: OrderStatus, shard: u16) -> String {
        format!("STATUS#{status}#{shard}")
    }
    /// GSI3 key of an order in a given shard.
    pub fn in_status_shard(status: OrderStatus, shard: u16, id: &OrderId) -> Key {
        Key::new(status_partition(status, shard), sort_value(id))
    }
    /// GSI3 key: orders by status; the shard comes from the id.
    pub fn by_status(status: OrderStatus, id: &OrderId, shard_count: u16) -> Key {
        in_status_shard(status, domain::shard::order_shard(id, shard_count), id)
    }
    /// Sort-key value of an order on GSI1-3 (also a ULID range bound).
    pub fn sort_value(id: &OrderId) -> String {
        format!("{PREFIX}{id}")
    }
    /// All keys of an order item.
    pub fn item_keys(
        id: &OrderId,
        buyer: &UserId,
        seller: Option<&UserId>,
        status: OrderStatus,
        shard_count: u16,
    ) -> ItemKeys {
        let keys = ItemKeys::table_only(EntityType::Order, key(id))
            .with(Index::Gsi1, by_buyer(buyer, id))
            .with(Index::Gsi3, by_status(status, id, shard_count));
        match seller {
            Some(s) => keys.with(Index::Gsi2, by_seller(s, id)),
            None => keys,
        }
    }
}

/// Order item: `ORDER#<orderId>` / `ITEM#<productId or listingId>`.
pub mod order_item {
    use super::*;
    /// Prefix of item sort keys in the order's partition.
    pub const PREFIX: &str = "ITEM#";
    /// Primary key; `item` is the product or listing id.
    pub fn key(order: &OrderId, item: &str) -> Key {
        Key::new(order::partition(order), format!("{PREFIX}{item}"))
    }
}

/// Favorite: `USER#<userId>` / `FAVORITE#<listingId>`; GSI1
/// `FAVORITES#<userId>` / `FAVORITE#<favoriteId>` (newest first).
pub mod favorite {
    use super::*;
    /// Prefix of favorite sort keys (table and GSI1).
    pub const PREFIX: &str = "FAVORITE#";
    /// Primary key: one per user and listing.
    pub fn key(user: &UserId, listing: &ListingId) -> Key {
        Key::new(user_partition(user), format!("{PREFIX}{listing}"))
    }
    /// GSI1 partition of a user's favorites.
    pub fn newest_partition(user: &UserId) -> String {
        format!("FAVORITES#{user}")
    }
    /// GSI1 key: a user's favorites by when they were added.
    pub fn by_time(user: &UserId, id: &FavoriteId) -> Key {
        Key::new(newest_partition(user), format!("{PREFIX}{id}"))
    }
    /// All keys of a favorite item.
    pub fn item_keys(user: &UserId, listing: &ListingId, id: &FavoriteId) -> ItemKeys {
        ItemKeys::table_only(EntityType::Favorite, key(user, listing)).with(Index::Gsi1, by_time(user, id))
    }
}

/// Favorite marker: `USER#<userId>` / `FAVED#<listingId>`, one per user and
/// listing, in the user's partition.
pub mod favorite_marker {
    use super::*;
    /// Primary key.
    pub fn key(user: &UserId, listing: &ListingId) -> Key {
        Key::new(user_partition(user), format!("FAVED#{listing}"))
    }
}

/// Order message: `ORDER#<orderId>` / `MESSAGE#<messageId>`.
pub mod order_message {
    use super::*;
    /// Prefix of message sort keys in the order's partition.
    pub const PREFIX: &str = "MESSAGE#";
    /// Primary key.
    pub fn key(order: &OrderId, id: &MessageId) -> Key {
        Key::new(order::partition(order), format!("{PREFIX}{id}"))
    }
}

/// Idempotency record: `IDEMPOTENCY#<callerId>#<route>#<key>` / `#IDEMPOTENCY`.
pub mod idempotency {
    use super::*;
    /// Primary key: keys are per caller and per route; `route` is a short
    /// route name and `key` a validated `Idempotency-Key` (neither has `#`).
    pub fn key(caller: &UserId, route: &str, key: &str) -> Key {
        Key::new(format!("IDEMPOTENCY#{caller}#{route}#{key}"), "#IDEMPOTENCY")
    }
}

/// Review: `USER#<reviewedUserId>` / `REVIEW#<reviewId>`; GSI1 by author.
pub mod review {
    use super::*;
    /// Prefix of review sort keys (table and GSI1).
    pub const PREFIX: &str = "REVIEW#";
    /// Primary key: in the reviewed user's partition.
    pub fn key(reviewed: &UserId, id: &ReviewId) -> Key {
        Key::new(user_partition(reviewed), format!("{PREFIX}{id}"))
    }
    /// GSI1 partition of the reviews a user wrote.
    pub fn author_partition(author: &UserId) -> String {
        format!("AUTHOR#{author}")
    }
    /// GSI1 key: reviews written by a user.
    pub fn by_author(author: &UserId, id: &ReviewId) -> Key {
        Key::new(author_partition(author), format!("{PREFIX}{id}"))
    }
    /// All keys of a review item.
    pub fn item_keys(reviewed: &UserId, author: &UserId, id: &ReviewId) -> ItemKeys {
        ItemKeys::table_only(EntityType::Review, key(reviewed, id)).with(Index::Gsi1, by_author(author, id))
    }
}

/// Rating marker: `USER#<reviewedUserId>` / `RATED#<reviewId>`, beside the
/// review in the reviewed user's partition.
pub mod rating_marker {
    use super::*;
    /// Primary key.
    pub fn key(reviewed: &UserId, review: &ReviewId) -> Key {
        Key::new(user_partition(reviewed), format!("RATED#{review}"))
    }
}

/// Brand: `BRANDS` / `BRAND#<brandId>`.
pub mod brand {
    use super::*;
    /// The partition holding every brand.
    pub const PARTITION: &str = "BRANDS";
    /// Prefix of brand sort keys (and of product sort keys on GSI2).
    pub const PREFIX: &str = "BRAND#";
    /// Primary key.
    pub fn key(id: &BrandId) -> Key {
        Key::new(PARTITION, format!("{PREFIX}{id}"))
    }
}

/// Category: `CATEGORIES` / `CATEGORY#<categoryId>`.
pub mod category {
    use super::*;
    /// The partition holding every category.
    pub const PARTITION: &str = "CATEGORIES";
    /// Prefix of category sort keys (and of product sort keys on GSI1).
    pub const PREFIX: &str = "CATEGORY#";
    /// Primary key.
    pub fn key(id: &CategoryId) -> Key {
        Key::new(PARTITION, format!("{PREFIX}{id}"))
    }
}

/// Product: `PRODUCT#<productId>` / `#METADATA`; GSI1 by brand then
/// category; GSI2 by category then brand.
pub mod product {
    use super::*;
    /// Primary key.
    pub fn key(id: &ProductId) -> Key {
        Key::new(format!("PRODUCT#{id}"), METADATA)
    }
    /// GSI1 partition of a brand's products.
    pub fn brand_partition(brand: &BrandId) -> String {
        format!("BRAND#{brand}")
    }
    /// GSI1 sort-key prefix: a brand's products, in one category or all.
    pub fn category_prefix(category: Option<&CategoryId>) -> String {
        match category {
            Some(c) => format!("{}{c}#PRODUCT#", category::PREFIX),
            None => category::PREFIX.to_owned(),
        }
    }
    /// GSI2 sort-key prefix: a category's products, of one brand or all.
    pub fn brand_prefix(brand: Option<&BrandId>) -> String {
        match brand {
            Some(b) => format!("{}{b}#PRODUCT#", brand::PREFIX),
            None => brand::PREFIX.to_owned(),
        }
    }
    /// GSI1 key: brand partition, category-prefixed sort key.
    pub fn by_brand(brand: &BrandId, category: &CategoryId, id: &ProductId) -> Key {
        Key::new(brand_partition(brand), format!("{}{id}", category_prefix(Some(category))))
    }
    /// GSI2 key: category partition, brand-prefixed sort key.
    pub fn by_category(category: &CategoryId, brand: &BrandId, id: &ProductId) -> Key {
        Key::new(category_partition(category), format!("{}{id}", brand_prefix(Some(brand))))
    }
    /// All keys of a product item.
    pub fn item_keys(id: &ProductId, brand: &BrandId, category: &CategoryId) -> ItemKeys {
        ItemKeys::table_only(EntityType::Product, key(id))
            .with(Index::Gsi1, by_brand(brand, category, id))
            .with(Index::Gsi2, by_category(category, brand, id))
    }
}
