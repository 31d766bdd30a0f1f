//! Regression tests for the defects found by review and black-box runs:
//! sequences of requests (write, then read back; extreme inputs; paging
//! with an open-ended range; retries of writes that already committed).

use integration_tests::{catalog, orders, req, As, TestTable};
use serde_json::json;

const SHARDS: u16 = 10;

/// Defect 1: an order whose total passes the Money maximum must not be
/// written; every list that would hold it stays readable.
#[tokio::test]
async fn an_order_total_past_the_money_maximum_is_refused_and_lists_stay_readable() {
    let t = TestTable::with_demo_data().await;
    let product = catalog(
        &t.deps,
        req("POST /products").by(As::Admin).json(json!({
            "name": "Grand piano", "brandId": "acme", "categoryId": "pottery", "price": 600000, "stockLevel": 5
        })),
    )
    .await;
    assert_eq!(product.status, 201, "{:?}", product.body);
    let id = product.body["productId"].as_str().unwrap().to_owned();
    let placed = orders(
        &t.deps,
        SHARDS,
        req("POST /orders")
            .by(As::User("bob"))
            .header("Idempotency-Key", "too-much")
            .json(json!({ "items": [{ "productId": id, "qty": 2 }] })),
    )
    .await;
    assert_eq!((placed.status, placed.error_code()), (400, "bad_request"), "{:?}", placed.body);
    assert!(placed.body["error"]["message"].as_str().unwrap().contains("total"));

    // Every read that would decode it answers 200, and the stock was not taken.
    let mine =
        orders(&t.deps, SHARDS, req("GET /buyers/{buyerId}/orders").path("buyerId", "bob").by(As::User("bob"))).await;
    assert_eq!(mine.status, 200, "{:?}", mine.body);
    let all = orders(&t.deps, SHARDS, req("GET /orders").by(As::Admin)).await;
    assert_eq!(all.status, 200, "{:?}", all.body);
    let after = catalog(&t.deps, req("GET /products/{productId}").path("productId", &id)).await;
    assert_eq!(after.body["stockLevel"], 5);

    // The largest total that can be read back is accepted: 1,000,000.00 exactly.
    let exact = orders(
        &t.deps,
        SHARDS,
        req("POST /orders")
            .by(As::User("bob"))
            .header("Idempotency-Key", "just-enough")
            .json(json!({ "items": [{ "productId": id, "qty": 1 }] })),
    )
    .await;
    assert_eq!(exact.status, 201, "{:?}", exact.body);
    let order_id = exact.body["orderId"].as_str().unwrap();
    let read =
        orders(&t.deps, SHARDS, req("GET /orders/{orderId}").path("orderId", order_id).by(As::User("bob"))).await;
    assert_eq!(read.status, 200, "{:?}", read.body);
}

/// Defect 2: extreme stock deltas are 400, never a 500 or a wrapped bound.
#[tokio::test]
async fn extreme_stock_deltas_are_bad_requests() {
    let t = TestTable::with_demo_data().await;
    let id = local_stack::demo::PRODUCT_IDS[1]; // stock 15
    for delta in [
        "-9223372036854775808",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "1e300",
        "-1e300",
        "1000000001",
        "-1000000001",
    ] {
        let r = catalog(
            &t.deps,
            req("POST /products/{productId}/stock")
                .path("productId", id)
                .by(As::Admin)
                .raw(&format!("{{\"delta\": {delta}}}")),
        )
        .await;
        assert_eq!((r.status, r.error_code()), (400, "bad_request"), "delta {delta}: {:?}", r.body);
    }
    let after = catalog(&t.deps, req("GET /products/{productId}").path("productId", id)).await;
    assert_eq!((after.status, &after.body["stockLevel"]), (200, &json!(15)));
}

/// Defect 3: a range open at the end (`from` without `to`) pages to the end.
#[tokio::test]
async fn an_open_ended_date_range_pages_to_the_end() {
    let t = TestTable::new().await;
    let seeded = crate::orders::seed_orders(&t, SHARDS, 60).await; // hourly from 2026-01-01
    let pending =
        seeded.iter().filter(|o| o.status.as_str() == "pending" && o.created_at.as_str() >= "2026-01-02").count();
    let (mut seen, mut cursor) = (0, None::<String>);
    for _ in 0..20 {
        let mut r = req("GET /orders").query("status", "pending").query("from", "2026-01-02").query("limit", 7);
        if let Some(c) = &cursor {
            r = r.query("cursor", c);
        }
        let page = orders(&t.deps, SHARDS, r.by(As::Admin)).await;
        assert_eq!(page.status, 200, "page after {seen}: {:?}", page.body);
        seen += page.items().len();
        cursor = page.next_cursor();
        if cursor.is_none() {
            break;
        }
    }
    assert!(cursor.is_none(), "the walk ended");
    assert_eq!(seen, pending);
}
