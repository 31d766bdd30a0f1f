//! Listings (marketplace AP3-6) against DynamoDB Local.

use integration_tests::{listings, req, stream_records, users, As, Reply, TestTable};
use serde_dynamo::AttributeValue;
use serde_json::json;

const L1: &str = "01JF8Z6A000000000000000001"; // alice, active, pottery
const L2: &str = "01JF8Z6A000000000000000002"; // alice, active, books
const L3: &str = "01JF8Z6A000000000000000003"; // alice, sold, pottery

async fn create(t: &TestTable, by: &'static str, title: &str, category: &str) -> Reply {
    listings(
        &t.deps,
        req("POST /listings").by(As::User(by)).json(json!({ "title": title, "price": 9.5, "categoryId": category })),
    )
    .await
}

#[tokio::test]
async fn create_makes_a_buyer_a_seller() {
    let t = TestTable::with_demo_data().await;
    let r = create(&t, "bob", "Old lamp", "pottery").await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!((r.body["sellerId"].as_str(), r.body["status"].as_str()), (Some("bob"), Some("active")));
    let first = ["GetItem", "GetItem", "UpdateItem", "PutItem"];
    assert_eq!(t.requests(), first, "category and seller read, the role set, the listing put");
    let bob = users(&t.deps, req("GET /users/{userId}").path("userId", "bob").by(As::User("bob"))).await;
    assert_eq!(bob.body["role"], "both");
    t.requests();
    let updated_at = bob.body["updatedAt"].clone();
    assert_eq!(create(&t, "bob", "Old chair", "pottery").await.status, 201);
    assert_eq!(t.requests(), ["GetItem", "PutItem"], "the category remembered");
    let bob = users(&t.deps, req("GET /users/{userId}").path("userId", "bob").by(As::User("bob"))).await;
    assert_eq!(bob.body["updatedAt"], updated_at, "a seller's record is not rewritten by every listing");

    let stranger = create(&t, "stranger", "x", "pottery").await;
    assert_eq!(stranger.status, 403, "only signed-up users sell");
    let no_category = create(&t, "bob", "x", "nowhere").await;
    assert_eq!(no_category.status, 400);
    assert!(no_category.body["error"]["message"].as_str().unwrap().contains("nowhere"));
    for (field, value, why) in
        [("sellerId", "alice", "the seller comes from the token only"), ("status", "sold", "status is server-owned")]
    {
        let mut body = json!({ "title": "x", "price": 1, "categoryId": "books" });
        body[field] = json!(value);
        let refused = listings(&t.deps, req("POST /listings").by(As::User("bob")).json(body)).await;
        assert_eq!(refused.status, 400, "{why}");
    }
    let free = listings(
        &t.deps,
        req("POST /listings").by(As::User("bob")).json(json!({ "title": "x", "price": 0, "categoryId": "books" })),
    )
    .await;
    assert_eq!(free.status, 400);
}

#[tokio::test]
async fn ap3_get_listing_is_one_query() {
    let t = TestTable::with_demo_data().await;
    let r = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", L1)).await;
    assert_eq!((r.status, r.body["title"].as_str()), (200, Some("Stoneware mug, blue glaze")));
    assert_eq!(r.body["price"], 28);
    assert_eq!(t.requests(), ["Query"], "the listing and its details (none here)");
    let missing =
        listings(&t.deps, req("GET /listings/{listingId}").path("listingId", "01JF8Z6A00000000000000000Z")).await;
    assert_eq!(missing.status, 404);
}

#[tokio::test]
async fn ap4_ap5_seller_listings_by_status_prefix() {
    let t = TestTable::with_demo_data().await;
    let seller = |by: As| req("GET /sellers/{sellerId}/listings").path("sellerId", "alice").by(by);
    let all = listings(&t.deps, seller(As::User("alice"))).await;
    assert_eq!(all.status, 200, "{:?}", all.body);
    assert_eq!(all.item_field("listingId"), [L1, L2, L3], "active first, then sold (status is the sort-key prefix)");
    assert_eq!(t.requests(), ["Query"]);
    let active = listings(&t.deps, seller(As::User("bob")).query("status", "active")).await;
    assert_eq!(active.item_field("listingId"), [L1, L2]);
    assert_eq!(t.requests(), ["Query"]);
    let sold_by_admin = listings(&t.deps, seller(As::Admin).query("status", "sold")).await;
    assert_eq!(sold_by_admin.item_field("listingId"), [L3]);

    let others = listings(&t.deps, seller(As::User("bob"))).await;
    assert_eq!(others.status, 403, "all-status listings are the seller's business");
    let others_sold = listings(&t.deps, seller(As::User("bob")).query("status", "sold")).await;
    assert_eq!(others_sold.status, 403);
    let bad_status = listings(&t.deps, seller(As::User("alice")).query("status", "lost")).await;
    assert_eq!(bad_status.status, 400);
}

#[tokio::test]
async fn updates_are_the_sellers_and_move_the_status_prefix() {
    let t = TestTable::with_demo_data().await;
    let patch = |by: &'static str, id: &str, body| {
        req("PATCH /listings/{listingId}").path("listingId", id).by(As::User(by)).json(body)
    };

    let r = listings(&t.deps, patch("alice", L1, json!({ "status": "removed", "price": 30 }))).await;
    assert_eq!((r.status, r.body["status"].as_str()), (200, Some("removed")), "{:?}", r.body);
    assert_eq!(r.body["price"], 30);
    assert_eq!(t.requests(), ["UpdateItem", "GetItem"], "the change, then its details for the answer");
    let active = integration_tests::seller_listings(&t.deps, "alice", "active").await;
    assert_eq!(active.item_field("listingId"), [L2]);
    let removed = listings(
        &t.deps,
        req("GET /sellers/{sellerId}/listings")
            .path("sellerId", "alice")
            .query("status", "removed")
            .by(As::User("alice")),
    )
    .await;
    assert_eq!(removed.item_field("listingId"), [L1]);

    let not_mine = listings(&t.deps, patch("bob", L2, json!({ "title": "mine now" }))).await;
    assert_eq!(not_mine.status, 403);
    assert_eq!(t.requests().len(), 3, "two queries and one refused conditional write");
    let sold = listings(&t.deps, patch("alice", L3, json!({ "status": "active" }))).await;
    assert_eq!(sold.status, 409, "a sold listing never comes back");
    let to_sold = listings(&t.deps, patch("alice", L2, json!({ "status": "sold" }))).await;
    assert_eq!(to_sold.status, 400, "sold only through an order");
    let missing = listings(&t.deps, patch("alice", "01JF8Z6A00000000000000000Z", json!({ "title": "x" }))).await;
    assert_eq!(missing.status, 404);
    let untouched = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", L2)).await;
    assert_eq!(untouched.body["title"], "First edition, signed");
}

#[tokio::test]
async fn ap6_category_browse_is_the_sparse_index_newest_first() {
    let t = TestTable::with_demo_data().await;
    let first = create(&t, "alice", "Older", "pottery").await.body["listingId"].as_str().unwrap().to_owned();
    tokio::time::sleep(std::time::Duration::from_millis(2)).await; // ULIDs of one millisecond need not be ordered
    let second = create(&t, "alice", "Newer", "pottery").await.body["listingId"].as_str().unwrap().to_owned();
    // The write puts a new listing's browse keys: found at once.
    t.requests();
    let r = listings(&t.deps, req("GET /categories/{categoryId}/listings").path("categoryId", "pottery")).await;
    assert_eq!(r.item_field("listingId"), [second.as_str(), first.as_str(), L1], "newest first; sold L3 absent");
    assert_eq!(t.requests(), ["Query"], "one query (the category's shards remembered)");
    assert!(r.items().iter().all(|i| i["status"] == "active"));
    // The stream processor's repair of their records finds them right.
    assert_eq!(repairs_of(&t, &[&first, &second]).await, 0);
}

/// The `UpdateItem`s the stream processor sends for the records of
/// `listings` (their keys' repairs: postings are `BatchWriteItem`s).
async fn repairs_of(t: &TestTable, ids: &[&str]) -> usize {
    let pks: Vec<AttributeValue> = ids.iter().map(|id| AttributeValue::S(format!("LISTING#{id}"))).collect();
    let records: Vec<_> = stream_records(t)
        .await
        .into_iter()
        .filter(|r| r.change.keys.get("pk").is_some_and(|pk| pks.contains(pk)))
        .collect();
    assert_eq!(records.len(), ids.len(), "a record each");
    t.requests();
    assert!(integration_tests::process_stream(t, records).await.is_empty());
    t.requests().iter().filter(|r| *r == "UpdateItem").count()
}

/// A new listing in a dense cell (Paris's `u09w`, no demo listing there): its partition recorded
/// by the write, once a process, then the listing with its near key, so
/// near me answers it before the stream processor runs (which then writes
/// nothing for it).
#[tokio::test]
async fn a_new_listing_is_near_at_once_in_a_dense_cell() {
    let t = TestTable::with_demo_data().await;
    let at = |lat: f64| json!({ "lat": lat, "lon": 2.3 });
    let mut ids = Vec::new();
    for (i, lat) in [48.95, 48.9501].into_iter().enumerate() {
        let body = json!({ "title": format!("Kettle {i}"), "price": 41, "categoryId": "pottery", "location": at(lat) });
        t.requests();
        let r = listings(&t.deps, req("POST /listings").by(As::User("alice")).json(body)).await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        let want: &[&str] =
            if i == 0 { &["GetItem", "GetItem", "PutItem", "PutItem"] } else { &["GetItem", "PutItem"] };
        assert_eq!(t.requests(), want, "the category (then cached) and the seller, its partition once, the listing");
        ids.push(r.body["listingId"].as_str().unwrap().to_owned());
    }
    let near = req("GET /listings/near").query("lat", 48.95).query("lon", 2.3).query("radiusKm", 1);
    let found = listings(&t.deps, near).await;
    assert_eq!(found.status, 200, "{:?}", found.body);
    let mut answered = found.item_field("listingId");
    answered.sort_unstable();
    let mut want = ids.clone();
    want.sort_unstable();
    assert_eq!(answered, want, "both within 100 m");
    let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    assert_eq!(repairs_of(&t, &id_refs).await, 0);
}
