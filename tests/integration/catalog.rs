//! Catalog access patterns 1-9 against DynamoDB Local: each checks the
//! answer and that it took exactly one DynamoDB request (never a Scan).

use integration_tests::{catalog, req, stock_level, As, Reply, TestTable};
use serde_json::{json, Value};

const ONE_QUERY: &[&str] = &["Query"];

async fn create(t: &TestTable, route: &str, body: Value) -> Reply {
    let r = catalog(&t.deps, req(route).by(As::Admin).json(body)).await;
    assert_eq!(r.status, 201, "{route}: {:?}", r.body);
    r
}

/// Two brands x two categories, two products each, plus an unrelated
/// item in a category partition of GSI7 (an active listing's browse keys).
async fn catalog_fixture(t: &TestTable) -> Vec<(String, String, String)> {
    for id in ["acme", "globex"] {
        create(t, "POST /brands", json!({ "name": id.to_uppercase(), "id": id })).await;
    }
    for id in ["pottery", "books"] {
        create(t, "POST /categories", json!({ "name": id, "id": id })).await;
    }
    let mut products = Vec::new();
    for brand in ["acme", "globex"] {
        for category in ["pottery", "books"] {
            for n in 0..2 {
                let name = format!("{brand}-{category}-{n}");
                let body =
                    json!({ "name": name, "brandId": brand, "categoryId": category, "price": 12.5, "stockLevel": 3 });
                let r = create(t, "POST /products", body).await;
                products.push((
                    r.body["productId"].as_str().unwrap().to_owned(),
                    brand.to_owned(),
                    category.to_owned(),
                ));
            }
        }
    }
    // An active listing in the pottery browse partition: product queries must not return it.
    let client = t.deps.store.client();
    let s = |v: &str| store::aws_sdk_dynamodb::types::AttributeValue::S(v.to_owned());
    client
        .put_item()
        .table_name(t.deps.store.table())
        .item("pk", s("LISTING#01JF8Z5Q00000000000000000L"))
        .item("sk", s("#METADATA"))
        .item("gsi2pk", s("CATEGORY#pottery"))
        .item("gsi2sk", s("LISTING#01JF8Z5Q00000000000000000L"))
        .item("entityType", s("Listing"))
        .send()
        .await
        .unwrap();
    t.requests();
    products
}

fn ids_where(products: &[(String, String, String)], pred: impl Fn(&str, &str) -> bool) -> Vec<String> {
    let mut ids: Vec<String> = products.iter().filter(|(_, b, c)| pred(b, c)).map(|(id, ..)| id.clone()).collect();
    ids.sort();
    ids
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[tokio::test]
async fn ap1_ap2_list_brands_and_categories_in_one_query_each() {
    let t = TestTable::new().await;
    for id in ["zeta", "alpha", "mid"] {
        create(&t, "POST /brands", json!({ "name": id, "id": id })).await;
        create(&t, "POST /categories", json!({ "name": id, "id": id })).await;
    }
    let generated = create(&t, "POST /brands", json!({ "name": "No id given" })).await;
    let generated_id = generated.body["brandId"].as_str().unwrap().to_owned();
    assert_eq!(generated_id.len(), 26, "a generated slug");
    t.requests();

    let brands = catalog(&t.deps, req("GET /brands")).await;
    assert_eq!(brands.status, 200);
    assert_eq!(brands.item_field("brandId"), [generated_id.as_str(), "alpha", "mid", "zeta"]);
    assert_eq!(brands.next_cursor(), None);
    assert_eq!(t.requests(), ONE_QUERY);

    let categories = catalog(&t.deps, req("GET /categories")).await;
    assert_eq!(categories.item_field("categoryId"), ["alpha", "mid", "zeta"]);
    assert_eq!(t.requests(), ONE_QUERY);

    let dup = catalog(&t.deps, req("POST /brands").by(As::Admin).json(json!({ "name": "again", "id": "alpha" }))).await;
    assert_eq!((dup.status, dup.error_code()), (409, "conflict"));
    assert!(dup.body["error"]["message"].as_str().unwrap().contains("alpha"));
}

#[tokio::test]
async fn ap3_get_product_is_one_query() {
    let t = TestTable::with_demo_data().await;
    let id = local_stack::demo::PRODUCT_IDS[0];
    let r = catalog(&t.deps, req("GET /products/{productId}").path("productId", id)).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["productId"], id);
    assert_eq!(r.body["name"], "Stoneware mug");
    assert_eq!(r.body["price"], 28);
    assert_eq!(r.body["stockLevel"], 120);
    assert_eq!(t.requests(), ["Query"], "the product and its details (none here)");

    let missing =
        catalog(&t.deps, req("GET /products/{productId}").path("productId", "01JF8Z5Q0000000000000000ZZ")).await;
    assert_eq!((missing.status, missing.error_code()), (404, "not_found"));
    assert_eq!(t.requests(), ["Query"]);
    let malformed = catalog(&t.deps, req("GET /products/{productId}").path("productId", "nope")).await;
    assert_eq!(malformed.status, 400);
    assert!(t.requests().is_empty(), "malformed ids never reach the table");
}

#[tokio::test]
async fn ap4_ap5_stock_changes_are_one_tokened_conditional_write() {
    let t = TestTable::with_demo_data().await;
    let id = local_stack::demo::PRODUCT_IDS[1]; // stock 15
    let change = |delta: i64| {
        req("POST /products/{productId}/stock").path("productId", id).by(As::Admin).json(json!({ "delta": delta }))
    };

    let up = catalog(&t.deps, change(5)).await;
    assert_eq!((up.status, up.body["stockLevel"].as_i64()), (200, Some(20)));
    assert_eq!(
        t.requests(),
        ["TransactWriteItems", "Query"],
        "the ADD (idempotent under SDK retries), then the product read back"
    );

    let down = catalog(&t.deps, change(-20)).await;
    assert_eq!((down.status, down.body["stockLevel"].as_i64()), (200, Some(0)));
    assert_eq!(t.requests(), ["TransactWriteItems", "Query"]);

    let below = catalog(&t.deps, change(-1)).await;
    assert_eq!((below.status, below.error_code()), (409, "conflict"));
    assert!(below.body["error"]["message"].as_str().unwrap().contains("0 in stock"));
    assert_eq!(t.requests(), ["TransactWriteItems"], "a refused change is not read back");

    let missing = catalog(
        &t.deps,
        req("POST /products/{productId}/stock")
            .path("productId", "01JF8Z5Q0000000000000000ZZ")
            .by(As::Admin)
            .json(json!({ "delta": 1 })),
    )
    .await;
    assert_eq!(missing.status, 404);
    assert_eq!(t.requests(), ["TransactWriteItems"]);

    assert_eq!(stock_level(&t, id).await, 0);
}

#[tokio::test]
async fn ap6_to_ap9_browse_products_by_brand_and_category() {
    let t = TestTable::new().await;
    let products = catalog_fixture(&t).await;
    let list = |route: &str, name: &str, id: &str| req(route).path(name, id).query("limit", 100);

    // AP6: a brand's products.
    let r = catalog(&t.deps, list("GET /brands/{brandId}/products", "brandId", "acme")).await;
    assert_eq!(sorted(r.item_field("productId")), ids_where(&products, |b, _| b == "acme"));
    assert_eq!(t.requests(), ONE_QUERY);

    // AP7: a brand's products in a category.
    let r =
        catalog(&t.deps, list("GET /brands/{brandId}/products", "brandId", "acme").query("categoryId", "books")).await;
    assert_eq!(sorted(r.item_field("productId")), ids_where(&products, |b, c| b == "acme" && c == "books"));
    assert_eq!(t.requests(), ONE_QUERY);

    // AP8: a category's products (the active listing in the same GSI7 partition is not one).
    let r = catalog(&t.deps, list("GET /categories/{categoryId}/products", "categoryId", "pottery")).await;
    assert_eq!(sorted(r.item_field("productId")), ids_where(&products, |_, c| c == "pottery"));
    assert!(r.items().iter().all(|i| i["name"].is_string()));
    assert_eq!(t.requests(), ONE_QUERY);

    // AP9: a category's products of one brand.
    let r = catalog(
        &t.deps,
        list("GET /categories/{categoryId}/products", "categoryId", "pottery").query("brandId", "globex"),
    )
    .await;
    assert_eq!(sorted(r.item_field("productId")), ids_where(&products, |b, c| b == "globex" && c == "pottery"));
    assert_eq!(t.requests(), ONE_QUERY);

    // An unknown brand is an empty list, not an error.
    let r = catalog(&t.deps, list("GET /brands/{brandId}/products", "brandId", "nobody")).await;
    assert_eq!((r.status, r.items().len()), (200, 0));
}

#[tokio::test]
async fn pages_cover_everything_once_and_cursors_stay_with_their_query() {
    let t = TestTable::new().await;
    let products = catalog_fixture(&t).await;
    let all = ids_where(&products, |b, _| b == "acme");
    let (mut seen, mut cursor, mut pages) = (Vec::new(), None::<String>, 0);
    loop {
        let mut r = req("GET /brands/{brandId}/products").path("brandId", "acme").query("limit", 3);
        if let Some(c) = &cursor {
            r = r.query("cursor", c);
        }
        let reply = catalog(&t.deps, r).await;
        assert_eq!(reply.status, 200, "{:?}", reply.body);
        assert_eq!(t.requests(), ONE_QUERY, "one request per page");
        seen.extend(reply.item_field("productId"));
        pages += 1;
        cursor = reply.next_cursor();
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!((pages, sorted(seen)), (2, all), "4 products in pages of 3, the last one says it is last");

    // A cursor of one query does not open another.
    let first = catalog(&t.deps, req("GET /brands/{brandId}/products").path("brandId", "acme").query("limit", 1)).await;
    let c = first.next_cursor().unwrap();
    let other_brand =
        catalog(&t.deps, req("GET /brands/{brandId}/products").path("brandId", "globex").query("cursor", &c)).await;
    assert_eq!((other_brand.status, other_brand.error_code()), (400, "bad_request"));
    let other_filter = catalog(
        &t.deps,
        req("GET /brands/{brandId}/products").path("brandId", "acme").query("categoryId", "books").query("cursor", &c),
    )
    .await;
    assert_eq!(other_filter.status, 400);
    let other_route = catalog(&t.deps, req("GET /brands").query("cursor", &c)).await;
    assert_eq!(other_route.status, 400);
    // And an edited one does not open at all.
    let mut forged = c.clone();
    forged.replace_range(0..4, "AAAA");
    let r =
        catalog(&t.deps, req("GET /brands/{brandId}/products").path("brandId", "acme").query("cursor", forged)).await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn create_product_reads_brand_and_category_then_puts_it() {
    let t = TestTable::with_demo_data().await;
    let body = |brand: &str, category: &str| json!({ "name": "Thing", "brandId": brand, "categoryId": category, "price": 1, "stockLevel": 1, "description": "d" });
    let ok = catalog(&t.deps, req("POST /products").by(As::Admin).json(body("acme", "books"))).await;
    assert_eq!(ok.status, 201);
    assert_eq!(ok.body["description"], "d");
    assert_eq!(
        t.requests(),
        ["GetItem", "GetItem", "TransactWriteItems"],
        "brand and category read, no condition check"
    );
    let again = catalog(&t.deps, req("POST /products").by(As::Admin).json(body("acme", "books"))).await;
    assert_eq!(again.status, 201);
    assert_eq!(t.requests(), ["TransactWriteItems"], "both remembered (api::cache)");
    let no_brand = catalog(&t.deps, req("POST /products").by(As::Admin).json(body("nobody", "books"))).await;
    assert_eq!(no_brand.status, 400);
    assert!(no_brand.body["error"]["message"].as_str().unwrap().contains("brand `nobody`"));
    let no_category = catalog(&t.deps, req("POST /products").by(As::Admin).json(body("acme", "nothing"))).await;
    assert_eq!(no_category.status, 400);
    assert!(no_category.body["error"]["message"].as_str().unwrap().contains("category `nothing`"));
    assert_eq!(t.requests(), ["GetItem", "GetItem"], "what is missing is read each time, nothing written");
    let listed = catalog(&t.deps, req("GET /categories/{categoryId}/products").path("categoryId", "books")).await;
    assert_eq!(listed.items().len(), 3, "the demo book and the two new ones; nothing half-written");
}

/// 50 concurrent decrements of 1 on a stock of 20: exactly 20 succeed,
/// 30 get a clean 409, and the stock ends at 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_decrements_never_oversell() {
    let t = TestTable::with_demo_data().await;
    let id = local_stack::demo::PRODUCT_IDS[3];
    let set = catalog(
        &t.deps,
        req("POST /products/{productId}/stock").path("productId", id).by(As::Admin).json(json!({ "delta": -280 })),
    )
    .await;
    assert_eq!(set.body["stockLevel"], 20);
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let deps = t.deps.clone();
            tokio::spawn(async move {
                let r = req("POST /products/{productId}/stock")
                    .path("productId", id)
                    .by(As::Admin)
                    .json(json!({ "delta": -1 }));
                catalog(&deps, r).await
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for task in tasks {
        let reply = task.await.unwrap();
        if reply.status == 409 {
            assert_eq!(reply.error_code(), "conflict");
        }
        statuses.push(reply.status);
    }
    let ok = statuses.iter().filter(|s| **s == 200).count();
    let conflict = statuses.iter().filter(|s| **s == 409).count();
    assert_eq!((ok, conflict), (20, 30), "{statuses:?}");
    assert_eq!(stock_level(&t, id).await, 0);
}

/// Bad input of every kind gets the right 4xx JSON error; none a 500.
#[tokio::test]
async fn bad_input_gets_clear_4xx_errors() {
    let t = TestTable::with_demo_data().await;
    let product = local_stack::demo::PRODUCT_IDS[0];
    let good = json!({ "name": "n", "brandId": "acme", "categoryId": "books", "price": 1, "stockLevel": 1 });
    let with = |k: &str, v: Value| {
        let mut b = good.clone();
        b[k] = v;
        b
    };
    let post = |body: Value| req("POST /products").by(As::Admin).json(body);
    let stock = |delta: Value| {
        req("POST /products/{productId}/stock").path("productId", product).by(As::Admin).json(json!({ "delta": delta }))
    };
    let cases: Vec<(&str, integration_tests::Req, u16, &str)> = vec![
        ("malformed JSON", req("POST /products").by(As::Admin).raw("{\"name\": "), 400, "malformed JSON"),
        ("not an object", req("POST /products").by(As::Admin).raw("[1,2]"), 400, "invalid body"),
        ("empty body", req("POST /products").by(As::Admin).raw(""), 400, "body is required"),
        ("unknown field", post(with("color", json!("red"))), 400, "unknown field `color`"),
        (
            "server-owned id",
            post(with("productId", json!("01JF8Z5Q000000000000000009"))),
            400,
            "unknown field `productId`",
        ),
        ("wrong type", post(with("price", json!("12"))), 400, "price"),
        ("negative price", post(with("price", json!(-1))), 400, "non-negative"),
        ("three decimals", post(with("price", json!(1.005))), 400, "two decimal"),
        ("negative stock", post(with("stockLevel", json!(-5))), 400, "stockLevel"),
        ("oversized name", post(with("name", json!("x".repeat(201)))), 400, "at most 200"),
        ("blank name", post(with("name", json!("   "))), 400, "empty"),
        ("bad slug", post(with("brandId", json!("Not A Slug"))), 400, "brandId"),
        ("missing field", post(json!({ "name": "n" })), 400, "missing field"),
        (
            "oversized body",
            req("POST /brands").by(As::Admin).raw(&format!("{{\"name\":\"{}\"}}", "x".repeat(70_000))),
            413,
            "exceeds",
        ),
        (
            "bad brand id",
            req("POST /brands").by(As::Admin).json(json!({ "name": "n", "id": "UPPER" })),
            400,
            "[a-z0-9-]",
        ),
        ("limit 0", req("GET /brands").query("limit", 0), 400, "limit"),
        ("limit 1000", req("GET /brands").query("limit", 1000), 400, "limit"),
        ("limit text", req("GET /brands").query("limit", "ten"), 400, "limit"),
        ("unknown query param", req("GET /brands").query("sort", "name"), 400, "unknown query parameter"),
        (
            "forged cursor",
            req("GET /brands").query("cursor", "eyJwayI6IkJSQU5EUyJ9.AAAAAAAAAAAAAAAAAAAAAA"),
            400,
            "cursor",
        ),
        ("garbage cursor", req("GET /brands").query("cursor", "%%%"), 400, "cursor"),
        ("bad path id", req("GET /products/{productId}").path("productId", "../etc"), 400, "productId"),
        (
            "bad category filter",
            req("GET /brands/{brandId}/products").path("brandId", "acme").query("categoryId", "A#B"),
            400,
            "categoryId",
        ),
        ("zero delta", stock(json!(0)), 400, "delta"),
        ("huge delta", stock(json!(9_000_000_000i64)), 400, "delta"),
        ("fractional delta", stock(json!(1.5)), 400, "delta"),
        ("no token", req("POST /brands").json(json!({ "name": "n" })), 401, "token"),
        ("not admin: brand", req("POST /brands").by(As::User("alice")).json(json!({ "name": "n" })), 403, "admin"),
        (
            "not admin: category",
            req("POST /categories").by(As::User("alice")).json(json!({ "name": "n" })),
            403,
            "admin",
        ),
        ("not admin: product", post(good.clone()).by(As::User("alice")), 403, "admin"),
        (
            "not admin: stock",
            req("POST /products/{productId}/stock")
                .path("productId", product)
                .by(As::User("alice"))
                .json(json!({ "delta": 1 })),
            403,
            "admin",
        ),
        ("unknown route", req("DELETE /products/{productId}").path("productId", product), 404, "no route"),
    ];
    for (what, r, status, needle) in cases {
        let reply = catalog(&t.deps, r).await;
        let message = reply.body["error"]["message"].as_str().unwrap_or_default().to_owned();
        assert_eq!(reply.status, status, "{what}: {:?}", reply.body);
        assert!(message.contains(needle), "{what}: `{message}` lacks `{needle}`");
        assert!(!reply.error_code().is_empty(), "{what}: error code");
    }
    // Nothing above changed the product.
    let p = catalog(&t.deps, req("GET /products/{productId}").path("productId", product)).await;
    assert_eq!(p.body["stockLevel"], 120);
}
