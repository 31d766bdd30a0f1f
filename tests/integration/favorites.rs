//! Favorites (beyond the seeds): idempotent PUT and DELETE in the user's
//! partition, newest first on GSI6, and each listing's `favoriteCount` kept
//! exactly once by the stream processor.

use aws_lambda_events::dynamodb::EventRecord;
use integration_tests::{listings, new_listing, process_stream, req, stream_records, users, As, Reply, TestTable};

fn favorite(method: &str, listing: &str, by: &'static str) -> integration_tests::Req {
    req(&format!("{method} /users/me/favorites/{{listingId}}")).path("listingId", listing).by(As::User(by))
}

async fn count(t: &TestTable, listing: &str) -> u64 {
    let r: Reply = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", listing)).await;
    r.body["favoriteCount"].as_u64().unwrap()
}

#[tokio::test]
async fn favorites_are_idempotent_newest_first_and_counted_exactly_once() {
    let t = TestTable::with_demo_data().await;
    let mut ids = Vec::new();
    for i in 0..6 {
        let r = listings(&t.deps, new_listing(&format!("Fav {i}"))).await;
        ids.push(r.body["listingId"].as_str().unwrap().to_owned());
    }
    integration_tests::sign_up_all(&t.deps, &["carol"]).await;
    t.requests();
    let first = users(&t.deps, favorite("PUT", &ids[0], "bob")).await;
    assert_eq!(first.status, 201, "{:?}", first.body);
    assert_eq!(
        t.requests(),
        ["BatchGetItem", "PutItem"],
        "the listing and the caller read at once, then the favorite put if absent"
    );
    let again = users(&t.deps, favorite("PUT", &ids[0], "bob")).await;
    assert_eq!((again.status, &again.body["favoriteId"]), (200, &first.body["favoriteId"]), "idempotent");
    let missing = users(&t.deps, favorite("PUT", "01JF8Z6A00000000000000000Z", "bob")).await;
    assert_eq!(missing.status, 404);

    for id in &ids[1..] {
        assert_eq!(users(&t.deps, favorite("PUT", id, "bob")).await.status, 201);
    }
    for id in &ids[..3] {
        assert_eq!(users(&t.deps, favorite("PUT", id, "carol")).await.status, 201);
    }
    // Newest first, one Query per page.
    t.requests();
    let (mut seen, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let mut r = req("GET /users/me/favorites").by(As::User("bob")).query("limit", 4);
        if let Some(c) = &cursor {
            r = r.query("cursor", c);
        }
        let page = users(&t.deps, r).await;
        assert_eq!(t.requests(), ["Query"]);
        seen.extend(page.item_field("listingId"));
        cursor = page.next_cursor();
        if cursor.is_none() {
            break;
        }
    }
    let mut want = ids.clone();
    want.reverse();
    assert_eq!(seen, want, "newest first");

    // Remove (twice: idempotent), add back, remove one of carol's.
    assert_eq!(users(&t.deps, favorite("DELETE", &ids[0], "bob")).await.status, 204);
    assert_eq!(users(&t.deps, favorite("DELETE", &ids[0], "bob")).await.status, 204);
    assert_eq!(users(&t.deps, favorite("PUT", &ids[0], "bob")).await.status, 201, "a new favoriting");
    assert_eq!(users(&t.deps, favorite("DELETE", &ids[1], "carol")).await.status, 204);

    // The stream, as recorded, then again reversed and in overlapping windows.
    let records: Vec<EventRecord> = stream_records(&t).await;
    assert!(process_stream(&t, records.clone()).await.is_empty());
    let expected = [2u64, 1, 2, 1, 1, 1];
    for (id, want) in ids.iter().zip(expected) {
        assert_eq!(count(&t, id).await, want, "{id}");
    }
    assert!(process_stream(&t, records.iter().rev().cloned().collect()).await.is_empty());
    for window in records.windows(7).step_by(3) {
        assert!(process_stream(&t, window.to_vec()).await.is_empty());
    }
    for (id, want) in ids.iter().zip(expected) {
        assert_eq!(count(&t, id).await, want, "{id} after replays");
    }
    let anonymous = users(&t.deps, req("GET /users/me/favorites")).await;
    assert_eq!(anonymous.status, 401);
}

/// How many items the table holds.
async fn item_count(t: &TestTable) -> usize {
    integration_tests::derived::scan(&t.deps.store).await.len()
}

/// Defect 7: only active listings are favorited (removed: 404, sold: 409),
/// only by signed-up users, and add/remove cycles keep storage per user and
/// listing bounded while the count stays exact.
#[tokio::test]
async fn favorites_need_an_active_listing_a_signed_up_user_and_stay_bounded() {
    let t = TestTable::with_demo_data().await;
    let sold = local_stack::demo::LISTING_IDS[2];
    let r = users(&t.deps, favorite("PUT", sold, "bob")).await;
    assert_eq!((r.status, r.error_code()), (409, "conflict"), "sold: {:?}", r.body);
    let lamp = listings(&t.deps, new_listing("Lamp")).await.body["listingId"].as_str().unwrap().to_owned();
    let remove = req("PATCH /listings/{listingId}").path("listingId", &lamp).by(As::User("alice"));
    assert_eq!(listings(&t.deps, remove.json(serde_json::json!({"status": "removed"}))).await.status, 200);
    let r = users(&t.deps, favorite("PUT", &lamp, "bob")).await;
    assert_eq!((r.status, r.error_code()), (404, "not_found"), "removed: {:?}", r.body);
    let active = local_stack::demo::LISTING_IDS[0];
    let r = users(&t.deps, favorite("PUT", active, "stranger")).await;
    assert_eq!((r.status, r.error_code()), (403, "forbidden"), "not signed up: {:?}", r.body);

    // 30 add/remove cycles, then one more add: storage does not grow with the cycles.
    assert_eq!(users(&t.deps, favorite("PUT", active, "bob")).await.status, 201);
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    let before = item_count(&t).await;
    for _ in 0..30 {
        assert_eq!(users(&t.deps, favorite("DELETE", active, "bob")).await.status, 204);
        assert_eq!(users(&t.deps, favorite("PUT", active, "bob")).await.status, 201);
    }
    let records = stream_records(&t).await;
    assert!(process_stream(&t, records.clone()).await.is_empty());
    // The batch's count goes to one of the listing's parts, which may be
    // new: at most `LISTING_FAVORITE_PARTS` of them, whatever the cycles.
    let grown = item_count(&t).await.saturating_sub(before);
    assert!(grown <= 1, "30 cycles leave no more items than one favorite and a part: {grown}");
    assert_eq!(count(&t, active).await, 1);
    assert!(process_stream(&t, records.iter().rev().cloned().collect()).await.is_empty());
    assert_eq!(count(&t, active).await, 1, "after a reversed replay");
}
