//! Placing an order: one `TransactWriteItems` writes the order, its items
//! (held in the order's item when they fit its write unit with it, else
//! each an item beside it: [`placement`]) and the idempotency record, and
//! marks the listing sold (only if still active at the price read) or
//! takes each product's quantity from stock (only if enough, at the price
//! read). Only signed-up users order: the buyer's user item is read with
//! the listing or the products.
//!
//! `Idempotency-Key` (required; [`api::idempotency`], route `orders`): the
//! record is put in the placement transaction, only if absent. A retry finds
//! it and gets the first order back (201, replayed); the same key with
//! another request is a 422. Concurrent requests with one key race on the
//! record's condition, so exactly one order is written; a request that
//! fails its own checks (the listing is sold, the stock is gone: perhaps by
//! the very request it retries) looks at the key again before answering,
//! so every request with the key and body answers the order once it is
//! placed, however they race.
//!
//! In a global table a key lives at its caller's home (docs/regions.md). An
//! order homed elsewhere (a listing of another region's seller, or the
//! catalog's at the primary) first reserves the key there on its own
//! (`Idempotency::reserve`, naming the order id), then places that order at
//! its home without the record; a retry finds the reservation and answers
//! the order (replayed) or places it. The same key with another request is
//! a 422 whichever region's listing either names; a reserved key is taken by
//! its first request even when that one is refused (a 409), unlike one
//! written with its order.

use std::collections::HashSet;

use api::idempotency::Idempotency;
use api::{ApiError, Request, Response};
use domain::answers::OrderAnswer;
use domain::ids::{ListingId, OrderId, ProductId, UserId};
use domain::model::{HeldItem, Listing, ListingStatus, Money, Order, OrderItem, OrderLine, OrderStatus, Product};
use domain::shard::order_shard;
use domain::stock::{LineStock, Taken};
use domain::time::{now_ms, rfc3339};
use keyschema::keys;
use keyschema::records::IdempotencyRecord;
use keyschema::table::EntityType;
use keyschema::write;
use keyschema::Key;
use serde::{Deserialize, Serialize};
use store::item::entity_type;
use store::{Item, Store, StoreError, Transaction};

use crate::{of_entity, stock, App};

mod products;
use products::place_products;

/// Most lines in one order (each line is an order item and at least one
/// share of stock taken: two transaction actions or more).
pub const MAX_LINES: usize = 25;
/// Most actions of one DynamoDB transaction.
const MAX_ACTIONS: usize = 100;
/// Most units of one line.
pub const MAX_QTY: u32 = 1000;
/// Placement attempts (each a read of the key and, if free, a transaction):
/// enough for a product's flash sale, where buyers meet on its shares of
/// stock (tests/integration/hot_items.rs), each retry after a conflict
/// after a jittered pause (`store::conflicts::pause`: below 320 ms).
const ATTEMPTS: u32 = 12;

/// Body of `POST /orders`: a listing, or catalog products.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NewOrder {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    listing_id: Option<ListingId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    items: Option<Vec<NewLine>>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NewLine {
    product_id: ProductId,
    qty: u32,
}

/// Why one placement attempt did not write.
enum Attempt {
    /// The idempotency record exists: another request with this key won.
    KeyTaken,
    /// Another transaction touched the same items; try again.
    Contended,
    /// A share of stock no longer held what was read (another order took
    /// it): try again from a fresh read.
    StockMoved,
    /// A final answer.
    Failed(ApiError),
}

impl From<ApiError> for Attempt {
    fn from(e: ApiError) -> Self {
        Attempt::Failed(e)
    }
}

impl From<keyschema::SchemaError> for Attempt {
    fn from(e: keyschema::SchemaError) -> Self {
        Attempt::Failed(e.into())
    }
}

impl From<StoreError> for Attempt {
    fn from(e: StoreError) -> Self {
        Attempt::Failed(e.into())
    }
}

/// Places an order (see the module docs). Requests: a consistent read of
/// the idempotency record, one `BatchGetItem` of the listing or products
/// and the buyer, and one `TransactWriteItems`.
pub(crate) async fn place_order(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let body: NewOrder = req.json()?;
    validate(&body)?;
    let request = serde_json::to_vec(&body).map_err(ApiError::internal)?;
    let key = Idempotency::required(&req, &caller.user_id, "orders", &request)?;
    // Written at its home (docs/regions.md): a listing's order at the
    // listing's, with its sale; a catalog order at the catalog's, the primary.
    let home = match &body.listing_id {
        Some(listing) => app.deps.listing_home(listing).await?,
        None => app.deps.store.at_primary()?,
    };
    // Keys live at their caller's home: where that is not the order's, the
    // key is reserved there first, on its own, and the order then placed
    // at its home (docs/regions.md).
    let key_home = app.deps.caller_home(&caller.user_id).await?;
    let reserved = home.region() != key_home.region();
    let mut fresh = false;
    for attempt in 0..ATTEMPTS {
        let attempt_key = if reserved {
            let first = key.with_order(OrderId::generate()).reserve(&key_home).await?;
            let order_id = first.order_id.ok_or_else(|| ApiError::internal("idempotency record without an order"))?;
            if let Some(order) = placed(&home, &order_id).await? {
                return Ok(Response::created(&OrderAnswer::from(order))?.replayed());
            }
            key.with_order(order_id)
        } else {
            if let Some(first) = key.seen(&home).await? {
                return replay(&home, &first).await;
            }
            key.with_order(OrderId::generate())
        };
        let placed_now = match (&body.listing_id, &body.items) {
            (Some(listing), _) => place_listing(app, &home, &caller.user_id, listing, &attempt_key, reserved).await,
            (None, Some(lines)) => {
                place_products(app, &home, &caller.user_id, lines, &attempt_key, fresh, reserved).await
            }
            (None, None) => Err(Attempt::Failed(ApiError::bad_request("invalid body: give `listingId` or `items`"))),
        };
        match placed_now {
            Ok(order) => return Response::created(&OrderAnswer::from(order)),
            // The listing sold or the order there: perhaps by the request
            // this one retries, which placed the reserved order.
            Err(Attempt::Failed(e)) if e.status == 409 && reserved => {
                let order_id = attempt_key.record().order_id.ok_or_else(|| ApiError::internal("no order id"))?;
                return match placed(&home, &order_id).await? {
                    Some(order) => Ok(Response::created(&OrderAnswer::from(order))?.replayed()),
                    None => Err(e),
                };
            }
            // The listing sold or the stock gone: perhaps by the request
            // this one retries, which then holds the key.
            Err(Attempt::Failed(e)) if e.status == 409 => {
                return match key.seen(&home).await? {
                    Some(first) => replay(&home, &first).await,
                    None => Err(e),
                };
            }
            Err(Attempt::Failed(e)) => return Err(e),
            Err(Attempt::KeyTaken) => continue,
            Err(Attempt::Contended) => tokio::time::sleep(store::conflicts::pause(attempt + 1)).await,
            Err(Attempt::StockMoved) => fresh = true,
        }
    }
    Err(ApiError::unavailable())
}

fn validate(body: &NewOrder) -> Result<(), ApiError> {
    let bad = |m: &str| Err(ApiError::bad_request(format!("invalid body: {m}")));
    match (&body.listing_id, &body.items) {
        (Some(_), Some(_)) | (None, None) => bad("give either `listingId` or `items`"),
        (None, Some(lines)) if lines.is_empty() || lines.len() > MAX_LINES => {
            bad(&format!("`items` must have 1 to {MAX_LINES} lines"))
        }
        (None, Some(lines)) if lines.iter().any(|l| l.qty == 0 || l.qty > MAX_QTY) => {
            bad(&format!("`qty` must be 1 to {MAX_QTY}"))
        }
        (None, Some(lines)) if lines.iter().map(|l| l.product_id).collect::<HashSet<_>>().len() != lines.len() => {
            bad("each product may appear in one line only")
        }
        _ => Ok(()),
    }
}

/// The answer to a request whose key was taken by the same request: the
/// first order, marked replayed.
async fn replay(home: &Store, record: &IdempotencyRecord) -> Result<Response, ApiError> {
    let no_order = || ApiError::internal("idempotency record without its order");
    let order_id = record.order_id.ok_or_else(no_order)?;
    let order = home.get_consistent::<Order, _>(&keys::order(&order_id)?).await?;
    Ok(Response::created(&OrderAnswer::from(order.ok_or_else(no_order)?))?.replayed())
}

/// The order placed under a reserved key, if it was (strongly consistent,
/// at its home).
async fn placed(home: &Store, order_id: &OrderId) -> Result<Option<Order>, ApiError> {
    Ok(home.get_consistent::<Order, _>(&keys::order(order_id)?).await?)
}

/// 403 unless the buyer's user item is among `items` (read with the
/// listing or products: only signed-up users order), or, in a global
/// table, at the primary (a sign-up not yet replicated here).
async fn require_signed_up(app: &App, buyer: &UserId, items: &[Item]) -> Result<(), ApiError> {
    if items.iter().any(|i| entity_type(i) == Some(EntityType::User.as_str()))
        || (app.deps.store.is_global() && app.deps.signed_up(buyer).await?.is_some())
    {
        Ok(())
    } else {
        Err(ApiError::forbidden("sign up (POST /users) before ordering"))
    }
}

fn new_order(
    app: &App,
    record: &IdempotencyRecord,
    buyer: &UserId,
    listing: Option<&Listing>,
    lines: Vec<OrderLine>,
    total: Money,
) -> Result<Order, ApiError> {
    let now = rfc3339(now_ms());
    let order_id = record.order_id.ok_or_else(|| ApiError::internal("idempotency record without an order id"))?;
    Ok(Order {
        // Its listing's home as the listing names it (none: the primary, as
        // a catalog order's): a failover that moves the primary moves them.
        home: listing.and_then(|l| l.home.clone()),
        order_id,
        buyer_id: buyer.clone(),
        seller_id: listing.map(|l| l.seller_id.clone()),
        listing_id: listing.map(|l| l.listing_id),
        category_id: listing.map(|l| l.category_id.clone()),
        status: OrderStatus::Pending,
        total,
        lines,
        shard: order_shard(&order_id, app.shards),
        buyer_review_id: None,
        seller_review_id: None,
        held_items: Vec::new(),
        created_at: now.clone(),
        updated_at: now,
    })
}

/// Sends the placement: the idempotency record's failed condition is
/// `KeyTaken`, pure contention `Contended`; other failed conditions come
/// back (`Err(Ok(..))`) for the caller to name.
async fn send(tx: Transaction) -> Result<(), Result<StoreError, Attempt>> {
    match tx.send().await {
        Ok(()) => Ok(()),
        Err(e) if e.failed(api::idempotency::ACTION) => Err(Err(Attempt::KeyTaken)),
        Err(e) if e.is_transaction_conflict() => Err(Err(Attempt::Contended)),
        Err(e) if e.failed_actions().next().is_some() => Err(Ok(e)),
        Err(e) => Err(Err(e.into())),
    }
}

/// Name prefix of the actions taking a product's units.
const STOCK: &str = "stock ";

/// What later writes add to an order's item, kept free in its write unit:
/// both parties' review ids (79 bytes) and a status two characters longer
/// (in `status` and in its `by_status` key).
const LATER_BYTES: usize = 128;

/// The placement transaction, with the order's id as its token: the record,
/// the order and its items, each put only if absent. The items are held in
/// the order's own item if `hold` (`App::hold_items`) and it stays within
/// one write unit with them and [`LATER_BYTES`] (one item less to write: a
/// listing's order, a few products), else each is an item of its own
/// beside it.
fn placement(
    home: &Store,
    key: Option<&Idempotency>,
    order: &mut Order,
    items: &[OrderItem],
    hold: bool,
) -> Result<Transaction, StoreError> {
    order.held_items = items.iter().map(HeldItem::from).collect();
    let beside = if hold && store::item::within_write_unit(order, LATER_BYTES)? {
        &[]
    } else {
        order.held_items.clear();
        items
    };
    let mut tx = home.transaction().with_token(order.order_id.to_string());
    if let Some(key) = key {
        key.put_in(&mut tx)?;
    }
    tx.put_new("order", order)?;
    for item in beside {
        tx.put_new(format!("item {}", item.item_id), item)?;
    }
    Ok(tx)
}

/// Marketplace: buy a listing. The listing is marked sold (and moves to the
/// `sold` GSI6 prefix, out of the browse index) only if still active at the
/// price read.
async fn place_listing(
    app: &App,
    home: &Store,
    buyer: &UserId,
    id: &ListingId,
    key: &Idempotency,
    reserved: bool,
) -> Result<Order, Attempt> {
    // At the listing's home: the buyer's item (the primary's) is there too,
    // replicated, and the listing as it is there decides.
    let read = home.batch_get_items(&[keys::listing(id)?.into(), keys::user(buyer)?.into()], false).await?;
    require_signed_up(app, buyer, &read).await?;
    let listing = of_entity::<Listing>(read, EntityType::Listing)?.pop();
    let listing = listing.ok_or_else(|| ApiError::not_found(format!("listing `{id}` does not exist")))?;
    if listing.status != ListingStatus::Active {
        return Err(ApiError::conflict(format!("listing `{id}` is not for sale ({})", listing.status)).into());
    }
    if &listing.seller_id == buyer {
        return Err(ApiError::forbidden("you cannot buy your own listing").into());
    }
    let line = OrderLine::new(id.to_string(), 1);
    let mut order = new_order(app, key.record(), buyer, Some(&listing), vec![line], listing.price)?;
    let item = OrderItem {
        order_id: order.order_id,
        item_id: id.to_string(),
        name: listing.title.clone(),
        qty: 1,
        price: listing.price,
        buyer_id: buyer.clone(),
        seller_id: Some(listing.seller_id.clone()),
    };
    // A key reserved at the primary is not written again here.
    let mut tx = placement(home, (!reserved).then_some(key), &mut order, &[item], app.hold_items)?;
    tx.update("listing", &write::listing::sell(id, &listing.seller_id, listing.price, &order.created_at)?)?;
    match send(tx).await {
        Ok(()) => Ok(order),
        Err(Ok(e)) if e.failed("listing") => {
            Err(ApiError::conflict(format!("listing `{id}` is no longer for sale at {}", listing.price)).into())
        }
        Err(Ok(_)) => Err(ApiError::conflict("the order collided with an existing one; retry").into()),
        Err(Err(attempt)) => Err(attempt),
    }
}
