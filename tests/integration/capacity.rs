//! Capacity per access pattern: each pattern runs once on the demo data
//! through its real handler, and its test fails when it sends other
//! requests than its design says or consumes more read or write capacity
//! than its budget (DynamoDB Local reports consumed capacity like DynamoDB:
//! 0.5 RCU per 4 KB eventually consistent read, 1 per strongly consistent,
//! 1 WCU per KB written, twice that in a transaction).
//!
//! The capacity table of docs/capacity.md is rendered from [`CASES`] and the figures
//! measured here; `capacity_table_is_current` fails when it is stale
//! (`UPDATE_DOCS=1` rewrites it).

use integration_tests::{req, As, Req, TestTable};
use local_stack::demo::{DELIVERED_ORDER_ID, LISTING_IDS, ORDER_ID, PRODUCT_IDS};
use serde_json::json;

/// One access pattern's budget.
struct Case {
    /// The pattern's name in docs/key-schema.md (or the write it is).
    pattern: &'static str,
    /// Its route key.
    route: &'static str,
    /// The requests it sends, in order.
    requests: &'static [&'static str],
    /// The most read capacity units it may consume on the demo data.
    rcu: f64,
    /// The most write capacity units it may consume on the demo data.
    wcu: f64,
    /// A request sent first, as set-up (not measured).
    before: Option<fn() -> Req>,
    /// The request it sends on the demo data.
    request: fn() -> Req,
}

const fn case(
    pattern: &'static str,
    route: &'static str,
    requests: &'static [&'static str],
    rcu: f64,
    wcu: f64,
    before: Option<fn() -> Req>,
    request: fn() -> Req,
) -> Case {
    Case { pattern, route, requests, rcu, wcu, before, request }
}

const Q: &[&str] = &["Query"];
const G: &[&str] = &["GetItem"];
const SHARDS: usize = 10;
/// Near me: 12 cell queries of GSI5 (the cards: nothing more to read).
const NEAR: &[&str] = &["Query"; 3];

/// Every access pattern and write, with its budget and the request it
/// sends on the demo data: one line each, from which `CASES` and a test per
/// case are made.
macro_rules! cases {
    ($($name:ident => $case:expr,)+) => {
        /// Every case, in the docs' order.
        const CASES: &[Case] = &[$($case),+];

        $(
            #[tokio::test]
            async fn $name() {
                within_budget(&$case).await;
            }
        )+
    };
}

cases! {
    catalog_ap1 => case("catalog AP1", "GET /brands", Q, 0.5, 0.0, None, || req("GET /brands")),
    catalog_ap2 => case("catalog AP2", "GET /categories", Q, 0.5, 0.0, None, || req("GET /categories")),
    catalog_ap3 => case("catalog AP3", "GET /products/{productId}", Q, 0.5, 0.0, None,
        || req("GET /products/{productId}").path("productId", PRODUCT_IDS[0])),
    catalog_ap4_5 => case(
        "catalog AP4-5",
        "POST /products/{productId}/stock",
        &["TransactWriteItems", "Query"],
        1.0,
        12.0,
        None,
        || req("POST /products/{productId}/stock")
            .path("productId", PRODUCT_IDS[0])
            .by(As::Admin)
            .json(json!({ "delta": -1 })),
    ),
    catalog_ap6 => case("catalog AP6", "GET /brands/{brandId}/products", Q, 0.5, 0.0, None,
        || req("GET /brands/{brandId}/products").path("brandId", "acme")),
    catalog_ap7 => case("catalog AP7", "GET /brands/{brandId}/products?categoryId=", Q, 0.5, 0.0, None,
        || req("GET /brands/{brandId}/products").path("brandId", "acme").query("categoryId", "pottery")),
    catalog_ap8 => case("catalog AP8", "GET /categories/{categoryId}/products", Q, 0.5, 0.0, None,
        || req("GET /categories/{categoryId}/products").path("categoryId", "pottery")),
    catalog_ap9 => case("catalog AP9", "GET /categories/{categoryId}/products?brandId=", Q, 0.5, 0.0, None,
        || req("GET /categories/{categoryId}/products").path("categoryId", "pottery").query("brandId", "acme")),
    create_product => case(
        "create product",
        "POST /products",
        &["GetItem", "GetItem", "TransactWriteItems"],
        1.0,
        12.0,
        None,
        || req("POST /products")
            .by(As::Admin)
            .json(json!({
                "name": "Bowl", "brandId": "acme", "categoryId": "pottery", "price": 42.5, "stockLevel": 10
            })),
    ),
    marketplace_ap1 => case("marketplace AP1, e-commerce AP6", "GET /users/{userId}", G, 0.5, 0.0, None,
        || req("GET /users/{userId}").path("userId", "alice")),
    marketplace_ap2 => case("marketplace AP2", "GET /users?email=", Q, 0.5, 0.0, None,
        || req("GET /users").by(As::Admin).query("email", "alice@example.com")),
    sign_up => case("sign-up", "POST /users", &["TransactWriteItems"], 0.0, 12.0, None,
        || req("POST /users").by(As::User("dave")).json(json!({ "name": "Dave", "email": "dave@example.com" }))),
    marketplace_ap3 => case("marketplace AP3", "GET /listings/{listingId}", Q, 0.5, 0.0, None,
        || req("GET /listings/{listingId}").path("listingId", LISTING_IDS[0])),
    marketplace_ap4 => case("marketplace AP4", "GET /sellers/{sellerId}/listings", Q, 0.5, 0.0, None,
        || req("GET /sellers/{sellerId}/listings").path("sellerId", "alice").by(As::User("alice"))),
    marketplace_ap5 => case("marketplace AP5", "GET /sellers/{sellerId}/listings/active", Q, 0.5, 0.0, None,
        || req("GET /sellers/{sellerId}/listings/active").path("sellerId", "alice")),
    marketplace_ap6 => case(
        "marketplace AP6",
        "GET /categories/{categoryId}/listings",
        &["GetItem", "Query"],
        1.0,
        0.0,
        None,
        || req("GET /categories/{categoryId}/listings").path("categoryId", "pottery"),
    ),
    marketplace_ap6_sharded => case(
        "marketplace AP6, 4 shards",
        "GET /categories/{categoryId}/listings",
        &["GetItem", "Query", "Query", "Query", "Query"],
        2.5,
        0.0,
        None,
        || req("GET /categories/{categoryId}/listings").path("categoryId", "books"),
    ),
    beyond_ap2 => case(
        "beyond AP2",
        "GET /categories/{categoryId}/listings?sort=price",
        &["GetItem", "Query"],
        1.0,
        0.0,
        None,
        || req("GET /categories/{categoryId}/listings")
            .path("categoryId", "pottery")
            .query("sort", "price")
            .query("minPrice", 10)
            .query("maxPrice", 100),
    ),
    // Which partitions of Paris's two dense cells hold listings (a query
    // each: the mug's), then the one of them the circle meets that holds
    // one, the mug's (no other cell within 5 km is outside the dense ones;
    // DynamoDB Local reports nothing for an empty query).
    beyond_ap4 => case("beyond AP4", "GET /listings/near?lat=&lon=&radiusKm=", NEAR, 1.0, 0.0, None,
        || req("GET /listings/near").query("lat", 48.8566).query("lon", 2.3522).query("radiusKm", 5)),
    // The heads of both words' lists, then the mug from the table.
    beyond_ap5 => case("beyond AP5", "GET /search/listings?q=", &["Query", "Query", "BatchGetItem"], 1.5, 0.0, None,
        || req("GET /search/listings").query("q", "blue mug")),
    // The category (remembered five minutes after) and its rating item.
    category_rating => case("category rating", "GET /categories/{categoryId}", &["GetItem", "GetItem"], 1.0, 0.0, None,
        || req("GET /categories/{categoryId}").path("categoryId", "pottery")),
    create_listing => case(
        "create listing",
        "POST /listings",
        &["GetItem", "GetItem", "TransactWriteItems"],
        1.0,
        8.0,
        None,
        || req("POST /listings")
            .by(As::User("alice"))
            .json(json!({ "title": "Jug", "price": 12, "categoryId": "books" })),
    ),
    // 5: the table and GSI1-3, and GSI5 (the card has the price).
    update_listing => case("update listing", "PATCH /listings/{listingId}", &["UpdateItem", "GetItem"], 1.0, 5.0, None,
        || req("PATCH /listings/{listingId}")
            .path("listingId", LISTING_IDS[0])
            .by(As::User("alice"))
            .json(json!({ "price": 30 }))),
    beyond_ap1 => case("beyond AP1", "GET /users/me/favorites", Q, 0.5, 0.0, Some(|| favorite(LISTING_IDS[1])),
        || req("GET /users/me/favorites").by(As::User("bob"))),
    add_favorite => case(
        "add favorite",
        "PUT /users/me/favorites/{listingId}",
        &["BatchGetItem", "PutItem"],
        1.0,
        2.0,
        None,
        || favorite(LISTING_IDS[0]),
    ),
    marketplace_ap7 => case("marketplace AP7, e-commerce AP1", "GET /orders/{orderId}", G, 0.5, 0.0, None,
        || req("GET /orders/{orderId}").path("orderId", ORDER_ID).by(As::User("bob"))),
    marketplace_ap8 => case("marketplace AP8, e-commerce AP2", "GET /buyers/{buyerId}/orders", Q, 0.5, 0.0, None,
        || req("GET /buyers/{buyerId}/orders").path("buyerId", "bob").by(As::User("bob"))),
    marketplace_ap9 => case("marketplace AP9", "GET /sellers/{sellerId}/orders", Q, 0.5, 0.0, None,
        || req("GET /sellers/{sellerId}/orders").path("sellerId", "alice").by(As::User("alice"))),
    ecommerce_ap4 => case("e-commerce AP4", "GET /orders/{orderId}/items", Q, 0.5, 0.0, None,
        || req("GET /orders/{orderId}/items").path("orderId", ORDER_ID).by(As::User("bob"))),
    ecommerce_ap5 => case("e-commerce AP5", "GET /orders/{orderId}/items/{itemId}", G, 0.5, 0.0, None,
        || req("GET /orders/{orderId}/items/{itemId}")
            .path("orderId", ORDER_ID)
            .path("itemId", LISTING_IDS[2])
            .by(As::User("bob"))),
    ecommerce_ap3 => case("e-commerce AP3", "GET /orders?status=", &["Query"; SHARDS], 5.0, 0.0, None,
        || req("GET /orders").by(As::Admin).query("status", "confirmed")),
    ecommerce_ap7 => case("e-commerce AP7", "GET /orders", &["Query"; SHARDS * 5 + 2], 26.0, 0.0, None,
        || req("GET /orders").by(As::Admin)),
    ecommerce_ap8 => case("e-commerce AP8", "GET /orders?status=&from=&to=", &["Query"; SHARDS], 5.0, 0.0, None,
        || req("GET /orders")
            .by(As::Admin)
            .query("status", "confirmed")
            .query("from", "2020-01-01")
            .query("to", "2030-01-01")),
    place_listing_order => case(
        "place order (listing)",
        "POST /orders",
        &["GetItem", "BatchGetItem", "TransactWriteItems"],
        2.0,
        // The sold listing leaves GSI5 (48 measured while GSI4 also held it).
        44.0,
        None,
        || req("POST /orders")
            .by(As::User("bob"))
            .header("Idempotency-Key", "capacity-listing")
            .json(json!({ "listingId": LISTING_IDS[1] })),
    ),
    place_catalog_order => case(
        "place order (catalog)",
        "POST /orders {items}",
        &["GetItem", "BatchGetItem", "TransactWriteItems"],
        2.5,
        16.0,
        None,
        || req("POST /orders")
            .by(As::User("bob"))
            .header("Idempotency-Key", "capacity-catalog")
            .json(json!({
                "items": [{ "productId": PRODUCT_IDS[0], "qty": 1 }, { "productId": PRODUCT_IDS[1], "qty": 2 }]
            })),
    ),
    cancel_order => case("cancel order", "PATCH /orders/{orderId}", &["GetItem", "TransactWriteItems"], 0.5, 32.0, None,
        || req("PATCH /orders/{orderId}")
            .path("orderId", ORDER_ID)
            .by(As::User("bob"))
            .json(json!({ "status": "cancelled" }))),
    beyond_ap3 => case("beyond AP3", "GET /orders/{orderId}/messages", Q, 0.5, 0.0, None,
        || req("GET /orders/{orderId}/messages").path("orderId", DELIVERED_ORDER_ID).by(As::User("bob"))),
    send_message => case("send message", "POST /orders/{orderId}/messages", &["GetItem", "PutItem"], 0.5, 1.0, None,
        || req("POST /orders/{orderId}/messages")
            .path("orderId", ORDER_ID)
            .by(As::User("bob"))
            .json(json!({ "body": "Ships Monday?" }))),
    marketplace_ap10 => case("marketplace AP10", "GET /users/{userId}/reviews", Q, 0.5, 0.0, None,
        || req("GET /users/{userId}/reviews").path("userId", "erin")),
    marketplace_ap11 => case("marketplace AP11", "GET /users/{userId}/reviews/written", Q, 0.5, 0.0, None,
        || req("GET /users/{userId}/reviews/written").path("userId", "bob").by(As::User("bob"))),
    write_review => case(
        "write review",
        "POST /orders/{orderId}/reviews",
        &["GetItem", "GetItem", "TransactWriteItems"],
        1.0,
        24.0,
        None,
        || req("POST /orders/{orderId}/reviews")
            .path("orderId", DELIVERED_ORDER_ID)
            .by(As::User("erin"))
            .json(json!({ "rating": 5, "body": "Prompt payment." })),
    ),
}

fn favorite(listing: &str) -> Req {
    req("PUT /users/me/favorites/{listingId}").path("listingId", listing).by(As::User("bob"))
}

/// Sends a request to the function serving its route, as the local stack does.
async fn send(t: &TestTable, r: Req) -> (u16, telemetry::Measured) {
    let event = r.event();
    let route = event.route_key.clone().unwrap_or_default();
    let function = local_stack::functions::http_functions(&t.deps)
        .into_iter()
        .find(|f| f.routes.contains(&route.as_str()))
        .unwrap_or_else(|| panic!("no function serves {route}"));
    let (response, measured) = telemetry::measure(function.invoke(event, "capacity-test")).await;
    (u16::try_from(response.status_code).unwrap_or(0), measured)
}

/// Runs one case on a fresh demo table: its status, requests and capacity.
async fn measure(case: &Case) -> telemetry::Measured {
    let t = TestTable::with_demo_data().await;
    if let Some(before) = case.before {
        send(&t, before()).await;
    }
    let (status, measured) = send(&t, (case.request)()).await;
    assert!((200..300).contains(&status), "{}: status {status}", case.pattern);
    measured
}

/// Fails when the case's requests differ from its design or its capacity
/// passes its budget.
async fn within_budget(case: &Case) {
    let pattern = case.pattern;
    let m = measure(case).await;
    let ops: Vec<&str> = m.ops.iter().map(|o| o.op.as_str()).collect();
    assert_eq!(ops, case.requests, "{pattern}: requests");
    assert!(m.totals.rcu <= case.rcu, "{pattern}: {} RCU, budget {}", m.totals.rcu, case.rcu);
    assert!(m.totals.wcu <= case.wcu, "{pattern}: {} WCU, budget {}", m.totals.wcu, case.wcu);
    println!(
        "{pattern}: {} requests, {} RCU, {} WCU ({})",
        m.totals.requests,
        m.totals.rcu,
        m.totals.wcu,
        m.ops_summary()
    );
}

/// The registry (`keyschema::patterns::PATTERNS`) decides what is measured:
/// every pattern it declares has a budget here, on its route.
#[test]
fn every_registered_pattern_has_a_budget_on_its_route() {
    let path = |route: &str| route.split('?').next().unwrap_or_default().to_owned();
    for p in keyschema::patterns::PATTERNS {
        let case = CASES
            .iter()
            .find(|c| c.pattern == p.id || c.pattern.split(", ").any(|id| id == p.id))
            .unwrap_or_else(|| panic!("{}: registered, with no budget in CASES", p.id));
        assert_eq!(path(case.route), path(p.route), "{}: the case's route is not the registry's", p.id);
    }
}

/// And the other way: every case that names a pattern (`... AP<n>`, or
/// a variant of one after a comma) names a registered one, and no case is
/// there twice; the others are writes the registry does not list.
#[test]
fn every_case_naming_a_pattern_is_registered_and_none_twice() {
    let registered: std::collections::BTreeSet<&str> =
        keyschema::patterns::PATTERNS.iter().flat_map(|p| p.id.split(", ")).collect();
    let mut seen = std::collections::BTreeSet::new();
    for case in CASES {
        assert!(seen.insert(case.pattern), "{}: two cases", case.pattern);
        for id in case.pattern.split(", ").filter(|id| id.contains(" AP")) {
            assert!(registered.contains(id), "{}: names {id}, which the registry does not have", case.pattern);
        }
    }
}

const START: &str = "<!-- capacity table: generated by tests/integration/capacity.rs -->";
const END: &str = "<!-- end of capacity table -->";

/// The docs/capacity.md table: each pattern's requests, measured capacity and budget.
fn render(rows: &[(&Case, telemetry::Measured)]) -> String {
    let mut out = String::from(
        "| access pattern | route | requests | RCU | WCU | budget RCU / WCU |\n|---|---|---|---|---|---|\n",
    );
    for (case, m) in rows {
        let mut requests: Vec<(String, usize)> = Vec::new();
        for op in &m.ops {
            match requests.last_mut() {
                Some((name, n)) if *name == op.op => *n += 1,
                _ => requests.push((op.op.clone(), 1)),
            }
        }
        let requests: Vec<String> =
            requests.into_iter().map(|(name, n)| if n > 1 { format!("{name} x{n}") } else { name }).collect();
        out.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {} / {} |\n",
            case.pattern,
            case.route,
            requests.join(" + "),
            m.totals.rcu,
            m.totals.wcu,
            case.rcu,
            case.wcu
        ));
    }
    out
}

#[tokio::test]
async fn capacity_table_is_current() {
    let mut rows = Vec::new();
    for case in CASES {
        rows.push((case, measure(case).await));
    }
    let table = render(&rows);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/capacity.md");
    let readme = std::fs::read_to_string(&path).expect("docs/capacity.md");
    let (Some(start), Some(end)) = (readme.find(START), readme.find(END)) else {
        panic!("docs/capacity.md has no capacity table markers");
    };
    let current = &readme[start + START.len()..end];
    let wanted = format!("\n{table}");
    if current != wanted {
        if std::env::var("UPDATE_DOCS").is_ok_and(|v| v == "1") {
            let updated = format!("{}{START}{wanted}{}", &readme[..start], &readme[end..]);
            std::fs::write(&path, updated).expect("docs/capacity.md written");
        } else {
            panic!("docs/capacity.md: the capacity table is stale; run with UPDATE_DOCS=1:\n{table}");
        }
    }
}
