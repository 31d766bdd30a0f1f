//! The table's stream processor (NEW_AND_OLD_IMAGES): keeps what is derived
//! from the base items.
//!
//! - [`index_keys`]: the index keys the declarations give it to keep (the
//!   sparse browse keys of active listings: by age and by price).
//! - [`counters`]: aggregates kept exactly once with markers (a user's
//!   rating sum and count from the reviews about them; a listing's favorite
//!   count).
//! - [`decode`]: what a record is about.
//!
//! **Items concurrently, each in stream order.** A batch is grouped by the
//! item it writes (a listing: its browse flag and its `favoriteCount`; a
//! user: its rating aggregates), and the items are processed concurrently,
//! [`ITEMS_AT_ONCE`] in flight, inside the handler's own task (no spawned
//! task: per-request accounting is task-local). Within an item nothing is
//! reordered: a listing's flag is decided by its last image in the batch
//! (the earlier ones are superseded by it), its count changes are planned
//! in stream order, and the flag is written before the aggregate, one
//! request at a time, so no two writes of the batch meet on one item. A
//! batch of new records sends one write per flag and aggregate that changes.
//!
//! **Failures.** A record that can never succeed (malformed) is logged and
//! skipped, so it never holds up its shard; a transient failure (throttled,
//! unavailable, or an item the time budget could not reach before the
//! invocation's deadline: see `store::budget`) is reported in
//! `batchItemFailures`, so Lambda retries from it, and the conditions and
//! markers make the retry safe. With items
//! running concurrently, a failure is reported for every record of the
//! failed part of its item (the flag's records, or the aggregate's), in
//! stream order: Lambda retries from the lowest, so every record not known
//! to be applied is delivered again. Records after it of other items that
//! succeeded are delivered again too; their conditions and markers find the
//! work done and change nothing.

pub mod counted;
pub mod counters;
pub mod decode;
pub mod index_keys;
mod items;
pub mod search;
pub mod settle;

use std::convert::Infallible;

use aws_lambda_events::dynamodb::{Event, EventRecord};
use aws_lambda_events::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use keyschema::decl::EntityDecl;
use keyschema::{Attrs, Key};
use lambda_runtime::LambdaEvent;
use store::Store;

pub use counters::CountChange;
pub use decode::{classify, RecordError, Work};
use items::{run_items, Items};

/// How many items (a listing's flag and count, a user's aggregates) a batch
/// processes at once.
pub const ITEMS_AT_ONCE: usize = 16;
/// How many aggregates [`aggregate`] writes at once.
pub const AGGREGATES_AT_ONCE: usize = 8;

/// What processing one record did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to do for this record.
    Skipped,
    /// The listing entered the browse index.
    Indexed,
    /// The listing left the browse index.
    Unindexed,
    /// An instance entered or left its aggregate.
    Aggregated,
    /// A write was attempted but the current item no longer needed it
    /// (a stale or repeated record).
    Stale,
}

/// What a batch did: for the log line and the benchmarks.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct BatchReport {
    /// Records in the batch.
    pub records: usize,
    /// Records skipped as malformed (never retried).
    pub malformed: usize,
    /// Writes sent (listing updates and aggregate transactions).
    pub writes: usize,
    /// Distinct items the batch had work for (listings, users).
    pub items: usize,
    /// Listings that entered the browse index (or moved in it).
    pub indexed: usize,
    /// Listings that left the browse index.
    pub unindexed: usize,
    /// Aggregates (and markers) that changed.
    pub aggregated: usize,
    /// Listings whose search postings were brought in line.
    pub searched: usize,
    /// Flag writes whose condition found the listing already right (a
    /// stale or replayed record).
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
                searched = report.searched,
                stale = report.stale,
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
/// item after another): groups the records by item, in the order each item
/// first appears; per item, writes the browse flag its last listing image
/// asks for, then its search postings (if a record changed what it is found
/// by), then its coalesced count changes; reports the records of each part
/// that failed.
pub async fn process_batch_with(
    store: &Store,
    records: &[EventRecord],
    request_id: &str,
    concurrency: usize,
) -> BatchReport {
    let mut report = BatchReport { records: records.len(), ..BatchReport::default() };
    let mut items = Items::default();
    for (at, record) in records.iter().enumerate() {
        match search::touched(record).and_then(|t| t.map(|(l, t)| Ok((search::listing_key(&l)?, l, t))).transpose()) {
            Ok(Some((key, listing, touched))) => {
                let work = items.of(key);
                work.search_records.push((at, record.change.sequence_number.clone().unwrap_or_default()));
                match &mut work.search {
                    Some((_, terms)) => terms.terms.extend(touched.terms),
                    None => work.search = Some((listing, touched)),
                }
            }
            Ok(None) => {}
            Err(e) => {
                report.malformed += 1;
                log_failure(request_id, record, &e, "search postings skipped: it can never succeed");
            }
        }
        match classify(record) {
            Err(e) => {
                report.malformed += 1;
                log_failure(request_id, record, &e, "skipped: it can never succeed");
            }
            Ok(Work::Skip) => {}
            Ok(Work::Count(changes)) => {
                for change in changes {
                    items.of(change.aggregate.key.clone()).counts.push((at, change));
                }
            }
            Ok(Work::Keys(decl, image)) => match table_key(decl, &image) {
                Some(item) => {
                    let work = items.of(item);
                    work.flag_records.push((at, record.change.sequence_number.clone().unwrap_or_default()));
                    work.flag = Some((decl, image));
                }
                None => {
                    report.malformed += 1;
                    let e = RecordError::Malformed("an image without its primary key".into());
                    log_failure(request_id, record, &e, "skipped: it can never succeed");
                }
            },
        }
    }
    report.items = items.work.len();
    let mut failed = Vec::new();
    for done in run_items(store, items, request_id, concurrency).await {
        report.writes += done.writes;
        report.indexed += usize::from(done.flag == Some(Outcome::Indexed));
        report.unindexed += usize::from(done.flag == Some(Outcome::Unindexed));
        report.stale += usize::from(done.flag == Some(Outcome::Stale));
        report.aggregated += usize::from(done.aggregated);
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

/// Processes one record on its own (a batch of one).
pub async fn process(store: &Store, record: &EventRecord) -> Result<Outcome, RecordError> {
    match classify(record)? {
        Work::Skip => Ok(Outcome::Skipped),
        Work::Keys(decl, image) => index_keys::repair(store, decl, &image).await,
        Work::Count(changes) => {
            let mut applied = 0;
            for change in changes {
                applied += counters::apply(store, &change.aggregate.clone(), &[change]).await?;
            }
            Ok(if applied == 0 { Outcome::Stale } else { Outcome::Aggregated })
        }
    }
}

/// Applies count changes to their aggregates, coalesced per aggregate, at
/// most [`AGGREGATES_AT_ONCE`] at a time (in this task). Returns the writes
/// sent and the sequence numbers of the records whose aggregate could not
/// be written, in the order given.
pub async fn aggregate(store: &Store, changes: Vec<CountChange>, request_id: &str) -> (usize, Vec<String>) {
    let sequence_numbers: Vec<String> = changes.iter().map(|c| c.sequence_number.clone()).collect();
    let mut items = Items::default();
    for (at, change) in changes.into_iter().enumerate() {
        items.of(change.aggregate.key.clone()).counts.push((at, change));
    }
    let (mut writes, mut failed) = (0, Vec::new());
    for done in run_items(store, items, request_id, AGGREGATES_AT_ONCE).await {
        writes += done.writes;
        failed.extend(done.failed);
    }
    failed.sort_unstable();
    failed.dedup();
    (writes, failed.into_iter().map(|at| sequence_numbers[at].clone()).collect())
}

/// An image's primary key, rendered from its fields by its declaration.
fn table_key(decl: &EntityDecl, image: &Attrs) -> Option<Key> {
    decl.item_keys(image).ok().map(|k| k.table().clone())
}
