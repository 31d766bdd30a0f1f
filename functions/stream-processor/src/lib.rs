//! The table's stream processor (NEW_AND_OLD_IMAGES): keeps what is derived
//! from the base items, with the `derived` library (which reconcile drives
//! too). Each record is parsed once ([`derived::Record`]) and asked for its
//! three kinds of work:
//!
//! - index keys ([`derived::index_keys`]): the keys the declarations give
//!   the stream processor to keep (a listing's `browse`, `by_price` and
//!   `near` keys, present only while it is active);
//! - search postings ([`derived::postings`]): a listing's, from its current
//!   state, when a record changes what it is found by or an order's record
//!   accepts its sale (a sold listing keeps them while its order is pending);
//! - counts ([`derived::aggregates`]): a review's rating into its user's and
//!   its category's ratings, a favorite into its listing's count, exactly
//!   once with markers, each batch's into one of the aggregate's parts;
//! - folds ([`derived::aggregates::fold`]): a part's record brings its
//!   aggregate's holder (the listing, the user, the category's rating) up
//!   to its parts.
//!
//! **Items concurrently, each in stream order.** A batch is grouped by the
//! item it writes (a listing: its index keys, its postings, its favorites'
//! markers and parts, and its fold; a user: its ratings' markers, parts and
//! fold; a category's rating item likewise), and the items are processed concurrently,
//! [`ITEMS_AT_ONCE`] in flight, inside the handler's own task (no spawned
//! task: per-request accounting is task-local). Within an item nothing is
//! reordered: a listing's index keys are decided by its last image in the
//! batch (the earlier ones are superseded by it), its count changes are
//! planned in stream order, and its keys, postings and aggregate are
//! written one request at a time, so no two writes of the batch meet on one
//! item. A batch of new records sends one write per item's keys and
//! aggregate that changes, and per listing whose postings it changes one
//! `BatchWriteItem` for every 25 postings put or deleted (`write_batch`
//! chunks by 25, and sends again what DynamoDB leaves unprocessed).
//!
//! **Failures.** A record that can never succeed (malformed) is logged and
//! skipped, so it never holds up its shard; a transient failure (throttled,
//! unavailable, or an item the time budget could not reach before the
//! invocation's deadline: see `store::budget`) is reported in
//! `batchItemFailures`, so Lambda retries from it, and the conditions and
//! markers make the retry safe. With items
//! running concurrently, a failure is reported for every record of the
//! failed part of its item (the keys' records, the postings' or the
//! aggregate's), in
//! stream order: Lambda retries from the lowest, so every record not known
//! to be applied is delivered again. Records after it of other items that
//! succeeded are delivered again too; their conditions and markers find the
//! work done and change nothing.

mod items;

use std::convert::Infallible;

use aws_lambda_events::dynamodb::{Event, EventRecord};
use aws_lambda_events::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use derived::aggregates;
use derived::index_keys::{KeysOf, Outcome};
use derived::postings::Touched;
use derived::Record;
use lambda_runtime::LambdaEvent;
use store::Store;

use items::{run_items, Items};

/// How many items (a listing's keys, postings and count, a user's
/// aggregates) a batch processes at once.
pub const ITEMS_AT_ONCE: usize = 16;

/// What a batch did: for the log line and the benchmarks.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct BatchReport {
    /// Records in the batch.
    pub records: usize,
    /// Records skipped as malformed (never retried).
    pub malformed: usize,
    /// Writes sent (index key updates, postings' `BatchWriteItem`s and
    /// aggregate transactions).
    pub writes: usize,
    /// Distinct items the batch had work for (listings, users, category ratings).
    pub items: usize,
    /// Items whose stream-kept index keys were set (entered or moved).
    pub indexed: usize,
    /// Items whose stream-kept index keys were removed only.
    pub unindexed: usize,
    /// Aggregates whose markers and parts changed.
    pub aggregated: usize,
    /// Aggregates whose holders were brought up to their parts.
    pub folded: usize,
    /// Listings whose search postings were brought in line.
    pub searched: usize,
    /// Work left to another region: index keys, postings or counts of
    /// items homed there (docs/regions.md).
    pub elsewhere: usize,
    /// Index key writes whose condition found the item no longer as the
    /// image had it (a stale or replayed record).
    pub stale: usize,
    /// Sequence numbers reported as failed, in stream order.
    pub failed: Vec<String>,
}

/// The Lambda handler: processes every record, reports the failed ones;
/// logs one `batch` line and writes the batch's metrics (EMF).
pub async fn handler(store: &Store, event: LambdaEvent<Event>) -> Result<DynamoDbEventResponse, Infallible> {
    let request_id = &event.context.request_id;
    let work = store::budget::within(event.context.deadline, process_batch(store, &event.payload.records, request_id));
    let (report, m) = telemetry::measure(work).await;
    let t = &m.totals;
    // A stream record carries no trace context: the line names the records
    // (the sequence numbers of the batch's first and last).
    let sequence = |r: Option<&aws_lambda_events::dynamodb::EventRecord>| {
        r.and_then(|r| r.change.sequence_number.clone()).unwrap_or_default()
    };
    let (first, last) = (sequence(event.payload.records.first()), sequence(event.payload.records.last()));
    macro_rules! batch_line {
        ($level:ident) => {
            telemetry::tracing::$level!(
                requestId = request_id.as_str(),
                records = report.records,
                firstSequenceNumber = first.as_str(),
                lastSequenceNumber = last.as_str(),
                malformed = report.malformed,
                items = report.items,
                indexed = report.indexed,
                unindexed = report.unindexed,
                aggregated = report.aggregated,
                folded = report.folded,
                searched = report.searched,
                stale = report.stale,
                elsewhere = report.elsewhere,
                writes = report.writes,
                failed = report.failed.len(),
                latencyMs = m.latency_ms(),
                requests = t.requests,
                rcu = t.rcu,
                wcu = t.wcu,
                ops = m.ops_summary(),
                "batch"
            )
        };
    }
    if report.failed.is_empty() {
        batch_line!(info);
    } else {
        batch_line!(warn);
    }
    telemetry::metrics::histogram!("Records").record(report.records as f64);
    telemetry::metrics::histogram!("Writes").record(report.writes as f64);
    telemetry::metrics::counter!("Failures").increment(report.failed.len() as u64);
    telemetry::metrics::counter!("Malformed").increment(report.malformed as u64);
    telemetry::handled_errors((report.failed.len() + report.malformed) as u64);
    telemetry::capacity(&m, None);
    telemetry::xray::send_spans(event.context.xray_trace_id.as_deref(), &m.ops);
    telemetry::flush(request_id);
    let mut response = DynamoDbEventResponse::default();
    for sequence_number in report.failed {
        let mut failure = DynamoDbBatchItemFailure::default();
        failure.item_identifier = Some(sequence_number);
        response.batch_item_failures.push(failure);
    }
    Ok(response)
}

/// Processes a batch, [`ITEMS_AT_ONCE`] items at a time.
pub async fn process_batch(store: &Store, records: &[EventRecord], request_id: &str) -> BatchReport {
    process_batch_with(store, records, request_id, ITEMS_AT_ONCE).await
}

/// Processes a batch with at most `concurrency` items in flight (1: one
/// item after another): parses each record once and groups its work by
/// item, in the order each item first appears; per item, writes the index
/// keys its last image asks for, then its search postings (if a record
/// changed what it is found by), then its coalesced counts; reports the
/// records of each part that failed.
pub async fn process_batch_with(
    store: &Store,
    records: &[EventRecord],
    request_id: &str,
    concurrency: usize,
) -> BatchReport {
    let mut report = BatchReport { records: records.len(), ..BatchReport::default() };
    let mut items = Items::default();
    for (at, raw) in records.iter().enumerate() {
        let mut malformed = |e: &derived::DerivedError, action: &str| {
            report.malformed += 1;
            log_failure(request_id, raw, e, action);
        };
        let record = match Record::parse(raw) {
            Ok(record) => record,
            Err(e) => {
                malformed(&e, "skipped: it can never succeed");
                continue;
            }
        };
        let seq = || record.sequence_number.clone();
        // Derived only at the home of what it derives (docs/regions.md): a
        // listing's keys and postings at the listing's, a count at its
        // holder's. Replicated records arrive in every region; each region
        // takes its part.
        let listing_here = store.is_home(record.current().and_then(derived::Image::home));
        match Touched::of_record(&record)
            .and_then(|t| t.map(|t| Ok((keyschema::keys::listing(&t.listing)?.into(), t))).transpose())
        {
            Ok(Some(_)) if !listing_here => report.elsewhere += 1,
            Ok(Some((key, touched))) => {
                let work = items.of(key);
                work.search_records.push((at, seq()));
                match &mut work.search {
                    Some(t) => t.merge(touched),
                    None => work.search = Some(touched),
                }
            }
            Ok(None) => {}
            Err(e) => malformed(&e, "search postings skipped: it can never succeed"),
        }
        match KeysOf::of_record(&record) {
            Ok(Some(_)) if !listing_here => report.elsewhere += 1,
            Ok(Some(keys)) => {
                let work = items.of(keys.key.clone());
                work.keys_records.push((at, seq()));
                work.keys = Some(keys);
            }
            Ok(None) => {}
            Err(e) => malformed(&e, "index keys skipped: it can never succeed"),
        }
        match aggregates::counts(&record) {
            Ok(counts) => {
                for count in counts {
                    if !store.is_home(count.aggregate.home.as_deref()) {
                        report.elsewhere += 1;
                        continue;
                    }
                    items.of(count.aggregate.key.clone()).counts.push((at, seq(), count));
                }
            }
            Err(e) => malformed(&e, "counts skipped: it can never succeed"),
        }
        // A part's change: fold its aggregate once this batch (all of one
        // aggregate's parts arrive in one shard; concurrent folds are safe).
        match record.new.as_ref().map(aggregates::of_part).transpose().map(Option::flatten) {
            Ok(Some(_)) if !store.is_home(record.new.as_ref().and_then(derived::Image::home)) => report.elsewhere += 1,
            Ok(Some(aggregate)) => {
                let work = items.of(aggregate.key.clone());
                work.fold_records.push((at, seq()));
                work.fold = Some(aggregate);
            }
            Ok(None) => {}
            Err(e) => malformed(&e, "fold skipped: it can never succeed"),
        }
    }
    report.items = items.work.len();
    let mut failed = Vec::new();
    for done in run_items(store, items, request_id, concurrency).await {
        report.writes += done.writes;
        report.indexed += usize::from(done.keys == Some(Outcome::Indexed));
        report.unindexed += usize::from(done.keys == Some(Outcome::Unindexed));
        report.stale += usize::from(done.keys == Some(Outcome::Stale));
        report.aggregated += usize::from(done.aggregated);
        report.folded += usize::from(done.folded);
        report.searched += usize::from(done.searched);
        failed.extend(done.failed);
    }
    failed.sort_unstable();
    failed.dedup();
    report.failed = failed.into_iter().filter_map(|at| records[at].change.sequence_number.clone()).collect();
    report
}

fn log_failure(request_id: &str, record: &EventRecord, error: &dyn std::fmt::Display, action: &str) {
    telemetry::tracing::error!(
        requestId = request_id,
        eventId = record.event_id.as_str(),
        sequenceNumber = record.change.sequence_number.as_deref().unwrap_or_default(),
        error = %telemetry::redacted(error),
        action,
        "record failed"
    );
}
