//! Catalog function: brands, categories and products with stock (catalog
//! access patterns 1-9 of the product-catalog design). Reads are public;
//! writes are for admins. Each read is one DynamoDB request; each write is
//! one transaction (a stock change then reads the product back).

mod categories;
mod products;

use api::validate::Name;
use api::{ApiError, Deps, Request, Response};
use domain::ids::BrandId;
use domain::model::{Brand, Category};
use domain::time::{now_ms, rfc3339};
use keyschema::access;
use keyschema::Entity;
use keyschema::EntityQuery;
use serde::Deserialize;

api::routes! {
    app: Deps;
    "GET /brands" => list_brands,
    "POST /brands" => create_brand,
    "GET /categories" => list_categories,
    "POST /categories" => categories::create_category,
    "GET /categories/{categoryId}" => categories::get_category,
    "PATCH /categories/{categoryId}" => categories::raise_listing_shards,
    "POST /products" => products::create_product,
    "GET /products/{productId}" => products::get_product,
    "PATCH /products/{productId}" => products::raise_stock_shards,
    "POST /products/{productId}/stock" => products::change_stock,
    "GET /brands/{brandId}/products" => products::brand_products,
    "GET /categories/{categoryId}/products" => products::category_products,
}

/// First pages of the brand and category lists, by table, list and limit: every
/// instance would otherwise read the one `BRANDS` or `CATEGORIES` partition
/// on each request (see `api::cache`; up to a minute stale).
static FIRST_PAGES: api::cache::Ttl<(String, &'static str, u16), Response> = api::cache::Ttl::new(api::cache::LIST_TTL);

/// A list's first page from memory if recent, else read (and remembered).
async fn cached_first_page<T>(
    app: &Deps,
    list: &'static str,
    query: &EntityQuery<T>,
    req: &Request,
) -> Result<Response, ApiError>
where
    T: Entity + serde::Serialize,
{
    let page = req.page(&[])?;
    if page.cursor.is_some() {
        return app.list::<T, _>(query, &page).await;
    }
    let entry = (app.store.table().to_owned(), list, page.limit);
    if let Some(hit) = FIRST_PAGES.get(&entry) {
        return Ok(hit);
    }
    let response = app.list::<T, _>(query, &page).await?;
    FIRST_PAGES.put(entry, response.clone());
    Ok(response)
}

/// Catalog AP1: all brands, by id. `Query pk = BRANDS` (first page cached a minute).
async fn list_brands(app: &Deps, req: Request) -> Result<Response, ApiError> {
    cached_first_page::<Brand>(app, "brands", &access::brands()?, &req).await
}

/// Catalog AP2: all categories, by id. `Query pk = CATEGORIES` (first page cached a minute).
async fn list_categories(app: &Deps, req: Request) -> Result<Response, ApiError> {
    cached_first_page::<Category>(app, "categories", &access::categories()?, &req).await
}

/// Body of `POST /brands`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewGrouping {
    name: Name,
    id: Option<String>,
}

/// The requested slug id (validated) or a generated one.
pub(crate) fn slug_id<T: std::str::FromStr<Err = domain::ids::IdError>>(
    id: &Option<String>,
    generate: fn() -> T,
) -> Result<T, ApiError> {
    match id {
        Some(id) => id.parse().map_err(|e| ApiError::bad_request(format!("invalid body: `id`: {e}"))),
        None => Ok(generate()),
    }
}

/// Creates a brand (admin). `PutItem BRANDS / BRAND#<brandId>` if absent.
async fn create_brand(app: &Deps, req: Request) -> Result<Response, ApiError> {
    req.admin()?;
    let body: NewGrouping = req.json()?;
    let brand = Brand {
        brand_id: slug_id(&body.id, BrandId::generate)?,
        name: body.name.into_string(),
        created_at: rfc3339(now_ms()),
    };
    put_new(app, &brand, || format!("brand `{}` already exists", brand.brand_id)).await
}

pub(crate) async fn put_new<E: Entity + serde::Serialize>(
    app: &Deps,
    entity: &E,
    conflict: impl FnOnce() -> String,
) -> Result<Response, ApiError> {
    match app.store.at_primary()?.put_new(entity).await {
        Ok(()) => {
            // This instance lists it at once; others within a minute.
            FIRST_PAGES.clear();
            Response::created(entity)
        }
        Err(e) if e.is_conditional_check_failed() => Err(ApiError::conflict(conflict())),
        Err(e) => Err(e.into()),
    }
}
