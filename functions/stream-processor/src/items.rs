//! A batch's work by the item it writes, and the work of one item: its
//! index keys, its search postings, its aggregate, one request at a time.

use std::collections::BTreeMap;

use derived::aggregates::fold::{self, Folding};
use derived::aggregates::{markers, Aggregate, Count};
use derived::index_keys::{KeysOf, Outcome};
use derived::postings::{self, Touched};
use futures_util::stream::{self, StreamExt};
use keyschema::decl::Keeper;
use keyschema::Key;
use store::Store;

/// A batch's work, by the item it writes, in the order each first appears.
#[derive(Default)]
pub(crate) struct Items {
    pub(crate) work: Vec<(Key, ItemWork)>,
    at: BTreeMap<Key, usize>,
}

impl Items {
    pub(crate) fn of(&mut self, item: Key) -> &mut ItemWork {
        let next = self.work.len();
        let i = *self.at.entry(item.clone()).or_insert(next);
        if i == next {
            self.work.push((item, ItemWork::default()));
        }
        &mut self.work[i].1
    }
}

/// What a batch asks of one item. Records are named by their position in
/// the batch, with their sequence numbers.
#[derive(Default)]
pub(crate) struct ItemWork {
    /// The records of the item's images, in stream order.
    pub(crate) keys_records: Vec<(usize, String)>,
    /// The last image: it decides the index keys (the earlier ones are
    /// older states of the same item, superseded by it).
    pub(crate) keys: Option<KeysOf>,
    /// Counts into the item's aggregate, in stream order.
    pub(crate) counts: Vec<(usize, String, Count)>,
    /// The listing whose search postings the batch changes, and the terms
    /// of its images.
    pub(crate) search: Option<Touched>,
    /// The records that asked for it.
    pub(crate) search_records: Vec<(usize, String)>,
    /// The aggregate it holds, if the batch changed its parts.
    pub(crate) fold: Option<Aggregate>,
    /// The parts' records.
    pub(crate) fold_records: Vec<(usize, String)>,
}

/// What processing one item did.
#[derive(Default)]
pub(crate) struct ItemDone {
    /// Writes sent.
    pub(crate) writes: usize,
    /// What bringing its index keys in line did, if the batch had its images.
    pub(crate) keys: Option<Outcome>,
    /// Whether its aggregates changed.
    pub(crate) aggregated: bool,
    /// Whether it was brought up to its parts.
    pub(crate) folded: bool,
    /// Whether its search postings were brought in line.
    pub(crate) searched: bool,
    /// Positions of the records to report.
    pub(crate) failed: Vec<usize>,
}

/// Processes the items, at most `concurrency` at a time, all in the calling
/// task (polled by `buffer_unordered`, never spawned).
pub(crate) async fn run_items(store: &Store, items: Items, request_id: &str, concurrency: usize) -> Vec<ItemDone> {
    stream::iter(items.work)
        .map(|(item, work)| run_item(store, item, work, request_id))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await
}

/// One item, one request at a time: its index keys, its search postings,
/// its aggregate's markers and parts, then its fold. They are independent (failed keys do not hold back
/// the count); a part that fails reports all its records.
async fn run_item(store: &Store, item: Key, work: ItemWork, request_id: &str) -> ItemDone {
    let mut done = ItemDone::default();
    if let Some(keys) = &work.keys {
        match keys.apply(store, Keeper::Stream).await {
            Ok(Outcome::Exact) => {}
            Ok(outcome) => {
                done.writes += 1;
                done.keys = Some(outcome);
            }
            Err(e) => {
                done.writes += 1;
                let records = work.keys_records.iter().map(|(_, s)| s.as_str());
                log_item_failure(request_id, &item, &e, records, "reported for retry");
                done.failed.extend(work.keys_records.iter().map(|(at, _)| *at));
            }
        }
    }
    if let Some(touched) = &work.search {
        match postings::sync(store, touched).await {
            Ok(n) => {
                done.writes += n;
                done.searched = true;
            }
            // A listing that does not decode will not: logged, not retried.
            Err(e @ store::StoreError::Decode(_)) => {
                log_item_failure(request_id, &item, &e, std::iter::empty(), "skipped: it can never succeed");
            }
            Err(e) => {
                done.writes += 1;
                let records = work.search_records.iter().map(|(_, s)| s.as_str());
                log_item_failure(request_id, &item, &e, records, "reported for retry");
                done.failed.extend(work.search_records.iter().map(|(at, _)| *at));
            }
        }
    }
    if let Some((_, _, first)) = work.counts.first() {
        let aggregate = first.aggregate.clone();
        let counts: Vec<Count> = work.counts.iter().map(|(_, _, c)| c.clone()).collect();
        match markers::apply(store, &aggregate, &counts).await {
            Ok(n) => {
                done.writes += n;
                done.aggregated = n > 0;
            }
            Err(e) => {
                let records = work.counts.iter().map(|(_, s, _)| s.as_str());
                log_item_failure(request_id, &item, &e, records, "reported for retry");
                done.failed.extend(work.counts.iter().map(|(at, _, _)| *at));
            }
        }
    }
    if let Some(aggregate) = &work.fold {
        match fold::fold(store, aggregate).await {
            Ok(Folding::Folded) => {
                done.writes += 1;
                done.folded = true;
            }
            Ok(Folding::Unchanged) => {}
            // The API never counts into a listing or user that does not exist.
            Ok(Folding::NoHolder) => {
                telemetry::tracing::error!(aggregate = item.pk.as_str(), "the counted item does not exist");
            }
            Err(e) => {
                let records = work.fold_records.iter().map(|(_, s)| s.as_str());
                log_item_failure(request_id, &item, &e, records, "reported for retry");
                done.failed.extend(work.fold_records.iter().map(|(at, _)| *at));
            }
        }
    }
    done
}

fn log_item_failure<'a>(
    request_id: &str,
    item: &Key,
    error: &dyn std::fmt::Display,
    sequence_numbers: impl Iterator<Item = &'a str>,
    action: &str,
) {
    let sequence_numbers: Vec<&str> = sequence_numbers.collect();
    telemetry::tracing::error!(
        requestId = request_id,
        item = item.pk.as_str(),
        error = %telemetry::redacted(error),
        records = sequence_numbers.len(),
        firstSequenceNumber = sequence_numbers.first().copied().unwrap_or_default(),
        action,
        "item failed"
    );
}
