//! Key functions: the only place key strings are built. Each function
//! follows its entity's template in [`crate::schema::ENTITIES`]; the tests
//! check that they do, and that keys parse back into the ids they came from.

use crate::ids::{BrandId, CategoryId, Email, FavoriteId, ListingId, MessageId, OrderId, ProductId, ReviewId, UserId};
use crate::schema::{EntityType, Index};
use crate::values::{ListingStatus, Money, OrderStatus};

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
        in_status_shard(status, crate::shard::order_shard(id, shard_count), id)
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::schema::{match_template, schema_of};
    use proptest::prelude::*;
    use ulid::Ulid;

    fn ulid() -> impl Strategy<Value = Ulid> {
        (0u64..(1 << 48), any::<u128>()).prop_map(|(t, r)| Ulid::from_parts(t, r))
    }
    fn slug() -> impl Strategy<Value = String> {
        "[a-z0-9-]{1,64}"
    }
    fn user() -> impl Strategy<Value = UserId> {
        "[A-Za-z0-9._:@|+-]{1,128}".prop_map(|s| s.parse().unwrap())
    }
    fn email() -> impl Strategy<Value = Email> {
        "[a-z0-9._+-]{1,30}@[a-z0-9-]{1,20}\\.[a-z]{2,6}".prop_map(|s| s.parse().unwrap())
    }
    fn listing_status() -> impl Strategy<Value = ListingStatus> {
        prop_oneof![Just(ListingStatus::Active), Just(ListingStatus::Sold), Just(ListingStatus::Removed)]
    }
    fn order_status() -> impl Strategy<Value = OrderStatus> {
        proptest::sample::select(OrderStatus::ALL.to_vec())
    }

    /// Any item of any entity, with the ids its keys were made from.
    pub(crate) fn any_item() -> impl Strategy<Value = (ItemKeys, Vec<String>)> {
        let shards = 1u16..=64;
        prop_oneof![
            (user(), email()).prop_map(|(u, e)| (user::item_keys(&u, &e), vec![u.to_string(), e.to_string()])),
            email().prop_map(|e| (
                ItemKeys::table_only(EntityType::EmailGuard, email_guard::key(&e)),
                vec![e.to_string()]
            )),
            (ulid(), user(), listing_status(), slug(), 0..=Money::MAX_CENTS).prop_map(|(l, s, st, c, p)| {
                let (l, c): (ListingId, CategoryId) = (ListingId::from_ulid(l), c.parse().unwrap());
                (
                    listing::browse_keys(&l, &s, st, &c, Money::from_cents(p)),
                    vec![l.to_string(), s.to_string(), st.to_string(), c.to_string(), format!("{p:010}")],
                )
            }),
            (ulid(), user(), proptest::option::of(user()), order_status(), shards).prop_map(|(o, b, s, st, n)| {
                let o = OrderId::from_ulid(o);
                let mut ids = vec![o.to_string(), b.to_string(), st.to_string()];
                ids.extend(s.as_ref().map(|s| s.to_string()));
                (order::item_keys(&o, &b, s.as_ref(), st, n), ids)
            }),
            (ulid(), ulid()).prop_map(|(o, p)| {
                let (o, p) = (OrderId::from_ulid(o), ProductId::from_ulid(p));
                (
                    ItemKeys::table_only(EntityType::OrderItem, order_item::key(&o, &p.to_string())),
                    vec![o.to_string(), p.to_string()],
                )
            }),
            (user(), user(), ulid()).prop_map(|(r, a, id)| {
                let id = ReviewId::from_ulid(id);
                (review::item_keys(&r, &a, &id), vec![r.to_string(), a.to_string(), id.to_string()])
            }),
            (user(), ulid(), ulid()).prop_map(|(u, l, f)| {
                let (l, f) = (ListingId::from_ulid(l), FavoriteId::from_ulid(f));
                (favorite::item_keys(&u, &l, &f), vec![u.to_string(), l.to_string(), f.to_string()])
            }),
            (user(), ulid()).prop_map(|(u, l)| {
                let l = ListingId::from_ulid(l);
                (
                    ItemKeys::table_only(EntityType::FavoriteMarker, favorite_marker::key(&u, &l)),
                    vec![u.to_string(), l.to_string()],
                )
            }),
            (ulid(), ulid()).prop_map(|(o, m)| {
                let (o, m) = (OrderId::from_ulid(o), MessageId::from_ulid(m));
                (
                    ItemKeys::table_only(EntityType::OrderMessage, order_message::key(&o, &m)),
                    vec![o.to_string(), m.to_string()],
                )
            }),
            (user(), ulid()).prop_map(|(u, r)| {
                let r = ReviewId::from_ulid(r);
                (
                    ItemKeys::table_only(EntityType::RatingMarker, rating_marker::key(&u, &r)),
                    vec![u.to_string(), r.to_string()],
                )
            }),
            (user(), "[a-z]{1,10}", "[A-Za-z0-9_-]{1,64}").prop_map(|(u, r, k)| {
                (ItemKeys::table_only(EntityType::Idempotency, idempotency::key(&u, &r, &k)), vec![u.to_string(), r, k])
            }),
            slug().prop_map(|b| {
                let b: BrandId = b.parse().unwrap();
                (ItemKeys::table_only(EntityType::Brand, brand::key(&b)), vec![b.to_string()])
            }),
            slug().prop_map(|c| {
                let c: CategoryId = c.parse().unwrap();
                (ItemKeys::table_only(EntityType::Category, category::key(&c)), vec![c.to_string()])
            }),
            (ulid(), slug(), slug()).prop_map(|(p, b, c)| {
                let (p, b, c): (ProductId, BrandId, CategoryId) =
                    (ProductId::from_ulid(p), b.parse().unwrap(), c.parse().unwrap());
                (product::item_keys(&p, &b, &c), vec![p.to_string(), b.to_string(), c.to_string()])
            }),
        ]
    }

    proptest! {
        /// Every key an entity writes matches its template on that index, no
        /// other entity's template on that index, and parses back into the
        /// ids it was built from.
        #[test]
        fn keys_follow_templates_and_round_trip((item, ids) in any_item()) {
            let schema = schema_of(item.entity);
            for index in Index::ALL {
                let Some(key) = item.on(index) else { continue };
                let template = schema.on(index).expect("entity writes only indexes of its schema");
                let mut captured = match_template(template.pk, &key.pk).expect("pk matches its template");
                captured.extend(match_template(template.sk, &key.sk).expect("sk matches its template"));
                for c in &captured {
                    prop_assert!(ids.iter().any(|id| id == c) || c.parse::<u16>().is_ok(), "{c} is not one of {ids:?}");
                }
                for other in crate::schema::ENTITIES.iter().filter(|e| e.entity != item.entity) {
                    if let Some(t) = other.on(index) {
                        let both = match_template(t.pk, &key.pk).is_some() && match_template(t.sk, &key.sk).is_some();
                        prop_assert!(!both, "{:?} key {key:?} reads as {:?}", item.entity, other.entity);
                    }
                }
            }
        }
    }

    #[test]
    fn exact_key_shapes() {
        let u: UserId = "u_alice".parse().unwrap();
        let e: Email = "alice@x.com".parse().unwrap();
        assert_eq!(user::by_email(&e, &u), Key::new("USER_EMAIL#alice@x.com", "USER#u_alice"));
        let l = ListingId::from_ulid(Ulid::from_parts(1, 2));
        let c: CategoryId = "pottery".parse().unwrap();
        let keys = listing::browse_keys(&l, &u, ListingStatus::Sold, &c, Money::from_cents(2800));
        assert_eq!(keys.on(Index::Gsi1).unwrap().sk, format!("LISTING#sold#{l}"));
        assert!(keys.on(Index::Gsi2).is_none(), "sold listings are not in the browse index");
        let b: BrandId = "acme".parse().unwrap();
        let p = ProductId::from_ulid(Ulid::from_parts(1, 3));
        assert_eq!(product::by_brand(&b, &c, &p), Key::new("BRAND#acme", format!("CATEGORY#pottery#PRODUCT#{p}")));
        assert_eq!(product::by_category(&c, &b, &p), Key::new("CATEGORY#pottery", format!("BRAND#acme#PRODUCT#{p}")));
    }
}
