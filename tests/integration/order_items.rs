//! An order's items held in its own item when they fit its write unit
//! (`orders::place::placement`), else each an item beside it: placing
//! writes what the rule says, and both read alike, with the orders of
//! before (the demo's, items beside), through `GET /orders/{orderId}/items`
//! (one `Query`, paged by item id) and `/items/{itemId}` (one
//! `BatchGetItem`).

use aws_sdk_dynamodb::types::AttributeValue::S;
use integration_tests::{catalog, orders, req, As, Reply, TestTable};
use serde_json::{json, Value};

const SHARDS: u16 = 10;
const L1: &str = "01JF8Z6A000000000000000001"; // alice's, active, "Stoneware mug, blue glaze"
const P: [&str; 4] = local_stack::demo::PRODUCT_IDS;

fn place(key: &str, body: Value) -> integration_tests::Req {
    req("POST /orders").by(As::User("bob")).header("Idempotency-Key", key).json(body)
}

/// The order's partition as stored: its item's `heldItems` and the sort
/// keys of the items beside it.
async fn stored(t: &TestTable, order: &str) -> (Option<Value>, Vec<String>, usize) {
    let (client, table) = (t.deps.store.client(), t.deps.store.table());
    let out = client
        .query()
        .table_name(table)
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", S(format!("ORDER#{order}")))
        .send()
        .await
        .unwrap();
    let (mut held, mut beside, mut bytes) = (None, Vec::new(), 0);
    for item in out.items() {
        let sk = item["sk"].as_s().unwrap().clone();
        if sk == "#METADATA" {
            bytes = store::item::size(item);
            let order: Value = serde_dynamo::from_item(item.clone()).unwrap();
            held = order.get("heldItems").cloned();
        } else if sk.starts_with("ITEM#") {
            beside.push(sk);
        }
    }
    (held, beside, bytes)
}

/// The orders function with `ORDER_ITEMS_HELD` as `hold` says.
async fn orders_holding(t: &TestTable, hold: bool, r: integration_tests::Req) -> Reply {
    integration_tests::orders_of(&orders::App { deps: t.deps.clone(), shards: SHARDS, hold_items: hold }, r).await
}

async fn items(t: &TestTable, order: &str, limit: u16, cursor: Option<&str>, by: As) -> Reply {
    let mut r = req("GET /orders/{orderId}/items").path("orderId", order).query("limit", limit).by(by);
    if let Some(c) = cursor {
        r = r.query("cursor", c);
    }
    orders(&t.deps, SHARDS, r).await
}

/// Every item of `order`, a page of `limit` at a time: the ids in order
/// and the number of pages (each one `Query`).
async fn walk(t: &TestTable, order: &str, limit: u16) -> (Vec<Value>, usize) {
    let (mut all, mut pages, mut cursor) = (Vec::new(), 0, None::<String>);
    loop {
        let page = items(t, order, limit, cursor.as_deref(), As::User("bob")).await;
        assert_eq!(page.status, 200, "{:?}", page.body);
        assert_eq!(t.requests(), ["Query"], "a page is one query");
        assert!(page.items().len() <= usize::from(limit));
        all.extend(page.items().iter().cloned());
        pages += 1;
        match page.next_cursor() {
            Some(c) => cursor = Some(c),
            None => return (all, pages),
        }
    }
}

#[tokio::test]
async fn a_listing_order_holds_its_item_and_reads_as_one_beside_it() {
    let t = TestTable::with_demo_data().await;
    let placed = orders(&t.deps, SHARDS, place("held", json!({ "listingId": L1 }))).await;
    assert_eq!(placed.status, 201, "{:?}", placed.body);
    let id = placed.body["orderId"].as_str().unwrap().to_owned();
    assert!(placed.body.get("heldItems").is_none(), "never answered with the order");
    // Held: nothing beside it, and its item stays within one write unit
    // with room for what later writes add.
    let (held, beside, bytes) = stored(&t, &id).await;
    let name = "Stoneware mug, blue glaze";
    assert_eq!(held, Some(json!([{ "itemId": L1, "name": name, "qty": 1, "price": 28 }])));
    assert!(beside.is_empty(), "{beside:?}");
    assert!(bytes + 128 <= 1024, "{bytes} bytes");
    // Its item reads as an item of its own did.
    t.requests();
    let want = json!({ "orderId": id, "itemId": L1, "name": name, "qty": 1, "price": 28, "buyerId": "bob",
        "sellerId": "alice" });
    let (all, pages) = walk(&t, &id, 20).await;
    assert_eq!((all, pages), (vec![want.clone()], 1));
    for who in [As::User("bob"), As::User("alice"), As::Admin] {
        let one = req("GET /orders/{orderId}/items/{itemId}").path("orderId", &id).path("itemId", L1).by(who);
        let one = orders(&t.deps, SHARDS, one).await;
        assert_eq!((one.status, &one.body), (200, &want));
        assert_eq!(t.requests(), ["BatchGetItem"]);
    }
    // A stranger sees neither; an item it does not have is 404.
    assert_eq!(items(&t, &id, 20, None, As::User("eve")).await.status, 403);
    let other = req("GET /orders/{orderId}/items/{itemId}").path("orderId", &id).path("itemId", P[0]);
    assert_eq!(orders(&t.deps, SHARDS, other.clone().by(As::User("eve"))).await.status, 403);
    let none = orders(&t.deps, SHARDS, other.by(As::User("bob"))).await;
    assert_eq!((none.status, none.error_code()), (404, "not_found"));
    // Its status moves keep it (and within the unit).
    for status in ["confirmed", "cancelled"] {
        let r = integration_tests::move_order(&id, As::User("alice"), status);
        assert_eq!(orders(&t.deps, SHARDS, r).await.status, 200);
    }
    let (after, _, bytes) = stored(&t, &id).await;
    assert_eq!(after, held);
    assert!(bytes <= 1024, "{bytes} bytes");
}

#[tokio::test]
async fn items_past_the_write_unit_go_beside_and_every_shape_pages_alike() {
    let t = TestTable::with_demo_data().await;
    // Two products, all four: held; one of the longest name (400 bytes)
    // with another: past the unit with them, so beside.
    let long = json!({ "name": "ö".repeat(200), "brandId": "acme", "categoryId": "pottery", "price": 5,
        "stockLevel": 10 });
    let long = catalog(&t.deps, req("POST /products").by(As::Admin).json(long)).await;
    assert_eq!(long.status, 201, "{:?}", long.body);
    let long = long.body["productId"].as_str().unwrap().to_owned();
    let two = json!({ "items": [{ "productId": P[3], "qty": 2 }, { "productId": P[0], "qty": 1 }] });
    let four: Vec<Value> = P.iter().map(|p| json!({ "productId": p, "qty": 1 })).collect();
    let past = json!({ "items": [{ "productId": long, "qty": 1 }, { "productId": P[1], "qty": 1 }] });
    let mut shapes = Vec::new();
    let bodies = [("two", two.clone(), true), ("four", json!({ "items": four }), true), ("past", past, true)];
    // `ORDER_ITEMS_HELD=false` (while a stack upgrades): beside, as before.
    for (key, body, hold) in bodies.into_iter().chain([("unheld", two, false)]) {
        let placed = orders_holding(&t, hold, place(key, body)).await;
        assert_eq!(placed.status, 201, "{:?}", placed.body);
        let id = placed.body["orderId"].as_str().unwrap().to_owned();
        let (held, beside, bytes) = stored(&t, &id).await;
        shapes.push((held.map_or(0, |h| h.as_array().map_or(0, Vec::len)), beside.len()));
        assert!(bytes + 128 <= 1024, "{bytes} bytes");
        t.requests();
        // Paged by item id, a page of one or of all, alike.
        let (all, pages) = walk(&t, &id, 20).await;
        let ids: Vec<&str> = all.iter().map(|i| i["itemId"].as_str().unwrap()).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        assert_eq!(ids, sorted);
        assert_eq!(pages, 1);
        let (ones, pages) = walk(&t, &id, 1).await;
        assert_eq!((ones, pages), (all.clone(), all.len()));
        assert!(all.iter().all(|i| i["orderId"] == id.as_str() && i["buyerId"] == "bob" && i["name"].is_string()));
        // A cursor is of its order only, and cannot be forged.
        let first = items(&t, &id, 1, None, As::User("bob")).await;
        let cursor = first.next_cursor().unwrap();
        let demo = local_stack::demo::ORDER_ID;
        assert_eq!(items(&t, demo, 1, Some(&cursor), As::User("bob")).await.status, 400);
        assert_eq!(items(&t, &id, 1, Some("bm90LWEtY3Vyc29y"), As::User("bob")).await.status, 400);
    }
    assert_eq!(shapes, [(2, 0), (4, 0), (0, 2), (0, 2)], "held, held, beside, beside when not holding");
    // The demo's orders, written before items were held: beside, read alike.
    let demo = local_stack::demo::ORDER_ID;
    t.requests();
    let (all, _) = walk(&t, demo, 1).await;
    assert!(!all.is_empty());
    let (held, beside, _) = stored(&t, demo).await;
    assert_eq!((held, beside.len()), (None, all.len()));
}
