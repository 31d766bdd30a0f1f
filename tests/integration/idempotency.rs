//! Idempotency keys under concurrency and across routes (second hardening
//! round, defects 1 and 10).

use integration_tests::{
    catalog, listings, listings_at_once, orders, req, seller_listings, sign_up_all, stock_level, As, Reply, TestTable,
};
use serde_json::{json, Value};

const SHARDS: u16 = 10;

/// 20 requests with one key and one body, all at once.
async fn twenty_at_once(t: &TestTable, key: &'static str, body: Value) -> Vec<Reply> {
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (deps, body) = (t.deps.clone(), body.clone());
            tokio::spawn(async move {
                let r = req("POST /orders").by(As::User("bob")).header("Idempotency-Key", key).json(body);
                orders(&deps, SHARDS, r).await
            })
        })
        .collect();
    let mut replies = Vec::new();
    for task in tasks {
        replies.push(task.await.expect("task"));
    }
    replies
}

fn assert_all_answer_one_order(replies: &[Reply]) {
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert!(statuses.iter().all(|s| *s == 201), "every retry answers the order: {statuses:?}");
    let ids: std::collections::HashSet<&str> = replies.iter().filter_map(|r| r.body["orderId"].as_str()).collect();
    assert_eq!(ids.len(), 1, "one order: {ids:?}");
    assert_eq!(replies.iter().filter(|r| !r.replayed).count(), 1, "one first answer, the rest replayed");
}

/// Defect 1: once the key's order is placed, every request with that key
/// and body answers it, however the retries race (a listing, and a product
/// with one unit left: the retries cannot be placed again, and are not
/// told so).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_retries_of_one_key_all_answer_its_order() {
    let t = TestTable::with_demo_data().await;
    let listing = local_stack::demo::LISTING_IDS[0];
    assert_all_answer_one_order(&twenty_at_once(&t, "race-listing", json!({ "listingId": listing })).await);

    let product = local_stack::demo::PRODUCT_IDS[1]; // stock 15
    let to_one =
        req("POST /products/{productId}/stock").path("productId", product).by(As::Admin).json(json!({"delta": -14}));
    assert_eq!(catalog(&t.deps, to_one).await.body["stockLevel"], 1);
    let body = json!({ "items": [{ "productId": product, "qty": 1 }] });
    assert_all_answer_one_order(&twenty_at_once(&t, "race-stock", body).await);
    assert_eq!(stock_level(&t, product).await, 0);
}

/// Defect 10: keys are per caller and per route: a stock change's key does
/// not collide with an order's, whatever the two keys look like.
#[tokio::test]
async fn keys_of_different_routes_never_collide() {
    let t = TestTable::with_demo_data().await;
    let product = local_stack::demo::PRODUCT_IDS[3];
    // An admin places an order with a key shaped like the stock route's old
    // namespace, then changes stock with the plain key.
    let order = req("POST /orders")
        .by(As::Admin)
        .header("Idempotency-Key", &format!("stock-{product}-k"))
        .json(json!({ "items": [{ "productId": product, "qty": 1 }] }));
    integration_tests::sign_up_all(&t.deps, &["admin-1"]).await;
    assert_eq!(orders(&t.deps, SHARDS, order).await.status, 201);
    let stock = req("POST /products/{productId}/stock")
        .path("productId", product)
        .by(As::Admin)
        .header("Idempotency-Key", "k")
        .json(json!({ "delta": 5 }));
    let r = catalog(&t.deps, stock).await;
    assert_eq!((r.status, r.replayed, &r.body["stockLevel"]), (200, false, &json!(304)), "{:?}", r.body);
    // The same key on the other route is a request of its own too.
    let order = req("POST /orders")
        .by(As::Admin)
        .header("Idempotency-Key", "k")
        .json(json!({ "items": [{ "productId": product, "qty": 1 }] }));
    let placed = orders(&t.deps, SHARDS, order).await;
    assert_eq!((placed.status, placed.replayed), (201, false), "{:?}", placed.body);
}

/// Third round, defect 5: `POST /listings` takes an optional
/// `Idempotency-Key`: 20 requests with one key and body at once create one
/// listing and all answer it (one first answer, the rest replayed); a later
/// retry answers it too; the key with another body is a 422; the key is
/// the caller's and this route's (the same key places an order); without a
/// key every request is a listing of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_listing_is_created_once_per_key_however_retries_race() {
    let t = TestTable::with_demo_data().await;
    sign_up_all(&t.deps, &["lister"]).await;
    let body = json!({
        "title": "Teapot", "price": 20, "categoryId": "pottery", "location": { "lat": 1, "lon": 2 },
        "description": "Cast iron"
    });
    let post = |key: Option<&'static str>, body: Value| {
        let r = req("POST /listings").by(As::User("lister")).json(body);
        let r = match key {
            Some(key) => r.header("Idempotency-Key", key),
            None => r,
        };
        listings(&t.deps, r)
    };
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (deps, body) = (t.deps.clone(), body.clone());
            tokio::spawn(async move {
                let r = req("POST /listings").by(As::User("lister")).header("Idempotency-Key", "teapot").json(body);
                listings(&deps, r).await
            })
        })
        .collect();
    let mut replies = Vec::new();
    for task in tasks {
        replies.push(task.await.expect("task"));
    }
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert!(statuses.iter().all(|s| *s == 201), "every retry answers the listing: {statuses:?}");
    let ids: std::collections::HashSet<&str> = replies.iter().filter_map(|r| r.body["listingId"].as_str()).collect();
    assert_eq!(ids.len(), 1, "one listing: {ids:?}");
    assert_eq!(replies.iter().filter(|r| !r.replayed).count(), 1, "one first answer, the rest replayed");
    assert!(replies.iter().all(|r| r.body["description"] == "Cast iron"), "a replay reads the details too");
    assert_eq!(seller_listings(&t.deps, "lister", "active").await.items().len(), 1);

    let again = post(Some("teapot"), body.clone()).await;
    assert_eq!((again.status, again.replayed, &again.body), (201, true, &replies[0].body));
    let other = post(Some("teapot"), json!({ "title": "Teapot", "price": 21, "categoryId": "pottery" })).await;
    assert_eq!((other.status, other.error_code()), (422, "idempotency_key_reused"), "{:?}", other.body);
    let bad_key =
        req("POST /listings").by(As::User("lister")).header("Idempotency-Key", "no spaces").json(body.clone());
    assert_eq!(listings(&t.deps, bad_key).await.status, 400);

    let product = local_stack::demo::PRODUCT_IDS[0];
    let order = req("POST /orders")
        .by(As::User("lister"))
        .header("Idempotency-Key", "teapot")
        .json(json!({ "items": [{ "productId": product, "qty": 1 }] }));
    let placed = orders(&t.deps, SHARDS, order).await;
    assert_eq!((placed.status, placed.replayed), (201, false), "keys are per route: {:?}", placed.body);

    for _ in 0..2 {
        let unkeyed = post(None, body.clone()).await;
        assert_eq!((unkeyed.status, unkeyed.replayed), (201, false), "{:?}", unkeyed.body);
    }
    assert_eq!(seller_listings(&t.deps, "lister", "active").await.items().len(), 3);
}

/// Defect 5 behind the simulation of DynamoDB's conflict rule (every
/// request 25 ms in flight; a transaction on an item another one holds is
/// cancelled): 8 requests with one key at once conflict on the key's
/// record, and still make one listing that all 8 answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_retries_of_a_listing_behind_the_conflict_rule_make_one_listing() {
    let (t, limits) = TestTable::with_conflicts().await;
    sign_up_all(&t.deps, &["lister"]).await;
    let body = json!({ "title": "Teapot", "price": 20, "categoryId": "pottery" });
    let one = || req("POST /listings").by(As::User("lister")).header("Idempotency-Key", "k").json(body.clone());
    let replies = listings_at_once(&t.deps, (0..8).map(|_| one()).collect()).await;
    let conflicts: u64 = limits.stats().conflicts.values().sum();
    let statuses: Vec<(u16, bool)> = replies.iter().map(|r| (r.status, r.replayed)).collect();
    println!("8 requests with one key at once: {statuses:?}; conflicts met: {conflicts}");
    assert!(replies.iter().all(|r| r.status == 201), "{statuses:?}");
    let ids: std::collections::HashSet<&str> = replies.iter().filter_map(|r| r.body["listingId"].as_str()).collect();
    assert_eq!((ids.len(), replies.iter().filter(|r| !r.replayed).count()), (1, 1), "{statuses:?}");
    assert_eq!(seller_listings(&t.deps, "lister", "active").await.items().len(), 1);
}
