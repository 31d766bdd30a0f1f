//! Reviews (marketplace AP10-11) and the stream processor's exactly-once
//! rating aggregates, against DynamoDB Local and its real stream.

use std::collections::{BTreeMap, HashSet};

use aws_lambda_events::dynamodb::EventRecord;
use domain::ids::{OrderId, ReviewId, UserId};
use domain::model::{Review, User};
use integration_tests::faults::Fault;
use integration_tests::{
    listings, orders, process_stream, put_users, req, stream_records, users, As, Reply, Req, TestTable,
};
use keyschema::keys;
use serde_json::{json, Value};
use ulid::Ulid;

const SHARDS: u16 = 10;
const L1: &str = "01JF8Z6A000000000000000001"; // alice's, active

async fn reviews(t: &TestTable, r: Req) -> Reply {
    Reply::from_event(reviews::handler(&t.deps, integration_tests::lambda_event(r.event())).await.unwrap())
}

fn review_of(order: &str, by: &'static str, body: Value) -> Req {
    req("POST /orders/{orderId}/reviews").path("orderId", order).by(As::User(by)).json(body)
}

/// bob buys alice's L1; alice moves the order to `until`.
async fn order_between_bob_and_alice(t: &TestTable, until: &str) -> String {
    let placed = orders(
        &t.deps,
        SHARDS,
        req("POST /orders").by(As::User("bob")).header("Idempotency-Key", "review-me").json(json!({ "listingId": L1 })),
    )
    .await;
    assert_eq!(placed.status, 201, "{:?}", placed.body);
    let id = placed.body["orderId"].as_str().unwrap().to_owned();
    for status in ["confirmed", "shipped", "delivered"] {
        let r = orders(
            &t.deps,
            SHARDS,
            req("PATCH /orders/{orderId}").path("orderId", &id).by(As::User("alice")).json(json!({ "status": status })),
        )
        .await;
        assert_eq!(r.status, 200, "{status}: {:?}", r.body);
        if status == until {
            break;
        }
    }
    id
}

/// A review of a user who has no profile (gone outside the API) is a 409
/// naming it, read before the transaction (no condition check there: a
/// mega-seller's item would be held by every review of them), and writes
/// nothing.
#[tokio::test]
async fn a_review_of_a_user_without_a_profile_is_refused_and_writes_nothing() {
    let t = TestTable::with_demo_data().await;
    let order = order_between_bob_and_alice(&t, "delivered").await;
    let alice = keys::user(&"alice".parse().unwrap()).unwrap();
    t.raw_delete(alice).await;
    let r = reviews(&t, review_of(&order, "bob", json!({ "rating": 5, "body": "Fine." }))).await;
    assert_eq!((r.status, r.error_code()), (409, "conflict"), "{:?}", r.body);
    assert!(r.body["error"]["message"].as_str().unwrap().contains("`alice` has not signed up"), "{:?}", r.body);
    let about = reviews(&t, req("GET /users/{userId}/reviews").path("userId", "alice")).await;
    assert_eq!(about.items().len(), 0, "{:?}", about.body);
    let stored: domain::model::Order =
        t.deps.store.get_consistent(&keys::order(&order.parse().unwrap()).unwrap()).await.unwrap().unwrap();
    assert_eq!(stored.buyer_review_id, None, "the order is not marked");
}

#[tokio::test]
async fn parties_review_each_other_once_after_delivery() {
    let t = TestTable::with_demo_data().await;
    let order = order_between_bob_and_alice(&t, "shipped").await;
    let good = json!({ "rating": 5, "body": "Quick and friendly." });

    let early = reviews(&t, review_of(&order, "bob", good.clone())).await;
    assert_eq!((early.status, early.error_code()), (409, "conflict"), "{:?}", early.body);
    assert!(early.body["error"]["message"].as_str().unwrap().contains("delivered"));
    let stranger = reviews(&t, review_of(&order, "eve", good.clone())).await;
    assert_eq!(stranger.status, 403);
    let admin =
        reviews(&t, req("POST /orders/{orderId}/reviews").path("orderId", &order).by(As::Admin).json(good.clone()))
            .await;
    assert_eq!(admin.status, 403, "an admin is not a party");

    for bad in [
        json!({ "rating": 0, "body": "x" }),
        json!({ "rating": 6, "body": "x" }),
        json!({ "rating": 4.5, "body": "x" }),
        json!({ "rating": "5", "body": "x" }),
        json!({ "rating": -1, "body": "x" }),
        json!({ "rating": 5, "body": "" }),
        json!({ "rating": 5, "body": "x".repeat(2001) }),
        json!({ "rating": 5, "body": "a\u{0}b" }),
        json!({ "rating": 5 }),
        json!({ "rating": 5, "body": "x", "authorId": "alice" }),
        json!({ "rating": 5, "body": "x", "reviewId": "01JF8Z8C000000000000000009" }),
        json!({ "rating": 5, "body": "x", "reviewedUserId": "eve" }),
    ] {
        let r = reviews(&t, review_of(&order, "bob", bad.clone())).await;
        assert_eq!((r.status, r.error_code()), (400, "bad_request"), "{bad}: {:?}", r.body);
    }

    orders(
        &t.deps,
        SHARDS,
        req("PATCH /orders/{orderId}")
            .path("orderId", &order)
            .by(As::User("alice"))
            .json(json!({ "status": "delivered" })),
    )
    .await;
    t.requests();
    let by_buyer = reviews(&t, review_of(&order, "bob", good.clone())).await;
    assert_eq!(by_buyer.status, 201, "{:?}", by_buyer.body);
    assert_eq!(
        t.requests(),
        ["GetItem", "GetItem", "TransactWriteItems"],
        "the order and the reviewed user read, one transaction"
    );
    assert_eq!(
        (by_buyer.body["reviewedUserId"].as_str(), by_buyer.body["authorId"].as_str()),
        (Some("alice"), Some("bob"))
    );
    assert_eq!(by_buyer.body["rating"], 5);
    for field in ["reviewId", "orderId", "body", "createdAt"] {
        assert!(by_buyer.body[field].is_string(), "{field}: {:?}", by_buyer.body);
    }
    let again = reviews(&t, review_of(&order, "bob", json!({ "rating": 1, "body": "changed my mind" }))).await;
    assert_eq!(again.status, 409, "once per party per order");
    let by_seller = reviews(&t, review_of(&order, "alice", json!({ "rating": 4, "body": "Paid at once." }))).await;
    assert_eq!(by_seller.status, 201, "{:?}", by_seller.body);
    assert_eq!(by_seller.body["reviewedUserId"], "bob");

    // A catalog order has no seller to review.
    let catalog_order = orders(
        &t.deps,
        SHARDS,
        req("POST /orders")
            .by(As::User("bob"))
            .header("Idempotency-Key", "catalog")
            .json(json!({ "items": [{ "productId": local_stack::demo::PRODUCT_IDS[0], "qty": 1 }] })),
    )
    .await;
    let id = catalog_order.body["orderId"].as_str().unwrap();
    let r = reviews(&t, review_of(id, "bob", good.clone())).await;
    assert_eq!((r.status, r.error_code()), (409, "conflict"), "{:?}", r.body);
    assert!(r.body["error"]["message"].as_str().unwrap().contains("catalog order"));
    let missing = reviews(&t, review_of(&OrderId::from_ulid(Ulid::from_parts(1, 1)).to_string(), "bob", good)).await;
    assert_eq!(missing.status, 404);
}

#[tokio::test]
async fn concurrent_reviews_by_one_party_create_exactly_one() {
    let t = TestTable::with_demo_data().await;
    let order = order_between_bob_and_alice(&t, "delivered").await;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..10 {
        let (deps, order) = (t.deps.clone(), order.clone());
        tasks.spawn(async move {
            let r = review_of(&order, "bob", json!({ "rating": 1 + i % 5, "body": format!("attempt {i}") }));
            Reply::from_event(reviews::handler(&deps, integration_tests::lambda_event(r.event())).await.unwrap()).status
        });
    }
    let mut statuses = tasks.join_all().await;
    statuses.sort();
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 1, "{statuses:?}");
    assert!(statuses.iter().all(|s| *s == 201 || *s == 409), "{statuses:?}");
    let written =
        reviews(&t, req("GET /users/{userId}/reviews/written").path("userId", "bob").by(As::User("bob"))).await;
    let on_order: Vec<_> = written.items().iter().filter(|r| r["orderId"] == order.as_str()).collect();
    assert_eq!(on_order.len(), 1);
}

/// Reviews written straight to the table (as the reviews function writes
/// them), for the paging and aggregate tests.
async fn put_reviews(t: &TestTable, specs: &[(&str, &str, u8)]) -> Vec<Review> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut out = Vec::new();
    for (reviewed, author, rating) in specs {
        let i = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let review = Review {
            home: None,
            review_id: ReviewId::from_ulid(Ulid::from_parts(1_790_000_000_000 + i, u128::from(i))),
            reviewed_user_id: reviewed.parse().unwrap(),
            author_id: author.parse().unwrap(),
            order_id: OrderId::from_ulid(Ulid::from_parts(1_790_000_000_000, u128::from(i))),
            category_id: None,
            rating: *rating,
            body: format!("review {i}"),
            created_at: "2026-11-22T00:00:00.000Z".into(),
        };
        t.deps.store.put_new(&review).await.unwrap();
        out.push(review);
    }
    out
}

/// Pages through a list route; every page must be exactly one Query.
async fn walk(t: &TestTable, r: impl Fn() -> Req, limit: u16) -> Vec<String> {
    let mut ids = Vec::new();
    integration_tests::walk_pages(
        t,
        || r().query("limit", limit),
        |page| reviews(t, page),
        |reply: &Reply, sent| {
            assert_eq!(sent, ["Query"], "one request per page");
            ids.extend(reply.item_field("reviewId"));
        },
    )
    .await;
    ids
}

#[tokio::test]
async fn ap10_ap11_are_one_query_per_page_newest_first_complete_and_unique() {
    let t = TestTable::with_demo_data().await;
    let specs: Vec<(&str, &str, u8)> = (0..45)
        .map(|i| (if i % 3 == 0 { "bob" } else { "alice" }, if i % 2 == 0 { "carol" } else { "dave" }, 3))
        .collect();
    let written = put_reviews(&t, &specs).await;
    let newest_first = |pred: &dyn Fn(&Review) -> bool| {
        let mut ids: Vec<ReviewId> = written.iter().filter(|r| pred(r)).map(|r| r.review_id).collect();
        ids.sort();
        ids.reverse();
        ids.into_iter().map(|id| id.to_string()).collect::<Vec<_>>()
    };
    let about_alice = walk(&t, || req("GET /users/{userId}/reviews").path("userId", "alice"), 7).await;
    assert_eq!(about_alice, newest_first(&|r| r.reviewed_user_id.as_str() == "alice"));
    assert_eq!(about_alice.iter().collect::<HashSet<_>>().len(), 30);
    let by_carol =
        walk(&t, || req("GET /users/{userId}/reviews/written").path("userId", "carol").by(As::User("carol")), 4).await;
    assert_eq!(by_carol, newest_first(&|r| r.author_id.as_str() == "carol"));
    let by_admin =
        walk(&t, || req("GET /users/{userId}/reviews/written").path("userId", "dave").by(As::Admin), 50).await;
    assert_eq!(by_admin.len(), 22);
    let other =
        reviews(&t, req("GET /users/{userId}/reviews/written").path("userId", "carol").by(As::User("dave"))).await;
    assert_eq!(other.status, 403, "only the author or an admin");
    let anonymous = reviews(&t, req("GET /users/{userId}/reviews/written").path("userId", "carol")).await;
    assert_eq!(anonymous.status, 401);
}

#[tokio::test]
async fn anonymous_reads_of_profile_storefront_and_reviews_show_no_email() {
    let t = TestTable::with_demo_data().await;
    put_reviews(&t, &[("alice", "bob", 4)]).await;
    let profile = users(&t.deps, req("GET /users/{userId}").path("userId", "alice")).await;
    let storefront = listings(&t.deps, req("GET /sellers/{sellerId}/listings/active").path("sellerId", "alice")).await;
    let about = reviews(&t, req("GET /users/{userId}/reviews").path("userId", "alice")).await;
    for (what, r) in [("profile", &profile), ("storefront", &storefront), ("reviews", &about)] {
        assert_eq!(r.status, 200, "{what}: {:?}", r.body);
        assert!(!r.body.to_string().contains('@'), "{what} shows an email: {}", r.body);
    }
    assert_eq!(storefront.item_field("listingId"), [L1, "01JF8Z6A000000000000000002"], "active listings only");
    for field in ["name", "role", "reviewCount", "createdAt", "rating"] {
        assert!(profile.body.get(field).is_some(), "{field}: {:?}", profile.body);
    }
}

/// Every user's stored aggregates against the reviews stored about them.
async fn assert_aggregates_exact(t: &TestTable, users: &[UserId]) {
    for user in users {
        let stored: User = t.deps.store.get_consistent(&keys::user(user).unwrap()).await.unwrap().unwrap();
        let mut reviews_left: Vec<Review> = Vec::new();
        let mut start = None;
        loop {
            let page = t
                .deps
                .store
                .query::<Review, _>(&keyschema::access::reviews_about(user).unwrap(), 100, start)
                .await
                .unwrap();
            reviews_left.extend(page.items);
            start = page.next;
            if start.is_none() {
                break;
            }
        }
        // Of each author's reviews in an ISO week, the first counts.
        let mut first: std::collections::BTreeMap<(String, String), &Review> = std::collections::BTreeMap::new();
        for r in &reviews_left {
            let slot = (r.author_id.to_string(), derived::aggregates::week_of(&r.review_id));
            let e = first.entry(slot).or_insert(r);
            if r.review_id < e.review_id {
                *e = r;
            }
        }
        let sum: u64 = first.values().map(|r| u64::from(r.rating)).sum();
        let counted = first.len();
        assert_eq!(
            (stored.rating_sum, stored.review_count),
            (sum, counted as u32),
            "aggregates of {user} against its {} stored reviews ({counted} counted)",
            reviews_left.len()
        );
        let mean = (counted > 0).then(|| (sum as f64 / counted as f64 * 100.0).round() / 100.0);
        assert_eq!(stored.rating(), mean);
    }
}

/// A small deterministic shuffle (no randomness in tests).
fn shuffled<T: Clone>(items: &[T], seed: u64) -> Vec<T> {
    let mut out = items.to_vec();
    let mut x = seed;
    for i in (1..out.len()).rev() {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        out.swap(i, (x >> 33) as usize % (i + 1));
    }
    out
}

/// Delivers `records` in batches of `size` as Lambda would: a batch that
/// reports failures is retried from its lowest failed sequence number.
async fn deliver(t: &TestTable, records: &[EventRecord], size: usize) -> usize {
    let (mut at, mut retries) = (0, 0);
    while at < records.len() {
        let batch: Vec<EventRecord> = records[at..(at + size).min(records.len())].to_vec();
        let failed = integration_tests::process_stream_once(t, batch.clone()).await;
        match batch.iter().position(|r| failed.contains(r.change.sequence_number.as_ref().unwrap())) {
            Some(first) => {
                at += first;
                retries += 1;
                assert!(retries < 20, "the batch keeps failing");
            }
            None => at += batch.len(),
        }
    }
    assert!(integration_tests::deliver_parts(t).await.is_empty());
    retries
}

#[tokio::test]
async fn rating_aggregates_are_exact_under_replays_reorders_overlaps_and_faults() {
    let (t, faults) = TestTable::with_faults().await;
    let users = put_users(&t, 20).await;
    // Three reviews about each user: 20 users, more than the items a batch
    // runs at once (the faults below need every one of those in flight).
    let specs: Vec<(String, &str, u8)> = (0..60)
        .map(|i| (users[i % 20].to_string(), if i % 2 == 0 { "bob" } else { "alice" }, 1 + (i * 7 % 5) as u8))
        .collect();
    let borrowed: Vec<(&str, &str, u8)> = specs.iter().map(|(u, a, r)| (u.as_str(), *a, *r)).collect();
    let written = put_reviews(&t, &borrowed).await;
    // Moderation: every 9th review is deleted again.
    for review in written.iter().step_by(9) {
        let r = reviews(
            &t,
            req("DELETE /users/{userId}/reviews/{reviewId}")
                .path("userId", review.reviewed_user_id.as_str())
                .path("reviewId", review.review_id)
                .by(As::Admin),
        )
        .await;
        assert_eq!(r.status, 204, "{:?}", r.body);
    }
    let records: Vec<EventRecord> = stream_records(&t)
        .await
        .into_iter()
        .filter(|r| {
            let image = if r.event_name == "REMOVE" { &r.change.old_image } else { &r.change.new_image };
            matches!(image.get("entityType"), Some(serde_dynamo::AttributeValue::S(s)) if s == "Review")
        })
        .collect();
    assert_eq!(records.len(), 1 + 60 + 7, "the demo review, 60 inserts and 7 removals on the stream");

    // As recorded, in batches of 50 (two: Lambda's default is 100).
    deliver(&t, &records, 50).await;
    assert_aggregates_exact(&t, &users).await;

    // The whole stream again: as recorded, reversed, shuffled into overlapping batches.
    deliver(&t, &records, 50).await;
    let reversed: Vec<EventRecord> = records.iter().rev().cloned().collect();
    deliver(&t, &reversed, 23).await;
    let mixed = shuffled(&records, 7);
    for window in mixed.windows(36).step_by(24) {
        assert!(process_stream(&t, window.to_vec()).await.is_empty());
    }
    assert_aggregates_exact(&t, &users).await;

    // Writes failing in the middle of a batch (throttled past the SDK's
    // three attempts: with every item's first transaction in flight at
    // once, three throttles per item in flight make the first ones fail for
    // good), and Lambda retrying from the first failed record.
    let in_flight = u32::try_from(stream_processor::ITEMS_AT_ONCE).unwrap();
    faults.inject("TransactWriteItems", Fault::Throttled, 3 * in_flight);
    let fresh = put_reviews(&t, &borrowed[..20].iter().map(|(u, _, r)| (*u, "zed", *r)).collect::<Vec<_>>()).await;
    assert_eq!(fresh.len(), 20);
    let newest: Vec<EventRecord> = stream_records(&t)
        .await
        .into_iter()
        .filter(
            |r| matches!(r.change.new_image.get("authorId"), Some(serde_dynamo::AttributeValue::S(s)) if s == "zed"),
        )
        .collect();
    assert_eq!(newest.len(), 20);
    let retries = deliver(&t, &newest, 100).await;
    assert!(retries >= 1, "the fault made Lambda retry");
    assert_eq!(faults.pending(), 0);
    assert_aggregates_exact(&t, &users).await;
}

#[tokio::test]
async fn a_batch_of_100_reviews_about_10_users_costs_at_most_10_aggregate_writes() {
    let t = TestTable::new().await;
    let users = put_users(&t, 10).await;
    let specs: Vec<(String, &str, u8)> = (0..100).map(|i| (users[i % 10].to_string(), "bob", 4)).collect();
    let borrowed: Vec<(&str, &str, u8)> = specs.iter().map(|(u, a, r)| (u.as_str(), *a, *r)).collect();
    put_reviews(&t, &borrowed).await;
    let records: Vec<EventRecord> =
        stream_records(&t).await.into_iter().filter(|r| r.change.new_image.contains_key("reviewId")).collect();
    assert_eq!(records.len(), 100);
    t.requests();
    assert!(integration_tests::process_stream_once(&t, records.clone()).await.is_empty());
    let count = |sent: Vec<String>| {
        sent.iter().fold(BTreeMap::<String, usize>::new(), |mut m, op| {
            *m.entry(op.clone()).or_default() += 1;
            m
        })
    };
    let counts = count(t.requests());
    assert_eq!(counts.get("TransactWriteItems"), Some(&10), "one aggregate write per user: {counts:?}");
    assert_eq!(counts.get("BatchGetItem"), Some(&10), "one marker read per user: {counts:?}");
    assert_eq!(counts.len(), 2, "markers and parts only: {counts:?}");
    // The parts' records: one fold per user (its holder and its parts
    // read, one update), however many reviews it had.
    assert!(integration_tests::deliver_parts(&t).await.is_empty());
    let folds = count(t.requests());
    for op in ["BatchGetItem", "Query", "UpdateItem"] {
        assert_eq!(folds.get(op), Some(&10), "{folds:?}");
    }
    assert_aggregates_exact(&t, &users).await;
    // The same batch again writes nothing.
    assert!(process_stream(&t, records).await.is_empty());
    assert!(!t.requests().contains(&"TransactWriteItems".to_owned()), "a replay writes nothing");
}

#[tokio::test]
async fn moderation_brings_the_aggregates_to_the_reviews_left() {
    let t = TestTable::with_demo_data().await;
    let order = order_between_bob_and_alice(&t, "delivered").await;
    let written = reviews(&t, review_of(&order, "bob", json!({ "rating": 2, "body": "Slow." }))).await;
    assert_eq!(written.status, 201);
    put_reviews(&t, &[("alice", "carol", 5), ("alice", "dave", 4)]).await;
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    let profile = users(&t.deps, req("GET /users/{userId}").path("userId", "alice")).await;
    assert_eq!((profile.body["rating"].as_f64(), profile.body["reviewCount"].as_u64()), (Some(3.67), Some(3)));

    let id = written.body["reviewId"].as_str().unwrap();
    let delete =
        |by: As| req("DELETE /users/{userId}/reviews/{reviewId}").path("userId", "alice").path("reviewId", id).by(by);
    assert_eq!(reviews(&t, delete(As::User("alice"))).await.status, 403);
    assert_eq!(reviews(&t, delete(As::Admin)).await.status, 204);
    assert_eq!(reviews(&t, delete(As::Admin)).await.status, 404);
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    let profile = users(&t.deps, req("GET /users/{userId}").path("userId", "alice")).await;
    assert_eq!((profile.body["rating"].as_f64(), profile.body["reviewCount"].as_u64()), (Some(4.5), Some(2)));
    assert_aggregates_exact(&t, &["alice".parse().unwrap()]).await;
}

/// Defect 12: a removal takes away what its marker counted, even when the
/// review's rating was changed outside the API in between.
#[tokio::test]
async fn a_removal_takes_away_the_rating_that_was_counted() {
    let t = TestTable::with_demo_data().await;
    let users_ = put_users(&t, 1).await;
    let review = put_reviews(&t, &[(users_[0].as_str(), "carol", 5)]).await.remove(0);
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    // Someone edits the stored rating by hand (a console, a script).
    let key = keys::review(&review.reviewed_user_id, &review.review_id).unwrap();
    t.raw_update(key, "SET rating = :r", &[], &[(":r", store::item::n(1))]).await;
    let delete = req("DELETE /users/{userId}/reviews/{reviewId}")
        .path("userId", users_[0].as_str())
        .path("reviewId", review.review_id)
        .by(As::Admin);
    assert_eq!(reviews(&t, delete).await.status, 204);
    let records = stream_records(&t).await;
    assert!(process_stream(&t, records.clone()).await.is_empty());
    assert!(process_stream(&t, records.into_iter().rev().collect()).await.is_empty());
    let stored: User = t.deps.store.get_consistent(&keys::user(&users_[0]).unwrap()).await.unwrap().unwrap();
    assert_eq!((stored.rating_sum, stored.review_count), (0, 0), "5 counted, 5 taken away");
}
