//! Listings function: one-off items users sell (marketplace AP3-6). A
//! listing's status is the prefix of its GSI1 sort key, so one index serves
//! "all my listings" and "my active listings"; its category browse keys
//! (GSI2) are set and removed by the stream processor, never here.

use api::validate::{Description, Name};
use api::{ApiError, Deps, Request, Response};
use keyschema::access;
use keyschema::ids::{CategoryId, ListingId, UserId};
use keyschema::keys;
use keyschema::model::{Listing, ListingStatus, Money, UserRole};
use keyschema::time::{now_ms, rfc3339};
use serde::Deserialize;
use store::aws_sdk_dynamodb::types::{ReturnValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update};
use store::item::{from_item, key_item, s, to_item};
use store::{tx, StoreError};

api::routes! {
    app: Deps;
    "POST /listings" => create_listing,
    "GET /listings/{listingId}" => get_listing,
    "PATCH /listings/{listingId}" => update_listing,
    "GET /sellers/{sellerId}/listings" => seller_listings,
    "GET /categories/{categoryId}/listings" => category_listings,
}

/// Body of `POST /listings`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NewListing {
    title: Name,
    price: Money,
    category_id: CategoryId,
    description: Option<Description>,
}

/// Lists an item for sale; the seller is the caller. One
/// `TransactWriteItems`: the listing put if absent, its category checked to
/// exist, and the seller's user record set to role `both` (it must exist:
/// only signed-up users sell).
async fn create_listing(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let body: NewListing = req.json()?;
    if body.price == Money::default() {
        return Err(ApiError::bad_request("invalid body: `price`: must be greater than 0"));
    }
    let now = rfc3339(now_ms());
    let listing = Listing {
        listing_id: ListingId::generate(),
        seller_id: caller.user_id.clone(),
        title: body.title.into_string(),
        price: body.price,
        category_id: body.category_id,
        description: body.description.map(Description::into_string),
        status: ListingStatus::Active,
        created_at: now.clone(),
        updated_at: now.clone(),
    };
    let table = app.store.table();
    let become_seller = Update::builder()
        .table_name(table)
        .set_key(Some(key_item(&keys::user::key(&caller.user_id))))
        .update_expression("SET #role = :both, updatedAt = :now")
        .condition_expression("attribute_exists(pk)")
        .expression_attribute_names("#role", "role")
        .expression_attribute_values(":both", s(UserRole::Both.as_str()))
        .expression_attribute_values(":now", s(now))
        .build()
        .map_err(ApiError::internal)?;
    let result = app
        .store
        .client()
        .transact_write_items()
        .transact_items(tx::put_new(table, to_item(&listing)?)?)
        .transact_items(tx::must_exist(table, &keys::category::key(&listing.category_id))?)
        .transact_items(TransactWriteItem::builder().update(become_seller).build())
        .send()
        .await
        .map_err(StoreError::from_transaction);
    match result {
        Ok(_) => Response::created(&listing),
        Err(e) if e.failed_conditions().contains(&1) => {
            Err(ApiError::bad_request(format!("category `{}` does not exist", listing.category_id)))
        }
        Err(e) if e.failed_conditions().contains(&2) => {
            Err(ApiError::forbidden("sign up (POST /users) before listing items"))
        }
        Err(e) => Err(e.into()),
    }
}

/// Marketplace AP3: a listing by id (public). `GetItem LISTING#<listingId> / #METADATA`.
async fn get_listing(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let id: ListingId = req.path("listingId")?;
    Response::ok(&app.get_or_404::<Listing>(&keys::listing::key(&id), || format!("listing `{id}`")).await?)
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
/// its seller, never once sold. A status change rewrites the GSI1 sort key
/// (`LISTING#<status>#<listingId>`) in the same write; a failed condition
/// returns the old item, which tells 404, 403 and 409 apart.
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
    let mut sets = vec!["updatedAt = :now"];
    let mut update = app
        .store
        .client()
        .update_item()
        .table_name(app.store.table())
        .set_key(Some(key_item(&keys::listing::key(&id))))
        .condition_expression("attribute_exists(pk) AND sellerId = :me AND #status <> :sold")
        .expression_attribute_names("#status", "status")
        .expression_attribute_values(":me", s(caller.user_id.as_str()))
        .expression_attribute_values(":sold", s(ListingStatus::Sold.as_str()))
        .expression_attribute_values(":now", s(rfc3339(now_ms())));
    if let Some(title) = change.title {
        sets.push("title = :title");
        update = update.expression_attribute_values(":title", s(title.into_string()));
    }
    if let Some(price) = change.price {
        sets.push("price = :price");
        update = update.expression_attribute_values(":price", store::item::n(price));
    }
    if let Some(status) = change.status {
        sets.push("#status = :status, gsi1sk = :gsi1sk");
        let gsi1 = keys::listing::by_seller(&caller.user_id, status, &id);
        update = update
            .expression_attribute_values(":status", s(status.as_str()))
            .expression_attribute_values(":gsi1sk", s(gsi1.sk));
    }
    let result = update
        .update_expression(format!("SET {}", sets.join(", ")))
        .return_values(ReturnValue::AllNew)
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .send()
        .await
        .map_err(StoreError::from_update);
    match result {
        Ok(out) => Response::ok(&from_item::<Listing>(out.attributes.unwrap_or_default())?),
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
/// `Query GSI1 gsi1pk = SELLER#<sellerId>, begins_with(gsi1sk, LISTING#[<status>#])`.
async fn seller_listings(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let seller: UserId = req.path("sellerId")?;
    let page = req.page(&["status"])?;
    let status = req.query::<ListingStatus>("status")?;
    if status != Some(ListingStatus::Active) {
        caller.require_self_or_admin(&seller)?;
    }
    app.list::<Listing>(&access::seller_listings(&seller, status), &page).await
}

/// Marketplace AP6: a category's active listings, newest first (public).
/// The sparse GSI2 holds only active listings.
/// `Query GSI2 gsi2pk = CATEGORY#<categoryId>, begins_with(gsi2sk, LISTING#)`, descending.
async fn category_listings(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let category: CategoryId = req.path("categoryId")?;
    let page = req.page(&[])?;
    app.list::<Listing>(&access::category_listings(&category), &page).await
}
