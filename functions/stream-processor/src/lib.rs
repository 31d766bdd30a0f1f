//! The table's stream processor (NEW_AND_OLD_IMAGES).
//!
//! **Sparse-index flags.** An active listing carries its GSI2 keys
//! (`CATEGORY#<categoryId>` / `LISTING#<listingId>`) and its GSI3 price keys
//! (`PRICE#<categoryId>` / `LISTING#<cents>#<listingId>`), a sold or removed
//! one neither; a price change moves the GSI3 key. The write that takes a listing out of `active` drops them
//! itself; here they are added to active listings and drift is repaired.
//! Each decision is a conditional write on the listing's *current* state,
//! not on the record's: a replayed, duplicated or reordered record (a stale
//! "active" after "removed") fails its condition and changes nothing.
//! The records of one listing in a batch cost at most one write: its last
//! image decides (the earlier ones show older states of the listing, and
//! every change after the last one brings a record of its own), so a batch
//! of new records sends one write per flag that changes.
//!
//! **Rating aggregates, exactly once.** A review inserted adds its rating to
//! the reviewed user's integer `ratingSum` and `reviewCount`; a review
//! removed (moderation) takes it away. Each review has a marker beside it
//! (`USER#<user>` / `RATED#<reviewId>`, state `counted` or `removed`) and
//! the aggregates move only together with a marker's transition, in one
//! transaction conditioned on the marker as read: absent -> counted (+),
//! counted -> removed (-), absent -> removed (a removal seen before its
//! insert: the late insert then counts nothing). Replays, overlapping
//! batches, reordering and retries after a partial failure find the
//! markers already moved and change nothing. The reviews of one user in a
//! batch are coalesced: one consistent `BatchGetItem` of their markers and
//! one transaction (the user's `ADD` plus the markers that move).
//!
//! **Items concurrently, each in stream order.** A batch is grouped by the
//! item it writes (a listing: its browse flag and its `favoriteCount`; a
//! user: its rating aggregates), and the items are processed concurrently,
//! [`ITEMS_AT_ONCE`] in flight, inside the handler's own task (no spawned
//! task: per-request accounting is task-local). Within an item nothing is
//! reordered: a listing's flag is decided by its last image in the batch
//! (the earlier ones are superseded by it), its count changes are planned
//! in stream order, and the flag is written before the aggregate, one
//! request at a time, so no two writes of the batch meet on one item.
//!
//! **Failures.** A record that can never succeed (malformed) is logged and
//! skipped, so it never holds up its shard; a transient failure (throttled,
//! unavailable) is reported in `batchItemFailures`, so Lambda retries from
//! it, and the markers make the retry safe. With items running
//! concurrently, a failure is reported for every record of the failed part
//! of its item (the flag's records, or the aggregate's), in stream order:
//! Lambda retries from the lowest, so every record not known to be applied
//! is delivered again. Records after it of other items that succeeded are
//! delivered again too; their conditions and markers find the work done
//! and change nothing.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;

use aws_lambda_events::dynamodb::{Event, EventRecord};
use aws_lambda_events::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use futures_util::stream::{self, StreamExt};
use keyschema::ids::{CategoryId, FavoriteId, ListingId, ReviewId, UserId};
use keyschema::keys;
use keyschema::model::{Favorite, FavoriteMarker, ListingStatus, MarkerState, Money, RatingMarker, Review};
use keyschema::schema::{EntityType, Index, ENTITY_TYPE};
use keyschema::write;
use lambda_runtime::LambdaEvent;
use serde::Deserialize;
use store::{Store, StoreError};
use ulid::Ulid;

/// How many items (a listing's flag and count, a user's aggregates) a batch
/// processes at once.
pub const ITEMS_AT_ONCE: usize = 16;
/// How many targets [`aggregate`] writes at once.
pub const USERS_AT_ONCE: usize = 8;
/// Most marker transitions in one transaction (DynamoDB allows 100 actions;
/// one is the user's update).
const MARKERS_PER_TRANSACTION: usize = 99;
/// Attempts per user when another writer moved a marker in between.
const ATTEMPTS: u32 = 5;

/// Why one record could not be processed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The record does not have the shape its entity needs; it never will.
    #[error("malformed record: {0}")]
    Malformed(String),
    /// The write failed (throttled, unavailable, ...); the record is retried.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What processing one record did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to do for this record.
    Skipped,
    /// The listing entered the browse index.
    Indexed,
    /// The listing left the browse index.
    Unindexed,
    /// A review's rating entered or left its user's aggregates.
    Aggregated,
    /// A write was attempted but the current item no longer needed it
    /// (a stale or repeated record).
    Stale,
}

/// One record, classified.
#[derive(Debug)]
enum Work {
    /// A listing image and whether it carries browse keys.
    Listing(ListingImage, bool),
    /// A review or favorite inserted or removed.
    Count(CountChange),
    /// Nothing to do.
    Skip,
}

/// What an aggregate counts into.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// A user's `ratingSum` and `reviewCount` (reviews about them).
    User(UserId),
    /// A listing's `favoriteCount`.
    Listing(ListingId),
}

/// One instance's effect on its target's aggregates (a review's rating on
/// its user, a favorite on its listing), from one stream record.
#[derive(Clone, Debug)]
pub struct CountChange {
    /// The record's sequence number (to report it if it fails).
    pub sequence_number: String,
    /// The review's or favorite's id.
    pub instance: Ulid,
    /// Whose aggregates.
    pub target: Target,
    /// What it adds to the sum (a review's rating; 1 for a favorite).
    pub weight: u8,
    /// Inserted (`true`) or removed.
    pub inserted: bool,
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
    /// Targets whose aggregates (and markers) changed.
    pub aggregated: usize,
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
    let (report, m) = telemetry::measure(process_batch(store, &event.payload.records, request_id)).await;
    let t = &m.totals;
    let level_error = !report.failed.is_empty();
    macro_rules! batch_line {
        ($level:ident) => {
            telemetry::tracing::$level!(
                requestId = request_id.as_str(),
                records = report.records,
                malformed = report.malformed,
                items = report.items,
                indexed = report.indexed,
                unindexed = report.unindexed,
                aggregated = report.aggregated,
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
    if level_error {
        batch_line!(warn);
    } else {
        batch_line!(info);
    }
    telemetry::metrics::histogram!("Records").record(report.records as f64);
    telemetry::metrics::histogram!("Writes").record(report.writes as f64);
    telemetry::metrics::counter!("Failures").increment(report.failed.len() as u64);
    telemetry::metrics::counter!("Malformed").increment(report.malformed as u64);
    telemetry::capacity(&m, None);
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
/// asks for, then its coalesced count changes; reports the records of each
/// part that failed.
pub async fn process_batch_with(
    store: &Store,
    records: &[EventRecord],
    request_id: &str,
    concurrency: usize,
) -> BatchReport {
    let mut report = BatchReport { records: records.len(), ..BatchReport::default() };
    let mut items = Items::default();
    for (at, record) in records.iter().enumerate() {
        match classify(record) {
            Err(e) => {
                report.malformed += 1;
                log_failure(request_id, record, &e, "skipped: it can never succeed");
            }
            Ok(Work::Skip) => {}
            Ok(Work::Count(change)) => items.of(change.target.clone()).counts.push((at, change)),
            Ok(Work::Listing(listing, indexed)) => {
                let work = items.of(Target::Listing(listing.listing_id));
                work.flag_records.push((at, record.change.sequence_number.clone().unwrap_or_default()));
                work.flag = Some((listing, indexed));
            }
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
        failed.extend(done.failed);
    }
    failed.sort_unstable();
    failed.dedup();
    report.failed = failed.into_iter().filter_map(|at| records[at].change.sequence_number.clone()).collect();
    report
}

/// A batch's work, by item, in the order each item first appears.
#[derive(Default)]
struct Items {
    work: Vec<(Target, ItemWork)>,
    at: BTreeMap<Target, usize>,
}

impl Items {
    fn of(&mut self, target: Target) -> &mut ItemWork {
        let next = self.work.len();
        let i = *self.at.entry(target.clone()).or_insert(next);
        if i == next {
            self.work.push((target, ItemWork::default()));
        }
        &mut self.work[i].1
    }
}

/// What a batch asks of one item. Records are named by their position in
/// the batch (or in the changes given to [`aggregate`]).
#[derive(Default)]
struct ItemWork {
    /// The listing's records (position, sequence number), in stream order.
    flag_records: Vec<(usize, String)>,
    /// The last of them: it decides the flag (the earlier images are
    /// older states of the same listing, superseded by it).
    flag: Option<(ListingImage, bool)>,
    /// Count changes of the item's aggregate, in stream order.
    counts: Vec<(usize, CountChange)>,
}

/// What processing one item did.
#[derive(Default)]
struct ItemDone {
    /// Writes sent.
    writes: usize,
    /// The browse flag's outcome, if the item had listing records.
    flag: Option<Outcome>,
    /// Whether its aggregates changed.
    aggregated: bool,
    /// Positions of the records to report.
    failed: Vec<usize>,
}

/// Processes the items, at most `concurrency` at a time, all in the calling
/// task (polled by `buffer_unordered`, never spawned).
async fn run_items(store: &Store, items: Items, request_id: &str, concurrency: usize) -> Vec<ItemDone> {
    stream::iter(items.work)
        .map(|(target, work)| run_item(store, target, work, request_id))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await
}

/// One item, one request at a time: the flag, then the aggregate. The two
/// are independent (a failed flag does not hold back the count); a part
/// that fails reports all its records.
async fn run_item(store: &Store, target: Target, work: ItemWork, request_id: &str) -> ItemDone {
    let mut done = ItemDone::default();
    if let Some((listing, indexed)) = &work.flag {
        match browse_flag(store, listing, *indexed).await {
            Ok(Outcome::Skipped) => {}
            Ok(outcome) => {
                done.writes += 1;
                done.flag = Some(outcome);
            }
            Err(e) => {
                done.writes += 1;
                log_item_failure(request_id, &target, &e, work.flag_records.iter().map(|(_, s)| s.as_str()));
                done.failed.extend(work.flag_records.iter().map(|(at, _)| *at));
            }
        }
    }
    if !work.counts.is_empty() {
        let (positions, changes): (Vec<usize>, Vec<CountChange>) = work.counts.into_iter().unzip();
        match apply_target(store, &target, &changes).await {
            Ok(n) => {
                done.writes += n;
                done.aggregated = n > 0;
            }
            Err(e) => {
                log_item_failure(request_id, &target, &e, changes.iter().map(|c| c.sequence_number.as_str()));
                done.failed.extend(positions);
            }
        }
    }
    done
}

fn log_item_failure<'a>(
    request_id: &str,
    target: &Target,
    error: &dyn std::fmt::Display,
    sequence_numbers: impl Iterator<Item = &'a str>,
) {
    let sequence_numbers: Vec<&str> = sequence_numbers.collect();
    telemetry::tracing::error!(
        requestId = request_id,
        target = format!("{target:?}"),
        error = %error,
        records = sequence_numbers.len(),
        firstSequenceNumber = sequence_numbers.first().copied().unwrap_or_default(),
        action = "reported for retry",
        "item failed"
    );
}

fn log_failure(request_id: &str, record: &EventRecord, error: &dyn std::fmt::Display, action: &str) {
    telemetry::tracing::error!(
        requestId = request_id,
        eventId = record.event_id.as_str(),
        sequenceNumber = record.change.sequence_number.as_deref().unwrap_or_default(),
        error = %error,
        action,
        "record failed"
    );
}

/// Processes one record on its own (a batch of one).
pub async fn process(store: &Store, record: &EventRecord) -> Result<Outcome, RecordError> {
    match classify(record)? {
        Work::Skip => Ok(Outcome::Skipped),
        Work::Listing(listing, indexed) => browse_flag(store, &listing, indexed).await,
        Work::Count(change) => match apply_target(store, &change.target.clone(), &[change]).await? {
            0 => Ok(Outcome::Stale),
            _ => Ok(Outcome::Aggregated),
        },
    }
}

/// A decoding error without the values it quotes: serde's messages quote
/// the offending value (`invalid type: string "..."`), which may be a
/// review's text or an email, and the error is logged.
fn redacted(error: &dyn std::fmt::Display) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    for c in error.to_string().chars() {
        match quote {
            Some(q) if c == q => {
                out.push('…');
                out.push(c);
                quote = None;
            }
            Some(_) => {}
            None => {
                out.push(c);
                if c == '"' || c == '`' {
                    quote = Some(c);
                }
            }
        }
    }
    out
}

fn classify(record: &EventRecord) -> Result<Work, RecordError> {
    let malformed = |what: String| RecordError::Malformed(what);
    let Some(sequence_number) = record.change.sequence_number.clone() else {
        return Err(malformed("no sequence number".into()));
    };
    let (image, inserted) = match record.event_name.as_str() {
        "INSERT" => (&record.change.new_image, true),
        "MODIFY" => (&record.change.new_image, false),
        "REMOVE" => (&record.change.old_image, false),
        other => return Err(malformed(format!("unknown event name `{other}`"))),
    };
    let entity = match image.get(ENTITY_TYPE) {
        Some(serde_dynamo::AttributeValue::S(t)) => t.as_str(),
        // Deletions of items that never had a type: nothing to do.
        _ if record.event_name == "REMOVE" => return Ok(Work::Skip),
        _ => return Err(malformed("image without entityType".into())),
    };
    if entity == EntityType::Listing.as_str() && record.event_name != "REMOVE" {
        let listing: ListingImage = serde_dynamo::from_item(image.clone())
            .map_err(|e| malformed(format!("listing image: {}", redacted(&e))))?;
        // Indexed right: in GSI2, and in GSI3 at the price it has now.
        let price_key = keys::listing::by_price(&listing.category_id, listing.price, &listing.listing_id).sk;
        let indexed_right = image.contains_key(Index::Gsi2.pk())
            && matches!(image.get(Index::Gsi3.sk()), Some(serde_dynamo::AttributeValue::S(sk)) if *sk == price_key);
        let indexed_at_all = image.contains_key(Index::Gsi2.pk()) || image.contains_key(Index::Gsi3.pk());
        let indexed = if listing.status == ListingStatus::Active { indexed_right } else { indexed_at_all };
        return Ok(Work::Listing(listing, indexed));
    }
    if entity == EntityType::Review.as_str() && record.event_name != "MODIFY" {
        let review: Review =
            serde_dynamo::from_item(image.clone()).map_err(|e| malformed(format!("review image: {}", redacted(&e))))?;
        if !(Review::MIN_RATING..=Review::MAX_RATING).contains(&review.rating) {
            return Err(malformed(format!("review rating {} out of range", review.rating)));
        }
        return Ok(Work::Count(CountChange {
            sequence_number,
            instance: review.review_id.ulid(),
            target: Target::User(review.reviewed_user_id),
            weight: review.rating,
            inserted,
        }));
    }
    if entity == EntityType::Favorite.as_str() && record.event_name != "MODIFY" {
        let favorite: Favorite = serde_dynamo::from_item(image.clone())
            .map_err(|e| malformed(format!("favorite image: {}", redacted(&e))))?;
        return Ok(Work::Count(CountChange {
            sequence_number,
            instance: favorite.favorite_id.ulid(),
            target: Target::Listing(favorite.listing_id),
            weight: 1,
            inserted,
        }));
    }
    Ok(Work::Skip)
}

/// The fields of a listing image the browse flag depends on.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListingImage {
    listing_id: ListingId,
    category_id: CategoryId,
    status: ListingStatus,
    price: Money,
}

/// Sets or removes a listing's GSI2 keys so that exactly the active
/// listings are in the category browse index. The write that takes a
/// listing out of `active` already drops them (`write::listing::set_status`);
/// here they are added, and drift is repaired.
async fn browse_flag(store: &Store, listing: &ListingImage, indexed: bool) -> Result<Outcome, RecordError> {
    let active = listing.status == ListingStatus::Active;
    let (change, outcome) = match (active, indexed) {
        (true, false) => {
            let change = write::listing::index_for_browse(&listing.listing_id, &listing.category_id, listing.price);
            (change, Outcome::Indexed)
        }
        (false, true) => (write::listing::unindex_for_browse(&listing.listing_id), Outcome::Unindexed),
        _ => return Ok(Outcome::Skipped),
    };
    match store.update(&change).await {
        Ok(_) => Ok(outcome),
        Err(e) if e.is_conditional_check_failed() => Ok(Outcome::Stale),
        Err(e) => Err(e.into()),
    }
}

/// Applies counted changes to their targets' aggregates, coalesced per
/// target, at most [`USERS_AT_ONCE`] targets at a time (in this task).
/// Returns the writes sent and the sequence numbers of the records whose
/// target could not be written, in the order given.
pub async fn aggregate(store: &Store, changes: Vec<CountChange>, request_id: &str) -> (usize, Vec<String>) {
    let sequence_numbers: Vec<String> = changes.iter().map(|c| c.sequence_number.clone()).collect();
    let mut items = Items::default();
    for (at, change) in changes.into_iter().enumerate() {
        items.of(change.target.clone()).counts.push((at, change));
    }
    let (mut writes, mut failed) = (0, Vec::new());
    for done in run_items(store, items, request_id, USERS_AT_ONCE).await {
        writes += done.writes;
        failed.extend(done.failed);
    }
    failed.sort_unstable();
    failed.dedup();
    (writes, failed.into_iter().map(|at| sequence_numbers[at].clone()).collect())
}

/// An instance's marker before and after this batch, and its weight.
type Transition = (Ulid, Option<MarkerState>, MarkerState, u8);

/// Applies one target's changes (in stream order): reads their markers
/// (consistently), works out which move and by how much the aggregates
/// change, and writes both in one transaction conditioned on the markers as
/// read. If another writer moved a marker in between, starts over. Returns
/// the transactions sent (0 if nothing had to change).
pub async fn apply_target(store: &Store, target: &Target, changes: &[CountChange]) -> Result<usize, StoreError> {
    let mut sent = 0;
    for _ in 0..ATTEMPTS {
        let transitions = plan(store, target, changes).await?;
        if transitions.is_empty() {
            return Ok(sent);
        }
        match write_transitions(store, target, &transitions).await {
            Ok(n) => return Ok(sent + n),
            Err((n, e)) if e.is_transaction_conflict() || e.failed_actions().any(|a| a.starts_with(MARKER)) => {
                sent += n + 1;
            }
            Err((_, e)) if e.failed(AGGREGATE) => {
                // Only a target that does not exist fails this: the API
                // never writes a review of a user or a favorite of a listing
                // that does not exist, so it can never succeed; leave it
                // (and its markers) alone.
                telemetry::tracing::error!(target = format!("{target:?}"), "the counted item does not exist");
                return Ok(sent);
            }
            Err((_, e)) => return Err(e),
        }
    }
    Err(StoreError::Service { code: "Contended".into(), message: format!("markers of {target:?} kept moving") })
}

/// Action-name prefix of the marker transitions.
const MARKER: &str = "marker ";
/// Action name of the aggregate's update.
const AGGREGATE: &str = "aggregate";

/// A marker as read back: its instance id (a review's or a favorite's) and state.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredMarker {
    #[serde(alias = "reviewId", alias = "favoriteId")]
    id: String,
    state: MarkerState,
}

impl Target {
    fn marker_key(&self, instance: Ulid) -> keys::Key {
        match self {
            Target::User(user) => keys::rating_marker::key(user, &ReviewId::from_ulid(instance)),
            Target::Listing(listing) => keys::favorite_marker::key(listing, &FavoriteId::from_ulid(instance)),
        }
    }

    fn put_marker(
        &self,
        tx: &mut store::Transaction,
        name: String,
        instance: Ulid,
        state: MarkerState,
    ) -> Result<(), StoreError> {
        match self {
            Target::User(user) => {
                let marker =
                    RatingMarker { review_id: ReviewId::from_ulid(instance), reviewed_user_id: user.clone(), state };
                tx.put_new(name, &marker).map(|_| ())
            }
            Target::Listing(listing) => {
                let marker =
                    FavoriteMarker { favorite_id: FavoriteId::from_ulid(instance), listing_id: *listing, state };
                tx.put_new(name, &marker).map(|_| ())
            }
        }
    }

    fn add(&self, sum: i64, count: i64) -> write::Change {
        match self {
            Target::User(user) => write::user::add_ratings(user, sum, count),
            Target::Listing(listing) => write::favorite::add_to_count(listing, count),
        }
    }
}

/// The marker transitions `changes` make, from the markers stored now.
async fn plan(store: &Store, target: &Target, changes: &[CountChange]) -> Result<Vec<Transition>, StoreError> {
    let mut ids: Vec<Ulid> = changes.iter().map(|c| c.instance).collect();
    ids.sort();
    ids.dedup();
    let keys: Vec<_> = ids.iter().map(|id| target.marker_key(*id)).collect();
    let stored: Vec<StoredMarker> = store.batch_get(&keys, true).await?;
    let before: HashMap<Ulid, MarkerState> =
        stored.into_iter().filter_map(|m| Some((m.id.parse::<Ulid>().ok()?, m.state))).collect();
    let mut now = before.clone();
    let mut weights = HashMap::new();
    for c in changes {
        weights.insert(c.instance, c.weight);
        let next = match (now.get(&c.instance), c.inserted) {
            (None, true) => MarkerState::Counted,
            (None, false) | (Some(MarkerState::Counted), false) => MarkerState::Removed,
            // A replayed insert, or anything after a removal: no change.
            (Some(_), _) => continue,
        };
        now.insert(c.instance, next);
    }
    Ok(ids
        .into_iter()
        .filter_map(|id| {
            let (from, to) = (before.get(&id).copied(), now.get(&id).copied()?);
            (from != Some(to)).then(|| (id, from, to, weights.get(&id).copied().unwrap_or(0)))
        })
        .collect())
}

/// Writes the transitions, at most [`MARKERS_PER_TRANSACTION`] per
/// transaction, each with the aggregate change of its markers. On failure,
/// also says how many transactions had committed.
async fn write_transitions(
    store: &Store,
    target: &Target,
    transitions: &[Transition],
) -> Result<usize, (usize, StoreError)> {
    let mut sent = 0;
    for chunk in transitions.chunks(MARKERS_PER_TRANSACTION) {
        let mut tx = store.transaction();
        let (mut sum, mut count) = (0i64, 0i64);
        for (id, from, to, weight) in chunk {
            let name = format!("{MARKER}{id}");
            let added = match from {
                None => target.put_marker(&mut tx, name, *id, *to),
                Some(_) => tx.update(name, &write::uncount_marker(target.marker_key(*id))).map(|_| ()),
            };
            added.map_err(|e| (sent, e))?;
            let sign = match (from, to) {
                (None, MarkerState::Counted) => 1,
                (Some(MarkerState::Counted), MarkerState::Removed) => -1,
                _ => 0,
            };
            sum += sign * i64::from(*weight);
            count += sign;
        }
        if sum != 0 || count != 0 {
            tx.update(AGGREGATE, &target.add(sum, count)).map_err(|e| (sent, e))?;
        }
        tx.send().await.map_err(|e| (sent, e))?;
        sent += 1;
    }
    Ok(sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_errors_are_logged_without_the_values_they_quote() {
        assert_eq!(
            redacted(&"invalid type: string \"bob@example.com\", expected u8 at `body`"),
            "invalid type: string \"…\", expected u8 at `…`"
        );
        assert_eq!(redacted(&"missing field listingId"), "missing field listingId");
    }
}
