//! Issue 31: one pair of accounts cannot set a public rating. Toward a
//! user's and a category's rating, the first review by one author of one
//! reviewed user in an ISO week counts; later ones of that pair and week are
//! shown, not counted; when the counted one is moderated away, the next one
//! counts. Exactly once under replays; reconcile recomputes it.

use domain::ids::{OrderId, ReviewId, UserId};
use domain::model::Review;
use integration_tests::derived::differences;
use integration_tests::{
    catalog, listings, orders, process_stream, req, reviews, sign_up_all, stream_records, As, TestTable,
};
use maintenance::pace::Budget;
use maintenance::reconcile::{self, Options};
use serde_json::json;
use ulid::Ulid;

const SHARDS: u16 = 10;

async fn rating_of_user(t: &TestTable, user: &str) -> (Option<f64>, u64) {
    let r = integration_tests::users(&t.deps, req("GET /users/{userId}").path("userId", user)).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    (r.body["rating"].as_f64(), r.body["reviewCount"].as_u64().unwrap())
}

async fn rating_of_category(t: &TestTable, category: &str) -> (Option<f64>, u64) {
    let r = catalog(&t.deps, req("GET /categories/{categoryId}").path("categoryId", category)).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    (r.body["rating"].as_f64(), r.body["reviewCount"].as_u64().unwrap())
}

/// `n` self-dealt orders (a listing each), delivered and reviewed 1 star by
/// the buyer, as the attack did through the API; the review ids.
async fn self_dealt(t: &TestTable, seller: &'static str, buyer: &'static str, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let body = json!({ "title": format!("Thing {i}"), "price": 1, "categoryId": "books" });
        let listed = listings(&t.deps, req("POST /listings").by(As::User(seller)).json(body)).await;
        assert_eq!(listed.status, 201, "{:?}", listed.body);
        let listing = listed.body["listingId"].as_str().unwrap().to_owned();
        let order = req("POST /orders").by(As::User(buyer)).header("Idempotency-Key", &format!("self-{i}"));
        let placed = orders(&t.deps, SHARDS, order.json(json!({ "listingId": listing }))).await;
        assert_eq!(placed.status, 201, "{:?}", placed.body);
        let order = placed.body["orderId"].as_str().unwrap().to_owned();
        for status in ["confirmed", "shipped", "delivered"] {
            let r = req("PATCH /orders/{orderId}").path("orderId", &order).by(As::User(seller));
            assert_eq!(orders(&t.deps, SHARDS, r.json(json!({ "status": status }))).await.status, 200);
        }
        let review = req("POST /orders/{orderId}/reviews").path("orderId", &order).by(As::User(buyer));
        let written = reviews(&t.deps, review.json(json!({ "rating": 1, "body": "Bad." }))).await;
        assert_eq!(written.status, 201, "{:?}", written.body);
        ids.push(written.body["reviewId"].as_str().unwrap().to_owned());
    }
    ids
}

/// Seen failing before the rule: 20 self-dealt 1-star reviews made the
/// seller's rating 1.0 over 20 reviews and the category's 1.0 over 21.
#[tokio::test]
async fn a_pair_of_accounts_counts_once_a_week_and_the_next_counts_after_moderation() {
    let t = TestTable::with_demo_data().await;
    sign_up_all(&t.deps, &["mallory", "mule"]).await;
    let before = rating_of_category(&t, "books").await;
    let ids = self_dealt(&t, "mallory", "mule", 20).await;
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    assert_eq!(rating_of_user(&t, "mallory").await, (Some(1.0), 1), "one review counted of twenty");
    let after = rating_of_category(&t, "books").await;
    assert_eq!(after.1, before.1 + 1, "the category counts the pair once: {before:?} -> {after:?}");
    // Every review stays readable.
    let shown = integration_tests::reviews(
        &t.deps,
        req("GET /users/{userId}/reviews").path("userId", "mallory").query("limit", 100),
    )
    .await;
    assert_eq!(shown.items().len(), 20);
    // The counted one (the first) moderated away: the next one counts.
    let delete = req("DELETE /users/{userId}/reviews/{reviewId}").path("userId", "mallory").path("reviewId", &ids[0]);
    assert_eq!(reviews(&t.deps, delete.by(As::Admin)).await.status, 204);
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    assert_eq!(rating_of_user(&t, "mallory").await, (Some(1.0), 1), "the next of the pair and week counts");
    assert_eq!(rating_of_category(&t, "books").await, after);
    // The whole stream again, forwards and backwards: nothing moves.
    let all = stream_records(&t).await;
    assert!(process_stream(&t, all.clone()).await.is_empty());
    assert!(process_stream(&t, all.into_iter().rev().collect()).await.is_empty());
    assert_eq!(rating_of_user(&t, "mallory").await, (Some(1.0), 1));
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

/// Reviews of one pair in two weeks count once each; a slot and its
/// aggregate lost for good are rebuilt by reconcile, which also deletes the
/// per-review markers of before the rule.
#[tokio::test]
async fn reconcile_recomputes_the_pair_and_week_rule() {
    let t = TestTable::new().await;
    let users = integration_tests::put_users(&t, 1).await;
    let (reviewed, author): (UserId, UserId) = (users[0].clone(), "author".parse().unwrap());
    const WEEK_MS: u64 = 7 * 24 * 3600 * 1000;
    // Three in one week (ratings 5, 1, 1), two a week later (2, 4).
    let at = [(0, 5), (1, 1), (2, 1), (WEEK_MS, 2), (WEEK_MS + 1, 4)];
    for (i, (offset, rating)) in at.iter().enumerate() {
        let ms = 1_789_952_400_000 + offset; // 01:00 on a Monday (UTC)
        let review = Review {
            home: None,
            review_id: ReviewId::from_ulid(Ulid::from_parts(ms, i as u128)),
            reviewed_user_id: reviewed.clone(),
            author_id: author.clone(),
            order_id: OrderId::from_ulid(Ulid::from_parts(ms, i as u128)),
            category_id: Some("books".parse().unwrap()),
            rating: *rating,
            body: "B".into(),
            created_at: "2026-09-21T00:00:00.000Z".into(),
        };
        t.deps.store.put_new(&review).await.unwrap();
    }
    // A marker of before the rule, left from an old deployment.
    let old = keyschema::records::RatingMarker {
        review_id: ReviewId::from_ulid(Ulid::from_parts(1_789_952_400_000, 0)),
        reviewed_user_id: reviewed.clone(),
        state: keyschema::records::MarkerState::Counted,
        weight: 5,
    };
    t.deps.store.put_new(&old).await.unwrap();
    let differ = differences(&t.deps.store).await;
    assert!(differ.iter().any(|d| d.contains("retired marker")), "{differ:#?}");
    let unpaced = Options { budget: Budget { rcu: 0.0, wcu: 0.0 }, ..Options::default() };
    let report = reconcile::run(&t.deps.store, unpaced).await;
    assert!(report.complete, "{report:?}");
    assert_eq!(report.of(reconcile::Kind::Retired).repaired, 1, "{report:?}");
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
    let user: domain::model::User =
        t.deps.store.get_consistent(&keyschema::keys::user(&reviewed).unwrap()).await.unwrap().unwrap();
    assert_eq!((user.rating_sum, user.review_count), (5 + 2, 2), "the first of each week");
    let again = reconcile::run(&t.deps.store, unpaced).await;
    assert_eq!(again.found(), 0, "{again:?}");
}
