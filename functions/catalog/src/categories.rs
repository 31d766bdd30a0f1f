//! Categories beyond the list: creating one (with the shard count of its
//! listings' browse keys), raising that count later, and reading one with
//! its rating (average rating per category).

use api::validate::Name;
use api::{ApiError, Deps, Request, Response};
use domain::ids::CategoryId;
use domain::model::Category;
use domain::shard::MAX_LISTING_SHARDS;
use domain::time::{now_ms, rfc3339};
use keyschema::records::CategoryRating;
use keyschema::{keys, Change, Cond, Value};
use serde::Deserialize;
use store::item::from_item;
use store::StoreError;

use crate::{put_new, slug_id};

/// How long after a raise new listings start using the new shard count:
/// every instance's cached copy of the category (`api::cache::EXISTS_TTL`)
/// has expired by then, with a margin for clocks.
const RAISE_SETTLES_MS: u64 = api::cache::EXISTS_TTL.as_millis() as u64 + 30_000;

fn check_shards(n: u16) -> Result<u16, ApiError> {
    if (1..=MAX_LISTING_SHARDS).contains(&n) {
        Ok(n)
    } else {
        Err(ApiError::bad_request(format!("invalid body: `listingShards`: must be from 1 to {MAX_LISTING_SHARDS}")))
    }
}

/// Body of `POST /categories`: a brand's, and how many shards its listings'
/// browse and price keys are spread over (for a category expected to be
/// hot: see docs/capacity.md).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NewCategory {
    name: Name,
    id: Option<String>,
    listing_shards: Option<u16>,
}

/// Creates a category (admin). `PutItem CATEGORIES / CATEGORY#<categoryId>` if absent.
/// Listings record their shard; `PATCH` raises the count later.
pub(crate) async fn create_category(app: &Deps, req: Request) -> Result<Response, ApiError> {
    req.admin()?;
    let body: NewCategory = req.json()?;
    let listing_shards = check_shards(body.listing_shards.unwrap_or(1))?;
    let category = Category {
        category_id: slug_id(&body.id, CategoryId::generate)?,
        name: body.name.into_string(),
        listing_shards,
        listing_shards_before: None,
        listing_shards_from: None,
        created_at: rfc3339(now_ms()),
    };
    put_new(app, &category, || format!("category `{}` already exists", category.category_id)).await
}

/// Body of `PATCH /categories/{categoryId}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ShardsChange {
    listing_shards: u16,
}

/// Raises a category's `listingShards` (admin; it never shrinks: listings
/// keep the shard they recorded). Readers query the new count once their
/// instance's cached copy of the category refreshes (at most five minutes;
/// the new shards are empty until then), and a walk goes on over the larger
/// of its cursor's count and its instance's; new listings keep the previous
/// count until every cached copy knows the new one (`listingShardsFrom`),
/// so no reader ever misses a listing. One conditional `UpdateItem` on the
/// count read.
pub(crate) async fn raise_listing_shards(app: &Deps, req: Request) -> Result<Response, ApiError> {
    req.admin()?;
    let id: CategoryId = req.path("categoryId")?;
    let ShardsChange { listing_shards } = req.json()?;
    let wanted = check_shards(listing_shards)?;
    let key = keys::category(&id)?;
    let missing = || ApiError::not_found(format!("category `{id}` does not exist"));
    let stored = app.store.at_primary()?.get_consistent::<serde_json::Value, _>(&key).await?.ok_or_else(missing)?;
    let had_count = stored.get("listingShards").is_some();
    let category: Category = serde_json::from_value(stored).map_err(|e| ApiError::internal(e.to_string()))?;
    if wanted < category.listing_shards {
        return Err(ApiError::conflict(format!(
            "`listingShards`: {wanted} is below the category's {} (it only grows)",
            category.listing_shards
        )));
    }
    if wanted == category.listing_shards {
        return Response::ok(&category);
    }
    let now = now_ms();
    // A raise still settling keeps the count writers use until then.
    let before = category.shards_for_new_listing(now);
    let from = rfc3339(now.saturating_add(RAISE_SETTLES_MS));
    let change = Change::untimed(key)
        .set("listingShards", Value::n(wanted))
        .set("listingShardsBefore", Value::n(before))
        .set("listingShardsFrom", Value::s(from))
        .only_if(Cond::ItemExists)
        .only_if(if had_count {
            Cond::Eq("listingShards", Value::n(category.listing_shards))
        } else {
            Cond::NotExists("listingShards")
        });
    match app.store.at_primary()?.update(&change).await {
        Ok(item) => {
            api::cache::forget(&app.store, &keys::category(&id)?);
            Response::ok(&from_item::<Category>(item)?)
        }
        Err(StoreError::ConditionFailed(_)) => Err(ApiError::conflict(format!("category `{id}` changed; retry"))),
        Err(e) => Err(e.into()),
    }
}

/// A category as `GET /categories/{categoryId}` answers it: with its rating.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct RatedCategory {
    #[serde(flatten)]
    category: Category,
    /// The average of the buyers' reviews of orders of its listings; `null`
    /// before the first.
    rating: Option<f64>,
    review_count: u64,
}

/// A category with its rating (beyond the seeds: average rating per
/// category). The category from memory (five minutes: only its shard count
/// changes, and readers of it allow for that) or
/// `GetItem CATEGORIES / CATEGORY#<categoryId>`; its rating
/// `GetItem CATEGORY#<categoryId> / #RATING`, an item of its own kept by the
/// stream processor (not in the `CATEGORIES` partition every list reads).
pub(crate) async fn get_category(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let id: CategoryId = req.path("categoryId")?;
    let Some(category) = api::cache::found::<Category, _>(&app.store, &keys::category(&id)?).await? else {
        return Err(ApiError::not_found(format!("category `{id}` does not exist")));
    };
    let held = app.store.get::<CategoryRating, _>(&keys::category_rating(&id)?).await?;
    let (rating, review_count) = held.map_or((None, 0), |r| (r.rating(), r.review_count));
    Response::ok(&RatedCategory { category, rating, review_count })
}
