//! Faults x operations: each operation meets each fault on the real client
//! (throttled, DynamoDB 500, connection refused, no answer until the
//! operation times out, answer lost after the write applied, connection cut
//! while the answer is read). The caller gets
//! a success, a 503 (retryable) or a clear 4xx, never a bare 500; after the
//! caller's retry (same `Idempotency-Key`) or Lambda's redelivery, no order,
//! stock unit or listing's browse key is lost or doubled. Prints the table docs/testing.md
//! quotes.

use integration_tests::faults::{Fault, Faults};
use integration_tests::{
    catalog, listings, move_order, orders, process_stream, req, stream_records, As, Reply, TestTable,
};
use serde_json::json;

const SHARDS: u16 = 10;
const PRODUCT: &str = local_stack::demo::PRODUCT_IDS[1]; // stock 15

/// The SDK makes 3 attempts: a fault that does not apply is met on all of
/// them (so the caller sees it); one that applies is met once, and so is a
/// timeout (it uses up the whole operation's time).
fn plan(faults: &Faults, operation: &str, fault: Fault) {
    let times = if fault.applied() || fault == Fault::TimedOut { 1 } else { 3 };
    faults.inject(operation, fault, times);
}

fn place() -> integration_tests::Req {
    req("POST /orders")
        .by(As::User("fault-buyer"))
        .header("Idempotency-Key", "fault-order")
        .json(json!({ "items": [{ "productId": PRODUCT, "qty": 2 }] }))
}

async fn stock(t: &TestTable) -> i64 {
    catalog(&t.deps, req("GET /products/{productId}").path("productId", PRODUCT)).await.body["stockLevel"]
        .as_i64()
        .unwrap()
}

async fn orders_of_buyer(t: &TestTable) -> Vec<String> {
    orders(&t.deps, SHARDS, req("GET /buyers/{buyerId}/orders").path("buyerId", "fault-buyer").by(As::Admin))
        .await
        .item_field("orderId")
}

fn outcome(r: &Reply) -> String {
    match r.status {
        s @ 200..=299 => format!("{s}"),
        503 => "503, retried: ok".to_owned(),
        s => format!("{s} {}", r.error_code()),
    }
}

/// One cell: what the caller first saw, after checking the invariants.
async fn cell(fault: Fault, operation: &'static str) -> String {
    let (t, faults) = TestTable::with_faults().await;
    integration_tests::sign_up_all(&t.deps, &["fault-buyer"]).await;
    match operation {
        "place order" => {
            plan(&faults, "TransactWriteItems", fault);
            let first = orders(&t.deps, SHARDS, place()).await;
            assert_ne!(first.status, 500, "{fault:?} {operation}: {:?}", first.body);
            let retry = orders(&t.deps, SHARDS, place()).await;
            assert_eq!(retry.status, 201, "{fault:?} {operation} retry: {:?}", retry.body);
            if first.status == 201 {
                assert_eq!(first.body["orderId"], retry.body["orderId"]);
            }
            assert_eq!(orders_of_buyer(&t).await.len(), 1, "{fault:?}: exactly one order");
            assert_eq!(stock(&t).await, 13, "{fault:?}: stock taken once");
            outcome(&first)
        }
        "change stock" => {
            let change = || {
                req("POST /products/{productId}/stock")
                    .path("productId", PRODUCT)
                    .by(As::Admin)
                    .header("Idempotency-Key", "restock-1")
                    .json(json!({ "delta": 5 }))
            };
            plan(&faults, "TransactWriteItems", fault);
            let first = catalog(&t.deps, change()).await;
            assert_ne!(first.status, 500, "{fault:?} {operation}: {:?}", first.body);
            let retry = catalog(&t.deps, change()).await;
            assert_eq!(retry.status, 200, "{fault:?} {operation} retry: {:?}", retry.body);
            assert_eq!(stock(&t).await, 20, "{fault:?}: added once");
            outcome(&first)
        }
        "cancel order" => {
            let placed = orders(&t.deps, SHARDS, place()).await;
            let id = placed.body["orderId"].as_str().unwrap().to_owned();
            let cancel = || move_order(&id, As::User("fault-buyer"), "cancelled");
            plan(&faults, "TransactWriteItems", fault);
            let first = orders(&t.deps, SHARDS, cancel()).await;
            assert_ne!(first.status, 500, "{fault:?} {operation}: {:?}", first.body);
            let retry = orders(&t.deps, SHARDS, cancel()).await;
            assert_eq!((retry.status, &retry.body["status"]), (200, &json!("cancelled")), "{fault:?} retry");
            assert_eq!(stock(&t).await, 15, "{fault:?}: given back once");
            outcome(&first)
        }
        "create listing" => {
            // Without a key: one conditional PutItem, its text within it.
            let body = json!({ "title": "Fault lamp", "price": 3, "categoryId": "books", "description": "Brass" });
            plan(&faults, "PutItem", fault);
            let first = listings(&t.deps, req("POST /listings").by(As::User("fault-buyer")).json(body)).await;
            assert_ne!(first.status, 500, "{fault:?} {operation}: {:?}", first.body);
            faults.clear();
            let own = req("GET /sellers/{sellerId}/listings").path("sellerId", "fault-buyer").by(As::Admin);
            let listed = listings(&t.deps, own).await.item_field("listingId");
            match first.status {
                201 => assert_eq!(listed, [first.body["listingId"].as_str().unwrap()], "{fault:?}: listed once"),
                _ => assert_eq!(listed.len(), usize::from(fault.applied()), "{fault:?}: {listed:?}"),
            }
            match first.status {
                201 => "201".to_owned(),
                s => format!("{s}, {} listed", listed.len()),
            }
        }
        _ => {
            let created = listings(&t.deps, integration_tests::new_listing("Lamp")).await;
            let id = created.body["listingId"].as_str().unwrap().to_owned();
            let records = stream_records(&t).await;
            plan(&faults, "UpdateItem", fault);
            let failed = integration_tests::process_stream_once(&t, records.clone()).await;
            let first = if failed.is_empty() { "processed".to_owned() } else { "reported, redelivered: ok".to_owned() };
            if !failed.is_empty() {
                let from = records.iter().position(|r| failed.contains(r.change.sequence_number.as_ref().unwrap()));
                assert!(process_stream(&t, records[from.unwrap()..].to_vec()).await.is_empty());
            }
            let browse =
                listings(&t.deps, req("GET /categories/{categoryId}/listings").path("categoryId", "books")).await;
            let shown = browse.item_field("listingId").iter().filter(|l| **l == id).count();
            assert_eq!(shown, 1, "{fault:?}: the listing is browsable exactly once");
            first
        }
    }
}

#[tokio::test]
async fn every_operation_survives_every_fault() {
    const OPERATIONS: [&str; 5] = ["place order", "change stock", "cancel order", "create listing", "stream batch"];
    let mut tasks = tokio::task::JoinSet::new();
    for fault in Fault::ALL {
        for operation in OPERATIONS {
            tasks.spawn(async move { ((fault, operation), cell(fault, operation).await) });
        }
    }
    let mut table: Vec<((Fault, &str), String)> = tasks.join_all().await;
    table.sort_by_key(|((f, o), _)| (Fault::ALL.iter().position(|x| x == f), OPERATIONS.iter().position(|x| x == o)));
    println!("| fault | {} |", OPERATIONS.join(" | "));
    println!("|---|---|---|---|---|---|");
    for row in table.chunks(OPERATIONS.len()) {
        let cells: Vec<&str> = row.iter().map(|(_, outcome)| outcome.as_str()).collect();
        println!("| {:?} | {} |", row[0].0 .0, cells.join(" | "));
    }
}

/// A transaction cancelled by conflicts (another transaction in flight on
/// its items, which DynamoDB Local never does) is retried by the store: a
/// stock change meeting conflicts on all but its last attempt is applied
/// once (200, the stock moved once); one meeting them on every attempt is
/// a 409 to retry, nothing applied. An order, which also retries on its
/// own, absorbs them the same way.
#[tokio::test]
async fn conflicts_are_retried_and_absorbed_within_the_attempts() {
    let (t, faults) = TestTable::with_faults().await;
    integration_tests::sign_up_all(&t.deps, &["fault-buyer"]).await;
    let before = stock(&t).await;
    let change = |delta: i64| {
        req("POST /products/{productId}/stock").path("productId", PRODUCT).by(As::Admin).json(json!({ "delta": delta }))
    };
    let retried = store::conflicts::retried();
    faults.inject("TransactWriteItems", Fault::Conflict, store::conflicts::ATTEMPTS - 1);
    let absorbed = catalog(&t.deps, change(5)).await;
    assert_eq!((absorbed.status, absorbed.body["stockLevel"].as_i64()), (200, Some(before + 5)), "{:?}", absorbed.body);
    assert_eq!(faults.pending(), 0);
    assert!(store::conflicts::retried() >= retried + u64::from(store::conflicts::ATTEMPTS - 1));
    // The store gave up: the change reads the product and tries again.
    faults.inject("TransactWriteItems", Fault::Conflict, store::conflicts::ATTEMPTS);
    let again = catalog(&t.deps, change(5)).await;
    assert_eq!((again.status, again.body["stockLevel"].as_i64()), (200, Some(before + 10)), "{:?}", again.body);
    // Until it gives up too: 503, nothing applied.
    faults.inject("TransactWriteItems", Fault::Conflict, store::conflicts::ATTEMPTS * 6);
    let refused = catalog(&t.deps, change(5)).await;
    assert_eq!((refused.status, refused.error_code()), (503, "unavailable"), "{:?}", refused.body);
    assert_eq!(stock(&t).await, before + 10, "nothing applied");
    faults.clear();

    faults.inject("TransactWriteItems", Fault::Conflict, store::conflicts::ATTEMPTS + 1);
    let placed = orders(&t.deps, SHARDS, place()).await;
    assert_eq!(placed.status, 201, "{:?}", placed.body);
    assert_eq!((stock(&t).await, orders_of_buyer(&t).await.len()), (before + 8, 1));
}

/// Under the simulation of DynamoDB's conflict rule (a transaction on an
/// item another one holds in flight is cancelled; 30 ms in flight each),
/// twelve buyers order one hot product at once: the conflicts happen (the
/// simulation counts them) and the store's retries absorb them: every
/// order placed, the stock taken exactly once per order.
#[tokio::test]
async fn orders_of_a_hot_product_absorb_the_conflicts_they_meet() {
    let settings = local_stack::limits::Settings {
        factor: 1.0,
        latency: std::time::Duration::from_millis(30),
        hold: std::time::Duration::ZERO,
    };
    let (t, limits) = TestTable::with_limits(settings).await;
    let buyers: Vec<String> = (0..12).map(|n| format!("hot-buyer-{n}")).collect();
    let names: Vec<&'static str> = buyers.iter().map(|b| &*Box::leak(b.clone().into_boxed_str())).collect();
    integration_tests::sign_up_all(&t.deps, &names).await;
    let before = stock(&t).await;
    let mut tasks = tokio::task::JoinSet::new();
    for b in names {
        let deps = t.deps.clone();
        tasks.spawn(async move {
            let r = req("POST /orders")
                .by(As::User(b))
                .header("Idempotency-Key", "hot")
                .json(json!({ "items": [{ "productId": PRODUCT, "qty": 1 }] }));
            orders(&deps, SHARDS, r).await.status
        });
    }
    let statuses: Vec<u16> = tasks.join_all().await;
    let conflicts: u64 = limits.stats().conflicts.values().sum();
    println!("12 orders of one product at once: {statuses:?}; conflicts met and retried: {conflicts}");
    assert!(statuses.iter().all(|s| *s == 201), "{statuses:?}");
    assert!(conflicts > 0, "the simulation saw no conflict: the test proves nothing");
    assert_eq!(stock(&t).await, before - 12);
}
