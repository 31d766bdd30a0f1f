//! A hot category's browse and price keys, write-sharded (issue 20): walks
//! of every page size are exact against a brute-force sort of what was
//! listed (newest first; cheapest first, ties oldest first, within price
//! bounds), each page at most two rounds of one query per shard; and a
//! table written with the unsharded keys is migrated by reconcile.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_dynamodb::types::AttributeValue;
use integration_tests::{catalog, listings, process_stream, req, stream_records, walk_pages, As, Reply, TestTable};
use maintenance::pace::Budget;
use maintenance::reconcile::{self, Options};
use serde_json::json;

/// Every page of a walk of `category` with `query`; asserts each page's
/// requests: at most one category read, at most two queries per shard.
async fn walk(t: &TestTable, category: &str, query: &[(&str, &str)], limit: u16, shards: usize) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    let request = || {
        let r = req("GET /categories/{categoryId}/listings").path("categoryId", category).query("limit", limit);
        query.iter().fold(r, |r, (k, v)| r.query(k, v))
    };
    walk_pages(
        t,
        request,
        |r| listings(&t.deps, r),
        |page: &Reply, sent| {
            let queries = sent.iter().filter(|r| *r == "Query").count();
            assert!(sent.iter().all(|r| r == "Query" || r == "GetItem"), "{sent:?}");
            assert!(sent.iter().filter(|r| *r == "GetItem").count() <= 1, "{sent:?}");
            assert!(queries <= 2 * shards, "{queries} queries over {shards} shards");
            assert!(page.items().len() <= usize::from(limit));
            // Full pages before the last.
            assert!(page.next_cursor().is_none() || page.items().len() == usize::from(limit));
            out.extend(page.ids_and_prices());
        },
    )
    .await;
    out
}

async fn create(t: &TestTable, category: &str, price: f64, i: usize) -> String {
    let body = json!({ "title": format!("Thing {i}"), "price": price, "categoryId": category });
    let r = listings(&t.deps, req("POST /listings").by(As::User("alice")).json(body)).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body["listingId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_sharded_category_reads_back_exactly_newest_and_cheapest_first() {
    let t = TestTable::with_demo_data().await;
    let made = catalog(
        &t.deps,
        req("POST /categories").by(As::Admin).json(json!({ "id": "hot", "name": "Hot", "listingShards": 8 })),
    )
    .await;
    assert_eq!(made.status, 201, "{:?}", made.body);
    assert_eq!(made.body["listingShards"], 8);
    for bad in [json!(0), json!(17), json!(-1), json!(1.5), json!("4")] {
        let body = json!({ "id": "hotter", "name": "Hotter", "listingShards": bad });
        assert_eq!(catalog(&t.deps, req("POST /categories").by(As::Admin).json(body)).await.status, 400, "{bad}");
    }
    let prices = [5.0, 12.5, 12.5, 30.0, 7.0, 99.99, 12.5, 0.01];
    let mut listed = Vec::new();
    for i in 0..40 {
        let price = prices[i % prices.len()];
        listed.push((create(&t, "hot", price, i).await, price));
    }
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    let shards: BTreeSet<u64> = shards_of(&t, &listed).await;
    assert!(shards.len() >= 6 && shards.iter().all(|s| *s < 8), "spread over the shards: {shards:?}");

    let mut newest = listed.clone();
    newest.sort_by(|a, b| b.0.cmp(&a.0));
    for limit in [1u16, 7, 100] {
        assert_eq!(walk(&t, "hot", &[], limit, 8).await, newest, "newest first, limit {limit}");
    }
    let mut cheapest = listed.clone();
    cheapest.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    for limit in [3u16, 20] {
        assert_eq!(walk(&t, "hot", &[("sort", "price")], limit, 8).await, cheapest, "cheapest first, limit {limit}");
    }
    let bounded: Vec<(String, f64)> = cheapest.iter().filter(|(_, p)| (7.0..=30.0).contains(p)).cloned().collect();
    let query = [("sort", "price"), ("minPrice", "7"), ("maxPrice", "30")];
    assert_eq!(walk(&t, "hot", &query, 6, 8).await, bounded, "bounds inclusive");
    let one_price = [("sort", "price"), ("minPrice", "12.5"), ("maxPrice", "12.5")];
    assert_eq!(walk(&t, "hot", &one_price, 3, 8).await.len(), 15, "ties at one price, by id");

    // Removed listings leave every shard's pages at once.
    for (id, _) in listed.iter().step_by(5) {
        let patch = req("PATCH /listings/{listingId}").path("listingId", id).by(As::User("alice"));
        assert_eq!(listings(&t.deps, patch.json(json!({ "status": "removed" }))).await.status, 200);
    }
    let left: Vec<(String, f64)> =
        newest.iter().filter(|(id, _)| !listed.iter().step_by(5).any(|(r, _)| r == id)).cloned().collect();
    assert_eq!(walk(&t, "hot", &[], 9, 8).await, left);

    // A cursor is bound to its walk: another category, sort or bounds is refused.
    let first =
        listings(&t.deps, req("GET /categories/{categoryId}/listings").path("categoryId", "hot").query("limit", 2))
            .await;
    let cursor = first.next_cursor().unwrap();
    for (category, sort) in [("pottery", None), ("hot", Some("price"))] {
        let mut r = req("GET /categories/{categoryId}/listings").path("categoryId", category).query("cursor", &cursor);
        if let Some(s) = sort {
            r = r.query("sort", s);
        }
        assert_eq!(listings(&t.deps, r).await.status, 400);
    }
    // An unknown category is an empty page, read without any query.
    t.requests();
    let none = listings(&t.deps, req("GET /categories/{categoryId}/listings").path("categoryId", "nothing-here")).await;
    assert_eq!((none.status, none.items().len()), (200, 0));
    assert_eq!(t.requests(), ["GetItem"]);
}

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_owned())
}

/// A table written before the browse keys were sharded: listings without a
/// `shard`, keyed `CATEGORY#<categoryId>` and `PRICE#<categoryId>`. They
/// are not found by the sharded reads until reconcile moves their keys
/// (shard 0 by the declared default); a second run finds nothing.
#[tokio::test]
async fn reconcile_migrates_listings_written_with_the_unsharded_keys() {
    let t = TestTable::with_demo_data().await;
    let ids: Vec<String> = (0..6).map(|_| domain::ids::ListingId::generate().to_string()).collect();
    for (i, id) in ids.iter().enumerate() {
        let cents = 1_000 + i * 100;
        let item: BTreeMap<&str, AttributeValue> = BTreeMap::from([
            ("pk", s(&format!("LISTING#{id}"))),
            ("sk", s("#METADATA")),
            ("entityType", s("Listing")),
            ("listingId", s(id)),
            ("sellerId", s("alice")),
            ("title", s("Old")),
            ("price", AttributeValue::N(format!("{}.{:02}", cents / 100, cents % 100))),
            ("categoryId", s("pottery")),
            ("status", s("active")),
            ("favoriteCount", AttributeValue::N("0".into())),
            ("createdAt", s("2026-01-01T00:00:00.000Z")),
            ("updatedAt", s("2026-01-01T00:00:00.000Z")),
            ("gsi1pk", s("SELLER#alice")),
            ("gsi1sk", s(&format!("LISTING#active#{id}"))),
            ("gsi2pk", s("CATEGORY#pottery")),
            ("gsi2sk", s(&format!("LISTING#{id}"))),
            ("gsi3pk", s("PRICE#pottery")),
            ("gsi3sk", s(&format!("LISTING#{cents:010}#{id}"))),
        ]);
        let put = t.deps.store.client().put_item().table_name(t.deps.store.table());
        let put = item.into_iter().fold(put, |p, (k, v)| p.item(k, v));
        put.send().await.unwrap();
    }
    let found = |page: Vec<(String, f64)>| page.into_iter().filter(|(id, _)| ids.contains(id)).count();
    assert_eq!(found(walk(&t, "pottery", &[], 20, 1).await), 0, "old keys: not in the sharded partitions");
    // Products keep the category's unsharded partition, apart by sort key.
    let products = catalog(&t.deps, req("GET /categories/{categoryId}/products").path("categoryId", "pottery")).await;
    assert!(products.items().iter().all(|p| p.get("productId").is_some()), "{:?}", products.body);

    let unpaced = Options { budget: Budget { rcu: 0.0, wcu: 0.0 }, ..Options::default() };
    let report = reconcile::run(&t.deps.store, unpaced).await;
    assert!(report.complete, "{report:?}");
    assert_eq!(report.of(reconcile::Kind::IndexKeys(keyschema::table::EntityType::Listing)).repaired, 6, "{report:?}");
    assert_eq!(found(walk(&t, "pottery", &[], 20, 1).await), 6);
    assert_eq!(found(walk(&t, "pottery", &[("sort", "price")], 2, 1).await), 6);
    assert_eq!(stored_shard(&t, &ids[0]).await, 0, "read as shard 0");
    let again = reconcile::run(&t.deps.store, unpaced).await;
    assert_eq!(again.found(), 0, "{again:?}");
}

/// A listing's shard as stored (the API answers none).
async fn stored_shard(t: &TestTable, id: &str) -> u64 {
    let key = keyschema::keys::listing(&id.parse().unwrap()).unwrap();
    let listing: domain::model::Listing = t.deps.store.get_consistent(&key).await.unwrap().unwrap();
    u64::from(listing.shard)
}

async fn shards_of(t: &TestTable, ids: &[(String, f64)]) -> BTreeSet<u64> {
    let mut seen = BTreeSet::new();
    for (id, _) in ids {
        seen.insert(stored_shard(t, id).await);
    }
    seen
}

/// Raising a category's shard count: readers query the new count at once,
/// new listings keep the old count until the raise has reached every
/// instance's cached category (`listingShardsFrom`), then spread over the
/// new shards; every page stays exact throughout; the count never shrinks.
#[tokio::test]
async fn raising_the_shard_count_keeps_every_page_exact() {
    let t = TestTable::with_demo_data().await;
    let raise = |n: serde_json::Value| {
        req("PATCH /categories/{categoryId}")
            .path("categoryId", "pottery")
            .by(As::Admin)
            .json(json!({ "listingShards": n }))
    };
    let mut listed: Vec<(String, f64)> = Vec::new();
    for i in 0..6 {
        listed.push((create(&t, "pottery", 10.0 + i as f64, i).await, 10.0 + i as f64));
    }
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    // A walk begun before the raise (its cursor read one shard).
    let first =
        listings(&t.deps, req("GET /categories/{categoryId}/listings").path("categoryId", "pottery").query("limit", 2))
            .await;
    let (begun, cursor) = (first.item_field("listingId"), first.next_cursor().unwrap());
    let raised = catalog(&t.deps, raise(json!(4))).await;
    assert_eq!(raised.status, 200, "{:?}", raised.body);
    assert_eq!(
        (raised.body["listingShards"].as_u64(), raised.body["listingShardsBefore"].as_u64()),
        (Some(4), Some(1))
    );
    // Before the raise settles: new listings stay in shard 0.
    for i in 6..12 {
        listed.push((create(&t, "pottery", 10.0 + i as f64, i).await, 10.0 + i as f64));
    }
    // Settled (the time moved: listingShardsFrom set in the past): new ones spread.
    let key = keyschema::keys::category(&"pottery".parse().unwrap()).unwrap();
    let past =
        keyschema::Change::untimed(key).set("listingShardsFrom", keyschema::Value::s("2026-01-01T00:00:00.000Z"));
    t.deps.store.update(&past).await.unwrap();
    api::cache::forget(&t.deps.store, &keyschema::keys::category(&"pottery".parse().unwrap()).unwrap());
    for i in 12..40 {
        listed.push((create(&t, "pottery", 10.0 + (i % 7) as f64, i).await, 10.0 + (i % 7) as f64));
    }
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    assert_eq!(shards_of(&t, &listed[..12]).await, BTreeSet::from([0]), "before the raise settled: the old count");
    assert!(shards_of(&t, &listed[12..]).await.len() >= 3, "after: spread over the new shards");
    // The demo's pottery listing is in the walk too.
    let all = walk(&t, "pottery", &[], 7, 4).await;
    let mut want: Vec<String> = listed.iter().map(|(id, _)| id.clone()).collect();
    want.push(local_stack::demo::LISTING_IDS[0].to_owned());
    want.sort_by(|a, b| b.cmp(a));
    assert_eq!(all.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(), want, "newest first over 4 shards");
    // The walk begun before the raise goes on over the 4 shards this
    // instance now knows: everything older than its first page, once.
    let mut rest = Vec::new();
    let mut next = Some(cursor);
    while let Some(c) = next {
        let page = listings(
            &t.deps,
            req("GET /categories/{categoryId}/listings")
                .path("categoryId", "pottery")
                .query("limit", 2)
                .query("cursor", &c),
        )
        .await;
        assert_eq!(page.status, 200, "{:?}", page.body);
        rest.extend(page.item_field("listingId"));
        next = page.next_cursor();
    }
    let older: Vec<String> = want.iter().filter(|id| **id < begun[1]).cloned().collect();
    assert_eq!(rest, older);
    let by_price = walk(&t, "pottery", &[("sort", "price")], 5, 4).await;
    assert_eq!(by_price.len(), want.len());
    assert!(by_price.windows(2).all(|w| w[0].1 <= w[1].1), "cheapest first");
    // Never below the count; the same count changes nothing; others are refused.
    assert_eq!(catalog(&t.deps, raise(json!(2))).await.status, 409, "it only grows");
    assert_eq!(catalog(&t.deps, raise(json!(4))).await.status, 200);
    assert_eq!(catalog(&t.deps, raise(json!(17))).await.status, 400);
    let by_user = req("PATCH /categories/{categoryId}").path("categoryId", "pottery").by(As::User("alice"));
    assert_eq!(catalog(&t.deps, by_user.json(json!({ "listingShards": 8 }))).await.status, 403);
    let missing = req("PATCH /categories/{categoryId}").path("categoryId", "nothing-here").by(As::Admin);
    assert_eq!(catalog(&t.deps, missing.json(json!({ "listingShards": 8 }))).await.status, 404);
}
