//! The time budget (second hardening round, production settings): against
//! a slow endpoint, a handler stops starting DynamoDB operations when the
//! time left before its deadline cannot hold one, and answers before the
//! deadline (a 503, nothing half-written) instead of being killed part way;
//! the stream processor reports the records it did not reach, and their
//! redelivery applies them exactly once.

use std::time::{Duration, Instant};

use domain::time::now_ms;
use integration_tests::{delaying_proxy, lambda_event_due_in, process_stream, req, stream_records, through};
use integration_tests::{As, Reply, TestTable};
use serde_json::json;

/// Each request takes this long to reach DynamoDB Local.
const SLOW: Duration = Duration::from_secs(3);
/// The deadline: two slow requests and a half fit in it, three do not.
const DEADLINE_MS: u64 = 8_000;

#[tokio::test]
async fn an_api_handler_answers_before_its_deadline() {
    let t = TestTable::with_demo_data().await;
    integration_tests::sign_up_all(&t.deps, &["bob"]).await;
    let slow = through(&t, &delaying_proxy(SLOW).await).await;
    let app = orders::App { deps: slow, shards: 10, hold_items: true };
    let place = req("POST /orders")
        .by(As::User("bob"))
        .header("Idempotency-Key", "in-time")
        .json(json!({ "items": [{ "productId": local_stack::demo::PRODUCT_IDS[3], "qty": 1 }] }));
    let started = Instant::now();
    let due = now_ms() + DEADLINE_MS;
    let answer = orders::handler(&app, lambda_event_due_in(place.event(), DEADLINE_MS)).await.unwrap();
    let (answered_at, r) = (now_ms(), Reply::from_event(answer));
    assert!(answered_at < due, "answered {} ms after the deadline", answered_at - due);
    assert_eq!((r.status, r.error_code()), (503, "unavailable"), "{:?}", r.body);
    assert!(started.elapsed() < Duration::from_millis(DEADLINE_MS));
    let stock = integration_tests::catalog(
        &t.deps,
        req("GET /products/{productId}").path("productId", local_stack::demo::PRODUCT_IDS[3]),
    )
    .await;
    assert_eq!(stock.body["stockLevel"], 300, "nothing half-written");
}

#[tokio::test]
async fn the_stream_processor_reports_what_it_did_not_reach() {
    let t = TestTable::with_demo_data().await;
    let listing = |i: usize| {
        req("POST /listings")
            .by(As::User("alice"))
            .json(json!({ "title": format!("Slow {i}"), "price": 5, "categoryId": "books" }))
    };
    for i in 0..20 {
        assert_eq!(integration_tests::listings(&t.deps, listing(i)).await.status, 201);
    }
    let records = stream_records(&t).await;
    let slow = through(&t, &delaying_proxy(SLOW).await).await;
    let mut event = aws_lambda_events::dynamodb::Event::default();
    event.records = records.clone();
    let due = now_ms() + DEADLINE_MS;
    let response = stream_processor::handler(&slow.store, lambda_event_due_in(event, DEADLINE_MS)).await.unwrap();
    assert!(now_ms() < due, "answered after the deadline");
    assert!(!response.batch_item_failures.is_empty(), "20 listings cannot all be indexed in time");
    // Lambda retries from the first failed record: everything gets done once.
    let first = response.batch_item_failures[0].item_identifier.clone();
    let from = records.iter().position(|r| r.change.sequence_number == first).unwrap();
    assert!(process_stream(&t, records[from..].to_vec()).await.is_empty());
    let browse = integration_tests::listings(
        &t.deps,
        req("GET /categories/{categoryId}/listings").path("categoryId", "books").query("limit", 100),
    )
    .await;
    let slow_ones = browse.item_field("title").iter().filter(|t| t.starts_with("Slow ")).count();
    assert_eq!(slow_ones, 20);
}
