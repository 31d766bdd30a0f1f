//! Orders function: placing orders of a listing or of catalog products in
//! one transaction with an idempotency record, reading them (buyer, seller
//! or admin), their lifecycle, and the admin's views over the write-sharded
//! status index (marketplace AP7-9, e-commerce AP1-5, AP7-8).

mod ops;
mod place;

use api::{ApiError, Caller, Deps, Request, Response};
use keyschema::access;
use keyschema::ids::{ListingId, OrderId, ProductId, UserId};
use keyschema::keys;
use keyschema::model::{ListingStatus, Money, Order, OrderItem, OrderStatus};
use keyschema::time::{now_ms, rfc3339};
use serde::Deserialize;
use store::aws_sdk_dynamodb::types::{TransactWriteItem, Update};
use store::item::{key_item, n, s};
use store::StoreError;

/// Environment variable with the number of GSI3 status shards.
pub const SHARDS_VAR: &str = "ORDER_SHARD_COUNT";

/// The orders function's dependencies.
#[derive(Clone, Debug)]
pub struct App {
    /// Table and cursors.
    pub deps: Deps,
    /// Shards of the status index (`STATUS#<status>#<shard>`).
    pub shards: u16,
}

impl App {
    /// From the environment (`ORDER_SHARD_COUNT`, default 10).
    pub async fn from_env() -> Result<Self, String> {
        let shards = match std::env::var(SHARDS_VAR) {
            Ok(v) => v.parse().ok().filter(|n| (1..=100).contains(n)).ok_or(format!("{SHARDS_VAR} must be 1-100"))?,
            Err(_) => keyschema::shard::DEFAULT_SHARD_COUNT,
        };
        Ok(App { deps: Deps::from_env().await?, shards })
    }
}

api::routes! {
    app: App;
    "POST /orders" => place::place_order,
    "GET /orders" => ops::orders_by_status,
    "GET /orders/{orderId}" => get_order,
    "PATCH /orders/{orderId}" => change_status,
    "GET /orders/{orderId}/items" => order_items,
    "GET /orders/{orderId}/items/{itemId}" => order_item,
    "GET /buyers/{buyerId}/orders" => buyer_orders,
    "GET /sellers/{sellerId}/orders" => seller_orders,
}

/// 403 unless the caller is the buyer, the seller or an admin.
fn require_party(caller: &Caller, buyer: &UserId, seller: Option<&UserId>) -> Result<(), ApiError> {
    if caller.admin || caller.is(buyer) || seller.is_some_and(|s| caller.is(s)) {
        Ok(())
    } else {
        Err(ApiError::forbidden("only the buyer, the seller or an admin may see this order"))
    }
}

async fn load_order(app: &App, id: &OrderId) -> Result<Order, ApiError> {
    app.deps
        .store
        .get::<Order>(&keys::order::key(id))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("order `{id}` does not exist")))
}

/// Marketplace AP7 / e-commerce AP1: an order by id. `GetItem ORDER#<orderId> / #METADATA`.
async fn get_order(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let order = load_order(app, &req.path("orderId")?).await?;
    require_party(&caller, &order.buyer_id, order.seller_id.as_ref())?;
    Response::ok(&order)
}

/// E-commerce AP4: the items of an order (each item carries the parties).
/// `Query pk = ORDER#<orderId>, begins_with(sk, ITEM#)`.
async fn order_items(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let id: OrderId = req.path("orderId")?;
    let page = req.page(&[])?;
    let (items, next_cursor) = app.deps.page::<OrderItem>(&access::order_items(&id), &page).await?;
    match items.first() {
        None if page.cursor.is_none() => Err(ApiError::not_found(format!("order `{id}` does not exist"))),
        Some(first) => require_party(&caller, &first.buyer_id, first.seller_id.as_ref()),
        None => Ok(()),
    }?;
    Response::ok(&api::ListBody { items, next_cursor })
}

/// E-commerce AP5: one item of an order. `GetItem ORDER#<orderId> / ITEM#<itemId>`.
async fn order_item(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let id: OrderId = req.path("orderId")?;
    // Items are products or listings: both ULIDs.
    let item: ProductId =
        req.path("itemId").map_err(|_| ApiError::bad_request("invalid itemId: must be a 26-character ULID"))?;
    let key = keys::order_item::key(&id, &item.to_string());
    let found = app.deps.store.get::<OrderItem>(&key).await?;
    let found = found.ok_or_else(|| ApiError::not_found(format!("order `{id}` has no item `{item}`")))?;
    require_party(&caller, &found.buyer_id, found.seller_id.as_ref())?;
    Response::ok(&found)
}

/// Marketplace AP8 / e-commerce AP2: a buyer's orders, newest first (the
/// buyer or an admin). `Query GSI1 gsi1pk = BUYER#<buyerId>`, descending.
async fn buyer_orders(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let buyer: UserId = req.path("buyerId")?;
    caller.require_self_or_admin(&buyer)?;
    app.deps.list::<Order>(&access::buyer_orders(&buyer), &req.page(&[])?).await
}

/// Marketplace AP9: a seller's sales, newest first (the seller or an
/// admin). `Query GSI2 gsi2pk = SELLER#<sellerId>`, descending.
async fn seller_orders(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let seller: UserId = req.path("sellerId")?;
    caller.require_self_or_admin(&seller)?;
    app.deps.list::<Order>(&access::seller_orders(&seller), &req.page(&[])?).await
}

/// Body of `PATCH /orders/{orderId}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusChange {
    status: OrderStatus,
}

/// Moves an order along its lifecycle: pending -> confirmed -> shipped ->
/// delivered by the seller (an admin for catalog orders), cancelled from
/// pending or confirmed by the buyer too. The write is conditional on the
/// status read, and moves the GSI3 key (`STATUS#<status>#<shard>`); a cancel
/// restores stock or relists the listing in the same transaction.
async fn change_status(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let id: OrderId = req.path("orderId")?;
    let StatusChange { status: next } = req.json()?;
    let mut order = load_order(app, &id).await?;
    require_party(&caller, &order.buyer_id, order.seller_id.as_ref())?;
    let is_seller = order.seller_id.as_ref().is_some_and(|s| caller.is(s));
    let allowed = caller.admin || is_seller || (next == OrderStatus::Cancelled && caller.is(&order.buyer_id));
    if !allowed {
        return Err(ApiError::forbidden(format!("the buyer cannot set status `{next}`")));
    }
    if !order.status.can_become(next) {
        return Err(ApiError::conflict(format!("order `{id}` cannot go from `{}` to `{next}`", order.status)));
    }
    let table = app.deps.store.table();
    let now = rfc3339(now_ms());
    let update = Update::builder()
        .table_name(table)
        .set_key(Some(key_item(&keys::order::key(&id))))
        .update_expression("SET #status = :next, gsi3pk = :gsi3pk, updatedAt = :now")
        .condition_expression("#status = :current")
        .expression_attribute_names("#status", "status")
        .expression_attribute_values(":next", s(next.as_str()))
        .expression_attribute_values(":current", s(order.status.as_str()))
        .expression_attribute_values(":gsi3pk", s(keys::order::status_partition(next, order.shard)))
        .expression_attribute_values(":now", s(&now))
        .build()
        .map_err(ApiError::internal)?;
    let mut tx = app
        .deps
        .store
        .client()
        .transact_write_items()
        .transact_items(TransactWriteItem::builder().update(update).build());
    if next == OrderStatus::Cancelled {
        for undo in undo_actions(table, &order, &now)? {
            tx = tx.transact_items(undo);
        }
    }
    match tx.send().await.map_err(StoreError::from_transaction) {
        Ok(_) => {
            order.status = next;
            order.updated_at = now;
            Response::ok(&order)
        }
        Err(e) if e.failed_conditions().contains(&0) => {
            Err(ApiError::conflict(format!("order `{id}` changed concurrently; read it again")))
        }
        Err(e) => Err(e.into()),
    }
}

/// Moves a listing from one status to another, conditional on the first
/// (and, when given, on its price), together with its GSI1 sort key
/// `LISTING#<status>#<listingId>`: the two never part.
pub(crate) fn move_listing(
    table: &str,
    listing: &ListingId,
    seller: &UserId,
    from: ListingStatus,
    to: ListingStatus,
    price: Option<Money>,
    now: &str,
) -> Result<TransactWriteItem, ApiError> {
    let mut condition = "#status = :from".to_owned();
    let mut update = Update::builder()
        .table_name(table)
        .set_key(Some(key_item(&keys::listing::key(listing))))
        .update_expression("SET #status = :to, gsi1sk = :gsi1sk, updatedAt = :now")
        .expression_attribute_names("#status", "status")
        .expression_attribute_values(":from", s(from.as_str()))
        .expression_attribute_values(":to", s(to.as_str()))
        .expression_attribute_values(":gsi1sk", s(keys::listing::by_seller(seller, to, listing).sk))
        .expression_attribute_values(":now", s(now));
    if let Some(price) = price {
        condition.push_str(" AND price = :price");
        update = update.expression_attribute_values(":price", n(price));
    }
    let update = update.condition_expression(condition).build().map_err(ApiError::internal)?;
    Ok(TransactWriteItem::builder().update(update).build())
}

/// The writes that undo an order: relist its listing (if still sold) or add
/// its quantities back to stock.
fn undo_actions(table: &str, order: &Order, now: &str) -> Result<Vec<TransactWriteItem>, ApiError> {
    let mut actions = Vec::new();
    if let (Some(listing), Some(seller)) = (&order.listing_id, &order.seller_id) {
        actions.push(move_listing(table, listing, seller, ListingStatus::Sold, ListingStatus::Active, None, now)?);
        return Ok(actions);
    }
    for line in &order.lines {
        let product: ProductId = line.item_id.parse().map_err(ApiError::internal)?;
        let update = Update::builder()
            .table_name(table)
            .set_key(Some(key_item(&keys::product::key(&product))))
            .update_expression("ADD stockLevel :qty SET updatedAt = :now")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":qty", n(line.qty))
            .expression_attribute_values(":now", s(now))
            .build()
            .map_err(ApiError::internal)?;
        actions.push(TransactWriteItem::builder().update(update).build());
    }
    Ok(actions)
}
