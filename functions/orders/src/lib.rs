//! Orders function: placing orders of a listing or of catalog products in
//! one transaction with an idempotency record, reading them (buyer, seller
//! or admin), their lifecycle, and the admin's views over the write-sharded
//! status index (marketplace AP7-9, e-commerce AP1-5, AP7-8).

mod by_status;
mod place;
mod stock;

use api::validate::Text;
use api::{ApiError, Caller, Deps, Request, Response};
use domain::answers::OrderAnswer;
use domain::ids::{MessageId, OrderId, ProductId, UserId};
use domain::model::{Order, OrderItem, OrderMessage, OrderStatus, Product};
use domain::time::{now_ms, rfc3339};
use keyschema::access;
use keyschema::keys;
use keyschema::table::EntityType;
use keyschema::write;
use keyschema::write::order::CancelAction;
use keyschema::{EntityQuery, SchemaError};
use serde::Deserialize;
use store::item::from_item;

/// Environment variable with the number of GSI8 status shards.
pub use domain::shard::ORDER_SHARDS_VAR as SHARDS_VAR;

/// Environment variable saying whether a new order holds its items in its
/// own item when they fit (`true`, the default) or writes each beside it
/// (`false`: as releases before 2026-12-07 read them; docs/operations.md,
/// "Order items held in their order").
pub const HOLD_ITEMS_VAR: &str = "ORDER_ITEMS_HELD";

/// The orders function's dependencies.
#[derive(Clone, Debug)]
pub struct App {
    /// Table and cursors.
    pub deps: Deps,
    /// Shards of the status index (`STATUS#<status>#<shard>`).
    pub shards: u16,
    /// Whether a new order holds its items when they fit its write unit
    /// (`ORDER_ITEMS_HELD`); either way every order's items are read.
    pub hold_items: bool,
}

impl App {
    /// From the environment (`ORDER_SHARD_COUNT`, default 10;
    /// `ORDER_ITEMS_HELD`, default `true`).
    pub async fn from_env() -> Result<Self, String> {
        let shards = domain::shard::order_shards_from_env()?;
        Ok(App { deps: Deps::from_env().await?, shards, hold_items: hold_items_from_env()? })
    }
}

/// `ORDER_ITEMS_HELD`: `true` (or unset) or `false`.
pub fn hold_items_from_env() -> Result<bool, String> {
    match std::env::var(HOLD_ITEMS_VAR).as_deref() {
        Err(_) | Ok("true") => Ok(true),
        Ok("false") => Ok(false),
        Ok(other) => Err(format!("{HOLD_ITEMS_VAR} must be `true` or `false`, not `{other}`")),
    }
}

api::routes! {
    app: App;
    "POST /orders" => place::place_order,
    "GET /orders" => by_status::orders_by_status,
    "GET /orders/{orderId}" => get_order,
    "PATCH /orders/{orderId}" => change_status,
    "GET /orders/{orderId}/items" => order_items,
    "GET /orders/{orderId}/items/{itemId}" => order_item,
    "GET /buyers/{buyerId}/orders" => buyer_orders,
    "GET /sellers/{sellerId}/orders" => seller_orders,
    "POST /orders/{orderId}/messages" => post_message,
    "GET /orders/{orderId}/messages" => order_messages,
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
        .get::<Order, _>(&keys::order(id)?)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("order `{id}` does not exist")))
}

/// An order to change, with the store of its home (`Deps::order_at_home`).
async fn load_order_at_home(app: &App, id: &OrderId) -> Result<(Order, store::Store), ApiError> {
    let found = app.deps.order_at_home(id).await?;
    found.ok_or_else(|| ApiError::not_found(format!("order `{id}` does not exist")))
}

/// Marketplace AP7 / e-commerce AP1: an order by id. `GetItem ORDER#<orderId> / #METADATA`.
async fn get_order(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let order = load_order(app, &req.path("orderId")?).await?;
    require_party(&caller, &order.buyer_id, order.seller_id.as_ref())?;
    Response::ok(&OrderAnswer::from(order))
}

/// E-commerce AP4: the items of an order, by item id: those the order
/// holds and those beside it, read with it in one `Query`
/// (`access::order_with_items`: at most `place::MAX_LINES` items of one
/// write unit each, so at most 3.5 RCU a page whatever its limit), paged
/// here; the cursor is the last item id answered (scope `order-items`).
async fn order_items(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let id: OrderId = req.path("orderId")?;
    let page = req.page(&[])?;
    let scope = format!("order-items|{id}");
    let after = match &page.cursor {
        Some(c) => Some(app.deps.cursors.open::<String>(&scope, c)?),
        None => None,
    };
    let found = app.deps.store.get_with_beside(&access::order_with_items(&id)?, false).await?;
    let (order, beside) = found.ok_or_else(|| ApiError::not_found(format!("order `{id}` does not exist")))?;
    require_party(&caller, &order.buyer_id, order.seller_id.as_ref())?;
    let mut items: Vec<OrderItem> = order.held().chain(beside).collect();
    items.sort_by(|a, b| a.item_id.cmp(&b.item_id));
    items.retain(|i| after.as_ref().is_none_or(|a| &i.item_id > a));
    let more = items.len() > usize::from(page.limit);
    items.truncate(usize::from(page.limit));
    let next_cursor = if more { items.last().map(|i| app.deps.cursors.seal(&scope, &i.item_id)) } else { None };
    Response::ok(&api::ListBody { items, next_cursor })
}

/// Messages of an order carry its parties, so a page of them is
/// authorized without reading the order.
trait OfParties {
    /// The buyer and, for listing orders, the seller.
    fn parties(&self) -> (&UserId, Option<&UserId>);
}

impl OfParties for OrderMessage {
    fn parties(&self) -> (&UserId, Option<&UserId>) {
        (&self.buyer_id, Some(&self.seller_id))
    }
}

/// One page of a query in an order's partition, for its buyer, seller or an
/// admin: authorized by the parties its first entry carries. Only an empty
/// first page also reads the order (404 if it does not exist, 403 for a
/// stranger), so a page is one `Query`.
async fn party_page<T>(
    app: &App,
    req: Request,
    query: fn(&OrderId) -> Result<EntityQuery<T>, SchemaError>,
) -> Result<Response, ApiError>
where
    T: OfParties + keyschema::Entity + serde::Serialize,
{
    let caller = req.caller()?;
    let id: OrderId = req.path("orderId")?;
    let page = req.page(&[])?;
    let (items, next_cursor) = app.deps.page::<T, _>(&query(&id)?, &page).await?;
    match items.first() {
        Some(first) => {
            let (buyer, seller) = first.parties();
            require_party(&caller, buyer, seller)?;
        }
        None if page.cursor.is_none() => {
            let order = load_order(app, &id).await?;
            require_party(&caller, &order.buyer_id, order.seller_id.as_ref())?;
        }
        None => {}
    }
    Response::ok(&api::ListBody { items, next_cursor })
}

/// E-commerce AP5: one item of an order. One `BatchGetItem` of the order
/// (its parties; it may hold the item) and of `ORDER#<orderId> /
/// ITEM#<itemId>` (an item beside it).
async fn order_item(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let id: OrderId = req.path("orderId")?;
    // Items are products or listings: both ULIDs.
    let item: ProductId =
        req.path("itemId").map_err(|_| ApiError::bad_request("invalid itemId: must be a 26-character ULID"))?;
    let item = item.to_string();
    let keys = [keys::order(&id)?.into(), keys::order_item(&id, &item)?.into()];
    let read = app.deps.store.batch_get_items(&keys, false).await?;
    let beside = of_entity::<OrderItem>(read.clone(), EntityType::OrderItem)?.pop();
    let order = of_entity::<Order>(read, EntityType::Order)?.pop();
    let order = order.ok_or_else(|| ApiError::not_found(format!("order `{id}` does not exist")))?;
    require_party(&caller, &order.buyer_id, order.seller_id.as_ref())?;
    let found = beside.or_else(|| order.held().find(|i| i.item_id == item));
    let found = found.ok_or_else(|| ApiError::not_found(format!("order `{id}` has no item `{item}`")))?;
    Response::ok(&found)
}

/// The items of `entity` among `items` (a `BatchGetItem`'s), decoded.
fn of_entity<T: serde::de::DeserializeOwned>(
    items: Vec<store::Item>,
    entity: EntityType,
) -> Result<Vec<T>, store::StoreError> {
    items.into_iter().filter(|i| store::item::entity_type(i) == Some(entity.as_str())).map(from_item).collect()
}

/// Marketplace AP8 / e-commerce AP2: a buyer's orders, newest first (the
/// buyer or an admin). `Query GSI6 gsi1pk = BUYER#<buyerId>`, descending.
async fn buyer_orders(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let buyer: UserId = req.path("buyerId")?;
    caller.require_self_or_admin(&buyer)?;
    app.deps.list_as::<Order, _, OrderAnswer>(&access::buyer_orders(&buyer)?, &req.page(&[])?).await
}

/// Marketplace AP9: a seller's sales, newest first (the seller or an
/// admin). `Query GSI7 gsi2pk = SELLER#<sellerId>`, descending.
async fn seller_orders(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let seller: UserId = req.path("sellerId")?;
    caller.require_self_or_admin(&seller)?;
    app.deps.list_as::<Order, _, OrderAnswer>(&access::seller_orders(&seller)?, &req.page(&[])?).await
}

/// Body of `POST /orders/{orderId}/messages`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewMessage {
    body: Text<{ OrderMessage::MAX_BODY_CHARS }>,
}

/// Beyond the seeds: a message from one party of a listing order to the
/// other. `GetItem` of the order (its parties), then `PutItem
/// ORDER#<orderId> / MESSAGE#<messageId>` if absent. The message carries
/// the parties, so reading messages needs no read of the order.
async fn post_message(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let id: OrderId = req.path("orderId")?;
    let NewMessage { body } = req.json()?;
    let (order, home) = load_order_at_home(app, &id).await?;
    let is_party = caller.is(&order.buyer_id) || order.seller_id.as_ref().is_some_and(|s| caller.is(s));
    if !is_party {
        return Err(ApiError::forbidden("only the buyer or the seller may write on an order"));
    }
    let seller = order
        .seller_id
        .clone()
        .ok_or_else(|| ApiError::conflict(format!("order `{id}` is a catalog order: it has no seller to write to")))?;
    let message = OrderMessage {
        message_id: MessageId::generate(),
        order_id: id,
        author_id: caller.user_id,
        body: body.into_string(),
        buyer_id: order.buyer_id,
        seller_id: seller,
        created_at: rfc3339(now_ms()),
    };
    home.put_new(&message).await?;
    Response::created(&message)
}

/// Beyond the seeds: the messages of an order, oldest first (the buyer, the
/// seller or an admin). `Query pk = ORDER#<orderId>, begins_with(sk, MESSAGE#)`.
async fn order_messages(app: &App, req: Request) -> Result<Response, ApiError> {
    party_page::<OrderMessage>(app, req, access::order_messages).await
}

/// Body of `PATCH /orders/{orderId}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusChange {
    status: OrderStatus,
}

/// The products whose restock failed in a cancelled [`write::order::cancel`].
fn restocks(e: &store::StoreError) -> Vec<ProductId> {
    let restock = |a| match a {
        CancelAction::Restock(product, _) => Some(product),
        _ => None,
    };
    e.failed_actions().filter_map(CancelAction::parse).filter_map(restock).collect()
}

/// Moves an order along its lifecycle: pending -> confirmed -> shipped ->
/// delivered by the seller (an admin for catalog orders), cancelled from
/// pending or confirmed by the buyer too. The write is conditional on the
/// status read and moves the GSI8 key with it (`write::order::move_status`:
/// one conditional `UpdateItem`); a cancel restores stock or relists the
/// listing with it in one transaction.
async fn change_status(app: &App, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let id: OrderId = req.path("orderId")?;
    let StatusChange { status: next } = req.json()?;
    // Another transaction on one of its items (a cancel meets the orders of
    // its products on their stock), or the order moved: read again.
    for attempt in 0..STATUS_ATTEMPTS {
        match move_order(app, &caller, &id, next, attempt as u16).await? {
            Some(answer) => return Ok(answer),
            None => tokio::time::sleep(store::conflicts::pause(attempt + 1)).await,
        }
    }
    Err(ApiError::unavailable())
}

/// Tries of a status change that met another transaction.
const STATUS_ATTEMPTS: u32 = 8;

/// One try of [`change_status`]: `None` if it met another transaction on
/// one of its items (try again). A cancel's `attempt` turns where its units
/// go back among the product's shares (`write::order::cancel_turned`), so a
/// retry does not wait on the share that held it up.
async fn move_order(
    app: &App,
    caller: &api::Caller,
    id: &OrderId,
    next: OrderStatus,
    attempt: u16,
) -> Result<Option<Response>, ApiError> {
    let id = *id;
    let (mut order, home) = load_order_at_home(app, &id).await?;
    require_party(caller, &order.buyer_id, order.seller_id.as_ref())?;
    let is_seller = order.seller_id.as_ref().is_some_and(|s| caller.is(s));
    let allowed = caller.admin || is_seller || (next == OrderStatus::Cancelled && caller.is(&order.buyer_id));
    if !allowed {
        return Err(ApiError::forbidden(format!("the buyer cannot set status `{next}`")));
    }
    if order.status == next {
        // Already there (a retry after an answer was lost): nothing to do.
        return Response::ok(&OrderAnswer::from(order)).map(Some);
    }
    if !order.status.can_become(next) {
        return Err(ApiError::conflict(format!("order `{id}` cannot go from `{}` to `{next}`", order.status)));
    }
    let now = rfc3339(now_ms());
    let sent = if next == OrderStatus::Cancelled {
        let mut tx = home.transaction();
        for (name, change) in write::order::cancel_turned(&order, &now, attempt)? {
            tx.update(name, &change)?;
        }
        tx.send().await
    } else {
        // One item: a conditional write, not a transaction (which would
        // cost twice as much for nothing to keep atomic). A retry of one
        // that committed finds the status moved and reads again.
        home.update(&write::order::move_status(&id, order.shard, order.status, next, &now)?).await.map(drop)
    };
    match sent {
        Ok(()) => {
            order.status = next;
            order.updated_at = now;
            Response::ok(&OrderAnswer::from(order)).map(Some)
        }
        // Moved since it was read: read again (then a no-op, or a 409
        // naming the status it is in).
        Err(e) if e.failed(write::order::ORDER) || e.is_conditional_check_failed() => Ok(None),
        Err(e) if !restocks(&e).is_empty() => {
            let products: Vec<String> = restocks(&e).iter().map(ToString::to_string).collect();
            Err(ApiError::conflict(format!(
                "cannot cancel: restoring the stock of product {} would pass its maximum of {}",
                products.join(", "),
                Product::MAX_STOCK
            )))
        }
        Err(e) if e.is_transaction_conflict() => Ok(None),
        Err(e) => Err(e.into()),
    }
}
