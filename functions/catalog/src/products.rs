//! Products (catalog AP3-9): created with their stock shared over
//! `stockShards` items (one by default: the product item holds it all; a
//! product many buy at once gets more, so that concurrent orders take from
//! different items), read with their description and shares in one
//! `Query`, their stock changed atomically over the shares, listed by brand
//! or category.

use api::idempotency::Idempotency;
use api::validate::{Description, Name};
use api::{ApiError, Deps, Request, Response};
use domain::answers::ProductCard;
use domain::ids::{BrandId, CategoryId, ProductId};
use domain::model::{Money, Product, ProductDetails};
use domain::stock::ProductStock;
use domain::time::{now_ms, rfc3339};
use keyschema::{access, keys, write, Change};
use store::item::from_item;

/// Body of `POST /products`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NewProduct {
    name: Name,
    brand_id: BrandId,
    category_id: CategoryId,
    price: Money,
    stock_level: u32,
    stock_shards: Option<u16>,
    description: Option<Description>,
}

/// Creates a product (admin): its brand and category read (they existed
/// when read; cached, see `api::cache`), then the product put if absent,
/// with its details (the description, an item of its own beside it) and
/// its other shares of stock in the same transaction (the units shared
/// evenly).
pub(crate) async fn create_product(app: &Deps, req: Request) -> Result<Response, ApiError> {
    req.admin()?;
    let body: NewProduct = req.json()?;
    let max_shards = domain::stock::MAX_SHARDS;
    let shards = body.stock_shards.unwrap_or(1);
    if !(1..=max_shards).contains(&shards) {
        return Err(ApiError::bad_request(format!("invalid body: `stockShards`: must be 1 to {max_shards}")));
    }
    if body.stock_level > Product::MAX_STOCK {
        let max = Product::MAX_STOCK;
        return Err(ApiError::bad_request(format!("invalid body: `stockLevel`: must be at most {max}")));
    }
    // Each within its share's cap (`domain::stock::share_cap`).
    let shares = domain::stock::shares(body.stock_level, shards);
    let now = rfc3339(now_ms());
    let product = Product {
        product_id: ProductId::generate(),
        name: body.name.into_string(),
        brand_id: body.brand_id,
        category_id: body.category_id,
        price: body.price,
        stock_level: shares[0],
        stock_shards: shards,
        description: None,
        created_at: now.clone(),
        updated_at: now.clone(),
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
    let others: Vec<ProductStock> = (1..shards)
        .zip(&shares[1..])
        .map(|(shard, units)| ProductStock {
            product_id: product.product_id,
            shard,
            stock_level: *units,
            price: product.price,
            updated_at: now.clone(),
        })
        .collect();
    let mut tx = app.store.at_primary()?.transaction().with_token(product.product_id.to_string());
    tx.put_new("product", &product)?;
    if let Some(details) = &details {
        tx.put_new("details", details)?;
    }
    for share in &others {
        tx.put_new(format!("share {}", share.shard), share)?;
    }
    tx.send().await?;
    Response::created(&product.with_details(details).with_stock(&others))
}

/// Catalog AP3: a product by id, with its description and its stock (the
/// total of its shares): one `Query pk = PRODUCT#<productId>, begins_with(sk, #)`
/// (the product, its details and its other shares).
pub(crate) async fn get_product(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let id: ProductId = req.path("productId")?;
    Response::ok(&product_with_details(app, &id, false).await?.0)
}

/// A product as answered (its description, its stock the total) and its
/// shares of stock as (shard, units), the product item's first (`None` -> 404).
async fn product_with_details(
    app: &Deps,
    id: &ProductId,
    consistent: bool,
) -> Result<(Product, Vec<(u16, u32)>), ApiError> {
    let query = access::product_with_details(id)?;
    // A consistent read decides a change: at the catalog's home, the primary.
    let store = if consistent { app.store.at_primary()? } else { app.store.clone() };
    match store.get_with_details_and::<Product, ProductDetails, ProductStock>(&query, consistent).await? {
        Some((product, details, others)) => {
            let mut shares = vec![(0, product.stock_level)];
            shares.extend(others.iter().filter(|s| s.shard < product.stock_shards).map(|s| (s.shard, s.stock_level)));
            Ok((product.with_details(details).with_stock(&others), shares))
        }
        None => Err(ApiError::not_found(format!("product `{id}` does not exist"))),
    }
}

/// Body of `POST /products/{productId}/stock`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct StockChange {
    delta: i64,
}

/// Tries of a stock change whose shares moved meanwhile (orders).
const STOCK_ATTEMPTS: u32 = 4;

/// Catalog AP4-5: add to or remove from stock (admin), atomically: `ADD
/// stockLevel :delta` only if the result stays within `0..=MAX_STOCK`
/// (`write::product::change_stock`). Concurrent changes never overwrite each
/// other (DynamoDB applies the ADD, not a read-modify-write here). The ADD
/// goes in a one-action transaction for its `ClientRequestToken`: an SDK
/// retry of a change that already applied is not applied twice. With an
/// `Idempotency-Key` header its record is put in the same transaction
/// ([`api::idempotency`], route `stock`), so the caller's own retry (after
/// a 503, say) is not applied twice either: it answers the product as it
/// is. The answer is the product read back (strongly consistent) after the
/// change. A product whose stock is shared over several items refuses that
/// ADD (its condition), and the change goes over its shares instead
/// ([`change_shares`]).
pub(crate) async fn change_stock(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.admin()?;
    let id: ProductId = req.path("productId")?;
    let StockChange { delta } = req.json()?;
    let max = Product::MAX_STOCK;
    let change = write::product::change_stock(&id, delta)?.filter(|_| delta != 0).ok_or_else(|| {
        ApiError::bad_request(format!("invalid body: `delta`: must be a non-zero integer within ±{max}"))
    })?;
    let idempotency = Idempotency::of(&req, &caller.user_id, "stock", format!("{id} {delta}").as_bytes())?;
    let mut tx = app.store.at_primary()?.transaction();
    if let Some(idempotency) = &idempotency {
        idempotency.put_in(&mut tx)?;
    }
    tx.update("stock", &change)?;
    let product_now = || async { Ok::<_, ApiError>(product_with_details(app, &id, true).await?.0) };
    match tx.send().await {
        Ok(()) => Response::ok(&product_now().await?),
        Err(e) if idempotency.as_ref().map(|i| i.taken_by(&e)).transpose()?.flatten().is_some() => {
            // This change was applied when the key was first sent.
            Ok(Response::ok(&product_now().await?)?.replayed())
        }
        Err(e) if e.failed("stock") => match e.failed_item("stock").cloned().map(from_item::<Product>) {
            None => Err(ApiError::not_found(format!("product `{id}` does not exist"))),
            Some(old) => {
                let old = old?;
                let stock = old.stock_level;
                if old.stock_shards > 1 {
                    return change_shares(app, &id, delta, idempotency.as_ref()).await;
                }
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
        // Met an order on the product item: over the shares, read first
        // and tried again.
        Err(e) if e.is_transaction_conflict() => change_shares(app, &id, delta, idempotency.as_ref()).await,
        Err(e) => Err(e.into()),
    }
}

/// [`change_stock`] of a product whose stock is shared (or that met an
/// order on its one item): the product and its
/// shares read (strongly consistent), then `ADD stockLevel` on each share a
/// part of `delta` goes to, each only if the share stays within `0..=` its
/// part of `MAX_STOCK` (`write::product::change_share`): units added are
/// shared evenly, units removed taken from the fullest shares; with the
/// idempotency record, in one transaction. Tried again if a share moved
/// meanwhile (an order took from it).
async fn change_shares(
    app: &Deps,
    id: &ProductId,
    delta: i64,
    idempotency: Option<&Idempotency>,
) -> Result<Response, ApiError> {
    let max = Product::MAX_STOCK;
    for _ in 0..STOCK_ATTEMPTS {
        let (product, shares) = product_with_details(app, id, true).await?;
        let changes = share_changes(id, &shares, delta, product.stock_shards, product.stock_level)?;
        let mut tx = app.store.at_primary()?.transaction();
        if let Some(idempotency) = idempotency {
            idempotency.put_in(&mut tx)?;
        }
        for (shard, change) in &changes {
            tx.update(format!("stock {shard}"), change)?;
        }
        match tx.send().await {
            Ok(()) => return Response::ok(&product_with_details(app, id, true).await?.0),
            Err(e) if idempotency.map(|i| i.taken_by(&e)).transpose()?.flatten().is_some() => {
                return Ok(Response::ok(&product_with_details(app, id, true).await?.0)?.replayed());
            }
            // A share moved since it was read (an order, a cancel): again.
            Err(e) if e.failed_actions().any(|a| a.starts_with("stock ")) && delta < 0 => continue,
            Err(e) if e.failed_actions().any(|a| a.starts_with("stock ")) => {
                let stock = product.stock_level;
                return Err(ApiError::conflict(format!(
                    "stock of product `{id}` would exceed {max}: {stock} in stock"
                )));
            }
            Err(e) if e.is_transaction_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::unavailable())
}

/// The changes of `delta` over `shares` ((shard, units), of `shards`
/// shares, `total` units): added evenly, or taken from the fullest shares;
/// 409 if that many cannot be taken.
fn share_changes(
    id: &ProductId,
    shares: &[(u16, u32)],
    delta: i64,
    shards: u16,
    total: u32,
) -> Result<Vec<(u16, Change)>, ApiError> {
    let invalid = || ApiError::bad_request(format!("invalid body: `delta`: must be within ±{}", Product::MAX_STOCK));
    let mut parts: Vec<(u16, i64)> = Vec::new();
    match u32::try_from(delta) {
        Ok(added) => {
            for ((shard, _), part) in shares.iter().zip(domain::stock::shares(added, shards)) {
                parts.push((*shard, i64::from(part)));
            }
        }
        Err(_) => {
            let mut wanted = delta.unsigned_abs();
            if u64::from(total) < wanted {
                return Err(ApiError::conflict(format!(
                    "insufficient stock for product `{id}`: {total} in stock, cannot remove {wanted}"
                )));
            }
            let mut fullest = shares.to_vec();
            fullest.sort_by_key(|(_, units)| std::cmp::Reverse(*units));
            for (shard, units) in fullest {
                let take = wanted.min(u64::from(units));
                if take > 0 {
                    parts.push((shard, -i64::try_from(take).map_err(|_| invalid())?));
                    wanted -= take;
                }
            }
        }
    }
    parts
        .into_iter()
        .filter(|(_, part)| *part != 0)
        .map(|(shard, part)| {
            let cap = domain::stock::share_cap(shard, shards);
            let change = write::product::change_share(id, shard, part, cap)?.ok_or_else(invalid)?;
            Ok((shard, change))
        })
        .collect()
}

/// Body of `PATCH /products/{productId}`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SharesChange {
    stock_shards: u16,
}

/// Raises a product's `stockShards` (admin; it never shrinks: a share's
/// units stay where they are), as its order rate grows. The new shares start
/// empty and fill by restocks (added evenly over every share); orders take
/// from any share holding units. The stock must fit the new shares' caps
/// (each share's part of `MAX_STOCK`). One transaction: the product's count,
/// only if still the one read, and the new shares, each put if absent.
pub(crate) async fn raise_stock_shards(app: &Deps, req: Request) -> Result<Response, ApiError> {
    req.admin()?;
    let id: ProductId = req.path("productId")?;
    let SharesChange { stock_shards: wanted } = req.json()?;
    let max_shards = domain::stock::MAX_SHARDS;
    if !(1..=max_shards).contains(&wanted) {
        return Err(ApiError::bad_request(format!("invalid body: `stockShards`: must be 1 to {max_shards}")));
    }
    let (product, shares) = product_with_details(app, &id, true).await?;
    let had = product.stock_shards;
    if wanted < had {
        return Err(ApiError::conflict(format!(
            "`stockShards`: {wanted} is below the product's {had} (it only grows)"
        )));
    }
    if wanted == had {
        return Response::ok(&product);
    }
    if let Some((shard, units)) = shares.iter().find(|(k, units)| *units > domain::stock::share_cap(*k, wanted)) {
        let cap = domain::stock::share_cap(*shard, wanted);
        return Err(ApiError::conflict(format!(
            "share {shard} of product `{id}` holds {units} units, above its cap of {cap} among {wanted} shares"
        )));
    }
    let now = rfc3339(now_ms());
    // Where the stock lies, not a catalog field: no `updatedAt` (the index
    // copies hold it, not the stock's layout).
    let count = Change::untimed(keys::product(&id)?)
        .set(write::attr::STOCK_SHARDS, keyschema::Value::n(wanted))
        .only_if(keyschema::Cond::ItemExists)
        .only_if(if had == 1 {
            keyschema::Cond::NotExists(write::attr::STOCK_SHARDS)
        } else {
            keyschema::Cond::Eq(write::attr::STOCK_SHARDS, keyschema::Value::n(had))
        });
    let mut tx = app.store.at_primary()?.transaction();
    tx.update("product", &count)?;
    for shard in had..wanted {
        let share =
            ProductStock { product_id: id, shard, stock_level: 0, price: product.price, updated_at: now.clone() };
        tx.put_new(format!("share {shard}"), &share)?;
    }
    match tx.send().await {
        Ok(()) => Response::ok(&product_with_details(app, &id, true).await?.0),
        Err(e) if e.failed_actions().next().is_some() || e.is_transaction_conflict() => {
            Err(ApiError::conflict(format!("product `{id}` changed; retry")))
        }
        Err(e) => Err(e.into()),
    }
}

/// Catalog AP6 / AP7: a brand's products, optionally in one category.
/// `Query GSI6 gsi1pk = BRAND#<brandId>, begins_with(gsi1sk, CATEGORY#[<categoryId>#PRODUCT#])`.
pub(crate) async fn brand_products(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let brand: BrandId = req.path("brandId")?;
    let page = req.page(&["categoryId"])?;
    let query = match req.query::<CategoryId>("categoryId")? {
        Some(category) => access::products_by_brand_and_category(&brand, &category)?,
        None => access::products_by_brand(&brand)?,
    };
    app.list::<ProductCard, _>(&query, &page).await
}

/// Catalog AP8 / AP9: a category's products, optionally of one brand.
/// `Query GSI7 gsi2pk = CATEGORY#<categoryId>, begins_with(gsi2sk, BRAND#[<brandId>#PRODUCT#])`.
pub(crate) async fn category_products(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let category: CategoryId = req.path("categoryId")?;
    let page = req.page(&["brandId"])?;
    let query = match req.query::<BrandId>("brandId")? {
        Some(brand) => access::products_by_category_and_brand(&category, &brand)?,
        None => access::products_by_category(&category)?,
    };
    app.list::<ProductCard, _>(&query, &page).await
}
