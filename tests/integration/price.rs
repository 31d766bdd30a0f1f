//! Listings by price (beyond the seeds): a sparse GSI8 of active listings,
//! price as zero-padded cents: put with a new listing, moved by a price
//! change's own write, removed by a sale or removal's, added back by the
//! stream processor at a relisting.

use integration_tests::{listings, orders, process_stream, req, stream_records, walk_pages, As, Reply, TestTable};
use serde_json::json;

async fn by_price(t: &TestTable, query: &[(&str, &str)], limit: u16) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    let request = || {
        let r = req("GET /categories/{categoryId}/listings").path("categoryId", "electronics").query("limit", limit);
        query.iter().fold(r, |r, (k, v)| r.query(k, v))
    };
    walk_pages(
        t,
        request,
        |r| listings(&t.deps, r),
        |page: &Reply, sent| {
            assert_eq!(sent, ["Query"], "one request per page");
            out.extend(page.ids_and_prices());
        },
    )
    .await;
    out
}

#[tokio::test]
async fn cheapest_first_across_pages_bounds_inclusive_never_sold() {
    let t = TestTable::with_demo_data().await;
    let prices = [5.0, 20.0, 10.0, 999999.99, 10.0, 0.5, 20.0, 15.25, 1000000.0, 7.0, 10.0, 19.99, 20.01, 3.0];
    let mut ids = Vec::new();
    for (i, price) in prices.iter().enumerate() {
        let r = listings(
            &t.deps,
            req("POST /listings")
                .by(As::User("alice"))
                .json(json!({ "title": format!("Gadget {i}"), "price": price, "categoryId": "electronics" })),
        )
        .await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        ids.push(r.body["listingId"].as_str().unwrap().to_owned());
    }
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());

    let all = by_price(&t, &[("sort", "price")], 4).await;
    let mut want: Vec<(String, f64)> = ids.iter().cloned().zip(prices).collect();
    want.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    assert_eq!(all, want, "cheapest first (ties by id), each once, across pages");

    let bounded = by_price(&t, &[("sort", "price"), ("minPrice", "10"), ("maxPrice", "20")], 3).await;
    let in_bounds: Vec<f64> = bounded.iter().map(|(_, p)| *p).collect();
    assert_eq!(in_bounds, [10.0, 10.0, 10.0, 15.25, 19.99, 20.0, 20.0], "both bounds inclusive");

    // Sold (by an order) and removed listings leave at once, before any stream record.
    let cheapest = &all[0].0;
    let sold = orders(
        &t.deps,
        10,
        req("POST /orders")
            .by(As::User("bob"))
            .header("Idempotency-Key", "cheap")
            .json(json!({ "listingId": cheapest })),
    )
    .await;
    assert_eq!(sold.status, 201, "{:?}", sold.body);
    let removed = &all[1].0;
    let r = listings(
        &t.deps,
        req("PATCH /listings/{listingId}")
            .path("listingId", removed)
            .by(As::User("alice"))
            .json(json!({ "status": "removed" })),
    )
    .await;
    assert_eq!(r.status, 200);
    let after = by_price(&t, &[("sort", "price")], 100).await;
    assert!(after.iter().all(|(id, _)| id != cheapest && id != removed), "sold and removed never shown");

    // A price change moves the listing in its own write, before the stream
    // processor sees it; processing and replaying the whole stream changes
    // nothing more.
    let moved = &all[2].0;
    let r = listings(
        &t.deps,
        req("PATCH /listings/{listingId}").path("listingId", moved).by(As::User("alice")).json(json!({ "price": 500 })),
    )
    .await;
    assert_eq!(r.status, 200);
    let at_once = by_price(&t, &[("sort", "price")], 100).await;
    assert_eq!(at_once.iter().find(|(id, _)| id == moved).map(|(_, price)| *price), Some(500.0));
    assert!(at_once.windows(2).all(|w| w[0].1 <= w[1].1), "in price order at once: {at_once:?}");
    let records = stream_records(&t).await;
    assert!(process_stream(&t, records.clone()).await.is_empty());
    assert!(process_stream(&t, records.into_iter().rev().collect()).await.is_empty());
    let repriced = by_price(&t, &[("sort", "price")], 100).await;
    let position = repriced.iter().position(|(id, _)| id == moved).unwrap();
    assert_eq!(repriced[position].1, 500.0);
    assert!(repriced.windows(2).all(|w| w[0].1 <= w[1].1), "still in price order: {repriced:?}");
    assert!(repriced.iter().all(|(id, _)| id != cheapest && id != removed), "a replay never brings them back");

    for bad in [
        vec![("minPrice", "10")],
        vec![("sort", "price"), ("minPrice", "30"), ("maxPrice", "20")],
        vec![("sort", "name")],
        vec![("sort", "price"), ("maxPrice", "-1")],
        vec![("sort", "price"), ("minPrice", "1.234")],
        // Plain decimal text only (openapi's PriceParam): no exponent, no space.
        vec![("sort", "price"), ("maxPrice", "1e3")],
        vec![("sort", "price"), ("maxPrice", "5e0")],
        vec![("sort", "price"), ("minPrice", " 10")],
    ] {
        let mut r = req("GET /categories/{categoryId}/listings").path("categoryId", "electronics");
        for (k, v) in &bad {
            r = r.query(k, v);
        }
        assert_eq!(listings(&t.deps, r).await.status, 400, "{bad:?}");
    }
}
