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
}

const fn case(
    pattern: &'static str,
    route: &'static str,
    requests: &'static [&'static str],
    rcu: f64,
    wcu: f64,
) -> Case {
    Case { pattern, route, requests, rcu, wcu }
}

const Q: &[&str] = &["Query"];
const G: &[&str] = &["GetItem"];
const SHARDS: usize = 10;
/// Near me: 13 cell queries, then one read of the listings returned.
const NEAR: &[&str] = &{
    let mut sent = ["Query"; 14];
    sent[13] = "BatchGetItem";
    sent
};

/// Every access pattern and write, with its budget.
const CASES: &[Case] = &[
    case("catalog AP1", "GET /brands", Q, 0.5, 0.0),
    case("catalog AP2", "GET /categories", Q, 0.5, 0.0),
    case("catalog AP3", "GET /products/{productId}", Q, 0.5, 0.0),
    case("catalog AP4-5", "POST /products/{productId}/stock", &["TransactWriteItems", "Query"], 1.0, 12.0),
    case("catalog AP6", "GET /brands/{brandId}/products", Q, 0.5, 0.0),
    case("catalog AP7", "GET /brands/{brandId}/products?categoryId=", Q, 0.5, 0.0),
    case("catalog AP8", "GET /categories/{categoryId}/products", Q, 0.5, 0.0),
    case("catalog AP9", "GET /categories/{categoryId}/products?brandId=", Q, 0.5, 0.0),
    case("create product", "POST /products", &["GetItem", "GetItem", "TransactWriteItems"], 1.0, 12.0),
    case("marketplace AP1, e-commerce AP6", "GET /users/{userId}", G, 0.5, 0.0),
    case("marketplace AP2", "GET /users?email=", Q, 0.5, 0.0),
    case("sign-up", "POST /users", &["TransactWriteItems"], 0.0, 12.0),
    case("marketplace AP3", "GET /listings/{listingId}", Q, 0.5, 0.0),
    case("marketplace AP4", "GET /sellers/{sellerId}/listings", Q, 0.5, 0.0),
    case("marketplace AP5", "GET /sellers/{sellerId}/listings/active", Q, 0.5, 0.0),
    case("marketplace AP6", "GET /categories/{categoryId}/listings", &["GetItem", "Query"], 1.0, 0.0),
    case(
        "marketplace AP6, 4 shards",
        "GET /categories/{categoryId}/listings",
        &["GetItem", "Query", "Query", "Query", "Query"],
        2.5,
        0.0,
    ),
    case("beyond AP2", "GET /categories/{categoryId}/listings?sort=price", &["GetItem", "Query"], 1.0, 0.0),
    // The cells within 5 km of Paris (a query each: 13 of 4-character
    // cells, the mug in one), then the mug from the table (DynamoDB Local
    // reports nothing for an empty query or a BatchGetItem).
    case("beyond AP4", "GET /listings/near?lat=&lon=&radiusKm=", NEAR, 1.0, 0.0),
    // The heads of both words' lists, then the mug from the table.
    case("beyond AP5", "GET /search/listings?q=", &["Query", "Query", "BatchGetItem"], 1.5, 0.0),
    // The category (remembered five minutes after) and its rating item.
    case("category rating", "GET /categories/{categoryId}", &["GetItem", "GetItem"], 1.0, 0.0),
    case("create listing", "POST /listings", &["GetItem", "GetItem", "TransactWriteItems"], 1.0, 8.0),
    // 4: the near index holds no price (its projection), so no copy there.
    case("update listing", "PATCH /listings/{listingId}", &["UpdateItem", "GetItem"], 1.0, 4.0),
    case("beyond AP1", "GET /users/me/favorites", Q, 0.5, 0.0),
    case("add favorite", "PUT /users/me/favorites/{listingId}", &["BatchGetItem", "PutItem"], 1.0, 2.0),
    case("marketplace AP7, e-commerce AP1", "GET /orders/{orderId}", G, 0.5, 0.0),
    case("marketplace AP8, e-commerce AP2", "GET /buyers/{buyerId}/orders", Q, 0.5, 0.0),
    case("marketplace AP9", "GET /sellers/{sellerId}/orders", Q, 0.5, 0.0),
    case("e-commerce AP4", "GET /orders/{orderId}/items", Q, 0.5, 0.0),
    case("e-commerce AP5", "GET /orders/{orderId}/items/{itemId}", G, 0.5, 0.0),
    case("e-commerce AP3", "GET /orders?status=", &["Query"; SHARDS], 5.0, 0.0),
    case("e-commerce AP7", "GET /orders", &["Query"; SHARDS * 5 + 2], 26.0, 0.0),
    case("e-commerce AP8", "GET /orders?status=&from=&to=", &["Query"; SHARDS], 5.0, 0.0),
    case("place order (listing)", "POST /orders", &["GetItem", "BatchGetItem", "TransactWriteItems"], 2.0, 44.0),
    case(
        "place order (catalog)",
        "POST /orders {items}",
        &["GetItem", "BatchGetItem", "TransactWriteItems"],
        2.5,
        16.0,
    ),
    case("cancel order", "PATCH /orders/{orderId}", &["GetItem", "TransactWriteItems"], 0.5, 32.0),
    case("beyond AP3", "GET /orders/{orderId}/messages", Q, 0.5, 0.0),
    case("send message", "POST /orders/{orderId}/messages", &["GetItem", "PutItem"], 0.5, 1.0),
    case("marketplace AP10", "GET /users/{userId}/reviews", Q, 0.5, 0.0),
    case("marketplace AP11", "GET /users/{userId}/reviews/written", Q, 0.5, 0.0),
    case("write review", "POST /orders/{orderId}/reviews", &["GetItem", "TransactWriteItems"], 0.5, 28.0),
];

/// The request a pattern sends on the demo data, after any setup it needs.
async fn request(t: &TestTable, pattern: &str) -> Req {
    let bob = As::User("bob");
    match pattern {
        "catalog AP1" => req("GET /brands"),
        "catalog AP2" => req("GET /categories"),
        "catalog AP3" => req("GET /products/{productId}").path("productId", PRODUCT_IDS[0]),
        "catalog AP4-5" => req("POST /products/{productId}/stock")
            .path("productId", PRODUCT_IDS[0])
            .by(As::Admin)
            .json(json!({ "delta": -1 })),
        "catalog AP6" => req("GET /brands/{brandId}/products").path("brandId", "acme"),
        "catalog AP7" => req("GET /brands/{brandId}/products").path("brandId", "acme").query("categoryId", "pottery"),
        "catalog AP8" => req("GET /categories/{categoryId}/products").path("categoryId", "pottery"),
        "catalog AP9" => {
            req("GET /categories/{categoryId}/products").path("categoryId", "pottery").query("brandId", "acme")
        }
        "create product" => req("POST /products").by(As::Admin).json(
            json!({ "name": "Bowl", "brandId": "acme", "categoryId": "pottery", "price": 42.5, "stockLevel": 10 }),
        ),
        "marketplace AP1, e-commerce AP6" => req("GET /users/{userId}").path("userId", "alice"),
        "marketplace AP2" => req("GET /users").by(As::Admin).query("email", "alice@example.com"),
        "sign-up" => {
            req("POST /users").by(As::User("dave")).json(json!({ "name": "Dave", "email": "dave@example.com" }))
        }
        "marketplace AP3" => req("GET /listings/{listingId}").path("listingId", LISTING_IDS[0]),
        "marketplace AP4" => req("GET /sellers/{sellerId}/listings").path("sellerId", "alice").by(As::User("alice")),
        "marketplace AP5" => req("GET /sellers/{sellerId}/listings/active").path("sellerId", "alice"),
        "marketplace AP6" => req("GET /categories/{categoryId}/listings").path("categoryId", "pottery"),
        "marketplace AP6, 4 shards" => req("GET /categories/{categoryId}/listings").path("categoryId", "books"),
        "beyond AP2" => req("GET /categories/{categoryId}/listings")
            .path("categoryId", "pottery")
            .query("sort", "price")
            .query("minPrice", 10)
            .query("maxPrice", 100),
        "beyond AP4" => req("GET /listings/near").query("lat", 48.8566).query("lon", 2.3522).query("radiusKm", 5),
        "beyond AP5" => req("GET /search/listings").query("q", "blue mug"),
        "category rating" => req("GET /categories/{categoryId}").path("categoryId", "pottery"),
        "create listing" => req("POST /listings")
            .by(As::User("alice"))
            .json(json!({ "title": "Jug", "price": 12, "categoryId": "books" })),
        "update listing" => req("PATCH /listings/{listingId}")
            .path("listingId", LISTING_IDS[0])
            .by(As::User("alice"))
            .json(json!({ "price": 30 })),
        "beyond AP1" => {
            send(t, favorite(LISTING_IDS[1])).await;
            req("GET /users/me/favorites").by(bob)
        }
        "add favorite" => favorite(LISTING_IDS[0]),
        "marketplace AP7, e-commerce AP1" => req("GET /orders/{orderId}").path("orderId", ORDER_ID).by(bob),
        "marketplace AP8, e-commerce AP2" => req("GET /buyers/{buyerId}/orders").path("buyerId", "bob").by(bob),
        "marketplace AP9" => req("GET /sellers/{sellerId}/orders").path("sellerId", "alice").by(As::User("alice")),
        "e-commerce AP4" => req("GET /orders/{orderId}/items").path("orderId", ORDER_ID).by(bob),
        "e-commerce AP5" => {
            req("GET /orders/{orderId}/items/{itemId}").path("orderId", ORDER_ID).path("itemId", LISTING_IDS[2]).by(bob)
        }
        "e-commerce AP3" => req("GET /orders").by(As::Admin).query("status", "confirmed"),
        "e-commerce AP7" => req("GET /orders").by(As::Admin),
        "e-commerce AP8" => req("GET /orders")
            .by(As::Admin)
            .query("status", "confirmed")
            .query("from", "2020-01-01")
            .query("to", "2030-01-01"),
        "place order (listing)" => req("POST /orders")
            .by(bob)
            .header("Idempotency-Key", "capacity-listing")
            .json(json!({ "listingId": LISTING_IDS[1] })),
        "place order (catalog)" => req("POST /orders").by(bob).header("Idempotency-Key", "capacity-catalog").json(
            json!({ "items": [{ "productId": PRODUCT_IDS[0], "qty": 1 }, { "productId": PRODUCT_IDS[1], "qty": 2 }] }),
        ),
        "cancel order" => {
            req("PATCH /orders/{orderId}").path("orderId", ORDER_ID).by(bob).json(json!({ "status": "cancelled" }))
        }
        "beyond AP3" => req("GET /orders/{orderId}/messages").path("orderId", DELIVERED_ORDER_ID).by(bob),
        "send message" => req("POST /orders/{orderId}/messages")
            .path("orderId", ORDER_ID)
            .by(bob)
            .json(json!({ "body": "Ships Monday?" })),
        "marketplace AP10" => req("GET /users/{userId}/reviews").path("userId", "erin"),
        "marketplace AP11" => req("GET /users/{userId}/reviews/written").path("userId", "bob").by(bob),
        "write review" => req("POST /orders/{orderId}/reviews")
            .path("orderId", DELIVERED_ORDER_ID)
            .by(As::User("erin"))
            .json(json!({ "rating": 5, "body": "Prompt payment." })),
        other => panic!("no request for {other}"),
    }
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

/// Runs one pattern on a fresh demo table: its status, requests and capacity.
async fn measure(pattern: &str) -> telemetry::Measured {
    let t = TestTable::with_demo_data().await;
    let r = request(&t, pattern).await;
    let (status, measured) = send(&t, r).await;
    assert!((200..300).contains(&status), "{pattern}: status {status}");
    measured
}

fn case_of(pattern: &str) -> &'static Case {
    CASES.iter().find(|c| c.pattern == pattern).unwrap_or_else(|| panic!("no budget for {pattern}"))
}

/// Fails when the pattern's requests differ from its design or its
/// capacity passes its budget.
async fn within_budget(pattern: &str) {
    let case = case_of(pattern);
    let m = measure(pattern).await;
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

macro_rules! budget_tests {
    ($($name:ident => $pattern:literal,)+) => {
        $(
            #[tokio::test]
            async fn $name() {
                within_budget($pattern).await;
            }
        )+

        /// Every case has its test.
        const TESTED: &[&str] = &[$($pattern),+];
    };
}

budget_tests! {
    catalog_ap1 => "catalog AP1",
    catalog_ap2 => "catalog AP2",
    catalog_ap3 => "catalog AP3",
    catalog_ap4_5 => "catalog AP4-5",
    catalog_ap6 => "catalog AP6",
    catalog_ap7 => "catalog AP7",
    catalog_ap8 => "catalog AP8",
    catalog_ap9 => "catalog AP9",
    create_product => "create product",
    marketplace_ap1 => "marketplace AP1, e-commerce AP6",
    marketplace_ap2 => "marketplace AP2",
    sign_up => "sign-up",
    marketplace_ap3 => "marketplace AP3",
    marketplace_ap4 => "marketplace AP4",
    marketplace_ap5 => "marketplace AP5",
    marketplace_ap6 => "marketplace AP6",
    marketplace_ap6_sharded => "marketplace AP6, 4 shards",
    beyond_ap2 => "beyond AP2",
    beyond_ap4 => "beyond AP4",
    beyond_ap5 => "beyond AP5",
    category_rating => "category rating",
    create_listing => "create listing",
    update_listing => "update listing",
    beyond_ap1 => "beyond AP1",
    add_favorite => "add favorite",
    marketplace_ap7 => "marketplace AP7, e-commerce AP1",
    marketplace_ap8 => "marketplace AP8, e-commerce AP2",
    marketplace_ap9 => "marketplace AP9",
    ecommerce_ap4 => "e-commerce AP4",
    ecommerce_ap5 => "e-commerce AP5",
    ecommerce_ap3 => "e-commerce AP3",
    ecommerce_ap7 => "e-commerce AP7",
    ecommerce_ap8 => "e-commerce AP8",
    place_listing_order => "place order (listing)",
    place_catalog_order => "place order (catalog)",
    cancel_order => "cancel order",
    beyond_ap3 => "beyond AP3",
    send_message => "send message",
    marketplace_ap10 => "marketplace AP10",
    marketplace_ap11 => "marketplace AP11",
    write_review => "write review",
}

#[test]
fn every_case_has_a_test() {
    let cases: Vec<&str> = CASES.iter().map(|c| c.pattern).collect();
    assert_eq!(cases, TESTED);
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
        rows.push((case, measure(case.pattern).await));
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
