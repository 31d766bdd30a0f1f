//! Issue 33 item 1 for orders, reviews, messages, favorites and the
//! catalog (see `bounds.rs` for the listings and the rules): pages of
//! orders and products within the page bounds; reviews and messages, whose
//! bodies are what is asked for, within their byte limits; the admin
//! status views within the bound of their shard count. Hostile data made
//! through the API (`integration_tests::hostile`).
//!
//! The bounds stated here:
//! - A page of `n` reviews or messages is one query of at most `n + 1`
//!   items (the look-ahead) of at most [`BODY_ITEM_BYTES`] (a body of 2,000
//!   4-byte characters and 1 KB of ids, keys and dates):
//!   `RCU <= 0.5 * ceil((n + 1) * 9,024 / 4,096)`: 23.5 at 20, 111.5 at 100;
//!   messages one request more (the order, read to check the caller), 0.5.
//! - An admin status view over `P = statuses x OrderShardCount` partitions
//!   (`P = 10` for one status, 50 for all five, at the template's default
//!   of 10 shards; 100 and 500 at its maximum of 100) is at most two rounds
//!   of one query per partition, each of at most `n + 1` orders of at most
//!   [`ORDER_ITEM_BYTES`]: at most `2P` requests and
//!   `2P * 0.5 * ceil((n + 1) * 2,048 / 4,096)` RCU (110 and 510 RCU for one
//!   status at 20 and 100).

use domain::model::OrderStatus;
use integration_tests::hostile::{listing_body, longest_title, Hostile, ORDER_SHARDS};
use integration_tests::metered::{
    assert_pages_within, assert_within, check, once, pages_within, Bound, Bounded, Fullness, Function, Route,
};
use integration_tests::pricing::item_size;
use integration_tests::{req, As, TestTable};

/// Orders, reviews and messages on one user or order: more than a page of 100.
const MANY: usize = 110;
/// The largest review or message item: 2,000 characters of 4 bytes and 1 KB.
const BODY_ITEM_BYTES: u64 = 8000 + 1024;
/// The largest order item: 25 lines and 1 KB.
const ORDER_ITEM_BYTES: u64 = 2048;

/// The size of the stored item `pk`/`sk`, read plainly.
async fn stored_size(t: &TestTable, pk: String, sk: &str) -> u64 {
    use aws_sdk_dynamodb::types::AttributeValue::S;
    let get =
        t.deps.store.client().get_item().table_name(t.deps.store.table()).key("pk", S(pk)).key("sk", S(sk.into()));
    item_size(get.send().await.unwrap().item().expect("the item"))
}

/// `seller-o` sells `n` listings (longest titles) to `buyer-o`; the order ids.
async fn listing_orders(h: &mut Hostile<'_>, n: usize) -> Vec<String> {
    h.users(&["seller-o", "buyer-o"]).await;
    h.category("goods", 1).await;
    let title = longest_title("lamp");
    let ids = h.listings("seller-o", (0..n).map(|_| listing_body(&title, "goods", None, None)).collect()).await;
    h.buy_listings("buyer-o", &ids).await
}

#[tokio::test]
async fn buyer_and_seller_orders_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    let mut h = Hostile::on(&t);
    listing_orders(&mut h, MANY).await;
    let products = h.products("brand-o", "shelf", 25).await;
    h.catalog_orders("buyer-o", &products, MANY).await;
    h.index().await;
    let buyer = req("GET /buyers/{buyerId}/orders").path("buyerId", "buyer-o").by(As::User("buyer-o"));
    let seller = req("GET /sellers/{sellerId}/orders").path("sellerId", "seller-o").by(As::User("seller-o"));
    let routes = [("GET /buyers/{id}/orders", buyer), ("GET /sellers/{id}/orders", seller)];
    assert_pages_within(&t, &meter, routes.map(|(name, r)| Route::new(name, Function::Orders, r, MANY))).await;
}

#[tokio::test]
async fn admin_status_views_within_their_shard_bound() {
    let (t, meter) = TestTable::with_meter().await;
    let mut h = Hostile::on(&t);
    let placed = listing_orders(&mut h, 40).await;
    h.deliver("seller-o", &placed[..20]).await;
    let products = h.products("brand-o", "shelf", 25).await;
    let catalog = h.catalog_orders("buyer-o", &products, MANY).await;
    h.index().await;
    let largest = stored_size(&t, format!("ORDER#{}", catalog[0]), "#METADATA").await;
    assert!(largest <= ORDER_ITEM_BYTES, "an order of 25 lines is {largest} bytes");
    let one = usize::from(ORDER_SHARDS);
    let all = OrderStatus::ALL.len() * one;
    let routes = [
        ("GET /orders?status=pending (admin)", req("GET /orders").query("status", "pending"), one, 20 + MANY),
        ("GET /orders?status=delivered (admin)", req("GET /orders").query("status", "delivered"), one, 20),
        ("GET /orders (admin, all statuses)", req("GET /orders"), all, 40 + MANY),
    ];
    let routes = routes.map(|(name, r, partitions, holds)| {
        Route::new(name, Function::Orders, r.by(As::Admin), holds)
            .bounded(Bounded::FanOut(partitions, ORDER_ITEM_BYTES))
    });
    assert_pages_within(&t, &meter, routes).await;
}

#[tokio::test]
async fn reviews_within_their_byte_bound() {
    let (t, meter) = TestTable::with_meter().await;
    let mut h = Hostile::on(&t);
    let placed = listing_orders(&mut h, MANY).await;
    h.deliver("seller-o", &placed).await;
    h.reviews("buyer-o", &placed).await;
    h.index().await;
    let about = req("GET /users/{userId}/reviews").path("userId", "seller-o");
    let first = once(&t, &meter, Function::Reviews, about.clone().query("limit", 1)).await;
    let id = first.reply.items()[0]["reviewId"].as_str().unwrap().to_owned();
    let largest = stored_size(&t, "USER#seller-o".into(), &format!("REVIEW#{id}")).await;
    assert!(largest <= BODY_ITEM_BYTES, "a review of the longest body is {largest} bytes");
    let written = req("GET /users/{userId}/reviews/written").path("userId", "buyer-o").by(As::User("buyer-o"));
    let routes = [("GET /users/{id}/reviews", about), ("GET /users/{id}/reviews/written", written)];
    let routes = routes
        .map(|(name, r)| Route::new(name, Function::Reviews, r, MANY).bounded(Bounded::Bodies(BODY_ITEM_BYTES, 0)));
    assert_pages_within(&t, &meter, routes).await;
}

#[tokio::test]
async fn messages_within_their_byte_bound() {
    let (t, meter) = TestTable::with_meter().await;
    let mut h = Hostile::on(&t);
    let placed = listing_orders(&mut h, 1).await;
    h.messages(&placed[0], ["buyer-o", "seller-o"], MANY).await;
    let r = req("GET /orders/{orderId}/messages").path("orderId", &placed[0]).by(As::User("buyer-o"));
    let route = Route::new("GET /orders/{id}/messages", Function::Orders, r, MANY);
    assert_pages_within(&t, &meter, [route.bounded(Bounded::Bodies(BODY_ITEM_BYTES, 1))]).await;
}

#[tokio::test]
async fn product_lists_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    let h = Hostile::on(&t);
    h.products("brand-p", "cat-p", 120).await;
    let routes = [
        ("GET /brands/{id}/products", req("GET /brands/{brandId}/products").path("brandId", "brand-p")),
        (
            "GET /brands/{id}/products?categoryId=",
            req("GET /brands/{brandId}/products").path("brandId", "brand-p").query("categoryId", "cat-p"),
        ),
        ("GET /categories/{id}/products", req("GET /categories/{categoryId}/products").path("categoryId", "cat-p")),
        (
            "GET /categories/{id}/products?brandId=",
            req("GET /categories/{categoryId}/products").path("categoryId", "cat-p").query("brandId", "brand-p"),
        ),
    ];
    assert_pages_within(&t, &meter, routes.map(|(name, r)| Route::new(name, Function::Catalog, r, 120))).await;
}

#[tokio::test]
async fn brands_and_categories_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    Hostile::on(&t).groupings(120).await;
    let routes = [("GET /categories", req("GET /categories")), ("GET /brands", req("GET /brands"))];
    assert_pages_within(&t, &meter, routes.map(|(name, r)| Route::new(name, Function::Catalog, r, 120))).await;
}

/// One item each (a product of the longest texts, an order of 25 lines, a
/// category, a user), and an order's 25 lines as a page.
#[tokio::test]
async fn single_items_within_the_one_item_bound() {
    let (t, meter) = TestTable::with_meter().await;
    let mut h = Hostile::on(&t);
    h.users(&["buyer-o"]).await;
    let products = h.products("brand-s", "cat-s", 25).await;
    let order = h.catalog_orders("buyer-o", &products, 1).await.remove(0);
    h.index().await;
    api::cache::forget(&t.deps.store, &keyschema::keys::category(&"cat-s".parse().unwrap()).unwrap());
    let mut broken = Vec::new();
    for (name, f, r) in [
        ("GET /products/{id}", Function::Catalog, req("GET /products/{productId}").path("productId", &products[0])),
        ("GET /categories/{id}", Function::Catalog, req("GET /categories/{categoryId}").path("categoryId", "cat-s")),
        (
            "GET /orders/{id}",
            Function::Orders,
            req("GET /orders/{orderId}").path("orderId", &order).by(As::User("buyer-o")),
        ),
        ("GET /users/{id}", Function::Users, req("GET /users/{userId}").path("userId", "buyer-o")),
        ("GET /users/me", Function::Users, req("GET /users/me").by(As::User("buyer-o"))),
    ] {
        let page = once(&t, &meter, f, r).await;
        broken.extend(check(name, None, &[page], Bound::ONE, Fullness::Full));
    }
    let lines = req("GET /orders/{orderId}/items").path("orderId", &order).by(As::User("buyer-o"));
    let route = Route::new("GET /orders/{id}/items (25 lines)", Function::Orders, lines, 25);
    broken.extend(pages_within(&t, &meter, &route).await);
    assert_within(&broken);
}
