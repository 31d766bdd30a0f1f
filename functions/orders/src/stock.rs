//! A product's shares of stock as an order sees them, and which of them
//! an order line takes its units from.

use domain::model::Product;
use domain::stock::ProductStock;
use futures_util::future::try_join_all;
use keyschema::access;
use store::item::from_item;
use store::{Store, StoreError};

/// Each product's shares of stock as (shard, units): the product item's
/// (as read), then, for a product whose stock is shared, the others, read
/// in one strongly consistent `Query` each, all at once.
pub(crate) async fn shares_of(home: &Store, products: &[&Product]) -> Result<Vec<Vec<(u16, u32)>>, StoreError> {
    try_join_all(products.iter().map(|product| async move {
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
        Ok::<_, StoreError>(shares)
    }))
    .await
}
