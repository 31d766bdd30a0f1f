//! The stream processor on a realistic batch of 1,000 records (listings
//! created, repriced and removed by 100 users, reviews about them,
//! favorites added and removed) from DynamoDB Local's real stream, two
//! ways: one item after another (`process_batch_with(.., 1)`) and
//! [`ITEMS_AT_ONCE`] items at a time;
//! alternately, each run on a fresh copy of the same table. The two
//! measurements (on DynamoDB Local, and through a proxy adding a network
//! round trip per request) take minutes, so they are `#[ignore]`d: they
//! print records/s (medians) and assert only correctness and that the
//! writes equal the distinct index keys and aggregates changed. In the normal
//! run: the same on 47 records, and a batch meeting faults while items
//! run concurrently (Lambda retrying from the first failed record
//! redelivers records of other items that had succeeded: that changes
//! nothing).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use aws_lambda_events::dynamodb::EventRecord;
use aws_sdk_dynamodb::types::{PutRequest, StreamSpecification, WriteRequest};
use domain::model::{Favorite, Listing, ListingStatus, Review, User};
use integration_tests::derived::{scan, setup_timeout, Item};
use integration_tests::faults::Fault;
use integration_tests::workload::workload;
use integration_tests::{process_stream, TestTable};
use keyschema::table::Index;
use store::{Store, Usage};
use stream_processor::ITEMS_AT_ONCE;

/// Rounds of the two ways, alternated.
const ROUNDS: usize = 5;

/// A fresh table holding `items`. Without a stream: DynamoDB Local keeps
/// every stream record it ever wrote (also of deleted tables) and slows
/// down as they pile up, which would make later runs slower than earlier
/// ones; the records processed come from the source table's stream anyway.
async fn copy_of(items: &[Item]) -> TestTable {
    let t = TestTable::new().await;
    let no_stream = StreamSpecification::builder().stream_enabled(false).build().unwrap();
    t.deps
        .store
        .client()
        .update_table()
        .table_name(t.deps.store.table())
        .stream_specification(no_stream)
        .customize()
        .config_override(setup_timeout())
        .send()
        .await
        .unwrap();
    for chunk in items.chunks(25) {
        let mut pending: Vec<WriteRequest> = chunk
            .iter()
            .map(|item| {
                let put = PutRequest::builder().set_item(Some(item.clone())).build().unwrap();
                WriteRequest::builder().put_request(put).build()
            })
            .collect();
        while !pending.is_empty() {
            let out = t
                .deps
                .store
                .client()
                .batch_write_item()
                .request_items(t.deps.store.table(), pending)
                .customize()
                .config_override(setup_timeout())
                .send()
                .await
                .unwrap();
            pending = out.unprocessed_items.and_then(|mut u| u.remove(t.deps.store.table())).unwrap_or_default();
        }
    }
    t.requests();
    t
}

fn s(item: &Item, attr: &str) -> Option<String> {
    item.get(attr).and_then(|v| v.as_s().ok()).cloned()
}

fn entity(item: &Item) -> Option<String> {
    s(item, "entityType")
}

/// What the processor keeps, by item: a listing's browse keys and
/// favoriteCount, a user's rating aggregates, a category's rating.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone)]
enum Kept {
    Keys(String),
    FavoriteCount(String),
    Ratings(String),
    CategoryRating(String),
}

fn kept(items: &[Item]) -> BTreeMap<Kept, String> {
    let mut out = BTreeMap::new();
    for item in items {
        match entity(item).as_deref() {
            Some("Listing") => {
                let listing: Listing = serde_dynamo::from_item(item.clone()).unwrap();
                let keys = [Index::Gsi7.pk(), Index::Gsi7.sk(), Index::Gsi8.pk(), Index::Gsi8.sk()].map(|a| s(item, a));
                out.insert(Kept::Keys(listing.listing_id.to_string()), format!("{keys:?}"));
                out.insert(Kept::FavoriteCount(listing.listing_id.to_string()), listing.favorite_count.to_string());
            }
            Some("User") => {
                let user: User = serde_dynamo::from_item(item.clone()).unwrap();
                out.insert(
                    Kept::Ratings(user.user_id.to_string()),
                    format!("{}/{}", user.rating_sum, user.review_count),
                );
            }
            Some("CategoryRating") => {
                let rating: keyschema::records::CategoryRating = serde_dynamo::from_item(item.clone()).unwrap();
                out.insert(
                    Kept::CategoryRating(rating.category_id.to_string()),
                    format!("{}/{}", rating.rating_sum, rating.review_count),
                );
            }
            _ => {}
        }
    }
    out
}

/// The distinct index keys and aggregates that differ between two states.
fn changed(before: &BTreeMap<Kept, String>, after: &BTreeMap<Kept, String>) -> BTreeSet<Kept> {
    after.iter().filter(|(k, v)| before.get(k) != Some(v)).map(|(k, _)| k.clone()).collect()
}

/// Every workload listing indexed exactly while active (at its price), and
/// every aggregate equal to the reviews and favorites stored.
fn assert_exact(items: &[Item]) {
    let (mut sums, mut favorites): (HashMap<String, (u64, u32)>, HashMap<String, u32>) = Default::default();
    for item in items {
        match entity(item).as_deref() {
            Some("Review") => {
                let review: Review = serde_dynamo::from_item(item.clone()).unwrap();
                let e = sums.entry(review.reviewed_user_id.to_string()).or_default();
                e.0 += u64::from(review.rating);
                e.1 += 1;
            }
            Some("Favorite") => {
                let f: Favorite = serde_dynamo::from_item(item.clone()).unwrap();
                *favorites.entry(f.listing_id.to_string()).or_default() += 1;
            }
            _ => {}
        }
    }
    let (mut listings_seen, mut users_seen) = (0, 0);
    for item in items {
        match entity(item).as_deref() {
            Some("Listing") => {
                let l: Listing = serde_dynamo::from_item(item.clone()).unwrap();
                if !l.seller_id.as_str().starts_with("trader-") {
                    continue;
                }
                listings_seen += 1;
                let keys = keyschema::entities::listing::ENTITY.item_keys(&store::item::attrs(item)).unwrap();
                let (gsi2, gsi3) = (keys.on(Index::Gsi7).cloned(), keys.on(Index::Gsi8).cloned());
                let have = [Index::Gsi7.pk(), Index::Gsi7.sk(), Index::Gsi8.pk(), Index::Gsi8.sk()].map(|a| s(item, a));
                let (id, status) = (l.listing_id, l.status);
                if status == ListingStatus::Active {
                    let (gsi2, gsi3) = (gsi2.unwrap(), gsi3.unwrap());
                    let want = [Some(gsi2.pk), Some(gsi2.sk), Some(gsi3.pk), Some(gsi3.sk)];
                    assert_eq!(have, want, "browse keys of {id} ({status:?})");
                } else {
                    // In neither index (a price change may leave a sort key
                    // alone, which joins nothing).
                    assert_eq!((&have[0], &have[2]), (&None, &None), "browse keys of {id} ({status:?})");
                }
                let want = favorites.get(&l.listing_id.to_string()).copied().unwrap_or(0);
                assert_eq!(l.favorite_count, want, "favoriteCount of {}", l.listing_id);
            }
            Some("User") => {
                let u: User = serde_dynamo::from_item(item.clone()).unwrap();
                if !u.user_id.as_str().starts_with("trader-") {
                    continue;
                }
                users_seen += 1;
                let want = sums.get(&u.user_id.to_string()).copied().unwrap_or_default();
                assert_eq!((u.rating_sum, u.review_count), want, "aggregates of {}", u.user_id);
            }
            _ => {}
        }
    }
    assert!(listings_seen > 0 && users_seen > 0);
}

/// How a batch is processed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Way {
    /// `process_batch_with(.., concurrency)`.
    Items(usize),
}

impl Way {
    fn name(self) -> String {
        match self {
            Way::Items(1) => "sequential (1 item at a time)".to_owned(),
            Way::Items(n) => format!("concurrent ({n} items at a time)"),
        }
    }
}

/// One measured run on a fresh copy of `snapshot`.
struct Run {
    /// Both batches: the records', then their parts' (the folds).
    elapsed: Duration,
    /// The records' batch alone.
    first: Duration,
    writes: usize,
    changed: BTreeSet<Kept>,
}

/// Processes `records` the `way` given on a fresh copy of `snapshot`,
/// sending the batch's requests to `via` (DynamoDB Local itself if `None`);
/// checks the result is exact and the writes reported were sent.
async fn run(snapshot: &[Item], records: &[EventRecord], way: Way, via: Option<&str>) -> Run {
    let t = copy_of(snapshot).await;
    let (store, log) = match via {
        None => (t.deps.store.clone(), t.log.clone()),
        Some(endpoint) => {
            let log = Usage::default();
            let client = local_stack::connect(endpoint, Some(log.clone())).await;
            (Store::new(client, t.deps.store.table()), log)
        }
    };
    let before = kept(snapshot);
    let started = Instant::now();
    let Way::Items(n) = way;
    let report = stream_processor::process_batch_with(&store, records, "throughput", n).await;
    assert_eq!((report.records, report.malformed), (records.len(), 0));
    let (mut writes, failed) = (report.writes, report.failed);
    let first = started.elapsed();
    let mut elapsed = first;
    assert!(failed.is_empty(), "{way:?}: {failed:?}");
    let mut sent = log.take_names();
    // Then the batch of the parts it wrote (folds), timed too; reading
    // the stream is not.
    // (The copy has no stream: the records are made from the parts, as
    // the stream would carry them.)
    let parts: Vec<EventRecord> = scan(&t.deps.store)
        .await
        .into_iter()
        .filter(|item| entity(item).as_deref() == Some("AggregatePart"))
        .enumerate()
        .map(|(i, item)| {
            let mut record = EventRecord::default();
            record.event_name = "INSERT".into();
            record.change.new_image = serde_dynamo::Item::from(item);
            record.change.sequence_number = Some(format!("{:021}", 1_000_000 + i));
            record
        })
        .collect();
    let _ = log.take_names();
    let started = Instant::now();
    let folds = stream_processor::process_batch_with(&store, &parts, "throughput", n).await;
    elapsed += started.elapsed();
    assert!(folds.failed.is_empty() && folds.folded > 0, "{way:?}: {folds:?}");
    writes += folds.writes;
    sent.extend(log.take_names());
    let writes_of = ["UpdateItem", "TransactWriteItems", "BatchWriteItem"];
    let sent_writes = sent.iter().filter(|op| writes_of.contains(&op.as_str())).count();
    assert_eq!(writes, sent_writes, "{way:?}: the writes reported are the writes sent");
    let after = scan(&t.deps.store).await;
    assert_exact(&after);
    // Keep the emulator as small as it was for the next run.
    t.deps.store.client().delete_table().table_name(t.deps.store.table()).send().await.unwrap();
    Run { elapsed, first, writes, changed: changed(&before, &kept(&after)) }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// The 1,000-record batch of 100 users and the table it applies to.
async fn batch_of_1000() -> (Vec<EventRecord>, Vec<Item>) {
    let source = TestTable::with_demo_data().await;
    let records = workload(&source, 100).await;
    assert!(records.len() >= 900, "{} records", records.len());
    let snapshot = scan(&source.deps.store).await;
    source.deps.store.client().delete_table().table_name(source.deps.store.table()).send().await.unwrap();
    (records, snapshot)
}

/// Counts the distinct changes by kind: (listings' index keys, favoriteCounts,
/// users' ratings, categories' ratings).
fn kinds(changed: &BTreeSet<Kept>) -> (usize, usize, usize, usize) {
    let count = |f: fn(&Kept) -> bool| changed.iter().filter(|k| f(k)).count();
    (
        count(|k| matches!(k, Kept::Keys(_))),
        count(|k| matches!(k, Kept::FavoriteCount(_))),
        count(|k| matches!(k, Kept::Ratings(_))),
        count(|k| matches!(k, Kept::CategoryRating(_))),
    )
}

/// Runs the two ways [`ROUNDS`] times, alternating which goes first, and
/// prints the medians.
async fn measure(title: &str, via: Option<&str>) {
    let (records, snapshot) = batch_of_1000().await;
    let ways = [Way::Items(1), Way::Items(ITEMS_AT_ONCE)];
    let mut rates: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut firsts: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut writes: BTreeMap<String, usize> = BTreeMap::new();
    let mut distinct = None;
    for round in 0..ROUNDS {
        let mut order = ways.to_vec();
        order.rotate_left(round % ways.len());
        for way in order {
            let r = run(&snapshot, &records, way, via).await;
            match &distinct {
                None => distinct = Some(r.changed.clone()),
                Some(d) => assert_eq!(&r.changed, d, "{way:?}: every way changes the same index keys and aggregates"),
            }
            // And one `BatchWriteItem` per listing of the workload: its search postings.
            assert!(r.writes >= r.changed.len(), "{way:?}: one write per distinct index keys or aggregate changed");
            rates.entry(way.name()).or_default().push(records.len() as f64 / r.elapsed.as_secs_f64());
            firsts.entry(way.name()).or_default().push(records.len() as f64 / r.first.as_secs_f64());
            writes.insert(way.name(), r.writes);
        }
    }
    let distinct = distinct.unwrap();
    let (keys, favorite_counts, ratings, _categories) = kinds(&distinct);
    println!("{title}: {} records, {ROUNDS} alternated runs of each way (median records/s):", records.len());
    let median_of = |way: Way| median(rates[&way.name()].clone());
    for way in ways {
        let runs: Vec<String> = rates[&way.name()].iter().map(|r| format!("{r:.0}")).collect();
        println!(
            "  {:<62} {:>6.0} records/s (runs: {}), {} writes",
            way.name(),
            median_of(way),
            runs.join(", "),
            writes[&way.name()]
        );
        println!("  {:<62} {:>6.0} records/s without the folds' batch", "", median(firsts[&way.name()].clone()));
    }
    let (sequential, concurrent) = (median_of(Way::Items(1)), median_of(ways[1]));
    println!("  concurrent / sequential: {:.2}x", concurrent / sequential);
    println!(
        "  distinct changes: {} ({keys} listings' index keys, {favorite_counts} favoriteCounts, {ratings} users' ratings)",
        distinct.len()
    );
}

/// On DynamoDB Local itself. Takes minutes: run the measurements on their
/// own, one at a time, with `cargo test -p integration-tests --test
/// integration stream_throughput -- --ignored --nocapture --test-threads 1`.
#[tokio::test]
#[ignore = "a measurement: minutes, run on its own"]
async fn a_batch_of_1000_records_items_concurrently_against_one_by_one() {
    measure("DynamoDB Local", None).await;
}

/// The same through a proxy that holds each request [`LATENCY`] before it
/// reaches DynamoDB Local: what a batch waits on in Lambda is mostly the
/// network, which the emulator on the same machine does not have.
#[tokio::test]
#[ignore = "a measurement: minutes, run on its own"]
async fn the_same_batch_with_a_network_round_trip_per_request() {
    let endpoint = integration_tests::delaying_proxy(LATENCY).await;
    measure(&format!("DynamoDB Local + {LATENCY:?} per request"), Some(&endpoint)).await;
}

/// The round trip the proxy adds to every request.
const LATENCY: Duration = Duration::from_millis(5);

/// In the normal run: a smaller batch (47 records of 5 users), one item
/// at a time and 16 at a time: both exact, both one write per distinct
/// listing's index keys that changed and two per aggregate (its part, then
/// its fold), the same ones.
#[tokio::test]
async fn writes_per_batch_are_the_distinct_keys_and_aggregates_changed() {
    let source = TestTable::with_demo_data().await;
    let records = workload(&source, 5).await;
    let snapshot = scan(&source.deps.store).await;
    let one = run(&snapshot, &records, Way::Items(1), None).await;
    let many = run(&snapshot, &records, Way::Items(ITEMS_AT_ONCE), None).await;
    // A relisting's keys are added; a new listing's are put with it and a
    // price change moves its own (before 2026-12-07 the processor added
    // those of the 7 left active and moved the 2 price changes': 9).
    assert_eq!(kinds(&many.changed), (1, 3, 5, 3), "every relisting's keys added, every aggregate moved");
    assert_eq!(one.changed, many.changed);
    // And one `BatchWriteItem` per listing of the workload (10): its search
    // postings; and per aggregate one fold (its parts' batch).
    let (keys, favorites, ratings, categories) = kinds(&many.changed);
    let writes = keys + 2 * (favorites + ratings + categories) + 10;
    assert_eq!((one.writes, many.writes), (writes, writes));
}

/// The parts a record's writes land on: a listing's index keys, a
/// listing's favorite count, a user's ratings, and (for a review naming a
/// category) the category's rating, so one review record is in two parts.
fn parts_of(record: &EventRecord) -> Vec<Kept> {
    let image = if record.event_name == "REMOVE" { &record.change.old_image } else { &record.change.new_image };
    let field = |name: &str| match image.get(name) {
        Some(serde_dynamo::AttributeValue::S(v)) => Some(v.clone()),
        _ => None,
    };
    let kind = field("entityType").unwrap_or_default();
    match kind.as_str() {
        "Listing" if record.event_name != "REMOVE" => field("listingId").map(Kept::Keys).into_iter().collect(),
        "Favorite" if record.event_name != "MODIFY" => {
            field("listingId").map(Kept::FavoriteCount).into_iter().collect()
        }
        "Review" if record.event_name != "MODIFY" => field("reviewedUserId")
            .map(Kept::Ratings)
            .into_iter()
            .chain(field("categoryId").map(Kept::CategoryRating))
            .collect(),
        _ => Vec::new(),
    }
}

/// Faults while items run concurrently: the first index-key write and the first
/// aggregate transaction sent never get an answer (the operation times out:
/// not applied), two more of each are applied with their answers lost (the
/// SDK sends them again; the workload's three relistings make three
/// index-key writes). The batch reports exactly the records of the two
/// failed parts (a review is in its user's and its category's), in stream
/// order; the items after the first of them went on and are not reported;
/// Lambda's redelivery from the first failed record applies just the two
/// missing parts: everything else redelivered (items that had succeeded)
/// changes nothing.
#[tokio::test]
async fn faults_mid_batch_retry_from_the_first_failed_record_and_redelivery_is_harmless() {
    let (t, faults) = TestTable::with_faults().await;
    // Three relistings: three index-key writes for the faults below.
    let records = workload(&t, 15).await;
    let parts: Vec<Vec<Kept>> = records.iter().map(parts_of).collect();
    let seq = |r: &EventRecord| r.change.sequence_number.clone().unwrap();
    faults.inject("UpdateItem", Fault::TimedOut, 1);
    faults.inject("TransactWriteItems", Fault::TimedOut, 1);
    faults.inject("UpdateItem", Fault::AnswerLost, 2);
    faults.inject("TransactWriteItems", Fault::AnswerLost, 2);
    let before = kept(&scan(&t.deps.store).await);

    let failed = integration_tests::process_stream_once(&t, records.clone()).await;
    assert_eq!(faults.pending(), 0);
    let reported: BTreeSet<usize> =
        failed.iter().map(|f| records.iter().position(|r| seq(r) == *f).expect("a record of the batch")).collect();
    let in_order: Vec<String> = reported.iter().map(|at| seq(&records[*at])).collect();
    assert_eq!(failed, in_order, "reported once each, in stream order");
    // Which aggregate's transaction is sent first depends on how the items
    // interleave: find the one listing's index keys and the one aggregate whose records are
    // exactly the records reported.
    let records_of =
        |part: &Kept| -> BTreeSet<usize> { (0..records.len()).filter(|at| parts[*at].contains(part)).collect() };
    let all_parts: BTreeSet<&Kept> = parts.iter().flatten().collect();
    let explaining: Vec<(&Kept, &Kept)> = all_parts
        .iter()
        .filter(|p| matches!(p, Kept::Keys(_)))
        .flat_map(|keys| all_parts.iter().filter(|p| !matches!(p, Kept::Keys(_))).map(move |agg| (*keys, *agg)))
        .filter(|(keys, agg)| records_of(keys).union(&records_of(agg)).copied().collect::<BTreeSet<_>>() == reported)
        .collect();
    assert_eq!(
        explaining.len(),
        1,
        "exactly every record of one listing's keys and one aggregate: {reported:?} {explaining:?}"
    );
    let missing: BTreeSet<Kept> = [explaining[0].0.clone(), explaining[0].1.clone()].into();
    let first = *reported.first().unwrap();
    let succeeded_after: BTreeSet<&Kept> =
        (first..records.len()).flat_map(|at| parts[at].iter()).filter(|p| !missing.contains(*p)).collect();
    assert!(succeeded_after.len() > 10, "parts after the first failed record went on: {}", succeeded_after.len());
    // The parts written so far are folded as their records arrive.
    assert!(integration_tests::deliver_parts(&t).await.is_empty());
    let middle = kept(&scan(&t.deps.store).await);
    let applied = changed(&before, &middle);

    // Lambda redelivers from the first failed record.
    let redelivered = records[first..].to_vec();
    assert!(process_stream(&t, redelivered.clone()).await.is_empty());
    let after_items = scan(&t.deps.store).await;
    assert_exact(&after_items);
    let after = kept(&after_items);
    let on_redelivery = changed(&middle, &after);
    assert_eq!(on_redelivery, missing, "the redelivery changed just the two failed parts");
    assert!(applied.is_disjoint(&missing), "which the first delivery had not changed");

    // The whole stream again, and the redelivery again: no change at all.
    assert!(process_stream(&t, records).await.is_empty());
    assert!(process_stream(&t, redelivered).await.is_empty());
    assert_eq!(kept(&scan(&t.deps.store).await), after, "replays change nothing");
}
