//! Regression tests for the defects found by review and black-box runs:
//! sequences of requests (write, then read back; extreme inputs; paging
//! with an open-ended range; retries of writes that already committed).

use integration_tests::faults::Fault;
use integration_tests::{
    catalog, listings, new_listing, orders, process_stream, req, stock_level, stream_records, users, As, Req, TestTable,
};
use serde_json::json;

const SHARDS: u16 = 10;

/// `POST /orders` by `buyer` with an `Idempotency-Key`.
fn place(buyer: &'static str, key: &str, body: serde_json::Value) -> Req {
    req("POST /orders").by(As::User(buyer)).header("Idempotency-Key", key).json(body)
}

/// `POST /products/{productId}/stock` by an admin.
fn stock_change(product: &str, delta: i64) -> Req {
    req("POST /products/{productId}/stock").path("productId", product).by(As::Admin).json(json!({ "delta": delta }))
}

/// `PATCH /orders/{orderId}` to `status`, by `who`.
fn order_status(order: &str, who: &'static str, status: &str) -> Req {
    req("PATCH /orders/{orderId}").path("orderId", order).by(As::User(who)).json(json!({ "status": status }))
}

/// `PATCH /listings/{listingId}` to `status`, by its seller alice.
fn listing_status(listing: &str, status: &str) -> Req {
    req("PATCH /listings/{listingId}")
        .path("listingId", listing)
        .by(As::User("alice"))
        .json(json!({ "status": status }))
}

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
    let placed =
        orders(&t.deps, SHARDS, place("bob", "too-much", json!({ "items": [{ "productId": id, "qty": 2 }] }))).await;
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
    let exact =
        orders(&t.deps, SHARDS, place("bob", "just-enough", json!({ "items": [{ "productId": id, "qty": 1 }] }))).await;
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

/// The listings of `among` that the category browse shows.
async fn browse(t: &TestTable, category: &str, among: &[String]) -> Vec<String> {
    listings(&t.deps, req("GET /categories/{categoryId}/listings").path("categoryId", category).query("limit", 100))
        .await
        .item_field("listingId")
        .into_iter()
        .filter(|id| among.contains(id))
        .collect()
}

/// Defect 4: the write that takes a listing out of `active` (a sale inside
/// the order transaction, a removal) drops its browse keys itself; no stream
/// record is needed for it to leave, and a replay never brings it back.
#[tokio::test]
async fn a_sold_or_removed_listing_leaves_the_browse_index_in_the_same_write() {
    let t = TestTable::with_demo_data().await;
    let mut ids = Vec::new();
    for title in ["Jug", "Bowl"] {
        let created = listings(&t.deps, new_listing(title)).await;
        assert_eq!(created.status, 201, "{:?}", created.body);
        ids.push(created.body["listingId"].as_str().unwrap().to_owned());
    }
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    let mut shown = browse(&t, "books", &ids).await;
    shown.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(shown, want, "both indexed by the stream processor");

    let sold = orders(&t.deps, SHARDS, place("bob", "buy-jug", json!({ "listingId": ids[0] }))).await;
    assert_eq!(sold.status, 201, "{:?}", sold.body);
    let removed = listings(&t.deps, listing_status(&ids[1], "removed")).await;
    assert_eq!(removed.status, 200, "{:?}", removed.body);
    assert!(browse(&t, "books", &ids).await.is_empty(), "gone before any stream record is processed");

    // The whole stream again, in order and reversed: nothing comes back.
    let records = stream_records(&t).await;
    assert!(process_stream(&t, records.clone()).await.is_empty());
    assert!(process_stream(&t, records.into_iter().rev().collect()).await.is_empty());
    assert!(browse(&t, "books", &ids).await.is_empty());

    // Relisting puts it back through the stream processor.
    let relisted = listings(&t.deps, listing_status(&ids[1], "active")).await;
    assert_eq!(relisted.status, 200);
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    assert_eq!(browse(&t, "books", &ids).await, [ids[1].clone()]);
}

/// Defect 5: writes whose answer is lost after they committed are retried
/// by the SDK; the retry answers as the first attempt would have, and
/// nothing is applied twice.
#[tokio::test]
async fn sdk_retries_of_committed_writes_succeed_once() {
    let (t, faults) = TestTable::with_faults().await;
    let lost = |op: &str| faults.inject(op, Fault::AnswerLost, 1);

    lost("TransactWriteItems");
    let signed = users(
        &t.deps,
        req("POST /users").by(As::User("carol")).json(json!({ "name": "Carol", "email": "carol@example.com" })),
    )
    .await;
    assert_eq!(signed.status, 201, "sign-up: {:?}", signed.body);
    assert_eq!(faults.pending(), 0, "the fault was met");

    lost("PutItem");
    let brand =
        catalog(&t.deps, req("POST /brands").by(As::Admin).json(json!({ "name": "Umbrella", "id": "umbrella" }))).await;
    assert_eq!(brand.status, 201, "brand: {:?}", brand.body);

    let product = local_stack::demo::PRODUCT_IDS[1]; // stock 15
    lost("TransactWriteItems");
    let stock = catalog(&t.deps, stock_change(product, 5)).await;
    assert_eq!((stock.status, &stock.body["stockLevel"]), (200, &json!(20)), "stock: {:?}", stock.body);

    lost("TransactWriteItems");
    let listing = listings(&t.deps, new_listing("Lamp")).await;
    assert_eq!(listing.status, 201, "listing: {:?}", listing.body);

    lost("TransactWriteItems");
    let placed =
        orders(&t.deps, SHARDS, place("bob", "lost-answer", json!({ "items": [{ "productId": product, "qty": 3 }] })))
            .await;
    assert_eq!(placed.status, 201, "order: {:?}", placed.body);
    let order = placed.body["orderId"].as_str().unwrap().to_owned();

    lost("TransactWriteItems");
    let cancelled = orders(&t.deps, SHARDS, order_status(&order, "bob", "cancelled")).await;
    assert_eq!(cancelled.status, 200, "cancel: {:?}", cancelled.body);
    assert_eq!(faults.pending(), 0);

    // A status move is one conditional UpdateItem: its retry finds the
    // order moved, reads it again and answers as the first attempt would.
    let placed =
        orders(&t.deps, SHARDS, place("bob", "second", json!({ "items": [{ "productId": product, "qty": 1 }] }))).await;
    assert_eq!(placed.status, 201, "order: {:?}", placed.body);
    let second = placed.body["orderId"].as_str().unwrap().to_owned();
    lost("UpdateItem");
    let confirm = req("PATCH /orders/{orderId}").path("orderId", &second).by(As::Admin);
    let confirmed = orders(&t.deps, SHARDS, confirm.json(json!({ "status": "confirmed" }))).await;
    assert_eq!((confirmed.status, &confirmed.body["status"]), (200, &json!("confirmed")), "{:?}", confirmed.body);
    assert_eq!(faults.pending(), 0, "the fault was met");

    // Each change applied exactly once: 15 + 5, then 3 taken and given
    // back, then 1 taken by the confirmed order.
    assert_eq!(stock_level(&t, product).await, 19);
    let mine = listings(
        &t.deps,
        req("GET /sellers/{sellerId}/listings").path("sellerId", "alice").by(As::User("alice")).query("limit", 100),
    )
    .await;
    assert_eq!(mine.item_field("title").iter().filter(|t| *t == "Lamp").count(), 1);
    let bobs =
        orders(&t.deps, SHARDS, req("GET /buyers/{buyerId}/orders").path("buyerId", "bob").by(As::User("bob"))).await;
    assert_eq!(bobs.item_field("orderId").iter().filter(|o| **o == order).count(), 1);
}

/// Defect 6: cancelling cannot push stock past its maximum.
#[tokio::test]
async fn cancelling_never_pushes_stock_past_its_maximum() {
    let t = TestTable::with_demo_data().await;
    let product = local_stack::demo::PRODUCT_IDS[1]; // stock 15
    let placed =
        orders(&t.deps, SHARDS, place("bob", "k", json!({ "items": [{ "productId": product, "qty": 2 }] }))).await;
    assert_eq!(placed.status, 201);
    let fill = catalog(&t.deps, stock_change(product, 1_000_000_000 - 13)).await;
    assert_eq!(fill.body["stockLevel"], 1_000_000_000);
    let order = placed.body["orderId"].as_str().unwrap();
    let cancel = orders(&t.deps, SHARDS, order_status(order, "bob", "cancelled")).await;
    assert_eq!((cancel.status, cancel.error_code()), (409, "conflict"), "{:?}", cancel.body);
    assert!(cancel.body["error"]["message"].as_str().unwrap().contains(product));
    let read = orders(&t.deps, SHARDS, req("GET /orders/{orderId}").path("orderId", order).by(As::User("bob"))).await;
    assert_eq!(read.body["status"], "pending", "nothing half-written");
    assert_eq!(stock_level(&t, product).await, 1_000_000_000);
}

/// Defect 6: the admin fan-out pages at 100 shards x 5 statuses; its cursor
/// stays small (not one position per partition) and the walk is exact.
#[tokio::test]
async fn the_status_fan_out_pages_at_one_hundred_shards_and_five_statuses() {
    let t = TestTable::new().await;
    let seeded = crate::orders::seed_orders(&t, 100, 130).await;
    let (mut seen, mut cursor, mut pages) = (Vec::new(), None::<String>, 0);
    loop {
        let mut r = req("GET /orders").query("limit", 25);
        if let Some(c) = &cursor {
            assert!(c.len() < 1024, "cursor of {} bytes", c.len());
            r = r.query("cursor", c);
        }
        let page = orders(&t.deps, 100, r.by(As::Admin)).await;
        assert_eq!(page.status, 200, "{:?}", page.body);
        seen.extend(page.item_field("orderId"));
        pages += 1;
        cursor = page.next_cursor();
        if cursor.is_none() {
            break;
        }
    }
    let mut want: Vec<String> = seeded.iter().map(|o| o.order_id.to_string()).collect();
    want.sort();
    want.reverse();
    assert_eq!(seen, want, "every order once, newest first");
    assert_eq!(pages, 6);
}

/// Item 8: a retry with the same `Idempotency-Key` gets the first answer,
/// marked as replayed; a first attempt that failed keeps nothing, so its
/// retry runs again.
#[tokio::test]
async fn replayed_answers_are_marked_and_failures_are_not_kept() {
    let t = TestTable::with_demo_data().await;
    let body = json!({ "items": [{ "productId": local_stack::demo::PRODUCT_IDS[1], "qty": 20 }] });
    let refused = orders(&t.deps, SHARDS, place("bob", "replay-me", body.clone())).await;
    assert_eq!(refused.status, 409, "only 15 in stock: {:?}", refused.body);
    catalog(&t.deps, stock_change(local_stack::demo::PRODUCT_IDS[1], 10)).await;
    let first = orders(&t.deps, SHARDS, place("bob", "replay-me", body.clone())).await;
    assert_eq!((first.status, first.replayed), (201, false), "the failed attempt was not kept: {:?}", first.body);
    let again = orders(&t.deps, SHARDS, place("bob", "replay-me", body)).await;
    assert_eq!((again.status, again.replayed), (201, true));
    assert_eq!(again.body["orderId"], first.body["orderId"]);

    let keyed = || stock_change(local_stack::demo::PRODUCT_IDS[0], 5).header("Idempotency-Key", "restock-7");
    let once = catalog(&t.deps, keyed()).await;
    let twice = catalog(&t.deps, keyed()).await;
    assert_eq!((once.status, once.replayed, &once.body["stockLevel"]), (200, false, &json!(125)));
    assert_eq!((twice.status, twice.replayed, &twice.body["stockLevel"]), (200, true, &json!(125)), "applied once");
    let other =
        catalog(&t.deps, stock_change(local_stack::demo::PRODUCT_IDS[0], 6).header("Idempotency-Key", "restock-7"))
            .await;
    assert_eq!((other.status, other.error_code()), (422, "idempotency_key_reused"));
}

/// A counter the stream processor keeps can drift below zero (its attribute
/// lost, then a removal counted: seen in the reconcile test beside live
/// writes, where it made the listing a 500 on every read until reconcile
/// ran). Drift must never make an item unreadable: the listing reads with
/// a count of 0, stays in its category's pages, and can be favorited.
#[tokio::test]
async fn a_counter_drifted_below_zero_leaves_the_item_readable() {
    let t = TestTable::with_demo_data().await;
    integration_tests::sign_up_all(&t.deps, &["carol"]).await;
    let id = local_stack::demo::LISTING_IDS[0];
    let key = |r: aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder| {
        r.key("pk", aws_sdk_dynamodb::types::AttributeValue::S(format!("LISTING#{id}")))
            .key("sk", aws_sdk_dynamodb::types::AttributeValue::S("#METADATA".into()))
    };
    let set = t.deps.store.client().update_item().table_name(t.deps.store.table());
    key(set)
        .update_expression("SET favoriteCount = :n")
        .expression_attribute_values(":n", aws_sdk_dynamodb::types::AttributeValue::N("-1".into()))
        .send()
        .await
        .unwrap();
    let get = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", id)).await;
    assert_eq!((get.status, get.body["favoriteCount"].as_i64()), (200, Some(0)), "{:?}", get.body);
    let category = get.body["categoryId"].as_str().unwrap().to_owned();
    assert_eq!(browse(&t, &category, &[id.to_owned()]).await, [id.to_owned()]);
    let favorite =
        users(&t.deps, req("PUT /users/me/favorites/{listingId}").path("listingId", id).by(As::User("carol"))).await;
    assert_eq!(favorite.status, 201, "{:?}", favorite.body);
}
