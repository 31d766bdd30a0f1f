//! The write side of the key schema: every state change an entity goes
//! through, as a pure [`Change`] (what is set, removed or added, under which
//! condition), computed from the same key functions as the reads.
//!
//! A handler says *what* changes (`write::listing::set_status(..)`); the
//! change knows *which keys move* with it (a listing's status moves its GSI1
//! sort key and, leaving `active`, drops its GSI2 browse keys; an order's
//! status moves its GSI3 partition; an email moves the user's GSI1
//! partition). The store renders a change into an `UpdateItem` or one
//! action of a transaction; no function spells an index attribute.

use crate::ids::{Email, ListingId, OrderId, ProductId, ReviewId, UserId};
use crate::keys::{self, Key};
use crate::model::{ListingStatus, Money, OrderStatus, Product};
use crate::schema::{Index, PK};

/// Names of the non-key attributes that changes touch (the entities'
/// camelCase field names).
pub mod attr {
    /// `status` of listings and orders.
    pub const STATUS: &str = "status";
    /// `updatedAt` of every mutable entity.
    pub const UPDATED_AT: &str = "updatedAt";
    /// A listing's `price`, a product's `price`.
    pub const PRICE: &str = "price";
    /// A listing's `title`.
    pub const TITLE: &str = "title";
    /// A listing's `sellerId`.
    pub const SELLER_ID: &str = "sellerId";
    /// A user's `name`.
    pub const NAME: &str = "name";
    /// A user's `email`.
    pub const EMAIL: &str = "email";
    /// A user's `role`.
    pub const ROLE: &str = "role";
    /// A user's `ratingSum` (sum of the ratings counted).
    pub const RATING_SUM: &str = "ratingSum";
    /// A user's `reviewCount` (reviews counted).
    pub const REVIEW_COUNT: &str = "reviewCount";
    /// An order's `buyerReviewId`.
    pub const BUYER_REVIEW_ID: &str = "buyerReviewId";
    /// An order's `sellerReviewId`.
    pub const SELLER_REVIEW_ID: &str = "sellerReviewId";
    /// A rating or favorite marker's `state`.
    pub const MARKER_STATE: &str = "state";
    /// A marker's `weight`: what it counted.
    pub const MARKER_WEIGHT: &str = "weight";
    /// A marker's `version`: the latest instance it saw (favorites).
    pub const MARKER_VERSION: &str = "version";
    /// A listing's `favoriteCount`.
    pub const FAVORITE_COUNT: &str = "favoriteCount";
    /// An email guard's `userId`.
    pub const USER_ID: &str = "userId";
    /// A product's `stockLevel`.
    pub const STOCK_LEVEL: &str = "stockLevel";
}

/// A scalar attribute value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A string.
    S(String),
    /// A number, as its decimal text.
    N(String),
}

impl Value {
    /// A string value.
    pub fn s(v: impl Into<String>) -> Value {
        Value::S(v.into())
    }
    /// A number value.
    pub fn n(v: impl std::fmt::Display) -> Value {
        Value::N(v.to_string())
    }
}

/// One clause of a change's condition (all clauses must hold).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    /// The item exists.
    ItemExists,
    /// The attribute exists.
    Exists(&'static str),
    /// The attribute does not exist.
    NotExists(&'static str),
    /// `attribute = value`.
    Eq(&'static str, Value),
    /// `attribute <> value`.
    Ne(&'static str, Value),
    /// The attribute is missing or differs from the value.
    Differs(&'static str, Value),
    /// `attribute >= value`.
    Ge(&'static str, Value),
    /// `attribute <= value`.
    Le(&'static str, Value),
}

/// A change to one item: the attributes set, removed and added (numbers),
/// and the condition under which it applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The item's primary key.
    pub key: Key,
    /// `SET attribute = value`.
    pub set: Vec<(&'static str, Value)>,
    /// `REMOVE attribute`.
    pub remove: Vec<&'static str>,
    /// `ADD attribute number`.
    pub add: Vec<(&'static str, Value)>,
    /// All must hold, or nothing is written.
    pub condition: Vec<Cond>,
}

impl Change {
    /// A change to the item with this primary key, stamped `updatedAt = now`.
    pub fn of(key: Key, now: &str) -> Change {
        Change { key, set: vec![(attr::UPDATED_AT, Value::s(now))], remove: vec![], add: vec![], condition: vec![] }
    }

    /// A change that sets no timestamp (index flags kept by the stream processor).
    pub fn untimed(key: Key) -> Change {
        Change { key, set: vec![], remove: vec![], add: vec![], condition: vec![] }
    }

    /// Also sets `attribute = value`.
    pub fn set(mut self, attribute: &'static str, value: Value) -> Change {
        self.set.push((attribute, value));
        self
    }

    /// Also sets both attributes of a key on `index`.
    pub fn set_key(self, index: Index, key: Key) -> Change {
        self.set(index.pk(), Value::S(key.pk)).set(index.sk(), Value::S(key.sk))
    }

    /// Also removes both attributes of the key on `index`.
    pub fn remove_key(mut self, index: Index) -> Change {
        self.remove.extend([index.pk(), index.sk()]);
        self
    }

    /// Also adds `delta` to a number attribute.
    pub fn add(mut self, attribute: &'static str, delta: i64) -> Change {
        self.add.push((attribute, Value::n(delta)));
        self
    }

    /// Only if `cond` holds too.
    pub fn only_if(mut self, cond: Cond) -> Change {
        self.condition.push(cond);
        self
    }
}

/// Listings: a status moves the GSI1 sort key; leaving `active` drops the
/// GSI2 browse keys in the same write (the stream processor adds them to
/// active listings, never to others).
pub mod listing {
    use super::*;

    /// Sets the status of a listing of `seller` (its GSI1 sort key moves
    /// with it). Callers add the condition the change needs.
    pub fn set_status(id: &ListingId, seller: &UserId, to: ListingStatus, now: &str) -> Change {
        let change = Change::of(keys::listing::key(id), now)
            .set(attr::STATUS, Value::s(to.as_str()))
            .set_key(Index::Gsi1, keys::listing::by_seller(seller, to, id));
        if to == ListingStatus::Active {
            change
        } else {
            change.remove_key(Index::Gsi2).remove_key(Index::Gsi3)
        }
    }

    /// Moves a listing from `from` to `to`, only if it is still `from`.
    pub fn move_status(id: &ListingId, seller: &UserId, from: ListingStatus, to: ListingStatus, now: &str) -> Change {
        set_status(id, seller, to, now).only_if(Cond::Eq(attr::STATUS, Value::s(from.as_str())))
    }

    /// Marks an active listing sold by an order, only if still active at the price read.
    pub fn sell(id: &ListingId, seller: &UserId, price: Money, now: &str) -> Change {
        move_status(id, seller, ListingStatus::Active, ListingStatus::Sold, now)
            .only_if(Cond::Eq(attr::PRICE, Value::n(price)))
    }

    /// Puts an active listing into the browse indexes (the stream
    /// processor): GSI2 by age, GSI3 by the price it has. Only while it is
    /// still active at that price, so a stale record sets nothing; setting
    /// keys that are already right changes nothing either.
    pub fn index_for_browse(id: &ListingId, category: &crate::ids::CategoryId, price: Money) -> Change {
        Change::untimed(keys::listing::key(id))
            .set_key(Index::Gsi2, keys::listing::by_category(category, id))
            .set_key(Index::Gsi3, keys::listing::by_price(category, price, id))
            .only_if(Cond::Eq(attr::STATUS, Value::s(ListingStatus::Active.as_str())))
            .only_if(Cond::Eq(attr::PRICE, Value::n(price)))
            .only_if(Cond::Differs(Index::Gsi3.sk(), Value::s(keys::listing::by_price(category, price, id).sk)))
    }

    /// Takes a listing that is no longer active out of the browse indexes
    /// (the stream processor repairing drift).
    pub fn unindex_for_browse(id: &ListingId) -> Change {
        Change::untimed(keys::listing::key(id))
            .remove_key(Index::Gsi2)
            .remove_key(Index::Gsi3)
            .only_if(Cond::Ne(attr::STATUS, Value::s(ListingStatus::Active.as_str())))
            .only_if(Cond::Exists(Index::Gsi2.pk()))
    }
}

/// Orders: a status moves the GSI3 partition (`STATUS#<status>#<shard>`).
pub mod order {
    use super::*;

    /// Moves an order from `from` to `to`, only if it is still `from`.
    pub fn move_status(id: &OrderId, shard: u16, from: OrderStatus, to: OrderStatus, now: &str) -> Change {
        Change::of(keys::order::key(id), now)
            .set(attr::STATUS, Value::s(to.as_str()))
            .set_key(
                Index::Gsi3,
                keys::Key { pk: keys::order::status_partition(to, shard), sk: keys::order::sort_value(id) },
            )
            .only_if(Cond::Eq(attr::STATUS, Value::s(from.as_str())))
    }
}

/// Reviews: "once per party per order" is the order's own condition.
pub mod review {
    use super::*;
    use crate::model::Party;

    /// Records on a delivered order that `party` reviewed it, only if the
    /// order is still delivered and that party has not reviewed it yet. Put
    /// in the same transaction as the review, so a second review by the
    /// same party (even concurrent) fails as a whole.
    pub fn record_on_order(order: &OrderId, party: Party, review: &ReviewId, now: &str) -> Change {
        let field = match party {
            Party::Buyer => attr::BUYER_REVIEW_ID,
            Party::Seller => attr::SELLER_REVIEW_ID,
        };
        Change::of(keys::order::key(order), now)
            .set(field, Value::s(review.to_string()))
            .only_if(Cond::Eq(attr::STATUS, Value::s(OrderStatus::Delivered.as_str())))
            .only_if(Cond::NotExists(field))
    }
}

/// Markers of counted instances (see the stream processor's counters):
/// their state, the weight they counted and, for markers serving successive
/// instances, the latest version seen.
pub mod marker {
    use super::*;
    use crate::model::MarkerState;

    /// The marker fields of a state, a weight and a version.
    pub fn fields(state: MarkerState, weight: u32, version: Option<String>) -> Vec<(&'static str, Value)> {
        let mut out = vec![(attr::MARKER_STATE, Value::s(state.as_str())), (attr::MARKER_WEIGHT, Value::n(weight))];
        out.extend(version.map(|v| (attr::MARKER_VERSION, Value::s(v))));
        out
    }

    /// Moves the marker at `key` from `from` (state and version as read) to
    /// `to` (state, weight, version), only if it is still as read.
    pub fn move_to(key: Key, from: (MarkerState, Option<String>), to: (MarkerState, u32, Option<String>)) -> Change {
        let (to_state, to_weight, to_version) = to;
        let mut change = Change::untimed(key);
        for (attr, value) in fields(to_state, to_weight, to_version) {
            change = change.set(attr, value);
        }
        let change = change.only_if(Cond::Eq(attr::MARKER_STATE, Value::s(from.0.as_str())));
        match from.1 {
            Some(version) => change.only_if(Cond::Eq(attr::MARKER_VERSION, Value::s(version))),
            None => change.only_if(Cond::NotExists(attr::MARKER_VERSION)),
        }
    }
}

/// Users: an email moves the GSI1 partition (`USER_EMAIL#<email>`).
pub mod user {
    use super::*;

    /// Changes a user's email, only if it is still `from` (the guard items
    /// move in the same transaction: see [`email_guard`]).
    pub fn change_email(id: &UserId, from: &Email, to: &Email, now: &str) -> Change {
        Change::of(keys::user::key(id), now)
            .set(attr::EMAIL, Value::s(to.as_str()))
            .set_key(Index::Gsi1, keys::user::by_email(to, id))
            .only_if(Cond::Eq(attr::EMAIL, Value::s(from.as_str())))
    }

    /// Changes a user's display name (the user must exist).
    pub fn rename(id: &UserId, name: &str, now: &str) -> Change {
        Change::of(keys::user::key(id), now).set(attr::NAME, Value::s(name)).only_if(Cond::ItemExists)
    }

    /// Makes a signed-up user a seller too (`role = both`).
    pub fn become_seller(id: &UserId, now: &str) -> Change {
        Change::of(keys::user::key(id), now)
            .set(attr::ROLE, Value::s(crate::model::UserRole::Both.as_str()))
            .only_if(Cond::ItemExists)
    }
}

/// Email guards: released only by the user holding them.
pub mod email_guard {
    use super::*;

    /// The condition for deleting `email`'s guard: `user` holds it.
    pub fn held_by(user: &UserId) -> Cond {
        Cond::Eq(attr::USER_ID, Value::s(user.as_str()))
    }
}

/// Products: stock changes are `ADD`s (applied by DynamoDB, never
/// read-modify-write) bounded to `0..=Product::MAX_STOCK`.
pub mod product {
    use super::*;

    /// Adds `delta` units (negative to take), only if the product exists and
    /// the result stays within `0..=MAX_STOCK`. `None` if `delta` alone
    /// passes the bound.
    pub fn change_stock(id: &ProductId, delta: i64, now: &str) -> Option<Change> {
        let max = i64::from(Product::MAX_STOCK);
        if delta.unsigned_abs() > max.unsigned_abs() {
            return None;
        }
        // Below zero: need at least -delta in stock. Above: need room for delta.
        let bound = if delta < 0 {
            Cond::Ge(attr::STOCK_LEVEL, Value::n(-delta))
        } else {
            Cond::Le(attr::STOCK_LEVEL, Value::n(max - delta))
        };
        Some(
            Change::of(keys::product::key(id), now)
                .add(attr::STOCK_LEVEL, delta)
                .only_if(Cond::ItemExists)
                .only_if(bound),
        )
    }

    /// Takes `qty` units for an order, only if enough are left at the price read.
    pub fn take_for_order(id: &ProductId, qty: u32, price: Money, now: &str) -> Change {
        Change::of(keys::product::key(id), now)
            .add(attr::STOCK_LEVEL, -i64::from(qty))
            .only_if(Cond::Ge(attr::STOCK_LEVEL, Value::n(qty)))
            .only_if(Cond::Eq(attr::PRICE, Value::n(price)))
    }

    /// Gives `qty` units back (a cancelled order), only if the product still
    /// exists and the result stays within `MAX_STOCK`.
    pub fn restock(id: &ProductId, qty: u32, now: &str) -> Change {
        let room = Product::MAX_STOCK.saturating_sub(qty);
        Change::of(keys::product::key(id), now)
            .add(attr::STOCK_LEVEL, i64::from(qty))
            .only_if(Cond::ItemExists)
            .only_if(Cond::Le(attr::STOCK_LEVEL, Value::n(room)))
    }
}

impl Cond {
    /// Evaluates the clause on an item given as attribute -> value (for
    /// tests of the write side without a table).
    pub fn holds(&self, item: &std::collections::BTreeMap<String, Value>) -> bool {
        // Numbers compare by value, as DynamoDB compares them (28 = 28.00).
        let num = |v: &Value| match v {
            Value::N(n) => n.parse::<f64>().ok(),
            Value::S(_) => None,
        };
        let cmp = |a: &str, v: &Value, f: fn(f64, f64) -> bool| matches!((item.get(a).and_then(num), num(v)), (Some(x), Some(y)) if f(x, y));
        let eq = |a: &str, v: &Value| match (item.get(a), v) {
            (Some(Value::N(_)), Value::N(_)) => cmp(a, v, |x, y| x == y),
            (found, v) => found == Some(v),
        };
        match self {
            Cond::ItemExists => item.contains_key(PK),
            Cond::Exists(a) => item.contains_key(*a),
            Cond::NotExists(a) => !item.contains_key(*a),
            Cond::Eq(a, v) => eq(a, v),
            Cond::Ne(a, v) | Cond::Differs(a, v) => !eq(a, v),
            Cond::Ge(a, v) => cmp(a, v, |x, y| x >= y),
            Cond::Le(a, v) => cmp(a, v, |x, y| x <= y),
        }
    }
}

impl Change {
    /// Applies the change to an item given as attribute -> value, as
    /// DynamoDB would: `false` (and no change) if the condition fails.
    pub fn apply(&self, item: &mut std::collections::BTreeMap<String, Value>) -> bool {
        if !self.condition.iter().all(|c| c.holds(item)) {
            return false;
        }
        for (a, v) in &self.set {
            item.insert((*a).to_owned(), v.clone());
        }
        for a in &self.remove {
            item.remove(*a);
        }
        for (a, d) in &self.add {
            let old = item.get(*a).and_then(|v| if let Value::N(n) = v { n.parse::<i128>().ok() } else { None });
            let delta = if let Value::N(n) = d { n.parse::<i128>().unwrap_or(0) } else { 0 };
            item.insert((*a).to_owned(), Value::n(old.unwrap_or(0) + delta));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::CategoryId;
    use crate::keys::ItemKeys;
    use proptest::prelude::*;
    use std::collections::BTreeMap;
    use ulid::Ulid;

    type Item = BTreeMap<String, Value>;

    /// An item holding exactly these keys plus some fields.
    fn item(keys: &ItemKeys, fields: &[(&str, Value)]) -> Item {
        let mut item: Item = keys.attributes().map(|(a, v)| (a.to_owned(), Value::s(v))).collect();
        item.extend(fields.iter().map(|(a, v)| ((*a).to_owned(), v.clone())));
        item
    }

    /// The key attributes an item carries, per index.
    fn keys_of(item: &Item) -> Vec<(String, String)> {
        Index::all_key_attributes()
            .filter_map(|a| match item.get(a) {
                Some(Value::S(v)) => Some((a.to_owned(), v.clone())),
                _ => None,
            })
            .collect()
    }

    fn expected(keys: &ItemKeys) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = keys.attributes().map(|(a, v)| (a.to_owned(), v.to_owned())).collect();
        let order: Vec<&str> = Index::all_key_attributes().collect();
        v.sort_by_key(|(a, _)| order.iter().position(|o| o == a));
        v
    }

    fn user_id() -> impl Strategy<Value = UserId> {
        "[A-Za-z0-9._:@|+-]{1,40}".prop_map(|s| s.parse().unwrap())
    }
    fn email() -> impl Strategy<Value = Email> {
        "[a-z0-9._+-]{1,20}@[a-z0-9-]{1,10}\\.[a-z]{2,4}".prop_map(|s| s.parse().unwrap())
    }
    fn listing_status() -> impl Strategy<Value = ListingStatus> {
        proptest::sample::select(ListingStatus::ALL.to_vec())
    }
    fn allowed_order_moves() -> impl Strategy<Value = (OrderStatus, OrderStatus)> {
        let all = OrderStatus::ALL.iter().flat_map(|a| OrderStatus::ALL.iter().map(move |b| (*a, *b)));
        proptest::sample::select(all.filter(|(a, b)| a.can_become(*b)).collect::<Vec<_>>())
    }

    const NOW: &str = "2026-11-22T00:00:00.000Z";

    proptest! {
        /// A listing, in any status (indexed for browse or not while
        /// active), moved by any allowed change: afterwards it carries
        /// exactly the table and GSI1 keys of its new status, and GSI2 keys
        /// only if active (and then only the right ones).
        #[test]
        fn listing_status_changes_carry_their_keys(
            id in any::<u128>(), seller in user_id(), category in "[a-z0-9-]{1,20}",
            from in listing_status(), to in listing_status(), indexed in any::<bool>(), how in 0..3u8,
        ) {
            let id = ListingId::from_ulid(Ulid(id));
            let category: CategoryId = category.parse().unwrap();
            let price = Money::from_cents(2800);
            let start_keys = if indexed {
                keys::listing::browse_keys(&id, &seller, from, &category, price)
            } else {
                keys::listing::item_keys(&id, &seller, from)
            };
            let mut stored = item(&start_keys, &[(attr::STATUS, Value::s(from.as_str())), (attr::PRICE, Value::n(price))]);
            let change = match how {
                0 => set_status_by_seller(&id, &seller, to),
                1 => Some(listing::move_status(&id, &seller, from, to, NOW)),
                _ => Some(listing::sell(&id, &seller, price, NOW)),
            };
            let Some(change) = change else { return Ok(()) };
            let applied = change.apply(&mut stored);
            let now = match &stored[attr::STATUS] { Value::S(s) => s.parse::<ListingStatus>().unwrap(), _ => unreachable!() };
            let should_apply = match how {
                0 => from != ListingStatus::Sold,
                1 => true,
                _ => from == ListingStatus::Active,
            };
            prop_assert_eq!(applied, should_apply);
            let want = keys::listing::item_keys(&id, &seller, now);
            let have = keys_of(&stored);
            let is_browse = |a: &str| a.starts_with("gsi2") || a.starts_with("gsi3");
            let without_browse: Vec<_> = have.iter().filter(|(a, _)| !is_browse(a)).cloned().collect();
            prop_assert_eq!(without_browse, expected(&want));
            let browse: Vec<_> = have.iter().filter(|(a, _)| is_browse(a)).cloned().collect();
            if now == ListingStatus::Active && !browse.is_empty() {
                prop_assert_eq!(browse, expected(&keys::listing::browse_keys(&id, &seller, now, &category, price))
                    .into_iter().filter(|(a, _)| is_browse(a)).collect::<Vec<_>>());
            } else {
                prop_assert!(browse.is_empty() || now == ListingStatus::Active, "a {now} listing left in browse: {browse:?}");
            }
        }

        /// An order moved along any allowed transition carries exactly the
        /// keys of its new status (GSI3 in the new status's shard partition).
        #[test]
        fn order_status_changes_carry_their_keys(
            id in any::<u128>(), buyer in user_id(), seller in proptest::option::of(user_id()),
            (from, to) in allowed_order_moves(), shards in 1u16..=100,
        ) {
            let id = OrderId::from_ulid(Ulid(id));
            let shard = crate::shard::order_shard(&id, shards);
            let mut stored = item(&keys::order::item_keys(&id, &buyer, seller.as_ref(), from, shards), &[(attr::STATUS, Value::s(from.as_str()))]);
            prop_assert!(order::move_status(&id, shard, from, to, NOW).apply(&mut stored));
            prop_assert_eq!(keys_of(&stored), expected(&keys::order::item_keys(&id, &buyer, seller.as_ref(), to, shards)));
            // A second, stale application changes nothing.
            prop_assert!(!order::move_status(&id, shard, from, to, NOW).apply(&mut stored));
        }

        /// An email change moves the user's GSI1 key and nothing else.
        #[test]
        fn email_changes_carry_their_keys(id in user_id(), old in email(), new in email()) {
            let mut stored = item(&keys::user::item_keys(&id, &old), &[(attr::EMAIL, Value::s(old.as_str()))]);
            prop_assert!(user::change_email(&id, &old, &new, NOW).apply(&mut stored));
            prop_assert_eq!(keys_of(&stored), expected(&keys::user::item_keys(&id, &new)));
        }

        /// Stock never leaves `0..=MAX_STOCK`, whatever the delta.
        #[test]
        fn stock_stays_in_bounds(stock in 0..=Product::MAX_STOCK, delta in any::<i64>(), small in -2000i64..2000) {
            let id = ProductId::from_ulid(Ulid(7));
            for delta in [delta, small] {
                let keys = ItemKeys::table_only(crate::schema::EntityType::Product, keys::product::key(&id));
                let mut stored = item(&keys, &[(attr::STOCK_LEVEL, Value::n(stock))]);
                if let Some(change) = product::change_stock(&id, delta, NOW) {
                    let applied = change.apply(&mut stored);
                    let after = i128::from(stock) + i128::from(delta);
                    prop_assert_eq!(applied, (0..=i128::from(Product::MAX_STOCK)).contains(&after));
                    prop_assert_eq!(keys_of(&stored), expected(&keys));
                } else {
                    prop_assert!(delta.unsigned_abs() > u64::from(Product::MAX_STOCK));
                }
                let mut restocked = item(&keys, &[(attr::STOCK_LEVEL, Value::n(stock))]);
                let qty = u32::try_from(small.unsigned_abs()).unwrap();
                let applied = product::restock(&id, qty, NOW).apply(&mut restocked);
                prop_assert_eq!(applied, stock + qty <= Product::MAX_STOCK);
            }
        }
    }

    /// The seller's PATCH: any status but sold, on a listing not sold.
    fn set_status_by_seller(id: &ListingId, seller: &UserId, to: ListingStatus) -> Option<Change> {
        (to != ListingStatus::Sold).then(|| {
            listing::set_status(id, seller, to, NOW)
                .only_if(Cond::Ne(attr::STATUS, Value::s(ListingStatus::Sold.as_str())))
        })
    }

    #[test]
    fn selling_needs_the_price_read_and_an_active_listing() {
        let (id, seller) = (ListingId::from_ulid(Ulid(1)), "alice".parse::<UserId>().unwrap());
        let keys = keys::listing::item_keys(&id, &seller, ListingStatus::Active);
        let mut stored = item(&keys, &[(attr::STATUS, Value::s("active")), (attr::PRICE, Value::n(28))]);
        assert!(!listing::sell(&id, &seller, Money::from_cents(2700), NOW).apply(&mut stored));
        assert!(listing::sell(&id, &seller, Money::from_cents(2800), NOW).apply(&mut stored));
        assert!(!listing::sell(&id, &seller, Money::from_cents(2800), NOW).apply(&mut stored), "sold once");
    }
}
