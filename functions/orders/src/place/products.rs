//! Placing a catalog order: each line's units taken from the product's
//! shares of stock, in the placement transaction.

use super::*;

/// Catalog: buy products. Each line's units come from one share of the
/// product's stock holding them all, chosen at random among those (so that
/// concurrent orders of a busy product take from different items), or
/// else from its fullest shares; each share only if enough is left there
/// at the price read (`write::product::take_from_share`). The products are
/// read with the buyer; of a product whose stock is shared, a first attempt
/// reads one share at random and takes from it if it holds the line, else
/// every share in one `Query` (strongly consistent: `stock::shares_for`);
/// `fresh` (a share moved since the last read): the products strongly
/// consistent too, and every share.
pub(super) async fn place_products(
    app: &App,
    home: &Store,
    buyer: &UserId,
    lines: &[NewLine],
    key: &Idempotency,
    fresh: bool,
    reserved: bool,
) -> Result<Order, Attempt> {
    let mut wanted =
        lines.iter().map(|l| keys::product(&l.product_id).map(Key::from)).collect::<Result<Vec<_>, _>>()?;
    wanted.push(keys::user(buyer)?.into());
    let read = home.batch_get_items(&wanted, fresh).await?;
    require_signed_up(app, buyer, &read).await?;
    let products = of_entity::<Product>(read, EntityType::Product)?;
    let mut total = Money::default();
    let mut found = Vec::with_capacity(lines.len());
    for line in lines {
        let product = products
            .iter()
            .find(|p| p.product_id == line.product_id)
            .ok_or_else(|| ApiError::not_found(format!("product `{}` does not exist", line.product_id)))?;
        total = product.price.times(line.qty).and_then(|t| total.plus(t)).ok_or_else(|| {
            ApiError::bad_request(format!("invalid body: the order total would exceed {}", Money::MAX))
        })?;
        found.push(product);
    }
    let random = key.record().order_id.map_or(0, |o| o.ulid().random());
    let wanted: Vec<(&Product, u32)> = found.iter().zip(lines).map(|(p, l)| (*p, l.qty)).collect();
    let shares = stock::shares_for(home, &wanted, random, fresh).await?;
    let mut order_lines = Vec::with_capacity(lines.len());
    for ((line, product), shares) in lines.iter().zip(&found).zip(&shares) {
        let Some(chosen) = domain::stock::choose(shares, line.qty, random) else {
            // The product item was read eventually consistent: read again
            // before answering that there is not enough.
            if !fresh {
                return Err(Attempt::StockMoved);
            }
            let left: u64 = shares.iter().map(|(_, units)| u64::from(*units)).sum();
            let message = format!("insufficient stock for product `{}`: {left} in stock", product.product_id);
            return Err(ApiError::conflict(message).into());
        };
        let mut order_line = OrderLine::new(product.product_id.to_string(), line.qty);
        if product.stock_shards > 1 {
            let taken = chosen.iter().map(|(shard, qty)| Taken { shard: *shard, qty: *qty }).collect();
            order_line.stock = Some(LineStock { shards: product.stock_shards, taken });
        }
        order_lines.push((order_line, chosen));
    }
    let takes: Vec<(&Product, u16, u32)> = order_lines
        .iter()
        .zip(&found)
        .flat_map(|((_, chosen), product)| chosen.iter().map(move |(shard, qty)| (*product, *shard, *qty)))
        .collect();
    // The record, the order, its items and each share taken, in one
    // transaction (lines spread thin over many shares could pass its limit).
    if 2 + lines.len() + takes.len() > MAX_ACTIONS {
        return Err(ApiError::conflict(format!(
            "the order would take its units from {} shares of stock, more than one transaction writes; \
             order fewer units or fewer lines",
            takes.len()
        ))
        .into());
    }
    let order_lines = order_lines.iter().map(|(line, _)| line.clone()).collect();
    let mut order = new_order(app, key.record(), buyer, None, order_lines, total)?;
    let items: Vec<OrderItem> = lines
        .iter()
        .zip(&found)
        .map(|(line, product)| OrderItem {
            order_id: order.order_id,
            item_id: product.product_id.to_string(),
            name: product.name.clone(),
            qty: line.qty,
            price: product.price,
            buyer_id: buyer.clone(),
            seller_id: None,
        })
        .collect();
    // A key reserved at the caller's home is not written again here.
    let mut tx = placement(home, (!reserved).then_some(key), &mut order, &items, app.hold_items)?;
    for (product, shard, qty) in takes {
        let take = write::product::take_from_share(&product.product_id, shard, qty, product.price)?;
        tx.update(format!("{STOCK}{} {shard}", product.product_id), &take)?;
    }
    match send(tx).await {
        Ok(()) => Ok(order),
        // A share no longer holds what was read, or the price changed.
        Err(Ok(e)) if e.failed_actions().any(|a| a.starts_with(STOCK)) => Err(Attempt::StockMoved),
        Err(Ok(_)) => Err(ApiError::conflict("the order collided with an existing one; retry").into()),
        Err(Err(attempt)) => Err(attempt),
    }
}
