//! Regression tests of the third hardening round (issue 31): an array where
//! the contract has an object.

use integration_tests::{listings, orders, req, seller_listings, As, TestTable};
use serde_json::json;

const SHARDS: u16 = 10;

/// Defect 1: an array where the contract has an object is 400 naming the
/// field, at every depth; nothing is written. (`"location":[45,170]` was
/// a listing at lat 45, lon 170; `"items":[["<id>",1]]` placed an order.)
#[tokio::test]
async fn an_array_where_an_object_belongs_is_refused_at_every_depth() {
    let t = TestTable::with_demo_data().await;
    let listing = |body| listings(&t.deps, req("POST /listings").by(As::User("alice")).json(body));
    let before = seller_listings(&t.deps, "alice", "active").await.items().len();
    for location in [json!([45, 170]), json!([170.5, 45.25]), json!([]), json!([{ "lat": 1, "lon": 2 }])] {
        let r = listing(json!({ "title": "Lamp", "price": 12, "categoryId": "books", "location": location })).await;
        assert_eq!((r.status, r.error_code()), (400, "bad_request"), "{location}: {:?}", r.body);
        let message = r.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("`location`: must be a JSON object, not an array"), "{message}");
    }
    assert_eq!(seller_listings(&t.deps, "alice", "active").await.items().len(), before, "no listing written");
    let placed =
        listing(json!({ "title": "Lamp", "price": 12, "categoryId": "books", "location": { "lat": 45, "lon": 170 } }));
    let placed = placed.await;
    assert_eq!(
        (placed.status, &placed.body["location"]),
        (201, &json!({ "lat": 45.0, "lon": 170.0 })),
        "{:?}",
        placed.body
    );

    let product = local_stack::demo::PRODUCT_IDS[1];
    let order = |key: &str, body| {
        orders(&t.deps, SHARDS, req("POST /orders").by(As::User("bob")).header("Idempotency-Key", key).json(body))
    };
    for (n, items) in
        [json!([[product, 1]]), json!([{ "productId": product, "qty": 1 }, [local_stack::demo::PRODUCT_IDS[0], 1]])]
            .into_iter()
            .enumerate()
    {
        let r = order(&format!("arrays-{n}"), json!({ "items": items })).await;
        assert_eq!((r.status, r.error_code()), (400, "bad_request"), "{items}: {:?}", r.body);
        let message = r.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(&format!("`items[{n}]`: must be a JSON object, not an array")), "{message}");
    }
    let mine = orders(&t.deps, SHARDS, req("GET /buyers/{buyerId}/orders").path("buyerId", "bob").by(As::User("bob")));
    let placed_before = mine.await.items().len();
    let ok = order("arrays-ok", json!({ "items": [{ "productId": product, "qty": 1 }] })).await;
    assert_eq!(ok.status, 201, "{:?}", ok.body);
    let mine = orders(&t.deps, SHARDS, req("GET /buyers/{buyerId}/orders").path("buyerId", "bob").by(As::User("bob")));
    assert_eq!(mine.await.items().len(), placed_before + 1, "only the well-formed order was placed");
}
