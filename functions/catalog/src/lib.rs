//! Catalog function: brands, categories and products with stock (catalog
//! access patterns 1-9 of the product-catalog design). Reads are public;
//! writes are for admins. Each read is one DynamoDB request; each write is
//! one transaction (a stock change then reads the product back).

mod categories;

use api::idempotency::Idempotency;
use api::validate::{Description, Name};
use api::{ApiError, Deps, Request, Response};
use domain::answers::ProductCard;
use domain::ids::{BrandId, CategoryId, ProductId};
use domain::model::{Brand, Category, Money, Product, ProductDetails};
use domain::time::{now_ms, rfc3339};
use keyschema::access;
use keyschema::keys;
use keyschema::write;
use keyschema::Entity;
use keyschema::EntityQuery;
use serde::Deserialize;
use store::item::from_item;

api::routes! {
    app: Deps;
    "GET /brands" => list_brands,
    "POST /brands" => create_brand,
    "GET /categories" => list_categories,
    "POST /categories" => categories::create_category,
    "GET /categories/{categoryId}" => categories::get_category,
    "PATCH /categories/{categoryId}" => categories::raise_listing_shards,
    "POST /products" => create_product,
    "GET /products/{productId}" => get_product,
    "POST /products/{productId}/stock" => change_stock,
    "GET /brands/{brandId}/products" => brand_products,
    "GET /categories/{categoryId}/products" => category_products,
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
    match app.store.put_new(entity).await {
        Ok(()) => {
            // This instance lists it at once; others within a minute.
            FIRST_PAGES.clear();
            Response::created(entity)
        }
        Err(e) if e.is_conditional_check_failed() => Err(ApiError::conflict(conflict())),
        Err(e) => Err(e.into()),
    }
}

/// Body of `POST /products`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NewProduct {
    name: Name,
    brand_id: BrandId,
    category_id: CategoryId,
    price: Money,
    stock_level: u32,
    description: Option<Description>,
}

/// Creates a product (admin): its brand and category read (they existed
/// when read; cached, see `api::cache`), then the product put if absent,
/// with its details (the description, an item of its own beside it) in the
/// same transaction.
async fn create_product(app: &Deps, req: Request) -> Result<Response, ApiError> {
    req.admin()?;
    let body: NewProduct = req.json()?;
    if body.stock_level > Product::MAX_STOCK {
        return Err(ApiError::bad_request(format!(
            "invalid body: `stockLevel`: must be at most {}",
            Product::MAX_STOCK
        )));
    }
    let now = rfc3339(now_ms());
    let product = Product {
        product_id: ProductId::generate(),
        name: body.name.into_string(),
        brand_id: body.brand_id,
        category_id: body.category_id,
        price: body.price,
        stock_level: body.stock_level,
        description: None,
        created_at: now.clone(),
        updated_at: now,
    };
    // Read, not condition-checked in the transaction: every product of a
    // brand or category would otherwise hold its one item (a hot key).
    if !api::cache::exists(&app.store, &keys::brand(&product.brand_id)?).await? {
        return Err(ApiError::bad_request(format!("brand `{}` does not exist", product.brand_id)));
    }
    if !api::cache::exists(&app.store, &keys::category(&product.category_id)?).await? {
        return Err(ApiError::bad_request(format!("category `{}` does not exist", product.category_id)));
    }
    let details =
        body.description.map(|d| ProductDetails { product_id: product.product_id, description: d.into_string() });
    let mut tx = app.store.transaction().with_token(product.product_id.to_string());
    tx.put_new("product", &product)?;
    if let Some(details) = &details {
        tx.put_new("details", details)?;
    }
    tx.send().await?;
    Response::created(&product.with_details(details))
}

/// Catalog AP3: a product by id, with its description: one
/// `Query pk = PRODUCT#<productId>, begins_with(sk, #)` (the product and its
/// details).
async fn get_product(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let id: ProductId = req.path("productId")?;
    Response::ok(&product_with_details(app, &id, false).await?)
}

/// A product with its description (`None` -> 404).
async fn product_with_details(app: &Deps, id: &ProductId, consistent: bool) -> Result<Product, ApiError> {
    let query = access::product_with_details(id)?;
    match app.store.get_with_details::<Product, ProductDetails>(&query, consistent).await? {
        Some((product, details)) => Ok(product.with_details(details)),
        None => Err(ApiError::not_found(format!("product `{id}` does not exist"))),
    }
}

/// Body of `POST /products/{productId}/stock`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StockChange {
    delta: i64,
}

/// Catalog AP4-5: add to or remove from stock (admin), atomically:
/// `ADD stockLevel :delta` only if the result stays within `0..=MAX_STOCK`
/// (`write::product::change_stock`). Concurrent changes never overwrite each
/// other (DynamoDB applies the ADD, not a read-modify-write here). The ADD
/// goes in a one-action transaction for its `ClientRequestToken`: an SDK
/// retry of a change that already applied is not applied twice. With an
/// `Idempotency-Key` header its record is put in the same transaction
/// ([`api::idempotency`], route `stock`), so the caller's own retry (after
/// a 503, say) is not applied twice either: it answers the product as it
/// is. The answer is the product read back (strongly consistent) after the
/// change.
async fn change_stock(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.admin()?;
    let id: ProductId = req.path("productId")?;
    let StockChange { delta } = req.json()?;
    let max = Product::MAX_STOCK;
    let change =
        write::product::change_stock(&id, delta, &rfc3339(now_ms()))?.filter(|_| delta != 0).ok_or_else(|| {
            ApiError::bad_request(format!("invalid body: `delta`: must be a non-zero integer within ±{max}"))
        })?;
    let idempotency = Idempotency::of(&req, &caller.user_id, "stock", format!("{id} {delta}").as_bytes())?;
    let mut tx = app.store.transaction();
    if let Some(idempotency) = &idempotency {
        idempotency.put_in(&mut tx)?;
    }
    tx.update("stock", &change)?;
    let product_now = || product_with_details(app, &id, true);
    match tx.send().await {
        Ok(()) => Response::ok(&product_now().await?),
        Err(e) if idempotency.as_ref().map(|i| i.taken_by(&e)).transpose()?.flatten().is_some() => {
            // This change was applied when the key was first sent.
            Ok(Response::ok(&product_now().await?)?.replayed())
        }
        Err(e) if e.failed("stock") => match e.failed_item("stock").cloned().map(from_item::<Product>) {
            None => Err(ApiError::not_found(format!("product `{id}` does not exist"))),
            Some(old) => {
                let stock = old?.stock_level;
                Err(ApiError::conflict(if delta < 0 {
                    format!(
                        "insufficient stock for product `{id}`: {stock} in stock, cannot remove {}",
                        -i128::from(delta)
                    )
                } else {
                    format!("stock of product `{id}` would exceed {max}: {stock} in stock")
                }))
            }
        },
        Err(e) => Err(e.into()),
    }
}

/// Catalog AP6 / AP7: a brand's products, optionally in one category.
/// `Query GSI1 gsi1pk = BRAND#<brandId>, begins_with(gsi1sk, CATEGORY#[<categoryId>#PRODUCT#])`.
async fn brand_products(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let brand: BrandId = req.path("brandId")?;
    let page = req.page(&["categoryId"])?;
    let query = match req.query::<CategoryId>("categoryId")? {
        Some(category) => access::products_by_brand_and_category(&brand, &category)?,
        None => access::products_by_brand(&brand)?,
    };
    app.list_as::<Product, _, ProductCard>(&query, &page).await
}

/// Catalog AP8 / AP9: a category's products, optionally of one brand.
/// `Query GSI2 gsi2pk = CATEGORY#<categoryId>, begins_with(gsi2sk, BRAND#[<brandId>#PRODUCT#])`.
async fn category_products(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let category: CategoryId = req.path("categoryId")?;
    let page = req.page(&["brandId"])?;
    let query = match req.query::<BrandId>("brandId")? {
        Some(brand) => access::products_by_category_and_brand(&category, &brand)?,
        None => access::products_by_category(&category)?,
    };
    app.list_as::<Product, _, ProductCard>(&query, &page).await
}
