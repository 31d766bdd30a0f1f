//! Products: stock changes are `ADD`s (applied by DynamoDB, never
//! read-modify-write), each share of the stock bounded to its cap
//! (`0..=Product::MAX_STOCK` with one share). They set no `updatedAt`
//! (the time of the last change of the catalog fields): the index copies
//! hold it, not the stock, so a sale rewrites none of them.

use super::*;

/// The item holding share `shard` of a product's stock: the product
/// item for the first (0), a [`domain::stock::ProductStock`] after.
pub fn share(id: &ProductId, shard: u16) -> Result<Key, SchemaError> {
    Ok(if shard == 0 { keys::product(id)?.into() } else { keys::product_stock(id, &shard)?.into() })
}

/// Adds `delta` units (negative to take), only if the product exists,
/// its stock is the one item (no `stockShards`) and the result stays
/// within `0..=MAX_STOCK`. `Ok(None)` if `delta` alone passes the bound.
pub fn change_stock(id: &ProductId, delta: i64) -> Result<Option<Change>, SchemaError> {
    let change = change_share(id, 0, delta, Product::MAX_STOCK)?;
    Ok(change.map(|c| c.only_if(Cond::NotExists(attr::STOCK_SHARDS))))
}

/// Adds `delta` units to share `shard` (negative to take), only if it
/// exists and the result stays within `0..=cap`. `Ok(None)` if `delta`
/// alone passes the bound.
pub fn change_share(id: &ProductId, shard: u16, delta: i64, cap: u32) -> Result<Option<Change>, SchemaError> {
    let max = i64::from(cap);
    if delta.unsigned_abs() > max.unsigned_abs() {
        return Ok(None);
    }
    // Below zero: need at least -delta in stock. Above: need room for delta.
    let bound = if delta < 0 {
        Cond::Ge(attr::STOCK_LEVEL, Value::n(-delta))
    } else {
        Cond::Le(attr::STOCK_LEVEL, Value::n(max - delta))
    };
    Ok(Some(Change::untimed(share(id, shard)?).add(attr::STOCK_LEVEL, delta).only_if(Cond::ItemExists).only_if(bound)))
}

/// Takes `qty` units for an order, only if enough are left at the price read.
pub fn take_for_order(id: &ProductId, qty: u32, price: Money) -> Result<Change, SchemaError> {
    take_from_share(id, 0, qty, price)
}

/// Takes `qty` units for an order from share `shard`, only if enough are
/// left there at the price read (each share carries the price).
pub fn take_from_share(id: &ProductId, shard: u16, qty: u32, price: Money) -> Result<Change, SchemaError> {
    Ok(Change::untimed(share(id, shard)?)
        .add(attr::STOCK_LEVEL, -i64::from(qty))
        .only_if(Cond::Ge(attr::STOCK_LEVEL, Value::n(qty)))
        .only_if(Cond::Eq(attr::PRICE, Value::n(price))))
}

/// Gives `qty` units back (a cancelled order), only if the product still
/// exists and the result stays within `MAX_STOCK`.
pub fn restock(id: &ProductId, qty: u32) -> Result<Change, SchemaError> {
    restock_share(id, 0, qty, Product::MAX_STOCK)
}

/// Gives `qty` units back to share `shard`, only if it still exists and
/// the result stays within `cap` (`domain::stock::share_cap`).
pub fn restock_share(id: &ProductId, shard: u16, qty: u32, cap: u32) -> Result<Change, SchemaError> {
    let room = cap.saturating_sub(qty);
    Ok(Change::untimed(share(id, shard)?)
        .add(attr::STOCK_LEVEL, i64::from(qty))
        .only_if(Cond::ItemExists)
        .only_if(Cond::Le(attr::STOCK_LEVEL, Value::n(room))))
}
