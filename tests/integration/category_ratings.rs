//! Average rating per category (issue 21): a buyer's review of a listing
//! order counts into its category's rating item, exactly once, with the
//! same markers as the users' ratings, coalesced per category per batch;
//! a moderated review leaves it; a seller's review of a buyer rates no
//! category; reconcile recomputes it.

use std::collections::BTreeMap;

use aws_lambda_events::dynamodb::EventRecord;
use derived::aggregates::AggregateKind;
use domain::ids::{OrderId, ReviewId, UserId};
use domain::model::Review;
use integration_tests::derived::{differences, differences_after_reconcile};
use integration_tests::{catalog, orders, process_stream, put_users, req, stream_records, As, Reply, Req, TestTable};
use maintenance::pace::Budget;
use maintenance::reconcile::{self, Kind, Options};
use serde_json::json;
use ulid::Ulid;

const CATEGORIES: [&str; 3] = ["pottery", "books", "electronics"];

async fn rating_of(t: &TestTable, category: &str) -> (Option<f64>, u64) {
    let r = catalog(&t.deps, req("GET /categories/{categoryId}").path("categoryId", category)).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    (r.body["rating"].as_f64(), r.body["reviewCount"].as_u64().unwrap())
}

/// `n` reviews written straight to the table (as the reviews function
/// writes them): about `users`, every third without a category (a
/// seller's review of its buyer).
async fn put_reviews(t: &TestTable, users: &[UserId], n: usize, category: Option<&str>) -> Vec<Review> {
    let mut out = Vec::new();
    for i in 0..n {
        let at = 1_790_000_000_000 + i as u64;
        let review = Review {
            home: None,
            review_id: ReviewId::from_ulid(Ulid::from_parts(at, (i as u128) << 8 | 7)),
            reviewed_user_id: users[i % users.len()].clone(),
            // One author each: every review is the first of its pair and
            // week, so each counts (tests/integration/pair_ratings.rs has
            // the rule).
            author_id: format!("author-{i}").parse().unwrap(),
            order_id: OrderId::from_ulid(Ulid::from_parts(at, i as u128)),
            category_id: match category {
                Some(c) => Some(c.parse().unwrap()),
                None => (i % 3 != 2).then(|| CATEGORIES[i % 3].parse().unwrap()),
            },
            rating: 1 + (i * 7 % 5) as u8,
            body: format!("review {i}"),
            created_at: "2026-11-22T00:00:00.000Z".into(),
        };
        t.deps.store.put_new(&review).await.unwrap();
        out.push(review);
    }
    out
}

fn review_records(records: Vec<EventRecord>) -> Vec<EventRecord> {
    records
        .into_iter()
        .filter(|r| {
            let image = if r.event_name == "REMOVE" { &r.change.old_image } else { &r.change.new_image };
            matches!(image.get("entityType"), Some(serde_dynamo::AttributeValue::S(s)) if s == "Review")
        })
        .collect()
}

/// What each category's rating should be: from the reviews left.
fn expected(reviews: &[Review]) -> BTreeMap<String, (Option<f64>, u64)> {
    let mut sums: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for r in reviews {
        if let Some(c) = &r.category_id {
            let e = sums.entry(c.to_string()).or_default();
            *e = (e.0 + u64::from(r.rating), e.1 + 1);
        }
    }
    sums.into_iter().map(|(c, (sum, n))| (c, (Some((sum as f64 / n as f64 * 100.0).round() / 100.0), n))).collect()
}

async fn assert_ratings(t: &TestTable, reviews: &[Review]) {
    let want = expected(reviews);
    for c in CATEGORIES {
        let want = want.get(c).copied().unwrap_or((None, 0));
        assert_eq!(rating_of(t, c).await, want, "{c}");
    }
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

#[tokio::test]
async fn category_ratings_are_exact_under_replays_reorders_overlaps_and_moderation() {
    let t = TestTable::with_demo_data().await;
    let users = put_users(&t, 4).await;
    let mut written = put_reviews(&t, &users, 45, None).await;
    // Moderation: every 7th review is deleted again.
    for review in written.iter().step_by(7) {
        let delete = req("DELETE /users/{userId}/reviews/{reviewId}")
            .path("userId", review.reviewed_user_id.as_str())
            .path("reviewId", review.review_id)
            .by(As::Admin);
        assert_eq!(reviews_fn(&t, delete).await.status, 204);
    }
    let gone: Vec<ReviewId> = written.iter().step_by(7).map(|r| r.review_id).collect();
    written.retain(|r| !gone.contains(&r.review_id));
    // The demo data's review (bob's of erin, a pottery teapot) is on the stream too.
    let demo: Review = t
        .deps
        .store
        .get(
            &keyschema::keys::review(&"erin".parse().unwrap(), &local_stack::demo::REVIEW_ID.parse().unwrap()).unwrap(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(demo.category_id.as_ref().map(|c| c.as_str()), Some("pottery"));
    written.push(demo);

    let records = review_records(stream_records(&t).await);
    assert_eq!(records.len(), 1 + 45 + 7);
    assert_eq!(rating_of(&t, "books").await, (None, 0), "nothing counted before the stream");
    for batch in records.chunks(20) {
        assert!(process_stream(&t, batch.to_vec()).await.is_empty());
    }
    assert_ratings(&t, &written).await;
    // Replayed as recorded, reversed, and in overlapping windows: nothing changes.
    assert!(process_stream(&t, records.clone()).await.is_empty());
    let reversed: Vec<EventRecord> = records.iter().rev().cloned().collect();
    assert!(process_stream(&t, reversed).await.is_empty());
    for window in records.windows(15).step_by(10) {
        assert!(process_stream(&t, window.to_vec()).await.is_empty());
    }
    assert_ratings(&t, &written).await;

    // Drift (a category's sum and a marker lost) is found and repaired by reconcile.
    let key = keyschema::keys::category_rating(&"books".parse().unwrap()).unwrap();
    let drift = keyschema::Change::untimed(key).add(keyschema::write::attr::RATING_SUM, 9);
    t.deps.store.update(&drift).await.unwrap();
    assert_eq!(differences(&t.deps.store).await.len(), 1);
    let unpaced = Options { budget: Budget { rcu: 0.0, wcu: 0.0 }, ..Options::default() };
    let report = reconcile::run(&t.deps.store, unpaced).await;
    assert_eq!(report.of(Kind::Aggregate(AggregateKind::CategoryRatings)).repaired, 1, "{report:?}");
    assert_ratings(&t, &written).await;

    // A review's category taken away outside the API: reconcile uncounts it there.
    let moved = written.iter_mut().find(|r| r.category_id.is_some()).unwrap();
    let key = keyschema::keys::review(&moved.reviewed_user_id, &moved.review_id).unwrap();
    t.deps.store.update(&keyschema::Change::untimed(key).remove("categoryId")).await.unwrap();
    moved.category_id = None;
    assert!(!differences(&t.deps.store).await.is_empty());
    let report = reconcile::run(&t.deps.store, unpaced).await;
    assert!(report.complete, "{report:?}");
    assert_ratings(&t, &written).await;
}

#[tokio::test]
async fn a_batch_of_reviews_in_one_category_writes_its_rating_in_one_transaction() {
    let t = TestTable::new().await;
    let users = put_users(&t, 5).await;
    let written = put_reviews(&t, &users, 60, Some("books")).await;
    let records = review_records(stream_records(&t).await);
    t.requests();
    assert!(process_stream(&t, records.clone()).await.is_empty());
    let transactions = t.requests().iter().filter(|op| *op == "TransactWriteItems").count();
    assert_eq!(transactions, 5 + 1, "one per user and one for the category");
    let sum: u64 = written.iter().map(|r| u64::from(r.rating)).sum();
    let rating = t
        .deps
        .store
        .get_consistent::<keyschema::records::CategoryRating, _>(
            &keyschema::keys::category_rating(&"books".parse().unwrap()).unwrap(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!((rating.rating_sum, rating.review_count), (sum, 60));
    assert!(process_stream(&t, records).await.is_empty());
    assert!(!t.requests().contains(&"TransactWriteItems".to_owned()), "a replay writes nothing");
}

async fn reviews_fn(t: &TestTable, r: Req) -> Reply {
    Reply::from_event(reviews::handler(&t.deps, integration_tests::lambda_event(r.event())).await.unwrap())
}

async fn review(t: &TestTable, order: &str, by: &'static str, rating: u8) -> Reply {
    let r = req("POST /orders/{orderId}/reviews").path("orderId", order).by(As::User(by));
    reviews_fn(t, r.json(json!({ "rating": rating, "body": "ok" }))).await
}

/// Bob's order of the demo's first listing (alice's, pottery), placed
/// through the API and delivered.
async fn delivered_order(t: &TestTable, key: &str) -> String {
    let place = req("POST /orders").by(As::User("bob")).header("Idempotency-Key", key);
    let placed = orders(&t.deps, 10, place.json(json!({ "listingId": local_stack::demo::LISTING_IDS[0] }))).await;
    assert_eq!(placed.status, 201, "{:?}", placed.body);
    assert_eq!(placed.body["categoryId"], "pottery");
    let id = placed.body["orderId"].as_str().unwrap().to_owned();
    for status in ["confirmed", "shipped", "delivered"] {
        let r =
            req("PATCH /orders/{orderId}").path("orderId", &id).by(As::User("alice")).json(json!({ "status": status }));
        assert_eq!(orders(&t.deps, 10, r).await.status, 200);
    }
    id
}

/// Through the API: a buyer's review of a listing order counts in the
/// listing's category, the seller's review of the buyer does not, and a
/// moderated review leaves it.
#[tokio::test]
async fn a_buyers_review_rates_the_listings_category_until_moderated() {
    let t = TestTable::with_demo_data().await;
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    assert_eq!(rating_of(&t, "pottery").await, (Some(5.0), 1), "the demo review");
    let id = delivered_order(&t, "rate").await;
    let by_buyer = review(&t, &id, "bob", 2).await;
    assert_eq!(by_buyer.status, 201, "{:?}", by_buyer.body);
    assert_eq!(review(&t, &id, "alice", 4).await.status, 201);
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    assert_eq!(rating_of(&t, "pottery").await, (Some(3.5), 2), "the buyer's 2 beside the demo's 5; not the seller's 4");
    let moderate = req("DELETE /users/{userId}/reviews/{reviewId}")
        .path("userId", "alice")
        .path("reviewId", by_buyer.body["reviewId"].as_str().unwrap())
        .by(As::Admin);
    assert_eq!(reviews_fn(&t, moderate).await.status, 204);
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    assert_eq!(rating_of(&t, "pottery").await, (Some(5.0), 1), "moderated: it leaves");
    assert_eq!(rating_of(&t, "books").await, (None, 0));
    let missing = catalog(&t.deps, req("GET /categories/{categoryId}").path("categoryId", "nothing-here")).await;
    assert_eq!(missing.status, 404);
}

/// Reviews written before categories were rated name none, and neither do
/// their orders: reconcile gives the buyer's review of a listing order its
/// listing's category and counts it there, once; the seller's review of the
/// buyer stays without one. A dry run only finds it.
#[tokio::test]
async fn reconcile_gives_old_buyer_reviews_their_category_and_counts_them() {
    let t = TestTable::with_demo_data().await;
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    let id = delivered_order(&t, "old").await;
    let by_buyer = review(&t, &id, "bob", 2).await;
    assert_eq!(by_buyer.status, 201, "{:?}", by_buyer.body);
    assert_eq!(review(&t, &id, "alice", 4).await.status, 201);
    // As written before: no category on the order or the review, and no
    // stream processor counted either review (the records are never given to it).
    let order_key = keyschema::keys::order(&id.parse().unwrap()).unwrap();
    let review_id: ReviewId = by_buyer.body["reviewId"].as_str().unwrap().parse().unwrap();
    let alice: UserId = "alice".parse().unwrap();
    let review_key = keyschema::keys::review(&alice, &review_id).unwrap();
    for key in [order_key.into_key(), review_key.clone().into_key()] {
        t.deps.store.update(&keyschema::Change::untimed(key).remove("categoryId")).await.unwrap();
    }
    assert_eq!(rating_of(&t, "pottery").await, (Some(5.0), 1), "the demo review only");

    let unpaced = Options { budget: Budget { rcu: 0.0, wcu: 0.0 }, ..Options::default() };
    let dry = reconcile::run(&t.deps.store, Options { dry_run: true, ..unpaced }).await;
    assert_eq!((dry.of(Kind::ReviewCategories).found, dry.of(Kind::ReviewCategories).repaired), (1, 0), "{dry:?}");
    assert_eq!(rating_of(&t, "pottery").await, (Some(5.0), 1), "a dry run changes nothing");

    let report = reconcile::run(&t.deps.store, unpaced).await;
    assert!(report.complete, "{report:?}");
    let given = &report.of(Kind::ReviewCategories);
    assert_eq!((given.found, given.repaired), (1, 1), "the buyer's review only: {report:?}");
    assert_eq!(rating_of(&t, "pottery").await, (Some(3.5), 2), "the buyer's 2 beside the demo's 5");
    let review: Review = t.deps.store.get_consistent(&review_key).await.unwrap().unwrap();
    assert_eq!(review.category_id.map(|c| c.to_string()).as_deref(), Some("pottery"));
    let about_bob = keyschema::access::reviews_about(&"bob".parse().unwrap()).unwrap();
    let bobs = t.deps.store.query_exact::<Review, _>(&about_bob, 10, None).await.unwrap().items;
    assert!(!bobs.is_empty() && bobs.iter().all(|r| r.category_id.is_none()), "the seller's review rates none");
    // The order's records never processed: its listing, sold moments ago,
    // keeps its postings as reconcile leaves them.
    assert_eq!(differences_after_reconcile(&t.deps.store).await, Vec::<String>::new());

    let again = reconcile::run(&t.deps.store, unpaced).await;
    assert!(!again.kinds.contains_key(&Kind::ReviewCategories), "{again:?}");
    assert_eq!(rating_of(&t, "pottery").await, (Some(3.5), 2), "counted once");
}
