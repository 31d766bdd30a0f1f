//! Every state change an entity goes through, as a pure [`Change`]: what is
//! set, removed or added, and the business conditions under which it
//! applies ("sell only if still active at the price read"). The key moves a
//! change makes are not written here: [`crate::decl`] derives them from the
//! entity's declaration (a listing's status moves its `by_seller` sort key
//! and, leaving `active`, removes its browse keys; an order's status moves
//! its `by_status` partition; an email moves the user's `by_email` key).

use domain::ids::{CategoryId, Email, ListingId, OrderId, ProductId, ReviewId, UserId};
use domain::model::{ListingStatus, Money, Order, OrderStatus, Party, Product, UserRole};

use crate::change::{Change, Cond};
use crate::decl::SchemaError;
use crate::entities;
use crate::key::Key;
use crate::keys;
use crate::table::EntityType;
use crate::value::{Attrs, Value};

pub use crate::change::UPDATED_AT;

/// Names of the non-key attributes that changes touch: the entities'
/// camelCase field names (a test checks each is a field of the entity it is
/// written to).
pub mod attr {
    /// `status` of listings and orders.
    pub const STATUS: &str = "status";
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
    /// An aggregate's `countVersion`: one more at every repair of it by
    /// reconcile (and, before folded counts, at every change of its
    /// numbers), so two repairs conditioned on it do not both add the same
    /// difference.
    pub const COUNT_VERSION: &str = "countVersion";
    /// An aggregate part's `sum` and `count` (what it adds).
    pub const PART_SUM: &str = "sum";
    /// An aggregate part's `count`.
    pub const PART_COUNT: &str = "count";
    /// What of its parts an aggregate's holder has folded in: the sum of
    /// their `rev`s, `sum`s and `count`s at the last fold (per kind).
    pub const FAVORITES_FOLDED: super::Folded =
        super::Folded { rev: "favoritesFoldedRev", sum: None, count: "favoritesFoldedCount" };
    /// The same for ratings (a user's, a category's).
    pub const RATINGS_FOLDED: super::Folded =
        super::Folded { rev: "ratingsFoldedRev", sum: Some("ratingsFoldedSum"), count: "ratingsFoldedCount" };
    /// An email guard's `userId`.
    pub const USER_ID: &str = "userId";
    /// A product's `stockLevel`.
    pub const STOCK_LEVEL: &str = "stockLevel";
    /// A product's `stockShards` (absent: its stock is one item).
    pub const STOCK_SHARDS: &str = "stockShards";
    /// A review's category (backfilled on reviews written before categories were rated).
    pub const CATEGORY_ID: &str = "categoryId";
    /// A review's `rating` (1 to 5).
    pub const RATING: &str = "rating";
    /// A rating slot's `rev`: one more at every write of it.
    pub const REV: &str = "rev";
    /// A favorite's `favoriteId` (one per favoriting).
    pub const FAVORITE_ID: &str = "favoriteId";
}

fn v(part: impl std::fmt::Display) -> Value {
    Value::S(part.to_string())
}

fn known(parts: &[(&str, Value)]) -> Attrs {
    parts.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
}

/// Listings.
pub mod listing {
    use super::*;

    /// Sets the status of a listing of `seller`, with the key moves it makes.
    /// Callers add the condition the change needs.
    pub fn set_status(id: &ListingId, seller: &UserId, to: ListingStatus, now: &str) -> Result<Change, SchemaError> {
        let change = Change::of(keys::listing(id)?, now).set(attr::STATUS, v(to));
        entities::listing::ENTITY.with_key_moves(change, &known(&[("listingId", v(id)), ("sellerId", v(seller))]))
    }

    /// A seller's edit of a listing of theirs: any of its status, title and
    /// price, with the key moves they make (a price moves the by_price sort
    /// key in the same write, whether or not the listing is in that index
    /// now). Callers add the condition the edit needs.
    pub fn edit(
        id: &ListingId,
        seller: &UserId,
        to: Option<ListingStatus>,
        title: Option<&str>,
        price: Option<Money>,
        now: &str,
    ) -> Result<Change, SchemaError> {
        let mut change = Change::of(keys::listing(id)?, now);
        if let Some(to) = to {
            change = change.set(attr::STATUS, v(to));
        }
        if let Some(title) = title {
            change = change.set(attr::TITLE, Value::s(title));
        }
        if let Some(price) = price {
            change = change.set(attr::PRICE, Value::n(price));
        }
        entities::listing::ENTITY.with_key_moves(change, &known(&[("listingId", v(id)), ("sellerId", v(seller))]))
    }

    /// Moves a listing from `from` to `to`, only if it is still `from`.
    pub fn move_status(
        id: &ListingId,
        seller: &UserId,
        from: ListingStatus,
        to: ListingStatus,
        now: &str,
    ) -> Result<Change, SchemaError> {
        Ok(set_status(id, seller, to, now)?.only_if(Cond::Eq(attr::STATUS, v(from))))
    }

    /// Marks an active listing sold by an order, only if still active at the price read.
    pub fn sell(id: &ListingId, seller: &UserId, price: Money, now: &str) -> Result<Change, SchemaError> {
        Ok(move_status(id, seller, ListingStatus::Active, ListingStatus::Sold, now)?
            .only_if(Cond::Eq(attr::PRICE, Value::n(price))))
    }

    /// The image of a listing as the stream processor's tests build it.
    pub fn image(id: &ListingId, seller: &UserId, category: &CategoryId, status: ListingStatus, price: Money) -> Attrs {
        known(&[
            ("listingId", v(id)),
            ("sellerId", v(seller)),
            ("categoryId", v(category)),
            ("status", v(status)),
            ("price", Value::n(price)),
        ])
    }
}

/// Orders.
pub mod order {
    use super::*;

    /// Moves an order from `from` to `to`, only if it is still `from` (its
    /// `by_status` key moves with it, in the shard recorded at placement).
    pub fn move_status(
        id: &OrderId,
        shard: u16,
        from: OrderStatus,
        to: OrderStatus,
        now: &str,
    ) -> Result<Change, SchemaError> {
        let change = Change::of(keys::order(id)?, now).set(attr::STATUS, v(to));
        let change =
            entities::order::ENTITY.with_key_moves(change, &known(&[("orderId", v(id)), ("shard", v(shard))]))?;
        Ok(change.only_if(Cond::Eq(attr::STATUS, v(from))))
    }

    /// Action name of the order's own write in a [`cancel`].
    pub const ORDER: &str = "order";
    /// Action name of the relisting in a [`cancel`].
    pub const RELIST: &str = "relist";
    /// Action-name prefix of the restocks in a [`cancel`] (then the product
    /// id and the share).
    const RESTOCK: &str = "restock ";

    /// An action of a [`cancel`], as its name says: what callers match a
    /// cancelled transaction's failed actions on.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum CancelAction {
        /// The order's own write ([`ORDER`]).
        Order,
        /// Its listing's relisting ([`RELIST`]).
        Relist,
        /// The restock of one share of a product's stock (`restock
        /// <productId> <shard>`).
        Restock(ProductId, u16),
    }

    impl CancelAction {
        /// Its name in the transaction.
        pub fn name(&self) -> String {
            match self {
                CancelAction::Order => ORDER.to_owned(),
                CancelAction::Relist => RELIST.to_owned(),
                CancelAction::Restock(product, shard) => format!("{RESTOCK}{product} {shard}"),
            }
        }

        /// The action a name names (`None`: not one of a [`cancel`]'s).
        pub fn parse(name: &str) -> Option<CancelAction> {
            match name {
                ORDER => Some(CancelAction::Order),
                RELIST => Some(CancelAction::Relist),
                _ => {
                    let (product, shard) = name.strip_prefix(RESTOCK)?.split_once(' ')?;
                    Some(CancelAction::Restock(product.parse().ok()?, shard.parse().ok()?))
                }
            }
        }
    }

    /// The cancellation of `order`, only if it is still as read (the
    /// buyer's, seller's or admin's cancel and the expiry sweeper send the
    /// same): its status, and what undoes it in the same transaction (its
    /// listing relisted, only if still sold; its units back to the shares
    /// of stock they came from, each within its cap), as named transaction
    /// actions.
    pub fn cancel(order: &Order, now: &str) -> Result<Vec<(String, Change)>, SchemaError> {
        cancel_turned(order, now, 0)
    }

    /// [`cancel`], the units of a line taken from shares of stock given
    /// back `turn` shares on from where they came (a retry of a cancel
    /// that met another transaction on those shares: units are alike, and
    /// the order's own condition keeps the cancel once).
    pub fn cancel_turned(order: &Order, now: &str, turn: u16) -> Result<Vec<(String, Change)>, SchemaError> {
        let id = &order.order_id;
        let mut actions = vec![(
            CancelAction::Order.name(),
            move_status(id, order.shard, order.status, OrderStatus::Cancelled, now)?,
        )];
        if let (Some(listing), Some(seller)) = (&order.listing_id, &order.seller_id) {
            let relist = listing::move_status(listing, seller, ListingStatus::Sold, ListingStatus::Active, now)?;
            actions.push((CancelAction::Relist.name(), relist));
            return Ok(actions);
        }
        for line in &order.lines {
            let product: ProductId = line.item_id.parse().map_err(|_| SchemaError::Field {
                entity: EntityType::Order,
                field: "lines.itemId",
                value: line.item_id.clone(),
            })?;
            // Back where they came from, each share within its cap; a line
            // of a stock of one item (or placed before shares) to the product.
            let (shards, taken) = match &line.stock {
                Some(stock) => (stock.shards, stock.taken.clone()),
                None => (1, vec![domain::stock::Taken { shard: 0, qty: line.qty }]),
            };
            for t in taken {
                let shard =
                    if shards > 1 { ((u32::from(t.shard) + u32::from(turn)) % u32::from(shards)) as u16 } else { 0 };
                let cap = domain::stock::share_cap(shard, shards);
                let restock = product::restock_share(&product, shard, t.qty, cap)?;
                actions.push((CancelAction::Restock(product, shard).name(), restock));
            }
        }
        Ok(actions)
    }
}

/// Reviews: "once per party per order" is the order's own condition.
pub mod review {
    use super::*;

    /// Records on a delivered order that `party` reviewed it, only if the
    /// order is still delivered and that party has not reviewed it yet. Put
    /// in the same transaction as the review, so a second review by the
    /// same party (even concurrent) fails as a whole.
    pub fn record_on_order(order: &OrderId, party: Party, review: &ReviewId, now: &str) -> Result<Change, SchemaError> {
        let field = match party {
            Party::Buyer => attr::BUYER_REVIEW_ID,
            Party::Seller => attr::SELLER_REVIEW_ID,
        };
        Ok(Change::of(keys::order(order)?, now)
            .set(field, v(review))
            .only_if(Cond::Eq(attr::STATUS, v(OrderStatus::Delivered)))
            .only_if(Cond::NotExists(field)))
    }

    /// Gives a review written before categories were rated the category it
    /// counts in, only if it still exists and has none (a backfill: nothing
    /// else about it changes, `updatedAt` included).
    pub fn backfill_category(
        reviewed: &UserId,
        review: &ReviewId,
        category: &CategoryId,
    ) -> Result<Change, SchemaError> {
        Ok(Change::untimed(keys::review(reviewed, review)?)
            .set(attr::CATEGORY_ID, v(category))
            .only_if(Cond::ItemExists)
            .only_if(Cond::NotExists(attr::CATEGORY_ID)))
    }
}

/// Markers of counted instances (see the stream processor's counters):
/// their state, the weight they counted and, for markers serving successive
/// instances, the latest version seen.
pub mod marker {
    use super::*;
    use crate::key::Key;
    use crate::records::MarkerState;

    /// The marker fields of a state, a weight and a version.
    pub fn fields(state: MarkerState, weight: u32, version: Option<String>) -> Vec<(&'static str, Value)> {
        let mut out = vec![(attr::MARKER_STATE, v(state.as_str())), (attr::MARKER_WEIGHT, Value::n(weight))];
        out.extend(version.map(|x| (attr::MARKER_VERSION, Value::s(x))));
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
        let change = change.only_if(Cond::Eq(attr::MARKER_STATE, v(from.0.as_str())));
        match from.1 {
            Some(version) => change.only_if(Cond::Eq(attr::MARKER_VERSION, Value::s(version))),
            None => change.only_if(Cond::NotExists(attr::MARKER_VERSION)),
        }
    }
}

/// Users.
pub mod user {
    use super::*;

    /// Changes a user's email, only if it is still `from` (its `by_email`
    /// key moves with it; the guard items move in the same transaction:
    /// see [`email_guard`]).
    pub fn change_email(id: &UserId, from: &Email, to: &Email, now: &str) -> Result<Change, SchemaError> {
        let change = Change::of(keys::user(id)?, now).set(attr::EMAIL, v(to));
        let change = entities::user::ENTITY.with_key_moves(change, &known(&[("userId", v(id))]))?;
        Ok(change.only_if(Cond::Eq(attr::EMAIL, v(from))))
    }

    /// Changes a user's display name (the user must exist).
    pub fn rename(id: &UserId, name: &str, now: &str) -> Result<Change, SchemaError> {
        Ok(Change::of(keys::user(id)?, now).set(attr::NAME, Value::s(name)).only_if(Cond::ItemExists))
    }

    /// Makes a signed-up user a seller too (`role = both`), only if the
    /// user exists and is not `both` yet: a write of its own, which a
    /// seller's concurrent first listings may all send (single writes of
    /// one item do not cancel each other as transactions do), the first
    /// applied and the others failing the condition on `both`.
    pub fn become_seller(id: &UserId, now: &str) -> Result<Change, SchemaError> {
        Ok(Change::of(keys::user(id)?, now)
            .set(attr::ROLE, v(UserRole::Both))
            .only_if(Cond::ItemExists)
            .only_if(Cond::Ne(attr::ROLE, v(UserRole::Both))))
    }
}

/// Email guards: released only by the user holding them.
pub mod email_guard {
    use super::*;

    /// The condition for deleting `email`'s guard: `user` holds it.
    pub fn held_by(user: &UserId) -> Cond {
        Cond::Eq(attr::USER_ID, v(user))
    }
}

pub mod product;

/// The attributes on which an aggregate's holder records what of its parts
/// it has folded in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Folded {
    /// The sum of the parts' `rev`s at the last fold.
    pub rev: &'static str,
    /// The sum of the parts' `sum`s then (ratings).
    pub sum: Option<&'static str>,
    /// The sum of the parts' `count`s then.
    pub count: &'static str,
}
