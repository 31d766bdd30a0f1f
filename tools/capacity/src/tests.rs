use super::*;

fn mix(requests: &str, category_share: f64, shards: u16) -> Mix {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/mix.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["requestsPerSecond"] = serde_json::from_str(requests).unwrap();
    value["hotShare"]["category"] = category_share.into();
    value["hotCategoryShards"] = shards.into();
    serde_json::from_value(value).unwrap()
}

fn gsi2(load: &BTreeMap<(String, String), f64>, pk: &str) -> f64 {
    load.get(&("GSI7".to_owned(), pk.to_owned())).copied().unwrap_or(0.0)
}

#[test]
fn a_browse_reads_its_category_shards_at_the_documented_price() {
    // One shard: the page and one look-ahead card of 0.35 KB, 7.35 KB,
    // 2 units of 4 KB, eventually consistent: 1 RCU a page.
    let load = evaluate(&mix(r#"{"browse category": 100}"#, 1.0, 1)).unwrap();
    let rcu = gsi2(&load.rcu, "CATEGORY#books#0");
    assert!((rcu - 100.0).abs() < 1e-9, "{rcu}");
    // Eight shards: each read once a page (a few listings, 0.5 RCU) and
    // again on some pages.
    let load = evaluate(&mix(r#"{"browse category": 100}"#, 1.0, 8)).unwrap();
    for shard in 0..8 {
        let rcu = gsi2(&load.rcu, &format!("CATEGORY#books#{shard}"));
        assert!((50.0..100.0).contains(&rcu), "shard {shard}: {rcu}");
    }
    assert_eq!(gsi2(&load.rcu, "CATEGORY#books#8"), 0.0);
    let spread = evaluate(&mix(r#"{"browse category": 100}"#, 0.0, 8)).unwrap();
    assert!(!spread.rcu.keys().any(|(_, pk)| pk.starts_with("CATEGORY#books")));
    assert!(spread.rcu.values().all(|r| *r <= 1.0), "200 cold categories share the load");
}

#[test]
fn a_listing_create_writes_the_listing_in_a_transaction_and_its_indexes() {
    let load = evaluate(&mix(r#"{"create listing": 10}"#, 1.0, 8)).unwrap();
    // The put in GSI6 (seller) and its browse keys in GSI7-8 and GSI5: no
    // category item in any transaction, the category read from memory.
    assert!(!load.tx_per_item.keys().any(|k| k.starts_with("CATEGORIES")), "{:?}", load.tx_per_item);
    let copies: Vec<f64> = (0..8).map(|s| gsi2(&load.wcu, &format!("CATEGORY#books#{s}"))).collect();
    let total: f64 = copies.iter().sum();
    assert!((total - 10.0).abs() < 1e-9, "one index copy per new listing: {copies:?}");
    assert!(copies.iter().all(|c| *c < 3.0), "spread over the shards: {copies:?}");
}

#[test]
fn a_price_change_is_one_write_moving_its_price_key_and_one_in_the_cards_index() {
    let load = evaluate(&mix(r#"{"update listing": 10}"#, 1.0, 1)).unwrap();
    let index = |name: &str| -> f64 { load.wcu.iter().filter(|((i, _), _)| i == name).map(|(_, w)| w).sum() };
    // The API's write moves GSI8's key (price in the sort key): the old
    // entry deleted, the new put, and nothing rewritten in place.
    assert!((index("GSI8") - 20.0).abs() < 1e-9, "{}", index("GSI8"));
    // GSI6 and GSI7 hold the card (the price): rewritten by the same
    // write, once (they hold no GSI8 key).
    assert!((index("GSI6") - 10.0).abs() < 1e-9 && (index("GSI7") - 10.0).abs() < 1e-9);
    // GSI5 holds the card (the price), its key unmoved: rewritten once.
    assert!(index("GSI5") > 0.0 && index("GSI5") <= 10.0, "{}", index("GSI5"));
    // And the table's item once: no write of the stream processor after.
    assert!((index("table") - 10.0).abs() < 1e-9, "{}", index("table"));
}

#[test]
fn crossings_are_found_by_bisection() {
    let at = crossing(|m| 2.0 * m, 3000.0).unwrap();
    assert!((at - 1500.0).abs() < 1e-6);
    assert_eq!(crossing(|_| 1.0, 3000.0), None);
}
