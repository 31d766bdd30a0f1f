//! A product's stock shared over several items (issue 34 item 2: stock
//! that scales): created shared evenly, answered as the total, changed
//! over its shares (added evenly, removed from the fullest, never below
//! zero), taken by orders one share or a few at a time, given back by a
//! cancel exactly once; lists leave its stock to the product's page. The
//! flash sale that needs it is in tests/integration/hot_items.rs.

use integration_tests::{catalog, move_order, orders, req, sign_up_all, stock_level, As, Reply, TestTable};
use keyschema::Entity;
use serde_json::json;

const SHARDS: u16 = 10;

async fn product(t: &TestTable, stock: u32, shares: u16) -> String {
    let body = json!({ "name": "Shared", "brandId": "acme", "categoryId": "pottery", "price": 2,
        "stockLevel": stock, "stockShards": shares });
    let made = catalog(&t.deps, req("POST /products").by(As::Admin).json(body)).await;
    assert_eq!(made.status, 201, "{:?}", made.body);
    assert_eq!(
        (made.body["stockLevel"].as_u64(), made.body["stockShards"].as_u64().or(Some(1))),
        (Some(stock.into()), Some(shares.into()))
    );
    made.body["productId"].as_str().unwrap().to_owned()
}

/// The units of each share as stored, the product item's first.
async fn shares(t: &TestTable, id: &str) -> Vec<u64> {
    let product: domain::ids::ProductId = id.parse().unwrap();
    let query = keyschema::access::product_with_details(&product).unwrap().into_query();
    let items = t.deps.store.query_all_consistent(&query).await.unwrap();
    items
        .iter()
        .filter(|i| i.get("sk").and_then(|v| v.as_s().ok()).is_some_and(|sk| sk != "#DETAILS"))
        .map(|i| i["stockLevel"].as_n().unwrap().parse().unwrap())
        .collect()
}

fn change(id: &str, delta: i64) -> integration_tests::Req {
    req("POST /products/{productId}/stock").path("productId", id).by(As::Admin).json(json!({ "delta": delta }))
}

async fn buy(t: &TestTable, buyer: &'static str, id: &str, qty: u32) -> Reply {
    let body = json!({ "items": [{ "productId": id, "qty": qty }] });
    let r = req("POST /orders").by(As::User(buyer)).header("Idempotency-Key", &format!("{buyer}-{id}-{qty}"));
    orders(&t.deps, SHARDS, r.json(body)).await
}

#[tokio::test]
async fn a_shared_stock_is_answered_whole_and_changed_over_its_shares() {
    let t = TestTable::with_demo_data().await;
    let id = product(&t, 23, 4).await;
    assert_eq!(shares(&t, &id).await, [6, 6, 6, 5], "shared evenly, the first ones a unit more");
    t.requests();
    let got = catalog(&t.deps, req("GET /products/{productId}").path("productId", &id)).await;
    assert_eq!(got.body["stockLevel"], 23);
    assert_eq!(t.requests(), ["Query"], "the product, its details and its shares in one query");

    // Added evenly; removed from the fullest; never below zero.
    let up = catalog(&t.deps, change(&id, 9)).await;
    assert_eq!((up.status, up.body["stockLevel"].as_u64()), (200, Some(32)));
    assert_eq!(shares(&t, &id).await, [9, 8, 8, 7]);
    let down = catalog(&t.deps, change(&id, -20)).await;
    assert_eq!((down.status, down.body["stockLevel"].as_u64()), (200, Some(12)));
    assert_eq!(shares(&t, &id).await.iter().sum::<u64>(), 12);
    let below = catalog(&t.deps, change(&id, -13)).await;
    assert_eq!((below.status, below.error_code()), (409, "conflict"));
    assert!(below.body["error"]["message"].as_str().unwrap().contains("12 in stock"), "{:?}", below.body);
    assert_eq!(stock_level(&t, &id).await, 12);

    // A retry of a change with its key is not applied twice.
    let keyed = || change(&id, 4).header("Idempotency-Key", "restock-1");
    assert_eq!(catalog(&t.deps, keyed()).await.body["stockLevel"], 16);
    let again = catalog(&t.deps, keyed()).await;
    assert_eq!((again.status, again.body["stockLevel"].as_u64()), (200, Some(16)));

    // A list leaves the stock to the product's page (its index copies hold
    // no stock: a sale rewrites none of them), shared or not.
    let list = catalog(&t.deps, req("GET /categories/{categoryId}/products").path("categoryId", "pottery")).await;
    let card = list.items().iter().find(|p| p["productId"] == id.as_str()).expect("listed").clone();
    assert_eq!((card.get("stockLevel"), card.get("stockShards")), (None, None), "{card:?}");
    assert!(list.items().iter().all(|p| p.get("stockLevel").is_none()), "{:?}", list.items());
}

#[tokio::test]
async fn orders_take_from_the_shares_and_a_cancel_gives_back_once() {
    let t = TestTable::with_demo_data().await;
    sign_up_all(&t.deps, &["sharer"]).await;
    let id = product(&t, 10, 5).await;
    assert_eq!(shares(&t, &id).await, [2, 2, 2, 2, 2]);
    // Three units: no share holds them; the fullest two (2 + 1).
    let three = buy(&t, "sharer", &id, 3).await;
    assert_eq!(three.status, 201, "{:?}", three.body);
    assert_eq!(stock_level(&t, &id).await, 7);
    // One unit from one share.
    let one = buy(&t, "sharer", &id, 1).await;
    assert_eq!(one.status, 201);
    assert_eq!(stock_level(&t, &id).await, 6);
    let more = buy(&t, "sharer", &id, 7).await;
    assert_eq!((more.status, more.error_code()), (409, "conflict"));
    assert!(more.body["error"]["message"].as_str().unwrap().contains("6 in stock"), "{:?}", more.body);
    // Cancelled: its units back to the shares they came from, once.
    let order = three.body["orderId"].as_str().unwrap().to_owned();
    let cancel = || move_order(&order, As::User("sharer"), "cancelled");
    assert_eq!(orders(&t.deps, SHARDS, cancel()).await.status, 200);
    assert_eq!(stock_level(&t, &id).await, 9);
    assert!(shares(&t, &id).await.iter().all(|s| *s <= 2), "back where they came from");
    orders(&t.deps, SHARDS, cancel()).await;
    assert_eq!(stock_level(&t, &id).await, 9, "a cancel again gives nothing back");
    // Every unit can be sold, and not one more.
    let rest = buy(&t, "sharer", &id, 9).await;
    assert_eq!(rest.status, 201, "{:?}", rest.body);
    assert_eq!(shares(&t, &id).await, [0, 0, 0, 0, 0]);
    let none = buy(&t, "sharer", &id, 2).await;
    assert!(none.body["error"]["message"].as_str().unwrap().contains("0 in stock"), "{:?}", none.body);
}

#[tokio::test]
async fn stock_shards_are_validated() {
    let t = TestTable::with_demo_data().await;
    for (shards, stock) in
        [(json!(0), json!(1)), (json!(65), json!(1)), (json!("4"), json!(1)), (json!(7), json!(1_000_000_001))]
    {
        let body = json!({ "name": "n", "brandId": "acme", "categoryId": "pottery", "price": 1,
            "stockLevel": stock, "stockShards": shards });
        let r = catalog(&t.deps, req("POST /products").by(As::Admin).json(body)).await;
        assert_eq!((r.status, r.error_code()), (400, "bad_request"), "{shards} {stock}: {:?}", r.body);
    }
    // Any stock up to the maximum fits its shares (each share's cap is its
    // part of the maximum); adding to it then passes a cap: 409.
    let body = json!({ "name": "n", "brandId": "acme", "categoryId": "pottery", "price": 1,
        "stockLevel": 999_999_999, "stockShards": 63 });
    let r = catalog(&t.deps, req("POST /products").by(As::Admin).json(body)).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let id = r.body["productId"].as_str().unwrap().to_owned();
    let more = catalog(&t.deps, change(&id, 2)).await;
    assert_eq!((more.status, more.error_code()), (409, "conflict"), "{:?}", more.body);
    assert_eq!(stock_level(&t, &id).await, 999_999_999);
    assert_eq!(<domain::stock::ProductStock as Entity>::DECL.key.sk, "#STOCK#<shard>");
}

/// A transaction writes at most 100 items: an order whose lines would take
/// from more shares than that is refused (409, nothing written), found by
/// a review (it was a 500).
#[tokio::test]
async fn an_order_taking_from_too_many_shares_is_refused() {
    let t = TestTable::with_demo_data().await;
    sign_up_all(&t.deps, &["thin"]).await;
    let (a, b) = (product(&t, 64, 64).await, product(&t, 64, 64).await);
    let body = json!({ "items": [{ "productId": a, "qty": 64 }, { "productId": b, "qty": 64 }] });
    let r = req("POST /orders").by(As::User("thin")).header("Idempotency-Key", "thin-1");
    let refused = orders(&t.deps, SHARDS, r.json(body)).await;
    assert_eq!((refused.status, refused.error_code()), (409, "conflict"), "{:?}", refused.body);
    assert!(refused.body["error"]["message"].as_str().unwrap().contains("128 shares"), "{:?}", refused.body);
    assert_eq!((stock_level(&t, &a).await, stock_level(&t, &b).await), (64, 64));
    // One line of them fits: 2 + 1 + 64 actions.
    let one = buy(&t, "thin", &a, 64).await;
    assert_eq!(one.status, 201, "{:?}", one.body);
    assert_eq!(stock_level(&t, &a).await, 0);
}

/// An admin raises a product's shares as its order rate grows: the new
/// shares start empty and fill by restocks; the count never shrinks, and
/// the stock must fit the new shares' caps.
#[tokio::test]
async fn shares_are_raised_while_live() {
    let t = TestTable::with_demo_data().await;
    sign_up_all(&t.deps, &["raiser"]).await;
    let id = product(&t, 10, 1).await;
    let raise = |n: u64| req("PATCH /products/{productId}").path("productId", &id).json(json!({ "stockShards": n }));
    let raised = catalog(&t.deps, raise(4).by(As::Admin)).await;
    assert_eq!(
        (raised.status, raised.body["stockShards"].as_u64(), raised.body["stockLevel"].as_u64()),
        (200, Some(4), Some(10))
    );
    assert_eq!(shares(&t, &id).await, [10, 0, 0, 0]);
    assert_eq!(catalog(&t.deps, change(&id, 8)).await.status, 200);
    assert_eq!(shares(&t, &id).await, [12, 2, 2, 2], "restocks fill every share");
    assert_eq!(buy(&t, "raiser", &id, 3).await.status, 201);
    assert_eq!(stock_level(&t, &id).await, 15);
    let same = catalog(&t.deps, raise(4).by(As::Admin)).await;
    assert_eq!((same.status, same.body["stockLevel"].as_u64()), (200, Some(15)), "the same count: nothing changes");
    let lower = catalog(&t.deps, raise(2).by(As::Admin)).await;
    assert_eq!((lower.status, lower.error_code()), (409, "conflict"), "it only grows");
    assert_eq!(catalog(&t.deps, raise(8).by(As::User("raiser"))).await.status, 403);
    assert_eq!(catalog(&t.deps, raise(65).by(As::Admin)).await.status, 400);
    // A stock above the new shares' caps stays as it is.
    let full_id = product(&t, 999_999_999, 1).await;
    let over = req("PATCH /products/{productId}").path("productId", &full_id).json(json!({ "stockShards": 2 }));
    let refused = catalog(&t.deps, over.by(As::Admin)).await;
    assert_eq!((refused.status, refused.error_code()), (409, "conflict"), "{:?}", refused.body);
    assert_eq!(shares(&t, &full_id).await, [999_999_999]);
}

/// A first attempt reads one share at random (strongly consistent), not
/// all of them: the product's partition is what every order and product
/// page of a flash sale reads (docs/capacity.md). And a share item is as
/// small as the capacity model prices it (`itemKb.share`).
#[tokio::test]
async fn an_order_reads_one_share_when_it_holds_the_line() {
    let t = TestTable::with_demo_data().await;
    let buyers = ["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"];
    sign_up_all(&t.deps, &buyers).await;
    let id = product(&t, 64 * 10, 64).await;
    for (n, buyer) in buyers.into_iter().enumerate() {
        t.requests();
        let r = buy(&t, buyer, &id, 1 + n as u32 % 2).await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        let sent = t.requests();
        assert!(!sent.contains(&"Query".to_owned()), "one share read, not a Query of 64: {sent:?}");
        // The key's record, then at most the one share (none if it is the
        // product item's, read with the buyer).
        assert!(sent.iter().filter(|op| *op == "GetItem").count() <= 2, "{sent:?}");
    }
    assert_eq!(stock_level(&t, &id).await, 640 - 12);
    let product: domain::ids::ProductId = id.parse().unwrap();
    let share = keyschema::keys::product_stock(&product, &63).unwrap();
    let item = t.deps.store.batch_get_items(&[share.into()], true).await.unwrap().remove(0);
    let size = integration_tests::pricing::item_size(&item);
    let mix: serde_json::Value =
        serde_json::from_str(include_str!("../../tools/capacity/mix.json")).expect("the capacity model's mix");
    let priced = mix["itemKb"]["share"].as_f64().unwrap() * 1000.0;
    assert!(size as f64 <= priced, "a share is {size} bytes, the model prices {priced}");
}

/// A cancel retried after meeting another transaction on its shares gives
/// its units back a share on (`write::order::cancel_turned`), so it does
/// not wait on the share that held it up: the total is exact, and the
/// cancel happens once whichever turn lands first.
#[tokio::test]
async fn a_cancel_turned_gives_its_units_to_the_next_share_once() {
    let t = TestTable::with_demo_data().await;
    sign_up_all(&t.deps, &["turner"]).await;
    let id = product(&t, 40, 4).await;
    let placed = buy(&t, "turner", &id, 3).await;
    assert_eq!(placed.status, 201, "{:?}", placed.body);
    let before = shares(&t, &id).await;
    let order_id: domain::ids::OrderId = placed.body["orderId"].as_str().unwrap().parse().unwrap();
    let order: domain::model::Order =
        t.deps.store.get_consistent(&keyschema::keys::order(&order_id).unwrap()).await.unwrap().unwrap();
    let taken = order.lines[0].stock.clone().expect("taken from shares").taken;
    assert_eq!(taken.len(), 1, "3 of the 10 in one share: {taken:?}");
    let send = |turn: u16| {
        let mut tx = t.deps.store.transaction();
        for (name, change) in keyschema::write::order::cancel_turned(&order, "2026-11-28T00:00:00.000Z", turn).unwrap()
        {
            tx.update(name, &change).unwrap();
        }
        tx.send()
    };
    send(1).await.expect("the cancel, turned by one");
    let after = shares(&t, &id).await;
    let (from, to) = (usize::from(taken[0].shard), usize::from(taken[0].shard + 1) % 4);
    assert_eq!(after[to], before[to] + 3, "{before:?} -> {after:?}");
    assert_eq!(after[from], before[from], "{before:?} -> {after:?}");
    assert_eq!(stock_level(&t, &id).await, 40);
    assert!(send(0).await.is_err(), "cancelled once: the order's status condition");
    assert_eq!(stock_level(&t, &id).await, 40);
}
