//! Order messages (beyond the seeds): the buyer and the seller of a listing
//! order write to each other in the order's partition; an admin may read.

use integration_tests::{orders, req, As, Reply, Req, TestTable};
use serde_json::json;

const SHARDS: u16 = 10;
const L1: &str = "01JF8Z6A000000000000000001"; // alice's, active

fn post(order: &str, by: As, body: &str) -> Req {
    req("POST /orders/{orderId}/messages").path("orderId", order).by(by).json(json!({ "body": body }))
}

fn list(order: &str, by: As) -> Req {
    req("GET /orders/{orderId}/messages").path("orderId", order).by(by)
}

async fn send(t: &TestTable, r: Req) -> Reply {
    orders(&t.deps, SHARDS, r).await
}

#[tokio::test]
async fn parties_write_oldest_first_one_query_and_strangers_get_403() {
    let t = TestTable::with_demo_data().await;
    let placed = send(
        &t,
        req("POST /orders").by(As::User("bob")).header("Idempotency-Key", "talk").json(json!({ "listingId": L1 })),
    )
    .await;
    let order = placed.body["orderId"].as_str().unwrap().to_owned();
    t.requests();

    let empty = send(&t, list(&order, As::User("alice"))).await;
    assert_eq!((empty.status, empty.items().len()), (200, 0));
    assert_eq!(t.requests(), ["Query", "GetItem"], "an empty first page also reads the order to authorize");
    assert_eq!(send(&t, list(&order, As::User("eve"))).await.status, 403, "no messages, still 403");

    let mut written = Vec::new();
    for i in 0..12 {
        let by = if i % 2 == 0 { As::User("bob") } else { As::User("alice") };
        let r = send(&t, post(&order, by, &format!("message {i}"))).await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        written.push(r.body["messageId"].as_str().unwrap().to_owned());
    }
    assert_eq!(t.requests().iter().filter(|op| *op == "PutItem").count(), 12);

    // Oldest first, every message once across pages, one Query per page.
    let (mut seen, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let mut r = list(&order, As::Admin).query("limit", 5);
        if let Some(c) = &cursor {
            r = r.query("cursor", c);
        }
        let page = send(&t, r).await;
        assert_eq!(page.status, 200, "{:?}", page.body);
        assert_eq!(t.requests(), ["Query"]);
        seen.extend(page.item_field("messageId"));
        cursor = page.next_cursor();
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(seen, written);

    for r in [list(&order, As::User("eve")), post(&order, As::User("eve"), "hi")] {
        assert_eq!(send(&t, r).await.status, 403);
    }
    assert_eq!(send(&t, post(&order, As::Admin, "hi")).await.status, 403, "an admin reads but does not write");
    for bad in [json!({ "body": "" }), json!({ "body": "x".repeat(2001) }), json!({ "body": "x", "authorId": "eve" })] {
        let r = send(&t, req("POST /orders/{orderId}/messages").path("orderId", &order).by(As::User("bob")).json(bad))
            .await;
        assert_eq!(r.status, 400);
    }
    let missing = send(&t, list("01JF8Z7B00000000000000000Z", As::User("bob"))).await;
    assert_eq!(missing.status, 404);

    // A catalog order has no seller to write to.
    let catalog = send(
        &t,
        req("POST /orders")
            .by(As::User("bob"))
            .header("Idempotency-Key", "cat")
            .json(json!({ "items": [{ "productId": local_stack::demo::PRODUCT_IDS[0], "qty": 1 }] })),
    )
    .await;
    let r = send(&t, post(catalog.body["orderId"].as_str().unwrap(), As::User("bob"), "hello")).await;
    assert_eq!(r.status, 409);
}
