//! Reconcile (issue 19): after a load run whose stream was processed, the
//! derived data is corrupted directly in random subsets (aggregates,
//! counts, index keys of every kind, markers, records lost for good); one
//! run makes everything exact, a second finds nothing; a run beside live
//! writes and the stream processor leaves everything exact; a run keeps to
//! its read budget; an interrupted run resumes from its checkpoints.

use std::collections::BTreeMap;
use std::time::Duration;

use aws_sdk_dynamodb::types::AttributeValue;
use derived::aggregates::Aggregate;
use derived::aggregates::AggregateKind::{ListingFavorites, UserRatings};
use integration_tests::derived::{differences, s, scan, set_raw, Item};
use integration_tests::workload::{favorite, trader, workload};
use integration_tests::{listings, process_stream, req, users, As, TestTable};
use keyschema::entities;
use keyschema::table::EntityType;
use maintenance::pace::Budget;
use maintenance::reconcile::{self, Kind, Options, Report};
use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use serde_json::json;

fn rng(seed: u8) -> TestRng {
    TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32])
}

fn n(item: &Item, name: &str) -> i64 {
    match item.get(name) {
        Some(AttributeValue::N(v)) => v.parse().unwrap(),
        _ => 0,
    }
}

fn unpaced() -> Options {
    Options { budget: Budget { rcu: 0.0, wcu: 0.0 }, ..Options::default() }
}

/// The users of the load runs: the fewest the workload makes some of
/// everything with (a removal, a review deleted, a favorite removed), about
/// 70 items beside the demo data's, some of each kind of derived data.
const TRADERS: usize = 5;

/// A table after a load run of `traders` users, its stream processed: exact.
async fn loaded(traders: usize) -> TestTable {
    let t = TestTable::with_demo_data().await;
    workload(&t, traders).await;
    // Every record, the demo data's too.
    let records = integration_tests::stream_records(&t).await;
    assert_eq!(process_stream(&t, records).await, Vec::<String>::new());
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new(), "exact after the load run");
    t
}

async fn update(t: &TestTable, item: &Item, set: &[(&str, AttributeValue)], remove: &[&str]) {
    set_raw(&t.deps.store, &store::item::key_of(item).unwrap(), set, remove).await;
}

async fn add(t: &TestTable, item: &Item, deltas: &[(&str, i64)]) {
    let mut req = t.deps.store.client().update_item().table_name(t.deps.store.table());
    req = req.key("pk", item["pk"].clone()).key("sk", item["sk"].clone());
    let mut parts = Vec::new();
    for (i, (name, delta)) in deltas.iter().enumerate() {
        req = req
            .expression_attribute_names(format!("#a{i}"), *name)
            .expression_attribute_values(format!(":a{i}"), num(*delta));
        parts.push(format!("#a{i} :a{i}"));
    }
    req.update_expression(format!("ADD {}", parts.join(", "))).send().await.unwrap();
}

async fn delete(t: &TestTable, item: &Item) {
    let c = t.deps.store.client().delete_item().table_name(t.deps.store.table());
    c.key("pk", item["pk"].clone()).key("sk", item["sk"].clone()).send().await.unwrap();
}

fn num(v: i64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// Whether to corrupt an item of a kind `done` items of which are
/// corrupted already: one in `one_in` at random, and the first if none is
/// yet (so every kind is corrupted on a small table too).
fn chosen(rng: &mut TestRng, one_in: u32, done: &BTreeMap<Kind, usize>, kind: Kind) -> bool {
    rng.random_range(0..one_in) == 0 || !done.contains_key(&kind)
}

/// Corrupts a random quarter of each kind of derived data (at least one of
/// each), as lost or mangled writes would; returns how many of each kind.
async fn corrupt(t: &TestTable, seed: u8) -> BTreeMap<Kind, usize> {
    let mut rng = rng(seed);
    let items = scan(&t.deps.store).await;
    let of = |e: EntityType| items.iter().filter(move |i| s(i, "entityType") == e.as_str());
    let mut done: BTreeMap<Kind, usize> = BTreeMap::new();
    // Aggregates set to something else.
    for user in of(EntityType::User) {
        if chosen(&mut rng, 4, &done, Kind::Aggregate(UserRatings)) {
            let set = [("ratingSum", num(n(user, "ratingSum") + 3)), ("reviewCount", num(n(user, "reviewCount") + 1))];
            update(t, user, &set, &[]).await;
            *done.entry(Kind::Aggregate(UserRatings)).or_default() += 1;
        }
    }
    for listing in of(EntityType::Listing) {
        if chosen(&mut rng, 4, &done, Kind::Aggregate(ListingFavorites)) {
            if n(listing, "favoriteCount") == 0 || rng.random_range(0..2) == 0 {
                update(t, listing, &[("favoriteCount", num(n(listing, "favoriteCount") + 2))], &[]).await;
            } else {
                update(t, listing, &[], &["favoriteCount"]).await;
            }
            *done.entry(Kind::Aggregate(ListingFavorites)).or_default() += 1;
        }
    }
    // Index keys: one index of a random item of each entity that has any,
    // its keys removed, mangled, or added where it has none.
    let mut touched = std::collections::BTreeSet::new();
    for decl in entities::ALL.iter().filter(|d| !d.indexes.is_empty()) {
        let kind = Kind::IndexKeys(decl.entity);
        for item in of(decl.entity) {
            if !chosen(&mut rng, 4, &done, kind) {
                continue;
            }
            touched.insert((s(item, "pk"), s(item, "sk")));
            let index = &decl.indexes[rng.random_range(0..decl.indexes.len())];
            let (pk, sk) = (index.key.index.pk(), index.key.index.sk());
            if item.contains_key(pk) && rng.random_range(0..2) == 0 {
                update(t, item, &[], &[pk, sk]).await;
            } else {
                update(
                    t,
                    item,
                    &[(pk, AttributeValue::S("BOGUS#1".into())), (sk, AttributeValue::S("BOGUS#2".into()))],
                    &[],
                )
                .await;
            }
            *done.entry(kind).or_default() += 1;
        }
    }
    // Search postings, at most one per listing (the report counts
    // listings): one lost, one holding other words, one of a word its
    // listing's title does not have.
    let mut listings_touched = std::collections::BTreeSet::new();
    for posting in of(EntityType::Posting) {
        if listings_touched.contains(&s(posting, "listingId")) || !chosen(&mut rng, 6, &done, Kind::SearchPostings) {
            continue;
        }
        listings_touched.insert(s(posting, "listingId"));
        match rng.random_range(0..3) {
            0 => delete(t, posting).await,
            1 => update(t, posting, &[("words", AttributeValue::S("bogus".into()))], &[]).await,
            _ => {
                let mut stale: keyschema::records::Posting = serde_dynamo::from_item(posting.clone()).unwrap();
                stale.term = "zzstale".into();
                t.deps.store.write_batch(&[stale], &[]).await.unwrap();
            }
        }
        *done.entry(Kind::SearchPostings).or_default() += 1;
    }
    // Records lost for good: a review counted but its marker lost with the
    // count (a lost insert), and a favorite gone without its removal.
    for marker in of(EntityType::RatingMarker) {
        if s(marker, "state") == "counted" && chosen(&mut rng, 4, &done, Kind::Markers(UserRatings)) {
            let user = items.iter().find(|i| s(i, "sk") == "#METADATA" && s(i, "pk") == s(marker, "pk")).unwrap();
            delete(t, marker).await;
            add(t, user, &[("ratingSum", -n(marker, "weight")), ("reviewCount", -1)]).await;
            *done.entry(Kind::Markers(UserRatings)).or_default() += 1;
        }
    }
    for fav in of(EntityType::Favorite) {
        if !touched.contains(&(s(fav, "pk"), s(fav, "sk")))
            && chosen(&mut rng, 5, &done, Kind::Markers(ListingFavorites))
        {
            delete(t, fav).await;
            *done.entry(Kind::Markers(ListingFavorites)).or_default() += 1;
        }
    }
    done
}

fn found(report: &Report, kind: Kind) -> u64 {
    report.of(kind).found
}

#[tokio::test]
async fn reconcile_makes_every_derived_value_exact_and_a_second_run_finds_nothing() {
    let t = loaded(TRADERS).await;
    let corrupted = corrupt(&t, 7).await;
    assert!(corrupted.len() >= 10, "some of every kind corrupted: {corrupted:?}");
    let before = differences(&t.deps.store).await;
    assert!(before.len() >= 10, "the corruption shows: {before:#?}");

    let dry = reconcile::run(&t.deps.store, Options { dry_run: true, ..unpaced() }).await;
    assert!(dry.complete, "{dry:?}");
    assert_eq!(differences(&t.deps.store).await, before, "a dry run writes nothing");

    let report = reconcile::run(&t.deps.store, unpaced()).await;
    assert!(report.complete, "{report:?}");
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new(), "exact after one run: {report:#?}");
    for (&kind, count) in &corrupted {
        assert!(found(&report, kind) >= *count as u64, "{kind}: corrupted {count}, found {:?}", report.of(kind));
        if let Kind::IndexKeys(_) = kind {
            assert_eq!(found(&report, kind), *count as u64, "{kind}");
            assert_eq!(found(&dry, kind), *count as u64, "{kind} in the dry run");
        }
    }
    for (kind, tally) in &report.kinds {
        println!(
            "reconcile: {:<32} corrupted {:>3} found {:>3} repaired {:>3}",
            kind.to_string(),
            corrupted.get(kind).copied().unwrap_or(0),
            tally.found,
            tally.repaired
        );
    }
    let again = reconcile::run(&t.deps.store, unpaced()).await;
    assert!(again.complete && !again.resumed, "{again:?}");
    assert_eq!(again.found(), 0, "a second run repairs nothing: {:#?}", again.kinds);
}

/// Live API writes and the stream processor (the local poller) run while a
/// reconcile repairs the corrupted table: at the end, with the stream
/// drained, everything is exact.
#[tokio::test]
async fn reconcile_beside_live_writes_and_the_stream_processor_leaves_everything_exact() {
    let t = loaded(TRADERS).await;
    corrupt(&t, 11).await;
    let listing_ids: Vec<(String, usize)> = scan(&t.deps.store)
        .await
        .iter()
        .filter(|i| s(i, "entityType") == EntityType::Listing.as_str() && s(i, "status") == "active")
        .filter_map(|i| Some((s(i, "listingId"), s(i, "sellerId").strip_prefix("trader-")?.parse().ok()?)))
        .collect();
    let mut poller =
        local_stack::stream::StreamPoller::new(t.deps.store.clone(), integration_tests::endpoint()).await.unwrap();
    let writes = async {
        let mut rng = rng(3);
        for k in 0..40 {
            let (listing, seller) = &listing_ids[rng.random_range(0..listing_ids.len())];
            let by = trader(rng.random_range(0..TRADERS));
            let reply = match k % 4 {
                0 | 1 => users(&t.deps, favorite("PUT", listing, by)).await,
                2 => users(&t.deps, favorite("DELETE", listing, by)).await,
                _ => {
                    let r = req("PATCH /listings/{listingId}").path("listingId", listing).by(As::User(trader(*seller)));
                    listings(&t.deps, r.json(json!({ "price": 10 + k }))).await
                }
            };
            assert!([200, 201, 204, 404, 409].contains(&reply.status), "{k}: {} {:?}", reply.status, reply.body);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    let mut dropped = 0;
    let stream = async {
        for _ in 0..20 {
            dropped += poller.poll_once().await.unwrap().dropped;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let (report, (), ()) =
        tokio::join!(reconcile::run(&t.deps.store, Options { page: 25, ..unpaced() }), writes, stream);
    assert!(report.complete, "{report:?}");
    // Drain the stream: until a poll reads every shard and delivers nothing.
    let mut drained = false;
    for _ in 0..50 {
        let poll = poller.poll_once().await.unwrap();
        dropped += poll.dropped;
        if poll.records == 0 && poll.unread == 0 {
            drained = true;
            break;
        }
    }
    assert!(drained, "the stream drains in 50 polls");
    assert_eq!(dropped, 0, "records given up on after retries (an overloaded emulator?)");
    // An aggregate that live writes kept moving while the job checked it is
    // left to the next run (reported as moved, by design); nothing else may
    // differ, and a run once the writes stop leaves everything exact.
    let left = differences(&t.deps.store).await;
    let moved: u64 = report.kinds.iter().filter(|(k, _)| matches!(k, Kind::Aggregate(_))).map(|(_, t)| t.moved).sum();
    assert!(left.iter().all(|d| d.contains(" holds ")), "{left:#?} {:#?}", report.kinds);
    assert!(left.len() as u64 <= moved, "{left:#?}: more than the {moved} aggregates moved {:#?}", report.kinds);
    let again = reconcile::run(&t.deps.store, unpaced()).await;
    assert!(again.complete, "{again:?}");
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new(), "exact: {:#?}", again.kinds);
}

/// The job's consumption over time stays within its budget: over every
/// stretch of at least two seconds, at most the budget times the stretch
/// plus one second of budget (the bucket) and what the requests in flight
/// consumed. Unpaced, the same run reads far faster (the check can fail:
/// seen failing with the run unpaced, and paced to 1.5 and 2 times the
/// budget; the budget is under 20 RCU/s so that the doubled one still lets
/// one request in flight, not two).
#[tokio::test]
async fn reconcile_keeps_to_its_read_budget() {
    let t = loaded(TRADERS).await;
    let unpaced_run = reconcile::run(&t.deps.store, Options { dry_run: true, ..unpaced() }).await;
    let budget = 18.0;
    assert!(unpaced_run.rcu > 3.0 * budget, "enough reads to measure: {:.1} RCU", unpaced_run.rcu);
    let unpaced_rate = unpaced_run.rcu / unpaced_run.seconds;
    let options = Options { dry_run: true, budget: Budget { rcu: budget, wcu: 0.0 }, ..Options::default() };
    let paced = reconcile::run(&t.deps.store, options).await;
    assert!(paced.complete);
    let rate = paced.rcu / paced.seconds;
    println!(
        "reconcile read rate: budget {budget} RCU/s, paced {rate:.1} RCU/s over {:.1} s ({:.1} RCU), unpaced {unpaced_rate:.1} RCU/s",
        paced.seconds, paced.rcu
    );
    assert!(unpaced_rate > 1.5 * budget, "unpaced it reads faster than the budget");
    let largest_step = paced.samples.windows(2).map(|w| w[1].rcu - w[0].rcu).fold(0.0, f64::max);
    let in_flight = largest_step * f64::from(Options::default().segments);
    // Unpaced, many requests are in flight between two samples: the
    // allowance would hold the whole run and nothing below could fail.
    assert!(
        in_flight <= paced.rcu / 2.0,
        "what can be in flight ({in_flight:.1} RCU) is a small part of the run ({:.1} RCU)",
        paced.rcu
    );
    let mut stretches = 0;
    for (i, a) in paced.samples.iter().enumerate() {
        for b in &paced.samples[i + 1..] {
            let stretch = b.seconds - a.seconds;
            if stretch >= 2.0 {
                stretches += 1;
                let read = b.rcu - a.rcu;
                assert!(
                    read <= budget * (stretch + 1.0) + in_flight,
                    "{read:.1} RCU in {stretch:.2} s (budget {budget}/s, in flight {in_flight:.1})"
                );
            }
        }
    }
    assert!(stretches > 0, "the paced run lasts long enough to measure: {:.1} s", paced.seconds);
    assert!(rate <= budget + in_flight / paced.seconds, "{rate:.1} RCU/s against a budget of {budget}");
}

/// A run stopped part way (its time ran out) leaves checkpoints; the next
/// run resumes from them and finishes: exact, and it read less than a
/// whole run would have.
#[tokio::test]
async fn an_interrupted_reconcile_resumes_from_its_checkpoints() {
    let t = loaded(TRADERS).await;
    corrupt(&t, 5).await;
    let options = Options { page: 10, segments: 2, ..unpaced() };
    // Time runs out after about four seconds of a slow (paced) run, well
    // before its end (a dry run reads some 450 RCU, the search postings
    // most of it: at least 20 s at this budget) and, even on a loaded machine, more than a page per segment:
    // the budget refuses operations once the deadline is near (see
    // store::budget).
    let deadline_ms = domain::time::now_ms() + 5_500 + 4_000;
    let slow = Options { budget: Budget { rcu: 20.0, wcu: 20.0 }, ..options };
    let cut = store::budget::within(deadline_ms, reconcile::run(&t.deps.store, slow)).await;
    assert!(!cut.complete && cut.unavailable, "stopped by the deadline: {cut:?}");
    let resumed = reconcile::run(&t.deps.store, options).await;
    assert!(resumed.complete && resumed.resumed, "{resumed:?}");
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
    let whole = reconcile::run(&t.deps.store, options).await;
    assert!(!whole.resumed && whole.found() == 0, "{whole:?}");
    assert!(resumed.scanned < whole.scanned, "resumed {} items, a whole run {}", resumed.scanned, whole.scanned);
}

/// A checkpoint that cannot be read (another version wrote it, or a hand)
/// does not stop every run: its segment starts over and the run completes.
#[tokio::test]
async fn an_unreadable_checkpoint_restarts_its_segment() {
    let t = integration_tests::TestTable::with_demo_data().await;
    let key = keyschema::keys::checkpoint(reconcile::SETTLE_JOB, &0).unwrap().into_key();
    let bad = t.deps.store.client().put_item().table_name(t.deps.store.table());
    bad.item("pk", AttributeValue::S(key.pk))
        .item("sk", AttributeValue::S(key.sk))
        .item("entityType", AttributeValue::S("Checkpoint".into()))
        .item("segments", AttributeValue::S("many".into()))
        .send()
        .await
        .unwrap();
    let report = reconcile::run(&t.deps.store, unpaced()).await;
    assert!(report.complete, "{report:?}");
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

/// An aggregate checked while a stream batch moves it by exactly its drift
/// (two favorites counted in one transaction between the read of the count
/// and the read of its markers) is still found and repaired: the check
/// compares only what it read between two equal versions. Seen failing
/// without the second read of the version (count and markers then agreed at
/// 3 and the count was left at 5 of 3 favorites; the test above caught it in
/// 2 of 7 CI runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aggregate_moved_by_its_own_drift_while_checked_is_still_repaired() {
    use integration_tests::faults::Fault;
    let (t, faults) = TestTable::with_faults().await;
    integration_tests::sign_up_all(&t.deps, &["bob", "carol", "dave"]).await;
    let created = listings(&t.deps, integration_tests::new_listing("Drifting")).await;
    let listing = integration_tests::workload::id_of(&created.body, "listingId");
    assert_eq!(users(&t.deps, favorite("PUT", &listing, "bob")).await.status, 201);
    assert_eq!(process_stream(&t, integration_tests::stream_records(&t).await).await, Vec::<String>::new());
    let item = || async {
        let all = scan(&t.deps.store).await;
        all.into_iter()
            .find(|i| s(i, "entityType") == EntityType::Listing.as_str() && s(i, "listingId") == listing)
            .unwrap()
    };
    // Drifted by +2, as a lost write would leave it.
    add(&t, &item().await, &[("favoriteCount", 2)]).await;
    assert_eq!(n(&item().await, "favoriteCount"), 3);
    for by in ["carol", "dave"] {
        assert_eq!(users(&t.deps, favorite("PUT", &listing, by)).await.status, 201);
    }
    let records = integration_tests::stream_records(&t).await;
    let held = |item: &Item| derived::aggregates::held_by(&derived::Image::of_item(item).unwrap()).unwrap();
    let favorites = |held: Vec<Aggregate>| held.into_iter().find(|a| a.kind == ListingFavorites);
    let aggregate = favorites(held(&item().await)).expect("a listing holds its favorites");
    // The markers' read waits; the batch counting both new favorites (+2
    // markers, +2 count, one transaction) lands in between.
    faults.delay_through(&integration_tests::delaying_proxy(integration_tests::faults::DELAY).await);
    faults.inject("Query", Fault::Delayed, 1);
    let store = t.deps.store.clone();
    let check =
        tokio::spawn(async move { derived::aggregates::settle::check_aggregate(&store, &aggregate, false).await });
    tokio::time::sleep(integration_tests::faults::DELAY / 4).await;
    assert_eq!(faults.pending(), 0, "the check is reading its markers");
    assert_eq!(process_stream(&t, records).await, Vec::<String>::new());
    let drift = check.await.unwrap().unwrap().expect("the drift found");
    if !drift.repaired {
        // The batch was still landing on every read (a loaded machine): it
        // was left as moving; once the batch is in, the check repairs it.
        let aggregate = favorites(held(&item().await)).unwrap();
        let again = derived::aggregates::settle::check_aggregate(&t.deps.store, &aggregate, false).await;
        let again = again.unwrap().expect("the drift found");
        assert_eq!((again.stored.1 - again.markers.1, again.repaired), (2, true), "{again:?}");
    } else {
        assert_eq!(drift.stored.1 - drift.markers.1, 2, "{drift:?}");
    }
    assert_eq!(n(&item().await, "favoriteCount"), 3);
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

/// The job decides a marker from a read of its base item: a favorite that
/// the job found uncounted (a record lost for good) but that is removed,
/// and its removal handled, while the job's write is on its way must not be
/// counted by that write (the write checks the favorite is still there).
/// Without the check the listing held 1 favorite and had none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_favorite_removed_while_the_job_counts_it_is_not_counted() {
    use derived::aggregates::settle::settle;
    use derived::aggregates::Instance;
    use integration_tests::faults::Fault;
    let (t, faults) = TestTable::with_faults().await;
    integration_tests::sign_up_all(&t.deps, &["bob"]).await;
    let created = listings(&t.deps, integration_tests::new_listing("Removed in between")).await;
    let listing = integration_tests::workload::id_of(&created.body, "listingId");
    assert_eq!(users(&t.deps, favorite("PUT", &listing, "bob")).await.status, 201);
    assert_eq!(process_stream(&t, integration_tests::stream_records(&t).await).await, Vec::<String>::new());
    let all = scan(&t.deps.store).await;
    let find = |entity: EntityType| all.iter().find(|i| s(i, "entityType") == entity.as_str()).unwrap().clone();
    let (listing_item, marker) = (
        all.iter()
            .find(|i| s(i, "entityType") == EntityType::Listing.as_str() && s(i, "listingId") == listing)
            .unwrap(),
        find(EntityType::FavoriteMarker),
    );
    // A lost record: the marker says removed and the count 0, the favorite is there.
    update(&t, &marker, &[("state", AttributeValue::S("removed".into()))], &[]).await;
    add(&t, listing_item, &[("favoriteCount", -1)]).await;
    let aggregate = derived::aggregates::held_by(&derived::Image::of_item(listing_item).unwrap())
        .unwrap()
        .into_iter()
        .find(|a| a.kind == ListingFavorites)
        .expect("a listing holds its favorites");
    let (bob, id) = ("bob".parse().unwrap(), listing.parse().unwrap());
    let instance = Instance {
        marker: keyschema::keys::favorite_marker(&bob, &id).unwrap().into_key(),
        base: keyschema::keys::favorite(&bob, &id).unwrap().into_key(),
        member: None,
    };
    // The job's write waits; the favorite is removed and its removal handled.
    faults.delay_through(&integration_tests::delaying_proxy(integration_tests::faults::DELAY).await);
    faults.inject("TransactWriteItems", Fault::Delayed, 1);
    let store = t.deps.store.clone();
    let job = tokio::spawn(async move { settle(&store, &aggregate, &[instance], false).await });
    tokio::time::sleep(integration_tests::faults::DELAY / 4).await;
    assert_eq!(faults.pending(), 0, "the job's write is on its way");
    let records_before = integration_tests::stream_records(&t).await.len();
    assert_eq!(users(&t.deps, favorite("DELETE", &listing, "bob")).await.status, 204);
    let records = integration_tests::stream_records(&t).await.split_off(records_before);
    assert_eq!(process_stream(&t, records).await, Vec::<String>::new());
    job.await.unwrap().unwrap();
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

/// A measurement (run on its own): reconcile's items per second over a
/// loaded table, unpaced, a full (writing) run then dry runs; medians.
#[tokio::test]
#[ignore = "a measurement: run on its own"]
async fn reconcile_items_per_second() {
    let t = loaded(40).await;
    let mut rates = Vec::new();
    for _ in 0..7 {
        let report = reconcile::run(&t.deps.store, Options { dry_run: true, ..unpaced() }).await;
        assert!(report.complete);
        rates.push(report.scanned as f64 / report.seconds);
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "reconcile dry runs: {:.0} items/s median (runs: {:?})",
        rates[rates.len() / 2],
        rates.iter().map(|r| r.round()).collect::<Vec<_>>()
    );
}
