//! Folded counts (issue 34): each batch's counts go to one of an
//! aggregate's parts, at random, with the markers that decide them; a
//! part's record folds the parts into the holder people read, adding only
//! what the parts gained since the holder's last fold.

use aws_lambda_events::dynamodb::EventRecord;
use derived::aggregates::fold::{self, Folding};
use derived::aggregates::settle::check_aggregate;
use derived::aggregates::{AggregateKind, ListingFavorites};
use domain::ids::{OrderId, ReviewId};
use domain::model::Review;
use futures_util::future::join_all;
use integration_tests::derived::{differences, scan};
use integration_tests::{
    deliver_parts, is_part_record, listings, new_listing, process_stream, process_stream_once, put_users, req,
    stream_records, users, As, TestTable,
};
use keyschema::table::EntityType;
use maintenance::reconcile::{self, Kind, Options};
use store::Item;
use ulid::Ulid;

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
    fans_named(t, "fan", n).await
}

/// `n` signed-up users, named `<prefix>-000`...
async fn fans_named(t: &TestTable, prefix: &str, n: usize) -> Vec<&'static str> {
    let mut out = Vec::new();
    for i in 0..n {
        let name: &'static str = Box::leak(format!("{prefix}-{i:03}").into_boxed_str());
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
    t.raw_update(key, "ADD favoriteCount :c", &[], &[(":c", store::item::n(5))]).await;
    for fan in fans(&t, 3).await {
        assert_eq!(users(&t.deps, favorite(&listing, fan)).await.status, 201);
    }
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    assert_eq!(count(&t, &listing).await, 8, "5 kept, 3 folded");

    let aggregate = ListingFavorites::of(&listing.parse().unwrap(), None).unwrap();
    // A part gains 2 (a batch's counts), its record not yet delivered.
    let part = keyschema::keys::aggregate_part(aggregate.kind.tag(), &aggregate.of, &7).unwrap();
    let values = [
        (":c", store::item::n(2)),
        (":r", store::item::n(1)),
        (":e", store::item::s(EntityType::AggregatePart.as_str())),
    ];
    t.raw_update(part, "ADD #c :c, rev :r SET entityType = :e", &[("#c", "count")], &values).await;
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
    t.raw_update(key, "ADD favoriteCount :c", &[], &[(":c", store::item::n(4))]).await;
    let report = maintenance::reconcile::run(&t.deps.store, Default::default()).await;
    assert_eq!(report.of(maintenance::reconcile::Kind::Aggregate(AggregateKind::ListingFavorites)).repaired, 1);
    assert_eq!(count(&t, &listing).await, 3);
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

fn entity_of(r: &EventRecord) -> Option<String> {
    let image = if r.event_name == "REMOVE" { &r.change.old_image } else { &r.change.new_image };
    match image.get("entityType") {
        Some(serde_dynamo::AttributeValue::S(s)) => Some(s.clone()),
        _ => None,
    }
}

fn fav(method: &str, listing: &str, by: &'static str) -> integration_tests::Req {
    req(&format!("{method} /users/me/favorites/{{listingId}}")).path("listingId", listing).by(As::User(by))
}

/// Each record in a batch of its own, all at once; what failed, again one by one.
async fn count_concurrently(t: &TestTable, records: &[EventRecord]) {
    let failed: Vec<String> =
        join_all(records.iter().map(|r| process_stream_once(t, vec![r.clone()]))).await.into_iter().flatten().collect();
    for r in records.iter().filter(|r| r.change.sequence_number.as_ref().is_some_and(|s| failed.contains(s))) {
        assert!(process_stream(t, vec![r.clone()]).await.is_empty());
    }
}

/// The favorites' records of one event (`INSERT`, `REMOVE`) in the stream.
async fn favorite_records(t: &TestTable, event: &str) -> Vec<EventRecord> {
    let records = stream_records(t).await.into_iter();
    records.filter(|r| r.event_name == event && entity_of(r).as_deref() == Some("Favorite")).collect()
}

/// `times` folds of `aggregate`, one after another (errors ignored: a race lost).
async fn folds(store: &store::Store, aggregate: &derived::aggregates::Aggregate, times: usize) {
    for _ in 0..times {
        let _ = fold::fold(store, aggregate).await;
    }
}

/// `times` reconcile checks of `aggregate` with repair: how many repaired.
async fn repairs(store: &store::Store, aggregate: &derived::aggregates::Aggregate, times: usize) -> usize {
    let mut n = 0;
    for _ in 0..times {
        if let Ok(Some(d)) = check_aggregate(store, aggregate, false).await {
            n += usize::from(d.repaired);
        }
    }
    n
}

/// Counts (each favorite in its own batch, all at once), folds, replays of
/// the parts' records so far and reconcile's check (with repair) of the
/// same aggregate, all interleaved: the listing ends exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_folds_replays_and_repairs_interleaved_add_each_once() {
    let t = TestTable::with_demo_data().await;
    let listing = listings(&t.deps, new_listing("Viral")).await.body["listingId"].as_str().unwrap().to_owned();
    let fans = fans_named(&t, "probe", 36).await;
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    for fan in &fans {
        assert_eq!(users(&t.deps, fav("PUT", &listing, fan)).await.status, 201);
    }
    let adds = favorite_records(&t, "INSERT").await;
    assert_eq!(adds.len(), 36);
    let aggregate = ListingFavorites::of(&listing.parse().unwrap(), None).unwrap();
    let store = t.deps.store.clone();
    let mut repaired = 0;
    let replaying = async {
        for _ in 0..6 {
            let parts: Vec<EventRecord> = stream_records(&t).await.into_iter().filter(is_part_record).collect();
            let _ = process_stream_once(&t, parts).await;
        }
    };
    let ((), (), n, ()) = tokio::join!(
        count_concurrently(&t, &adds),
        folds(&store, &aggregate, 40),
        repairs(&store, &aggregate, 12),
        replaying
    );
    repaired += n;
    // 12 of them removed, the same way.
    for fan in &fans[..12] {
        assert_eq!(users(&t.deps, fav("DELETE", &listing, fan)).await.status, 204);
    }
    let removes = favorite_records(&t, "REMOVE").await;
    assert_eq!(removes.len(), 12);
    let ((), (), n) =
        tokio::join!(count_concurrently(&t, &removes), folds(&store, &aggregate, 40), repairs(&store, &aggregate, 12));
    repaired += n;
    assert!(deliver_parts(&t).await.is_empty());
    assert_eq!(count(&t, &listing).await, 24, "36 - 12, each once ({repaired} repairs made meanwhile)");
    assert_eq!(repaired, 0, "nothing drifted: reconcile should never have repaired");
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

/// A drift on the holder while its parts are not folded yet: one
/// reconcile run repairs the drift and folds the parts, exactly.
#[tokio::test]
async fn a_drift_beside_unfolded_parts_is_repaired_exactly() {
    let t = TestTable::with_demo_data().await;
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    let listing = listings(&t.deps, new_listing("Lamp")).await.body["listingId"].as_str().unwrap().to_owned();
    for fan in fans_named(&t, "drift", 3).await {
        assert_eq!(users(&t.deps, fav("PUT", &listing, fan)).await.status, 201);
    }
    let favorites: Vec<EventRecord> =
        stream_records(&t).await.into_iter().filter(|r| entity_of(r).as_deref() == Some("Favorite")).collect();
    assert!(process_stream_once(&t, favorites).await.is_empty());
    let key = keyschema::keys::listing(&listing.parse().unwrap()).unwrap();
    integration_tests::derived::set_raw(&t.deps.store, &key.into(), &[("favoriteCount", store::item::n(7))], &[]).await;
    let report = reconcile::run(&t.deps.store, Options::default()).await;
    assert!(report.complete, "{report:?}");
    assert_eq!(count(&t, &listing).await, 3, "{report:?}");
    assert!(deliver_parts(&t).await.is_empty());
    assert_eq!(count(&t, &listing).await, 3);
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

/// A category's rating whose item exists and is exact but lags one batch
/// behind its parts (the normal state of a busy category) is no drift, as
/// the same lag of a user's rating is not (found 1 before reconcile's
/// path for ratings only their parts hold took only those).
#[tokio::test]
async fn a_category_rating_lagging_its_parts_is_no_drift() {
    let t = TestTable::with_demo_data().await;
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    let dry = Options { dry_run: true, ..Default::default() };
    assert_eq!(reconcile::run(&t.deps.store, dry).await.found(), 0, "exact to begin with");
    // Two reviews in `books`: the first counted and folded (its rating
    // item created, exact), the second counted into parts, its parts'
    // records not delivered yet (the next batch).
    let users_ = put_users(&t, 2).await;
    let review = |i: u64, user: &domain::ids::UserId| Review {
        home: None,
        review_id: ReviewId::from_ulid(Ulid::from_parts(1_790_000_000_000 + i, 7)),
        reviewed_user_id: user.clone(),
        author_id: format!("author-{i}").parse().unwrap(),
        order_id: OrderId::from_ulid(Ulid::from_parts(1_790_000_000_000 + i, 1)),
        category_id: Some("books".parse().unwrap()),
        rating: 4,
        body: "fine".into(),
        created_at: "2026-11-22T00:00:00.000Z".into(),
    };
    t.deps.store.put_new(&review(1, &users_[0])).await.unwrap();
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    assert_eq!(reconcile::run(&t.deps.store, dry).await.found(), 0, "exact, the books rating item exists");
    t.deps.store.put_new(&review(2, &users_[1])).await.unwrap();
    let records: Vec<EventRecord> = stream_records(&t)
        .await
        .into_iter()
        .filter(|r| {
            entity_of(r).as_deref() == Some("Review")
                && r.change
                    .new_image
                    .get("reviewedUserId")
                    .is_some_and(|v| matches!(v, serde_dynamo::AttributeValue::S(s) if s == users_[1].as_str()))
        })
        .collect();
    assert_eq!(records.len(), 1);
    assert!(process_stream_once(&t, records).await.is_empty());
    let report = reconcile::run(&t.deps.store, dry).await;
    let (users_found, categories_found) = (
        report.of(Kind::Aggregate(AggregateKind::UserRatings)).found,
        report.of(Kind::Aggregate(AggregateKind::CategoryRatings)).found,
    );
    assert_eq!(users_found, 0, "a user's rating lagging its parts is no drift: {report:?}");
    assert_eq!(categories_found, 0, "nor should a category's rating lagging its parts be: {report:?}");
}
