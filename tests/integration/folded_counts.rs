//! Folded counts (issue 34): each batch's counts go to one of an
//! aggregate's parts, at random, with the markers that decide them; a
//! part's record folds the parts into the holder people read, adding only
//! what the parts gained since the holder's last fold.

use derived::aggregates::fold::{self, Folding};
use derived::aggregates::{AggregateKind, ListingFavorites};
use integration_tests::derived::{differences, scan};
use integration_tests::{
    listings, new_listing, process_stream, process_stream_once, req, stream_records, users, As, TestTable,
};
use keyschema::table::EntityType;
use store::Item;

fn favorite(listing: &str, by: &'static str) -> integration_tests::Req {
    req("PUT /users/me/favorites/{listingId}").path("listingId", listing).by(As::User(by))
}

async fn count(t: &TestTable, listing: &str) -> u64 {
    let r = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", listing)).await;
    r.body["favoriteCount"].as_u64().unwrap()
}

fn n(item: &Item, name: &str) -> i64 {
    item.get(name).and_then(|v| v.as_n().ok()).map_or(0, |v| v.parse().unwrap())
}

/// The parts of a listing's favorite count, as stored.
async fn parts(t: &TestTable, listing: &str) -> Vec<Item> {
    let pk = format!("PARTS#{}#{listing}", AggregateKind::ListingFavorites.tag());
    scan(&t.deps.store).await.into_iter().filter(|i| i.get("pk").and_then(|v| v.as_s().ok()) == Some(&pk)).collect()
}

async fn listing_item(t: &TestTable, listing: &str) -> Item {
    let key = keyschema::keys::listing(&listing.parse().unwrap()).unwrap();
    t.deps.store.batch_get_items(&[key.into()], true).await.unwrap().remove(0)
}

/// `n` signed-up users, named `fan-000`...
async fn fans(t: &TestTable, n: usize) -> Vec<&'static str> {
    let mut out = Vec::new();
    for i in 0..n {
        let name: &'static str = Box::leak(format!("fan-{i:03}").into_boxed_str());
        assert_eq!(integration_tests::sign_up(&t.deps, name).await, 201);
        out.push(name);
    }
    out
}

async fn new_listing_id(t: &TestTable) -> String {
    let created = listings(&t.deps, new_listing("Viral")).await;
    created.body["listingId"].as_str().unwrap().to_owned()
}

/// 40 fans, each favorite in a batch of its own (as 40 stream shards
/// would deliver them): the counts land on many parts, never on the
/// listing in a transaction, and the folds bring the listing to exactly 40;
/// a replay of every record writes no part and changes nothing.
#[tokio::test]
async fn a_hot_listings_favorites_spread_over_parts_and_fold_exactly() {
    let t = TestTable::with_demo_data().await;
    let listing = new_listing_id(&t).await;
    let fans = fans(&t, 40).await;
    for fan in &fans {
        assert_eq!(users(&t.deps, favorite(&listing, fan)).await.status, 201);
    }
    let records = stream_records(&t).await;
    let is_favorite = |r: &&aws_lambda_events::dynamodb::EventRecord| matches!(r.change.new_image.get("entityType"), Some(serde_dynamo::AttributeValue::S(e)) if e == "Favorite");
    let theirs: Vec<_> = records.iter().filter(is_favorite).cloned().collect();
    assert_eq!(theirs.len(), 40);
    for record in theirs {
        assert!(process_stream_once(&t, vec![record]).await.is_empty());
    }
    let stored = parts(&t, &listing).await;
    let (sum, revs) = stored.iter().fold((0, 0), |(c, r), p| (c + n(p, "count"), r + n(p, "rev")));
    assert_eq!((sum, revs), (40, 40), "every favorite once, in some part");
    assert!(stored.len() >= 10, "40 batches over 128 parts at random: {} parts", stored.len());
    assert_eq!(count(&t, &listing).await, 0, "not folded before the parts' records arrive");
    assert!(integration_tests::deliver_parts(&t).await.is_empty());
    assert_eq!(count(&t, &listing).await, 40);
    assert_eq!(n(&listing_item(&t, &listing).await, "favoritesFoldedRev"), 40);
    // Replayed, reversed: no part moves, the count stays.
    let all = stream_records(&t).await;
    assert!(process_stream(&t, all.iter().rev().cloned().collect()).await.is_empty());
    let again = parts(&t, &listing).await;
    assert_eq!(again, stored, "a replay writes no part");
    assert_eq!(count(&t, &listing).await, 40);
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

/// A count kept on the listing before it had parts (what the code before
/// parts left) stays: a fold adds what the parts gained. Eight folds at
/// once after a part gained 2 add the 2 once (a fold that adds the parts'
/// total, or adds without its condition, fails this).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_kept_before_parts_stays_and_concurrent_folds_add_once() {
    let t = TestTable::with_demo_data().await;
    let listing = new_listing_id(&t).await;
    let key = keyschema::keys::listing(&listing.parse().unwrap()).unwrap();
    let raw_add = |key: keyschema::Key, expr: &'static str, values: Vec<(&'static str, i64)>| {
        let mut update = t
            .deps
            .store
            .client()
            .update_item()
            .table_name(t.deps.store.table())
            .set_key(Some(store::item::key_item(&key)))
            .update_expression(expr);
        for (name, value) in values {
            update = update.expression_attribute_values(name, store::item::n(value));
        }
        update.send()
    };
    raw_add(key.clone().into(), "ADD favoriteCount :c", vec![(":c", 5)]).await.unwrap();
    for fan in fans(&t, 3).await {
        assert_eq!(users(&t.deps, favorite(&listing, fan)).await.status, 201);
    }
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    assert_eq!(count(&t, &listing).await, 8, "5 kept, 3 folded");

    let aggregate = ListingFavorites::of(&listing.parse().unwrap(), None).unwrap();
    // A part gains 2 (a batch's counts), its record not yet delivered.
    let part = keyschema::keys::aggregate_part(aggregate.kind.tag(), &aggregate.of, &7).unwrap();
    t.deps
        .store
        .client()
        .update_item()
        .table_name(t.deps.store.table())
        .set_key(Some(store::item::key_item(&part.into())))
        .update_expression("ADD #c :c, rev :r SET entityType = :e")
        .expression_attribute_names("#c", "count")
        .expression_attribute_values(":c", store::item::n(2))
        .expression_attribute_values(":r", store::item::n(1))
        .expression_attribute_values(":e", store::item::s(EntityType::AggregatePart.as_str()))
        .send()
        .await
        .unwrap();
    let folds: Vec<_> = (0..8)
        .map(|_| {
            let (store, aggregate) = (t.deps.store.clone(), aggregate.clone());
            tokio::spawn(async move { fold::fold(&store, &aggregate).await.unwrap() })
        })
        .collect();
    let mut folded = 0;
    for f in folds {
        folded += usize::from(f.await.unwrap() == Folding::Folded);
    }
    assert!(folded >= 1, "one of them folded");
    assert_eq!(count(&t, &listing).await, 10, "5 + 3 + 2, the 2 once");
    assert_eq!(fold::fold(&t.deps.store, &aggregate).await.unwrap(), Folding::Unchanged);
}

/// Reconcile counts what the parts gained as the aggregate's (no drift
/// for a holder merely not folded yet), folds it (creating a category's
/// rating that only its parts hold), and repairs a drift of the holder
/// beside its parts.
#[tokio::test]
async fn reconcile_folds_what_was_not_folded_and_repairs_a_drift_beside_parts() {
    let t = TestTable::with_demo_data().await;
    let listing = new_listing_id(&t).await;
    for fan in fans(&t, 3).await {
        assert_eq!(users(&t.deps, favorite(&listing, fan)).await.status, 201);
    }
    // The counts, but not the parts' records (lost, or not yet arrived).
    assert!(process_stream_once(&t, stream_records(&t).await).await.is_empty());
    assert_eq!(count(&t, &listing).await, 0);
    let dry = maintenance::reconcile::Options { dry_run: true, ..Default::default() };
    let report = maintenance::reconcile::run(&t.deps.store, dry).await;
    // The listing is exact, counting its parts; the demo's category rating
    // that only its parts hold yet is found (its first fold creates it).
    let category = maintenance::reconcile::Kind::Aggregate(AggregateKind::CategoryRatings);
    assert_eq!((report.found(), report.of(category).found), (1, 1), "{report:?}");
    assert_eq!(count(&t, &listing).await, 0, "a dry run writes nothing");
    let report = maintenance::reconcile::run(&t.deps.store, Default::default()).await;
    assert!(report.complete, "{report:?}");
    assert_eq!(count(&t, &listing).await, 3, "folded");
    // A drift on the holder (a lost write): repaired beside the parts.
    let key = keyschema::keys::listing(&listing.parse().unwrap()).unwrap();
    t.deps
        .store
        .client()
        .update_item()
        .table_name(t.deps.store.table())
        .set_key(Some(store::item::key_item(&key.into())))
        .update_expression("ADD favoriteCount :c")
        .expression_attribute_values(":c", store::item::n(4))
        .send()
        .await
        .unwrap();
    let report = maintenance::reconcile::run(&t.deps.store, Default::default()).await;
    assert_eq!(report.of(maintenance::reconcile::Kind::Aggregate(AggregateKind::ListingFavorites)).repaired, 1);
    assert_eq!(count(&t, &listing).await, 3);
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}
