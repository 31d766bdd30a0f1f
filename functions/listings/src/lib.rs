//! Listings function: one-off items users sell (marketplace AP3-6). A
//! listing's status is the prefix of its GSI6 sort key, so one index serves
//! "all my listings" and "my active listings" (the public storefront); its
//! browse keys (GSI7 by age, GSI8 by price, GSI5 near) are put with it at
//! creation, added again by the stream processor when it is relisted and
//! moved by it, and removed by the write that takes it out of active (see
//! the listing's declaration).

mod browse;
mod near;
mod search;
mod text;

use api::idempotency::Idempotency;
use api::validate::{Description, Name};
use api::{ApiError, Deps, Request, Response};
use domain::answers::{ListingAnswer, ListingCard};
use domain::geo::Location;
use domain::ids::{CategoryId, ListingId, UserId};
use domain::model::{Category, Listing, ListingDetails, ListingStatus, Money, UserRole};
use domain::shard::listing_shard;
use domain::time::{now_ms, rfc3339};
use keyschema::access;
use keyschema::keys;
use keyschema::records::{IdempotencyRecord, NearCell};
use keyschema::write::{self, attr};
use keyschema::{Cond, Value};
use serde::Deserialize;
use store::item::from_item;
use store::StoreError;

api::routes! {
    app: Deps;
    "POST /listings" => create_listing,
    "GET /listings/{listingId}" => get_listing,
    "PATCH /listings/{listingId}" => update_listing,
    "GET /sellers/{sellerId}/listings" => seller_listings,
    "GET /sellers/{sellerId}/listings/active" => storefront,
    "GET /categories/{categoryId}/listings" => browse::category_listings,
    "GET /listings/near" => near::listings_near,
    "GET /search/listings" => search::search_listings,
}

/// Body of `POST /listings`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NewListing {
    title: Name,
    price: Money,
    category_id: CategoryId,
    description: Option<Description>,
    location: Option<Location>,
}

/// The route's name in its idempotency records.
const ROUTE: &str = "listings";

/// Lists an item for sale; the seller is the caller. Its category is read
/// (it existed when read; cached, see `api::cache`; its `listingShards`
/// picks the listing's browse shard) and so is the seller (only signed-up
/// users sell). A seller not yet `both` becomes it first, in an
/// `UpdateItem` of its own ([`become_seller`]); then the listing is put if
/// absent, with its browse, price and near keys (a partition of a dense
/// cell its near key enters recorded first, once a process: a `PutItem`
/// of a `NearCell`). Its description is held in the listing's own item if the item
/// stays within one write unit with it (every key included, and room for
/// what later writes add: [`text`]), else in its details, an item of its
/// own beside it. A listing alone is one conditional `PutItem` of a fresh
/// id (a retry of a put that applied finds that listing, however the
/// stream processor has changed it since, and answers it); with its
/// details or a key, one `TransactWriteItems` (its `ClientRequestToken`
/// does the same).
///
/// An optional `Idempotency-Key` ([`api::idempotency`], route `listings`,
/// as `POST /orders` takes one): its record, naming the listing, is put if
/// absent in the listing's transaction, so a key is taken exactly when its
/// listing is written. A retry finds the record taken (the transaction's
/// failed condition returns it) and answers that listing as it is now
/// (201, replayed), never a second one, however retries race; the key with
/// another body is a 422.
async fn create_listing(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let body: NewListing = req.json()?;
    if body.price == Money::default() {
        return Err(ApiError::bad_request("invalid body: `price`: must be greater than 0"));
    }
    // The request as read identifies it for its key.
    let description = body.description.as_ref().map(Description::as_str);
    let request = (body.title.as_str(), body.price, &body.category_id, description, body.location);
    let request = serde_json::to_vec(&request).map_err(ApiError::internal)?;
    let key = Idempotency::of(&req, &caller.user_id, ROUTE, &request)?;
    // Read, not condition-checked in the transaction: every new listing of
    // a category would otherwise hold the category's item (a hot key).
    let Some(category) = api::cache::found::<Category, _>(&app.store, &keys::category(&body.category_id)?).await?
    else {
        return Err(ApiError::bad_request(format!("category `{}` does not exist", body.category_id)));
    };
    let location = match body.location {
        None => None,
        Some(l) => Some(Location::new(l.lat, l.lon).ok_or_else(|| {
            ApiError::bad_request("invalid body: `location`: `lat` must be from -90 to 90, `lon` from -180 to 180")
        })?),
    };
    let now_ms = now_ms();
    let now = rfc3339(now_ms);
    let listing_id = ListingId::generate();
    let mut listing = Listing {
        home: None,
        listing_id,
        seller_id: caller.user_id.clone(),
        title: body.title.into_string(),
        price: body.price,
        category_id: body.category_id,
        shard: listing_shard(&listing_id, category.shards_for_new_listing(now_ms)),
        description: None,
        location: None,
        geohash: None,
        status: ListingStatus::Active,
        favorite_count: 0,
        created_at: now.clone(),
        updated_at: now.clone(),
    }
    .locate(location);
    let seller = app.signed_up(&caller.user_id).await?;
    let Some(seller) = seller else {
        return Err(not_signed_up());
    };
    // At its seller's home (docs/regions.md), with its details and key.
    listing.home = seller.home.clone();
    let details = match body.description.map(Description::into_string) {
        Some(description) => text::inline_or_details(&mut listing, description)?,
        None => None,
    };
    let home = app.store.at(listing.home.as_deref())?;
    // Its browse, price and near keys go in with it (found at once); a
    // partition of a dense cell is recorded before its first near key,
    // once a process, so that near me reads it (`derived::near_cells`).
    if let Some(cell) = listing.geohash.as_deref().and_then(NearCell::of) {
        derived::near_cells::record(&home, &cell).await.map_err(|e| match e {
            derived::DerivedError::Store(e) => ApiError::from(e),
            other => ApiError::internal(other),
        })?;
    }
    // Written only until it is `both` (a busy seller's item is not
    // rewritten by every listing).
    if seller.role != UserRole::Both {
        become_seller(app, &caller.user_id, &now).await?;
    }
    let key = key.map(|k| k.with_listing(listing_id));
    if key.is_none() && details.is_none() {
        return match home.put_fresh(&listing).await? {
            None => Response::created(&ListingAnswer::of(listing, None)),
            // Its own earlier attempt: the listing as it is now.
            Some(put) => Response::created(&ListingAnswer::of(from_item::<Listing>(put)?, None)),
        };
    }
    let mut tx = home.transaction();
    if let Some(key) = &key {
        key.put_in(&mut tx)?;
    }
    tx.put_new("listing", &listing)?;
    if let Some(details) = &details {
        tx.put_new("details", details)?;
    }
    let err = match tx.send().await {
        Ok(()) => return Response::created(&ListingAnswer::of(listing, details)),
        Err(e) => e,
    };
    let Some(key) = key else { return Err(err.into()) };
    let first = match key.taken_by(&err)? {
        Some(first) => Some(first),
        // Still conflicting after the store's retries: perhaps with the
        // request this one retries, which may hold the key by now.
        None if err.is_transaction_conflict() => key.seen(&home).await?,
        None => None,
    };
    match first {
        Some(first) => replay(&home, &first).await,
        None => Err(err.into()),
    }
}

/// The answer to a request whose key was taken by the same request: the
/// listing it created, as it is now, marked replayed.
async fn replay(home: &store::Store, first: &IdempotencyRecord) -> Result<Response, ApiError> {
    let lost = || ApiError::internal("idempotency record without its listing");
    let id = first.listing_id.ok_or_else(lost)?;
    let query = access::listing_with_details(&id)?;
    let (listing, details) = home.get_with_details::<Listing, ListingDetails>(&query, true).await?.ok_or_else(lost)?;
    Ok(Response::created(&ListingAnswer::of(listing, details))?.replayed())
}

fn not_signed_up() -> ApiError {
    ApiError::forbidden("sign up (POST /users) before listing items")
}

/// Sets the seller's role to `both` unless it is already
/// (`write::user::become_seller`), before the listing is written, not in
/// its transaction: a seller's first listings posted at once would each
/// hold the seller's item in their transactions, and transactions holding
/// one item at once cancel each other (`TransactionConflict`; 409s for a
/// bulk import). Single writes of one item do not: of concurrent first
/// listings one sets the role and the others find it set (their condition
/// fails on an item already `both`, which is success here). Before the
/// listing, so no listing exists whose seller is not `both`; if the
/// listing then fails, the user is `both` with no listing yet.
async fn become_seller(app: &Deps, seller: &UserId, now: &str) -> Result<(), ApiError> {
    match app.store.at_primary()?.update(&write::user::become_seller(seller, now)?).await {
        Ok(_) | Err(StoreError::ConditionFailed(Some(_))) => Ok(()),
        Err(StoreError::ConditionFailed(None)) => Err(not_signed_up()),
        Err(e) => Err(e.into()),
    }
}

/// Marketplace AP3: a listing by id (public), with its description: one
/// `Query pk = LISTING#<listingId>, begins_with(sk, #)` (the listing and its
/// details). A removed listing is 404 here for everyone (its seller finds
/// it among their own listings, AP4); a sold one stays readable (orders
/// link to it).
async fn get_listing(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let id: ListingId = req.path("listingId")?;
    let query = access::listing_with_details(&id)?;
    match app.store.get_with_details::<Listing, ListingDetails>(&query, false).await? {
        Some((listing, details)) if listing.status != ListingStatus::Removed => {
            Response::ok(&ListingAnswer::of(listing, details))
        }
        _ => Err(ApiError::not_found(format!("listing `{id}` does not exist"))),
    }
}

/// Body of `PATCH /listings/{listingId}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListingChange {
    title: Option<Name>,
    price: Option<Money>,
    status: Option<ListingStatus>,
}

/// Changes the caller's own listing in one conditional `UpdateItem`: only
/// its seller, never once sold. The answer's description (no change
/// touches it) is in the item the update returns, or else in its details,
/// read then (`GetItem`, strongly consistent); a longer title that takes
/// an item holding its text past one write unit moves the text into its
/// details ([`text::move_out`]). The keys move with it
/// (`write::listing::edit`): a status change moves the GSI6 sort key and
/// drops the browse, price and near keys when it leaves `active`; a price
/// moves the GSI8 sort key, so the listing is at its new place in the
/// cheapest-first walk at once. A failed condition returns the old item,
/// which tells 404, 403 and 409 apart.
async fn update_listing(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let id: ListingId = req.path("listingId")?;
    let change: ListingChange = req.json()?;
    if change.title.is_none() && change.price.is_none() && change.status.is_none() {
        return Err(ApiError::bad_request("invalid body: give at least one of `title`, `price`, `status`"));
    }
    if change.status == Some(ListingStatus::Sold) {
        return Err(ApiError::bad_request("invalid body: `status`: a listing is sold only through an order"));
    }
    if change.price == Some(Money::default()) {
        return Err(ApiError::bad_request("invalid body: `price`: must be greater than 0"));
    }
    let now = rfc3339(now_ms());
    let title = change.title.map(Name::into_string);
    let change = write::listing::edit(&id, &caller.user_id, change.status, title.as_deref(), change.price, &now)?
        .only_if(Cond::ItemExists)
        .only_if(Cond::Eq(attr::SELLER_ID, Value::s(caller.user_id.as_str())))
        .only_if(Cond::Ne(attr::STATUS, Value::s(ListingStatus::Sold.as_str())));
    let home = app.listing_home(&id).await?;
    match home.update(&change).await {
        Ok(item) => {
            let listing = from_item::<Listing>(item.clone())?;
            let grown = text::grown_past(&item, &listing)?;
            // Held in its details unless in the item; strongly consistent:
            // reconcile may be moving the text there.
            let details = match &listing.description {
                Some(inline) if grown => {
                    text::move_out(&home, &listing, inline).await;
                    None
                }
                Some(_) => None,
                None => home.get_consistent::<ListingDetails, _>(&keys::listing_details(&id)?).await?,
            };
            Response::ok(&ListingAnswer::of(listing, details))
        }
        Err(StoreError::ConditionFailed(None)) => Err(ApiError::not_found(format!("listing `{id}` does not exist"))),
        Err(StoreError::ConditionFailed(Some(old))) => match from_item::<Listing>(old) {
            Ok(old) if old.seller_id != caller.user_id => {
                Err(ApiError::forbidden("only the seller may change a listing"))
            }
            _ => Err(ApiError::conflict(format!("listing `{id}` is sold and can no longer change"))),
        },
        Err(e) => Err(e.into()),
    }
}

/// Marketplace AP4 / AP5: a seller's listings, sorted by status then age.
/// All statuses (or sold/removed ones) only for the seller or an admin;
/// `?status=active` for any signed-in caller.
/// `Query GSI6 gsi1pk = SELLER#<sellerId>, begins_with(gsi1sk, LISTING#[<status>#])`.
async fn seller_listings(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let seller: UserId = req.path("sellerId")?;
    let page = req.page(&["status"])?;
    let status = req.query::<ListingStatus>("status")?;
    if status != Some(ListingStatus::Active) {
        caller.require_self_or_admin(&seller)?;
    }
    app.list::<ListingCard, _>(&access::seller_listings(&seller, status)?, &page).await
}

/// Marketplace AP5, the public storefront: a seller's active listings, no
/// token needed. `Query GSI6 gsi1pk = SELLER#<sellerId>, begins_with(gsi1sk, LISTING#active#)`.
async fn storefront(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let seller: UserId = req.path("sellerId")?;
    let page = req.page(&[])?;
    app.list::<ListingCard, _>(&access::seller_listings(&seller, Some(ListingStatus::Active))?, &page).await
}
