//! Orders (marketplace AP7-9, e-commerce AP1-5, AP7-8) against DynamoDB Local.

use std::collections::HashSet;

use domain::ids::{OrderId, UserId};
use domain::model::{Money, Order, OrderLine, OrderStatus};
use integration_tests::{catalog, listings, move_order, orders, req, As, Reply, TestTable};
use serde_json::json;
use ulid::Ulid;

const SHARDS: u16 = 10;
const L1: &str = "01JF8Z6A000000000000000001"; // alice's, active
const P4: &str = "01JF8Z5Q000000000000000004"; // stock 300

fn place(by: &'static str, key: &str, body: serde_json::Value) -> integration_tests::Req {
    req("POST /orders").by(As::User(by)).header("Idempotency-Key", key).json(body)
}

fn order_id(r: &Reply) -> String {
    r.body["orderId"].as_str().unwrap_or_default().to_owned()
}

async fn set_stock(t: &TestTable, product: &str, target: i64, current: i64) {
    let r = catalog(
        &t.deps,
        req("POST /products/{productId}/stock")
            .path("productId", product)
            .by(As::Admin)
            .json(json!({ "delta": target - current })),
    )
    .await;
    assert_eq!(r.body["stockLevel"], target);
}

#[tokio::test]
async fn listing_order_reads_by_party() {
    let t = TestTable::with_demo_data().await;
    let placed = orders(&t.deps, SHARDS, place("bob", "k1", json!({ "listingId": L1 }))).await;
    assert_eq!(placed.status, 201, "{:?}", placed.body);
    assert_eq!((placed.body["status"].as_str(), placed.body["total"].as_i64()), (Some("pending"), Some(28)));
    assert_eq!(
        t.requests(),
        ["GetItem", "BatchGetItem", "TransactWriteItems"],
        "key check, listing and buyer read, one transaction"
    );
    let id = order_id(&placed);
    let listing = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", L1)).await;
    assert_eq!(listing.body["status"], "sold");
    t.requests();

    // AP7 / e-com AP1: buyer, seller, admin; nobody else.
    for who in [As::User("bob"), As::User("alice"), As::Admin] {
        let r = orders(&t.deps, SHARDS, req("GET /orders/{orderId}").path("orderId", &id).by(who)).await;
        assert_eq!((r.status, order_id(&r)), (200, id.clone()));
        assert_eq!(t.requests(), ["GetItem"]);
    }
    let stranger = orders(&t.deps, SHARDS, req("GET /orders/{orderId}").path("orderId", &id).by(As::User("eve"))).await;
    assert_eq!(stranger.status, 403);

    // e-com AP4 / AP5: items.
    t.requests();
    let items =
        orders(&t.deps, SHARDS, req("GET /orders/{orderId}/items").path("orderId", &id).by(As::User("bob"))).await;
    assert_eq!(items.item_field("itemId"), [L1]);
    assert_eq!(t.requests(), ["Query"]);
    let item = orders(
        &t.deps,
        SHARDS,
        req("GET /orders/{orderId}/items/{itemId}").path("orderId", &id).path("itemId", L1).by(As::User("alice")),
    )
    .await;
    assert_eq!((item.status, item.body["name"].as_str()), (200, Some("Stoneware mug, blue glaze")));
    assert_eq!(t.requests(), ["BatchGetItem"], "the order, which holds it, and an item beside it");
    for r in [
        req("GET /orders/{orderId}/items").path("orderId", &id),
        req("GET /orders/{orderId}/items/{itemId}").path("orderId", &id).path("itemId", L1),
    ] {
        assert_eq!(orders(&t.deps, SHARDS, r.by(As::User("eve"))).await.status, 403);
    }

    // AP8 / e-com AP2 and AP9: the buyer's orders and the seller's sales, newest first.
    t.requests();
    let mine =
        orders(&t.deps, SHARDS, req("GET /buyers/{buyerId}/orders").path("buyerId", "bob").by(As::User("bob"))).await;
    assert_eq!(mine.item_field("orderId")[0], id, "newest first");
    assert_eq!(t.requests(), ["Query"]);
    let sales =
        orders(&t.deps, SHARDS, req("GET /sellers/{sellerId}/orders").path("sellerId", "alice").by(As::User("alice")))
            .await;
    assert_eq!(sales.item_field("orderId")[0], id);
    assert_eq!(t.requests(), ["Query"]);
    let theirs =
        orders(&t.deps, SHARDS, req("GET /buyers/{buyerId}/orders").path("buyerId", "bob").by(As::User("alice"))).await;
    assert_eq!(theirs.status, 403);
    let not_mine =
        orders(&t.deps, SHARDS, req("GET /sellers/{sellerId}/orders").path("sellerId", "alice").by(As::User("bob")))
            .await;
    assert_eq!(not_mine.status, 403);
}

#[tokio::test]
async fn lifecycle_is_conditional_and_cancel_undoes() {
    let t = TestTable::with_demo_data().await;
    let id = order_id(&orders(&t.deps, SHARDS, place("bob", "k1", json!({ "listingId": L1 }))).await);
    let patch = |by: As, status: &str| {
        req("PATCH /orders/{orderId}").path("orderId", &id).by(by).json(json!({ "status": status }))
    };

    assert_eq!(
        orders(&t.deps, SHARDS, patch(As::User("bob"), "confirmed")).await.status,
        403,
        "the buyer cannot confirm"
    );
    assert_eq!(orders(&t.deps, SHARDS, patch(As::User("eve"), "cancelled")).await.status, 403);
    let skip = orders(&t.deps, SHARDS, patch(As::User("alice"), "delivered")).await;
    assert_eq!((skip.status, skip.error_code()), (409, "conflict"), "pending cannot jump to delivered");
    t.requests();
    let confirmed = orders(&t.deps, SHARDS, patch(As::User("alice"), "confirmed")).await;
    assert_eq!((confirmed.status, confirmed.body["status"].as_str()), (200, Some("confirmed")));
    // One item moved: a conditional UpdateItem, not a transaction.
    assert_eq!(t.requests(), ["GetItem", "UpdateItem"]);
    let by_status = |s: &str| req("GET /orders").query("status", s).by(As::Admin);
    assert_eq!(
        orders(&t.deps, SHARDS, by_status("confirmed")).await.item_field("orderId"),
        [id.as_str(), local_stack::demo::ORDER_ID],
        "GSI3 moved with it (beside the demo's confirmed order, newest first)"
    );
    assert!(orders(&t.deps, SHARDS, by_status("pending")).await.item_field("orderId").iter().all(|o| o != &id));

    // Cancel (by the buyer, from confirmed) relists the listing.
    let cancelled = orders(&t.deps, SHARDS, patch(As::User("bob"), "cancelled")).await;
    assert_eq!(cancelled.status, 200, "{:?}", cancelled.body);
    let listing = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", L1)).await;
    assert_eq!(listing.body["status"], "active", "cancelling relists");
    let again = orders(&t.deps, SHARDS, patch(As::User("alice"), "shipped")).await;
    assert_eq!(again.status, 409, "cancelled is final");
    let stored = orders(&t.deps, SHARDS, req("GET /orders/{orderId}").path("orderId", &id).by(As::Admin)).await;
    assert_eq!(stored.body["status"], "cancelled", "invalid transitions changed nothing");

    // A catalog order: cancel restores stock; only an admin moves it along.
    let catalog_order =
        orders(&t.deps, SHARDS, place("bob", "k2", json!({ "items": [{ "productId": P4, "qty": 7 }] }))).await;
    assert_eq!(catalog_order.status, 201, "{:?}", catalog_order.body);
    let cid = order_id(&catalog_order);
    let stock = |t: &TestTable| {
        let deps = t.deps.clone();
        async move {
            catalog(&deps, req("GET /products/{productId}").path("productId", P4)).await.body["stockLevel"].as_i64()
        }
    };
    assert_eq!(stock(&t).await, Some(293));
    let confirm = req("PATCH /orders/{orderId}").path("orderId", &cid).json(json!({ "status": "confirmed" }));
    assert_eq!(orders(&t.deps, SHARDS, confirm.clone().by(As::User("bob"))).await.status, 403);
    assert_eq!(orders(&t.deps, SHARDS, confirm.by(As::Admin)).await.status, 200);
    let cancel = move_order(&cid, As::User("bob"), "cancelled");
    assert_eq!(orders(&t.deps, SHARDS, cancel).await.status, 200);
    assert_eq!(stock(&t).await, Some(300), "cancelling restores stock");
}

/// 20 buyers order one listing at once: one order, 19 clean 409s.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_buyers_one_listing() {
    let t = TestTable::with_demo_data().await;
    let buyers: Vec<&'static str> = (0..20).map(|i| &*Box::leak(format!("buyer{i}").into_boxed_str())).collect();
    integration_tests::sign_up_all(&t.deps, &buyers).await;
    let tasks: Vec<_> = buyers
        .iter()
        .map(|b| {
            let (deps, b) = (t.deps.clone(), *b);
            tokio::spawn(async move { orders(&deps, SHARDS, place(b, "race", json!({ "listingId": L1 }))).await })
        })
        .collect();
    let mut replies = Vec::new();
    for task in tasks {
        replies.push(task.await.unwrap());
    }
    let created: Vec<_> = replies.iter().filter(|r| r.status == 201).collect();
    let conflicts = replies.iter().filter(|r| r.status == 409 && r.error_code() == "conflict").count();
    assert_eq!((created.len(), conflicts), (1, 19), "{:?}", replies.iter().map(|r| r.status).collect::<Vec<_>>());
    let listing = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", L1)).await;
    assert_eq!(listing.body["status"], "sold");
    let sales =
        orders(&t.deps, SHARDS, req("GET /sellers/{sellerId}/orders").path("sellerId", "alice").by(As::User("alice")))
            .await;
    let of_l1 = sales.items().iter().filter(|o| o["listingId"] == L1).count();
    assert_eq!(of_l1, 1, "exactly one order record for the listing");
}

/// 30 orders of one unit against a stock of 10: 10 orders, 20 409s, stock 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_orders_ten_in_stock() {
    let t = TestTable::with_demo_data().await;
    set_stock(&t, P4, 10, 300).await;
    let shoppers: Vec<&'static str> = (0..30).map(|i| &*Box::leak(format!("shopper{i}").into_boxed_str())).collect();
    integration_tests::sign_up_all(&t.deps, &shoppers).await;
    let tasks: Vec<_> = (0..30)
        .map(|i| {
            let deps = t.deps.clone();
            let buyer = shoppers[i];
            tokio::spawn(async move {
                orders(&deps, SHARDS, place(buyer, "buy", json!({ "items": [{ "productId": P4, "qty": 1 }] }))).await
            })
        })
        .collect();
    let mut statuses = Vec::new();
    let mut ids = HashSet::new();
    for task in tasks {
        let r = task.await.unwrap();
        if r.status == 201 {
            ids.insert(order_id(&r));
        }
        statuses.push(r.status);
    }
    let ok = statuses.iter().filter(|s| **s == 201).count();
    let conflict = statuses.iter().filter(|s| **s == 409).count();
    assert_eq!((ok, conflict, ids.len()), (10, 20, 10), "{statuses:?}");
    let stock = catalog(&t.deps, req("GET /products/{productId}").path("productId", P4)).await;
    assert_eq!(stock.body["stockLevel"], 0);
    // Order records in the status index equal the stock sold.
    let pending = collect_all(&t, SHARDS, Some("pending"), 100).await;
    let catalog_orders: HashSet<String> = pending
        .iter()
        .filter(|o| o["lines"][0]["itemId"] == P4)
        .map(|o| o["orderId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(catalog_orders, ids);
}

/// 10 concurrent POSTs with one key: one order, all answered with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_key_one_order() {
    let t = TestTable::with_demo_data().await;
    let tasks: Vec<_> = (0..10)
        .map(|_| {
            let deps = t.deps.clone();
            tokio::spawn(async move {
                orders(&deps, SHARDS, place("bob", "same-key", json!({ "items": [{ "productId": P4, "qty": 2 }] })))
                    .await
            })
        })
        .collect();
    let mut ids = HashSet::new();
    for task in tasks {
        let r = task.await.unwrap();
        assert_eq!(r.status, 201, "{:?}", r.body);
        ids.insert(order_id(&r));
    }
    assert_eq!(ids.len(), 1, "every response carries the one order");
    let stock = catalog(&t.deps, req("GET /products/{productId}").path("productId", P4)).await;
    assert_eq!(stock.body["stockLevel"], 298, "stock taken once");
    let mine =
        orders(&t.deps, SHARDS, req("GET /buyers/{buyerId}/orders").path("buyerId", "bob").by(As::User("bob"))).await;
    assert_eq!(mine.items().iter().filter(|o| o["lines"][0]["itemId"] == P4).count(), 1);
    // A later retry gets the same answer; the key with another body is refused.
    let retry =
        orders(&t.deps, SHARDS, place("bob", "same-key", json!({ "items": [{ "productId": P4, "qty": 2 }] }))).await;
    assert_eq!((retry.status, order_id(&retry)), (201, ids.into_iter().next().unwrap()));
    let other =
        orders(&t.deps, SHARDS, place("bob", "same-key", json!({ "items": [{ "productId": P4, "qty": 3 }] }))).await;
    assert_eq!((other.status, other.error_code()), (422, "idempotency_key_reused"));
    let no_key =
        orders(&t.deps, SHARDS, req("POST /orders").by(As::User("bob")).json(json!({ "listingId": L1 }))).await;
    assert_eq!(no_key.status, 400);
}

#[tokio::test]
async fn placement_validation() {
    let t = TestTable::with_demo_data().await;
    let cases = [
        (json!({}), 400),
        (json!({ "listingId": L1, "items": [{ "productId": P4, "qty": 1 }] }), 400),
        (json!({ "items": [] }), 400),
        (json!({ "items": [{ "productId": P4, "qty": 0 }] }), 400),
        (json!({ "items": [{ "productId": P4, "qty": 1 }, { "productId": P4, "qty": 1 }] }), 400),
        (json!({ "items": [{ "productId": P4, "qty": 1, "price": 0 }] }), 400),
        (json!({ "items": [{ "productId": "01JF8Z5Q00000000000000000Z", "qty": 1 }] }), 404),
        (json!({ "items": [{ "productId": P4, "qty": 301 }] }), 409),
        (json!({ "listingId": "01JF8Z6A000000000000000003" }), 409),
        (json!({ "listingId": L1, "status": "delivered" }), 400),
    ];
    for (i, (body, status)) in cases.into_iter().enumerate() {
        let r = orders(&t.deps, SHARDS, place("bob", &format!("v{i}"), body.clone())).await;
        assert_eq!(r.status, status, "{body}: {:?}", r.body);
    }
    let own = orders(&t.deps, SHARDS, place("alice", "own", json!({ "listingId": L1 }))).await;
    assert_eq!(own.status, 403, "sellers cannot buy their own listing (a valid request the caller may not make)");
    let too_many: Vec<_> =
        (0..26).map(|i| json!({ "productId": OrderId::generate().to_string(), "qty": 1 + i % 2 })).collect();
    assert_eq!(orders(&t.deps, SHARDS, place("bob", "many", json!({ "items": too_many }))).await.status, 400);
}

/// Writes `n` orders directly (the read path is under test), spread over
/// statuses and time; returns them.
pub(crate) async fn seed_orders(t: &TestTable, shards: u16, n: usize) -> Vec<Order> {
    let buyer: UserId = "bulk".parse().unwrap();
    let mut out = Vec::new();
    for i in 0..n {
        let id = OrderId::from_ulid(Ulid::from_parts(1_767_225_600_000 + i as u64 * 3_600_000, rand_bits(i)));
        let status = if i % 5 == 0 { OrderStatus::Shipped } else { OrderStatus::Pending };
        let order = Order {
            home: None,
            order_id: id,
            buyer_id: buyer.clone(),
            seller_id: None,
            listing_id: None,
            category_id: None,
            status,
            total: Money::from_cents(100),
            lines: vec![OrderLine::new(P4, 1)],
            shard: domain::shard::order_shard(&id, shards),
            buyer_review_id: None,
            seller_review_id: None,
            held_items: Vec::new(),
            created_at: domain::time::rfc3339(id.timestamp_ms()),
            updated_at: domain::time::rfc3339(id.timestamp_ms()),
        };
        t.deps.store.put_new(&order).await.unwrap();
        out.push(order);
    }
    t.requests();
    out
}

fn rand_bits(i: usize) -> u128 {
    (i as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835) >> 48
}

/// Pages through `GET /orders` and checks the requests of every page (one
/// round of one query per partition still holding orders, and a second
/// round of at most one more each) and that every page but the last is full.
async fn collect_all(t: &TestTable, shards: u16, status: Option<&str>, limit: u16) -> Vec<serde_json::Value> {
    let partitions = if status.is_some() { shards as usize } else { 5 * shards as usize };
    let (mut all, mut cursor, mut first) = (Vec::new(), None::<String>, true);
    loop {
        let mut r = req("GET /orders").query("limit", limit).by(As::Admin);
        if let Some(s) = status {
            r = r.query("status", s);
        }
        if let Some(c) = &cursor {
            r = r.query("cursor", c);
        }
        t.requests();
        let page = orders(&t.deps, shards, r).await;
        assert_eq!(page.status, 200, "{:?}", page.body);
        let sent = t.requests();
        assert!(sent.iter().all(|op| op == "Query"), "{sent:?}");
        if first {
            assert!(sent.len() >= partitions, "the first page asks every partition");
            first = false;
        }
        assert!(sent.len() <= 2 * partitions, "never more than two queries per partition per page");
        all.extend(page.items().iter().cloned());
        cursor = page.next_cursor();
        if cursor.is_none() {
            assert!(!page.items().is_empty() || all.is_empty(), "no empty last page");
            return all;
        }
        assert_eq!(page.items().len(), usize::from(limit), "every page but the last is full");
    }
}

fn assert_newest_first_once(items: &[serde_json::Value], expected: &[&Order]) {
    let ids: Vec<String> = items.iter().map(|o| o["orderId"].as_str().unwrap().to_owned()).collect();
    let mut want: Vec<String> = expected.iter().map(|o| o.order_id.to_string()).collect();
    want.sort();
    want.reverse();
    assert_eq!(ids, want, "every order exactly once, newest first");
}

#[tokio::test]
async fn sharded_pages_cover_every_order_once_newest_first() {
    for shards in [3u16, 10] {
        let t = TestTable::new().await;
        let seeded = seed_orders(&t, shards, 120).await;
        let pending: Vec<&Order> = seeded.iter().filter(|o| o.status == OrderStatus::Pending).collect();
        assert_newest_first_once(&collect_all(&t, shards, Some("pending"), 37).await, &pending);
        let all: Vec<&Order> = seeded.iter().collect();
        assert_newest_first_once(&collect_all(&t, shards, None, 50).await, &all);
    }
}

#[tokio::test]
async fn date_ranges_are_ulid_bounds_on_the_sort_key() {
    let t = TestTable::new().await;
    let seeded = seed_orders(&t, SHARDS, 100).await; // one per hour from 2026-01-01T00:00Z
    let r = orders(
        &t.deps,
        SHARDS,
        req("GET /orders")
            .query("status", "pending")
            .query("from", "2026-01-02")
            .query("to", "2026-01-03")
            .query("limit", 100)
            .by(As::Admin),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let expected: Vec<&Order> =
        seeded.iter().filter(|o| o.status == OrderStatus::Pending && o.created_at.starts_with("2026-01-02")).collect();
    assert_eq!(expected.len(), 19);
    assert_newest_first_once(r.items(), &expected);
    assert_eq!(t.requests().len(), SHARDS as usize);
    let bad =
        orders(&t.deps, SHARDS, req("GET /orders").query("from", "2026-01-03").query("to", "2026-01-02").by(As::Admin))
            .await;
    assert_eq!(bad.status, 400);
    let garbage = orders(&t.deps, SHARDS, req("GET /orders").query("from", "yesterday").by(As::Admin)).await;
    assert_eq!(garbage.status, 400);
    let not_admin = orders(&t.deps, SHARDS, req("GET /orders").by(As::User("bob"))).await;
    assert_eq!(not_admin.status, 403);
}
