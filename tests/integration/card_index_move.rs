//! Issue 33 item 6, the second index move: GSI1-3 (every attribute) to
//! GSI6-8 (their keys, holding what lists answer), replayed on a local
//! table step by step as docs/operations.md ("The second move") runs it
//! with the template's `CardIndexMove` (`keyschema::table::card_move`):
//! 0. the table as before the move (GSI1-3, GSI5) with users, listings,
//!    products, orders, a review and favorites;
//! 1-3. GSI6, GSI7, GSI8 created, one an `UpdateTable`, while items are
//!    written; lists read GSI1-3 (`LIST_INDEX_READS=GSI1-3`);
//! 4. lists read GSI6-8;
//! 5-7. GSI1, GSI2, GSI3 deleted, one at a time.
//!
//! At every step each list answers from that step's indexes, every item
//! written before is still answered and the step's new ones are; where both
//! an old index and its card index are `ACTIVE`, a list answers the same
//! from either (what GSI6-8 hold is all a list answers).

use std::collections::{BTreeMap, BTreeSet};

use api::Deps;
use integration_tests::hostile::{listing_body, order_route, Hostile, ORDER_SHARDS};
use integration_tests::{catalog, listings, orders, req, reviews, users, As, Reply, Req, TestTable};
use keyschema::table::{card_move, Index};
use serde_json::Value;
use store::table::{change_index, index_status, IndexChange};
use store::IndexReads;

const SELLER: &str = "mv-seller";
const BUYER: &str = "mv-bob";
const FAN: &str = "mv-eve";

/// The lists GSI1-3 (or GSI6-8) serve, each a request and the function
/// serving it.
fn lists() -> Vec<(&'static str, Req)> {
    vec![
        ("a seller's listings", req("GET /sellers/{sellerId}/listings").path("sellerId", SELLER).by(As::User(SELLER))),
        ("a storefront", req("GET /sellers/{sellerId}/listings/active").path("sellerId", SELLER)),
        ("browse", req("GET /categories/{categoryId}/listings").path("categoryId", "moves")),
        ("by price", req("GET /categories/{categoryId}/listings").path("categoryId", "moves").query("sort", "price")),
        ("a brand's products", req("GET /brands/{brandId}/products").path("brandId", "mvbrand")),
        ("a category's products", req("GET /categories/{categoryId}/products").path("categoryId", "mvcat")),
        ("a user by email", req("GET /users").by(As::Admin).query("email", format!("{BUYER}@example.com").as_str())),
        ("a buyer's orders", req("GET /buyers/{buyerId}/orders").path("buyerId", BUYER).by(As::User(BUYER))),
        ("a seller's sales", req("GET /sellers/{sellerId}/orders").path("sellerId", SELLER).by(As::User(SELLER))),
        ("pending orders", req("GET /orders").by(As::Admin).query("status", "pending")),
        ("reviews written", req("GET /users/{userId}/reviews/written").path("userId", BUYER).by(As::User(BUYER))),
        ("favorites", req("GET /users/me/favorites").by(As::User(FAN))),
    ]
}

async fn send(deps: &Deps, r: Req) -> Reply {
    let route = r.event().route_key.unwrap_or_default();
    match route.split_whitespace().nth(1).unwrap_or_default() {
        p if p.starts_with("/brands") || p.ends_with("/products") => catalog(deps, r).await,
        p if p.contains("orders") && !p.contains("reviews") => orders(deps, ORDER_SHARDS, r).await,
        p if p.contains("reviews") => reviews(deps, r).await,
        p if p.starts_with("/users") => users(deps, r).await,
        _ => listings(deps, r).await,
    }
}

/// Every list's items (one page holds them all), as `deps` reads them.
async fn answers(deps: &Deps) -> BTreeMap<&'static str, Vec<Value>> {
    let mut out = BTreeMap::new();
    for (name, r) in lists() {
        let reply = send(deps, r.query("limit", 100)).await;
        assert_eq!(reply.status, 200, "{name}: {:?}", reply.body);
        assert!(reply.next_cursor().is_none(), "{name}: one page");
        out.insert(name, reply.items().clone());
    }
    out
}

/// The ids of a list's items, whatever kind they are.
fn ids(items: &[Value]) -> BTreeSet<String> {
    let id = |v: &Value| {
        ["orderId", "reviewId", "listingId", "productId", "userId"]
            .iter()
            .find_map(|f| v[*f].as_str())
            .map(str::to_owned)
    };
    items.iter().filter_map(id).collect()
}

/// A listing, a favorite of it and an order of another listing: what each
/// step writes; their ids.
async fn write_some(h: &mut Hostile<'_>, step: u8) -> BTreeSet<String> {
    let bodies = (0..2).map(|i| listing_body(&format!("Box {step} {i}"), "moves", None, None)).collect();
    let new = h.listings(SELLER, bodies).await;
    h.favorites(FAN, &new[..1]).await;
    let order = h.buy_listings(BUYER, &new[1..]).await;
    h.index().await;
    new.into_iter().chain(order).collect()
}

#[tokio::test]
async fn lists_move_from_gsi1_3_to_the_card_indexes_one_index_a_deploy() {
    let t = TestTable::with_gsis(&card_move::indexes_at(0)).await;
    let (client, table) = (t.deps.store.client().clone(), t.deps.store.table().to_owned());
    let reading = |reads| Deps { store: t.deps.store.clone().reading(reads), ..t.deps.clone() };
    let (retired, declared) = (reading(IndexReads::Retired), reading(IndexReads::Declared));
    let mut h = Hostile::on(&t);
    h.users(&[SELLER, BUYER, FAN]).await;
    h.category("moves", 2).await;
    let products = h.products("mvbrand", "mvcat", 3).await;
    let lines: Vec<Value> = products.iter().map(|p| serde_json::json!({ "productId": p, "qty": 1 })).collect();
    let r = req("POST /orders").by(As::User(BUYER)).header("Idempotency-Key", "mv-catalog");
    assert_eq!(order_route(&t, r.json(serde_json::json!({ "items": lines }))).await.status, 201);
    let bodies = (0..6).map(|i| listing_body(&format!("Crate {i}"), "moves", None, None)).collect();
    let before = h.listings(SELLER, bodies).await;
    let sold = h.buy_listings(BUYER, &before[..2]).await;
    h.deliver(SELLER, &sold[..1]).await;
    h.reviews(BUYER, &sold[..1]).await;
    h.favorites(FAN, &before[2..5]).await;
    h.index().await;

    let mut was = answers(&retired).await;
    for (name, items) in &was {
        assert!(!items.is_empty(), "{name}: the data answers something");
    }
    for step in 1..=card_move::LAST {
        let (now, then) = (card_move::indexes_at(step), card_move::indexes_at(step - 1));
        let created = now.iter().find(|i| !then.contains(i));
        let deleted = then.iter().find(|i| !now.contains(i));
        match (created, deleted) {
            (Some(i), None) => change_index(&client, &table, IndexChange::Create(*i)).await.unwrap(),
            (None, Some(i)) => change_index(&client, &table, IndexChange::Delete(*i)).await.unwrap(),
            (None, None) => {} // the reads move
            both => panic!("step {step} changes two indexes: {both:?}"),
        }
        // Items written while DynamoDB fills or drops an index.
        let new = write_some(&mut h, step).await;
        t.settle_indexes(&now).await;
        let deps = if card_move::reads_cards(step) { &declared } else { &retired };
        let got = answers(deps).await;
        for (name, items) in &got {
            let (before, after) = (ids(&was[name]), ids(items));
            assert!(before.is_subset(&after), "step {step}, {name}: lost {:?}", before.difference(&after));
        }
        let all: BTreeSet<String> = got.values().flat_map(|items| ids(items)).collect();
        assert!(new.is_subset(&all), "step {step}: written during it, not answered: {:?}", new.difference(&all));
        // Every old index and every card index: the same answers from either.
        if now.contains(&Index::Gsi1) && now.contains(&Index::Gsi8) {
            let other = answers(if card_move::reads_cards(step) { &retired } else { &declared }).await;
            assert_eq!(other, got, "step {step}: GSI1-3 and GSI6-8 answer alike");
        }
        was = got;
    }
    let left = index_status(&client, &table).await.unwrap();
    assert_eq!(left.len(), Index::GSIS.len(), "{left:?}");
    // A list of a product answers no stock (cards), as from GSI1-3 before.
    assert!(was["a brand's products"].iter().all(|p| p.get("stockLevel").is_none()));
}
