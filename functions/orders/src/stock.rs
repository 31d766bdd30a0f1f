//! A product's shares of stock as an order sees them, and which of them
//! an order line takes its units from.

use domain::model::Product;
use domain::stock::ProductStock;
use futures_util::future::try_join_all;
use keyschema::{access, keys};
use store::item::from_item;
use store::{Store, StoreError};

/// Each product's shares of stock as (shard, units), for an order line of
/// `qty` units of it. On a first attempt (`!fresh`) at a product whose stock
/// is shared, one share at random (`random`), read strongly consistent,
/// if it holds the line's units: one small read where all of them would be
/// a `Query` of up to 64, on a partition every order and product page of
/// a flash sale reads (docs/capacity.md). Else, and on a retry, all of
/// them: the product item's (as read) and the others, in one strongly
/// consistent `Query`. All products at once.
pub(crate) async fn shares_for(
    home: &Store,
    products: &[(&Product, u32)],
    random: u128,
    fresh: bool,
) -> Result<Vec<Vec<(u16, u32)>>, StoreError> {
    try_join_all(products.iter().map(|(product, qty)| async move {
        if !fresh && product.stock_shards > 1 {
            let shard = u16::try_from(random % u128::from(product.stock_shards)).unwrap_or(0);
            let units = match shard {
                0 => product.stock_level,
                _ => {
                    let key = keys::product_stock(&product.product_id, &shard)?;
                    home.get_consistent::<ProductStock, _>(&key).await?.map_or(0, |s| s.stock_level)
                }
            };
            if units >= *qty {
                return Ok(vec![(shard, units)]);
            }
        }
        all_shares(home, product).await
    }))
    .await
}

/// Every share of a product's stock: the product item's (as read), then,
/// if its stock is shared, the others in one strongly consistent `Query`.
async fn all_shares(home: &Store, product: &Product) -> Result<Vec<(u16, u32)>, StoreError> {
    let mut shares = vec![(0u16, product.stock_level)];
    if product.stock_shards > 1 {
        let query = access::product_shares(&product.product_id)?;
        for item in home.query_all_consistent(&query).await? {
            let share = from_item::<ProductStock>(item)?;
            if share.shard < product.stock_shards {
                shares.push((share.shard, share.stock_level));
            }
        }
    }
    Ok(shares)
}
