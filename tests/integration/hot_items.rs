//! Hot items at 1000x (issue 34 item 3), behind DynamoDB's conflict rule
//! (`local_stack::limits`: a transaction on an item another request holds
//! in flight is cancelled) with transactions holding their items 250 ms
//! (against a real transaction's 25 or so): a local burst then holds a hot
//! item as much of each second as ten times its rate would. Each test
//! prints what every caller was answered.

use std::collections::BTreeMap;
use std::time::Duration;

use integration_tests::{catalog, orders, req, sign_up_all, As, Reply, TestTable};
use serde_json::json;

/// The order status index's shards (as `template.yaml` deploys them).
const SHARDS: u16 = 10;
/// How long a transaction holds its items.
const HOLD: Duration = Duration::from_millis(250);

async fn behind_a_hold() -> (TestTable, std::sync::Arc<local_stack::limits::Limits>) {
    let settings = local_stack::limits::Settings { factor: 1.0, latency: Duration::from_millis(20), hold: HOLD };
    TestTable::with_limits(settings).await
}

/// `n` signed-up buyers (`<prefix>-<i>`), set up outside the simulation.
async fn buyers(t: &TestTable, limits: &local_stack::limits::Limits, prefix: &str, n: usize) -> Vec<&'static str> {
    let names: Vec<&'static str> = (0..n).map(|i| &*Box::leak(format!("{prefix}-{i}").into_boxed_str())).collect();
    limits.pause(true);
    sign_up_all(&t.deps, &names).await;
    limits.pause(false);
    names
}

/// Places one order per body, each by its buyer, all at once.
async fn orders_at_once(t: &TestTable, bodies: Vec<(&'static str, serde_json::Value)>) -> Vec<Reply> {
    let mut tasks = tokio::task::JoinSet::new();
    for (buyer, body) in bodies {
        let deps = t.deps.clone();
        let r = req("POST /orders").by(As::User(buyer)).header("Idempotency-Key", &format!("hot-{buyer}")).json(body);
        tasks.spawn(async move { orders(&deps, SHARDS, r).await });
    }
    tasks.join_all().await
}

/// Answers by status and error code, as `{"201": n, "409 conflict": n}`.
fn answered(replies: &[Reply]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for r in replies {
        let code = if r.status >= 400 { format!("{} {}", r.status, r.error_code()) } else { r.status.to_string() };
        *out.entry(code).or_default() += 1;
    }
    out
}

/// One listing, 50 buyers at once: one order; the others are told it is
/// not for sale (one writer wins by design), never "busy, retry".
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_buyers_of_one_listing_one_sale_and_none_told_busy() {
    let (t, limits) = behind_a_hold().await;
    let names = buyers(&t, &limits, "fan", 50).await;
    let listing = local_stack::demo::LISTING_IDS[0];
    let replies = orders_at_once(&t, names.iter().map(|b| (*b, json!({ "listingId": listing }))).collect()).await;
    let by = answered(&replies);
    println!("HOT | one listing, 50 buyers, {HOLD:?} hold | {by:?} | conflicts {:?}", limits.stats().conflicts);
    assert_eq!(by.get("201"), Some(&1), "one sale: {by:?}");
    assert_eq!(by.get("409 conflict"), Some(&49), "the others told it is sold: {by:?}");
    let messages: Vec<&str> =
        replies.iter().filter(|r| r.status == 409).filter_map(|r| r.body["error"]["message"].as_str()).collect();
    assert!(messages.iter().all(|m| m.contains("for sale")), "{messages:?}");
}

/// A flash sale: 200 buyers of a product with 150 units at once: 150
/// orders, 50 told "insufficient stock", none "busy" (503), stock 0. The
/// product's stock is shared over 16 items (`SHARES=n` to try another
/// count): with it as one item, held by one order's transaction at a time,
/// 41 sold and 159 buyers ran out of retries (503); with 4, 148 and 52.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flash_sale_sells_every_unit_and_tells_no_one_busy() {
    let (t, limits) = behind_a_hold().await;
    let names = buyers(&t, &limits, "buyer", 200).await;
    limits.pause(true);
    let body = json!({
        "name": "Flash", "brandId": "acme", "categoryId": "pottery", "price": 5, "stockLevel": 150,
        "stockShards": std::env::var("SHARES").ok().and_then(|v| v.parse::<u16>().ok()).unwrap_or(16)
    });
    let product = catalog(&t.deps, req("POST /products").by(As::Admin).json(body)).await;
    limits.pause(false);
    let id = product.body["productId"].as_str().expect("a product").to_owned();
    let line = json!({ "items": [{ "productId": id, "qty": 1 }] });
    let replies = orders_at_once(&t, names.iter().map(|b| (*b, line.clone())).collect()).await;
    let by = answered(&replies);
    limits.pause(true);
    let left = catalog(&t.deps, req("GET /products/{productId}").path("productId", &id)).await;
    println!(
        "HOT | flash sale, 200 buyers of 150 units, {HOLD:?} hold | {by:?} | stock left {} | conflicts {}",
        left.body["stockLevel"],
        limits.stats().conflicts.values().sum::<u64>()
    );
    assert_eq!(by.get("201"), Some(&150), "every unit sold: {by:?}");
    assert_eq!(by.get("409 conflict"), Some(&50), "the rest told sold out: {by:?}");
    assert_eq!(left.body["stockLevel"], 0);
}

/// 120 fans favorite one listing at once while the stream processor runs
/// (its transactions on the listing's count holding it 250 ms): every fan
/// answered 2xx, the count 120 once the stream settles.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_and_twenty_fans_of_one_listing_all_count() {
    let (t, limits) = behind_a_hold().await;
    let names = buyers(&t, &limits, "fan", 120).await;
    let listing = local_stack::demo::LISTING_IDS[1];
    let mut poller = local_stack::stream::StreamPoller::new(t.deps.store.clone(), integration_tests::endpoint())
        .await
        .expect("a poller");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let polling = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut failed = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                failed += poller.poll_once().await.map(|r| r.failed).unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            // Whatever is left.
            for _ in 0..20 {
                failed += poller.poll_once().await.map(|r| r.failed).unwrap_or(0);
            }
            failed
        })
    };
    let mut tasks = tokio::task::JoinSet::new();
    for fan in names {
        let deps = t.deps.clone();
        let r = req("PUT /users/me/favorites/{listingId}").path("listingId", listing).by(As::User(fan));
        tasks.spawn(async move { integration_tests::users(&deps, r).await });
    }
    let replies = tasks.join_all().await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let failed = polling.await.expect("the poller");
    limits.pause(true);
    let by = answered(&replies);
    let got = integration_tests::listings(&t.deps, req("GET /listings/{listingId}").path("listingId", listing)).await;
    println!(
        "HOT | 120 fans of one listing, {HOLD:?} hold | {by:?} | favoriteCount {} | batches failed {failed} | conflicts {}",
        got.body["favoriteCount"],
        limits.stats().conflicts.values().sum::<u64>()
    );
    assert_eq!(by.get("201"), Some(&120), "every fan answered 2xx: {by:?}");
    assert_eq!(got.body["favoriteCount"], 120);
}
