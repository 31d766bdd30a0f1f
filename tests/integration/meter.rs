//! The request meter of the cost bounds (`integration_tests::pricing`):
//! its item sizes and rounding against the examples of AWS's documentation,
//! its prices against what DynamoDB Local reports where Local reports
//! anything, and what Local does not report (batches, empty queries, reads
//! through a filter or a projection) priced by the documented rules.

use std::collections::HashMap;

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue::{self, Bool, Null, L, M, N, S};
use integration_tests::pricing::{item_size, number_size, price_gets, price_query, Cost, Item, Meter, Read};
use integration_tests::{catalog, listings, req, As, TestTable};
use serde_json::json;

fn item(attrs: &[(&str, AttributeValue)]) -> Item {
    attrs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
}

/// An item of exactly `bytes` bytes: `p` and a string of `bytes - 1`.
fn sized(bytes: usize) -> Item {
    item(&[("p", S("x".repeat(bytes - 1)))])
}

#[test]
fn sizes_follow_the_documented_rules() {
    // Strings: name and value in UTF-8 bytes.
    assert_eq!(item_size(&item(&[("Name", S("Alice".into()))])), 9);
    assert_eq!(item_size(&item(&[("t", S("é🎈".into()))])), 1 + 2 + 4);
    // Numbers: 1 byte per two significant digits (leading and trailing
    // zeros trimmed), rounded up, plus 1.
    for (n, size) in [("12345", 4), ("1.50", 2), ("0.001", 2), ("100", 2), ("7", 2), ("123456", 4), ("0", 2)] {
        assert_eq!(number_size(n), size, "{n}");
    }
    assert_eq!(item_size(&item(&[("price", N("12.5".into()))])), 5 + 3);
    // Binary: raw bytes, not base64.
    assert_eq!(item_size(&item(&[("b", AttributeValue::B(Blob::new(vec![0u8; 10])))])), 11);
    // Null and Boolean: 1 byte.
    assert_eq!(item_size(&item(&[("ok", Bool(true)), ("no", Null(true))])), 6);
    // Lists and maps: 3 bytes, then 1 byte per element and its size.
    assert_eq!(item_size(&item(&[("L", L(vec![S("ab".into()), N("1".into())]))])), 1 + 3 + (1 + 2) + (1 + 2));
    let map = HashMap::from([("k".to_owned(), S("v".into()))]);
    assert_eq!(item_size(&item(&[("M", M(map))])), 1 + 3 + (1 + 1 + 1));
    assert_eq!(item_size(&item(&[("M", M(HashMap::new()))])), 1 + 3, "an empty map is its name and 3 bytes");
    // A published calculator's example (ddbitemsizer's README): 141 bytes.
    let slot = item(&[
        ("itemType", S("SLOT".into())),
        ("id", S("abc1231".into())),
        ("hostName", S("Harry Mason".into())),
        ("timeSlot", S("February 23, 1999".into())),
        ("slotStatus", S("OPEN".into())),
        ("createdAt", S("February 1, 1999".into())),
        ("updatedAt", S("February 1, 1999".into())),
        ("expiresAt", N("2099".into())),
    ]);
    assert_eq!(item_size(&slot), 141);
}

#[test]
fn reads_round_as_the_documentation_s_examples() {
    // "reading a 3,500-byte item consumes the same throughput as reading a 4 KB item".
    assert_eq!((Read::Strong.rcu(3500), Read::Eventual.rcu(3500)), (1.0, 0.5));
    // "if your item size is 8 KB, you require 2 read units ... strongly
    // consistent ... 1 read unit if you choose eventually consistent".
    assert_eq!((Read::Strong.rcu(8 * 1024), Read::Eventual.rcu(8 * 1024)), (2.0, 1.0));
    // GetItem: "If you read a 10 KB item, DynamoDB rounds the item size to 12 KB".
    assert_eq!(price_gets(&[sized(10 * 1024)], 0, Read::Strong).rcu, 3.0);
    // BatchGetItem: "two items of 1.5 KB and 6.5 KB ... 12 KB (4 KB + 8 KB), not 8 KB".
    let two = [sized(1536), sized(6656)];
    assert_eq!(price_gets(&two, 0, Read::Strong).rcu, 3.0);
    assert_eq!(price_query(&two, Read::Strong).rcu, 2.0, "a query rounds the sum once");
    // Query: "10 items whose combined size is 40.8 KB ... rounds ... to 44 KB".
    let ten: Vec<Item> = (0..10).map(|_| sized(4178)).collect();
    assert_eq!(price_query(&ten, Read::Strong).rcu, 11.0);
    assert_eq!(price_query(&ten, Read::Eventual).rcu, 5.5);
    // Nothing found still costs the minimum.
    assert_eq!(price_gets(&[], 1, Read::Eventual).rcu, 0.5);
    assert_eq!(price_query(&[], Read::Eventual).rcu, 0.5);
}

/// Puts items of exactly `sizes` bytes by [`item_size`] in partition
/// `METER`, one sort key each (strings of 1- and 2-byte characters, a
/// number, a list and a map each), straight to the table.
async fn put_sized(t: &TestTable, sizes: &[usize]) -> Vec<Item> {
    let mut out = Vec::new();
    for (i, size) in sizes.iter().enumerate() {
        let inner = HashMap::from([("n".to_owned(), N("3.25".into())), ("s".to_owned(), S("🎈".repeat(3)))]);
        let mut it = item(&[
            ("pk", S("METER".into())),
            ("sk", S(format!("ITEM#{i:03}"))),
            ("body", S(String::new())),
            ("price", N("1234.5".into())),
            ("tags", L(vec![S("a".into()), Bool(false), Null(true)])),
            ("meta", M(inner)),
        ]);
        let room = size - usize::try_from(item_size(&it)).unwrap();
        it.insert("body".into(), S(format!("{}{}", "é".repeat(room / 2), "x".repeat(room % 2))));
        assert_eq!(item_size(&it), *size as u64);
        let put = t.deps.store.client().put_item().table_name(t.deps.store.table()).set_item(Some(it.clone()));
        put.send().await.unwrap();
        out.push(it);
    }
    out
}

/// A metered table holding items of `sizes` ([`put_sized`]), its meter emptied.
async fn metered_items(sizes: &[usize]) -> (TestTable, Meter, Vec<Item>) {
    let (t, meter) = TestTable::with_meter().await;
    let items = put_sized(&t, sizes).await;
    meter.take().await;
    (t, meter, items)
}

#[tokio::test]
async fn the_meter_agrees_with_dynamodb_local_where_it_reports() {
    // Either side of a 4 KB boundary: Local's sizes and the meter's agree to the byte.
    let (t, meter, items) = metered_items(&[4096, 4097, 12_288, 12_289, 17_000]).await;
    let (client, table) = (t.deps.store.client(), t.deps.store.table());
    for it in &items {
        let key = item(&[("pk", it["pk"].clone()), ("sk", it["sk"].clone())]);
        let one = client.get_item().table_name(table).set_key(Some(key.clone()));
        one.return_consumed_capacity(aws_sdk_dynamodb::types::ReturnConsumedCapacity::Total).send().await.unwrap();
    }
    let query = client
        .query()
        .table_name(table)
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", S("METER".into()))
        .return_consumed_capacity(aws_sdk_dynamodb::types::ReturnConsumedCapacity::Total);
    query.send().await.unwrap();
    let priced = meter.take().await;
    assert_eq!(priced.len(), 6);
    for (p, it) in priced.iter().zip(&items) {
        assert_eq!((p.op.as_str(), p.items, p.bytes), ("GetItem", 1, item_size(it)));
    }
    let sizes: Vec<f64> = priced.iter().map(|p| p.rcu).collect();
    assert_eq!(sizes, [0.5, 1.0, 1.5, 2.0, 2.5, 6.5], "the query rounds its 49,770 bytes once: 13 units");
    for p in &priced {
        assert_eq!(p.reported, Some(p.rcu), "{}: DynamoDB Local reports {:?}", p.op, p.reported);
    }
}

#[tokio::test]
async fn the_meter_prices_what_dynamodb_local_does_not_report() {
    let (t, meter, items) = metered_items(&[700, 5_000, 17_000]).await;
    let (client, table) = (t.deps.store.client(), t.deps.store.table());
    let mut keys: Vec<Item> = items.iter().map(|i| item(&[("pk", i["pk"].clone()), ("sk", i["sk"].clone())])).collect();
    keys.push(item(&[("pk", S("METER".into())), ("sk", S("NONE#1".into()))]));
    keys.push(item(&[("pk", S("NONE".into())), ("sk", S("NONE#2".into()))]));
    let asked = aws_sdk_dynamodb::types::KeysAndAttributes::builder().set_keys(Some(keys)).build().unwrap();
    client.batch_get_item().request_items(table, asked).send().await.unwrap();
    let empty = client
        .query()
        .table_name(table)
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", S("NOTHING".into()));
    empty.send().await.unwrap();
    let priced = meter.take().await;
    let batch = &priced[0];
    assert_eq!((batch.op.as_str(), batch.items, batch.missing), ("BatchGetItem", 3, 2));
    assert_eq!(batch.rcu, 0.5 + 1.0 + 2.5 + 0.5 + 0.5, "each item rounded alone, a key not found one unit");
    assert_eq!((priced[1].items, priced[1].rcu), (0, 0.5), "an empty query costs the minimum");
    assert_eq!(Cost::of(&priced).rcu, 5.5);
}

#[tokio::test]
async fn a_filter_or_a_projection_hides_nothing_from_the_meter() {
    let (t, meter, items) = metered_items(&[5_000, 9_000, 17_000]).await;
    let (client, table) = (t.deps.store.client(), t.deps.store.table());
    let filtered = client
        .query()
        .table_name(table)
        .key_condition_expression("#pk = :pk")
        .filter_expression("#price > :huge")
        .expression_attribute_names("#pk", "pk")
        .expression_attribute_names("#price", "price")
        .expression_attribute_values(":pk", S("METER".into()))
        .expression_attribute_values(":huge", N("1000000".into()))
        .limit(2);
    assert_eq!(filtered.send().await.unwrap().count(), 0, "the filter drops what it read");
    let key = item(&[("pk", items[2]["pk"].clone()), ("sk", items[2]["sk"].clone())]);
    let projected = client.get_item().table_name(table).set_key(Some(key)).projection_expression("pk");
    assert_eq!(projected.send().await.unwrap().item().map(HashMap::len), Some(1));
    let priced = meter.take().await;
    let both = item_size(&items[0]) + item_size(&items[1]);
    assert_eq!((priced[0].items, priced[0].bytes, priced[0].reread), (2, both, true), "the two items the limit read");
    assert_eq!(priced[0].rcu, 2.0, "14 KB read, 4 units");
    assert_eq!((priced[1].bytes, priced[1].rcu), (item_size(&items[2]), 2.5), "the whole item");
}

#[tokio::test]
async fn the_meter_counts_a_handler_s_requests_as_the_store_does() {
    let (t, meter) = TestTable::with_meter().await;
    integration_tests::sign_up_all(&t.deps, &["seller-1"]).await;
    let category = req("POST /categories").by(As::Admin).json(json!({ "name": "Wide", "id": "wide" }));
    assert_eq!(catalog(&t.deps, category).await.status, 201);
    let title = format!("lamp {}", "🎈".repeat(195));
    let body = json!({ "title": title, "price": 12, "categoryId": "wide", "description": "🎈".repeat(4000) });
    let created = listings(&t.deps, req("POST /listings").by(As::User("seller-1")).json(body)).await;
    let id = created.body["listingId"].as_str().expect("a listing").to_owned();
    meter.take().await;
    t.log.take();
    let r = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", &id)).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let priced = meter.take().await;
    assert_eq!(priced.len(), t.log.take().len(), "one record per request, as the store's own");
    let c = Cost::of(&priced);
    assert!(c.bytes > 16_384 && c.bytes < 20_480, "the longest title and description in 4-byte characters: {c}");
    assert_eq!((c.requests, c.items, c.rcu), (1, 2, 2.5), "the listing and its details: {c}");
}
