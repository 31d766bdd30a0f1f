//! The stream processor against the table's real stream in DynamoDB Local:
//! a listing's browse keys follow its status, replays and reordering change
//! nothing, a malformed record is reported alone.

use std::time::{Duration, Instant};

use integration_tests::{listings, process_stream, req, stream_records, As, Reply, TestTable};
use local_stack::stream::StreamPoller;
use serde_json::json;

async fn browse(t: &TestTable, category: &str) -> Vec<String> {
    listings(&t.deps, req("GET /categories/{categoryId}/listings").path("categoryId", category))
        .await
        .item_field("listingId")
}

async fn set_status(t: &TestTable, id: &str, status: &str) -> Reply {
    listings(
        &t.deps,
        req("PATCH /listings/{listingId}")
            .path("listingId", id)
            .by(As::User("alice"))
            .json(json!({ "status": status })),
    )
    .await
}

/// Waits until the browse index of `category` satisfies `pred`; returns how long it took.
async fn until(t: &TestTable, category: &str, pred: impl Fn(&[String]) -> bool) -> Duration {
    let started = Instant::now();
    loop {
        if pred(&browse(t, category).await) {
            return started.elapsed();
        }
        assert!(started.elapsed() < Duration::from_secs(10), "browse index did not converge");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// End to end with the local stack's poller: created active -> browsable;
/// removed -> gone.
#[tokio::test]
async fn listings_enter_and_leave_the_browse_index_via_the_stream() {
    let t = TestTable::with_demo_data().await;
    let poller = StreamPoller::new(t.deps.store.clone(), integration_tests::endpoint()).await.unwrap();
    let task = tokio::spawn(poller.run(Duration::from_millis(100)));
    let created = listings(
        &t.deps,
        req("POST /listings").by(As::User("alice")).json(json!({ "title": "Jug", "price": 12, "categoryId": "books" })),
    )
    .await;
    let id = created.body["listingId"].as_str().unwrap().to_owned();
    let appeared = until(&t, "books", |ids| ids.contains(&id)).await;
    assert_eq!(set_status(&t, &id, "removed").await.status, 200);
    let gone = until(&t, "books", |ids| !ids.contains(&id)).await;
    assert_eq!(set_status(&t, &id, "active").await.status, 200, "a removed listing may be relisted");
    let back = until(&t, "books", |ids| ids.contains(&id)).await;
    task.abort();
    eprintln!("browse index: appeared after {appeared:?}, left after {gone:?}, came back after {back:?}");
}

/// Replaying the whole stream (twice) and delivering a stale "active" record
/// after the removal leave the index exactly right; already-right records
/// cost no write.
#[tokio::test]
async fn replays_and_stale_records_change_nothing() {
    let t = TestTable::with_demo_data().await;
    let created = listings(
        &t.deps,
        req("POST /listings")
            .by(As::User("alice"))
            .json(json!({ "title": "Bowl", "price": 12, "categoryId": "books" })),
    )
    .await;
    let id = created.body["listingId"].as_str().unwrap().to_owned();
    let insert = stream_records(&t).await.into_iter().rfind(|r| r.event_name == "INSERT").unwrap();
    assert!(process_stream(&t, vec![insert.clone()]).await.is_empty());
    assert!(browse(&t, "books").await.contains(&id));
    set_status(&t, &id, "removed").await;
    let all = stream_records(&t).await;
    assert!(process_stream(&t, all.clone()).await.is_empty());
    assert!(!browse(&t, "books").await.contains(&id), "removed listing left the index");

    // Replays, a reversed batch and the stale INSERT alone: still out, and
    // no record changes anything (each is skipped or a failed condition).
    let mut reversed = all.clone();
    reversed.reverse();
    for record in all.iter().chain(&reversed).chain([&insert]) {
        let report = stream_processor::process_batch(&t.deps.store, std::slice::from_ref(record), "replay").await;
        let changed = (report.indexed, report.unindexed, report.aggregated, report.failed.len());
        assert_eq!(changed, (0, 0, 0, 0), "{report:?} on replay of {}", record.event_name);
    }
    assert!(process_stream(&t, all).await.is_empty());
    assert!(!browse(&t, "books").await.contains(&id), "a stale active record never puts it back");
}

/// A batch with one malformed record: it is skipped (logged, not reported,
/// so Lambda never retries it and it cannot hold up its shard), and the
/// records around it are processed.
#[tokio::test]
async fn a_malformed_record_is_skipped_and_the_rest_processed() {
    let t = TestTable::with_demo_data().await;
    for title in ["A", "B"] {
        listings(
            &t.deps,
            req("POST /listings")
                .by(As::User("alice"))
                .json(json!({ "title": title, "price": 1, "categoryId": "books" })),
        )
        .await;
    }
    let mut inserts: Vec<_> = stream_records(&t)
        .await
        .into_iter()
        .filter(|r| r.event_name == "INSERT" && r.change.new_image.get("title").is_some())
        .collect();
    let (good_a, good_b) = (inserts.remove(inserts.len() - 2), inserts.remove(inserts.len() - 1));
    let mut bad = good_a.clone();
    bad.change.sequence_number = Some("999".into());
    bad.change.new_image = serde_dynamo::Item::from(std::collections::HashMap::from([(
        "entityType".to_owned(),
        serde_dynamo::AttributeValue::S("Listing".into()),
    )]));
    let failed = integration_tests::process_stream_once(&t, vec![good_a.clone(), bad, good_b.clone()]).await;
    assert!(failed.is_empty(), "a record that can never succeed is not retried: {failed:?}");
    let ids = browse(&t, "books").await;
    for good in [good_a, good_b] {
        let id = match good.change.new_image.get("listingId") {
            Some(serde_dynamo::AttributeValue::S(s)) => s.clone(),
            _ => panic!("listing id"),
        };
        assert!(ids.contains(&id), "the good records around the bad one were processed");
    }
}
