//! Reconcile's side of the exactly-once aggregates (the stream processor's
//! is [`super::markers::apply`]): records can be lost for good (the event
//! source mapping gives up after its retries, the stream keeps 24 hours),
//! so reconcile brings markers and aggregates back in line with the base
//! items, with the same conditional transactions:
//!
//! - [`settle`]: each marker is made to say what its base items say now (a
//!   review or favorite that exists is counted with its weight and version,
//!   a review is in its slot; one that does not is not), reading base and marker at once
//!   (consistently) and moving the marker only if it and its base item
//!   are still as read (a condition check on the base in the same
//!   transaction: a favorite removed, and its removal counted, between the
//!   read and the write once left a count one too high). A base item read
//!   older than its marker (a favorite removed and added again in between)
//!   leaves the marker alone. The stream processor then finds the markers
//!   moved and changes nothing: the markers decide who counted what.
//! - [`check_aggregate`]: an aggregate (its holder's numbers with what its
//!   parts gained since the last fold) must equal the sum of its counted
//!   markers, read between two reads of its parts that agree; if not, the
//!   difference is added to its holder if the holder's version
//!   (`countVersion`, which only a repair moves) is still the one read, and
//!   its parts are folded in. A part only ever moves together with its
//!   markers, adding 1 to its `rev`, so a transaction committed in between
//!   (even one count that came and went, leaving the same numbers) shows:
//!   the job never undoes a count.

use std::collections::{BTreeMap, HashMap};

use keyschema::records::MarkerState;
use keyschema::write::attr::COUNT_VERSION;
use keyschema::{Change, Cond, Key, Value};
use store::{Item, Store};

use super::fold::{self, number};
use super::marker::{Marker, Stored};
use super::markers::{self, Failed, Transition, Why, ATTEMPTS};
use super::{counts_of, Aggregate, Instance};
use crate::image::Image;
use crate::DerivedError;

/// Makes the markers of `instances` (all of one aggregate) say what their
/// base items say now, with the aggregate's change in the same transactions
/// (or, `dry_run`, only counts them). Returns the markers that differed.
pub async fn settle(
    store: &Store,
    aggregate: &Aggregate,
    instances: &[Instance],
    dry_run: bool,
) -> Result<usize, DerivedError> {
    for _ in 0..ATTEMPTS {
        let mut keys: Vec<Key> = instances.iter().flat_map(|i| [i.marker.clone(), i.base.clone()]).collect();
        keys.sort();
        keys.dedup();
        let read = store.batch_get_items(&keys, true).await?;
        let by_key: HashMap<Key, Item> = read.into_iter().filter_map(|i| Some((store::item::key_of(&i)?, i))).collect();
        // Per marker: as stored, as its base items say, its item, and the
        // base items it was decided from (a slot has several).
        let mut markers: BTreeMap<Key, Transition> = BTreeMap::new();
        for instance in instances {
            let stored = match by_key.get(&instance.marker) {
                Some(item) => Some(marker_of(item)?),
                None => None,
            };
            // A marker that exists is written whole from what it holds.
            let held = by_key.get(&instance.marker).cloned().unwrap_or_default();
            let entry = markers.entry(instance.marker.clone()).or_insert_with(|| Transition {
                key: instance.marker.clone(),
                item: held,
                before: stored.clone(),
                after: stored.unwrap_or(Marker::One { state: MarkerState::Removed, weight: 0, version: None }),
                bases: Vec::new(),
            });
            let base = by_key.get(&instance.base).and_then(Image::of_item);
            if let Some((after, item)) = desired(instance, entry, base.as_ref()) {
                entry.after = after;
                if entry.item.is_empty() {
                    entry.item = item;
                }
                // What the base item must still be when the marker moves.
                let as_read =
                    base.map_or_else(|| vec![Cond::NotExists(keyschema::table::PK)], |b| super::kinds::as_read(&b));
                entry.bases.push((instance.base.clone(), as_read));
            }
        }
        // Changed, and something to write (a marker, or a new one's item).
        let changed =
            |t: &Transition| t.before.as_ref() != Some(&t.after) && (t.before.is_some() || !t.item.is_empty());
        let transitions: Vec<Transition> = markers.into_values().filter(changed).collect();
        if transitions.is_empty() || dry_run {
            return Ok(transitions.len());
        }
        let moved = transitions.len();
        match markers::write_transitions(store, aggregate, &transitions).await {
            // Its holder brought up to the part just written (a category's
            // rating item is created so).
            Ok(_) => {
                fold::fold_after(store, aggregate).await;
                return Ok(moved);
            }
            // A marker or a base item moved since read: read again.
            Err(Failed { why: Why::Moved, .. }) => {}
            Err(Failed { why: Why::Error(e), .. }) => return Err(e),
        }
    }
    Err(DerivedError::Contended(aggregate.key.pk.clone()))
}

/// The marker `instance`'s base item (as read) asks for, from the marker as
/// it stands (`current.after`), and the marker item to write if it has none;
/// `None` if it says so already, or cannot be decided.
fn desired(instance: &Instance, current: &Transition, base: Option<&Image>) -> Option<(Marker, Item)> {
    // The base item's count into this marker (a review counts into two
    // aggregates); none when it no longer counts here (its category changed
    // outside the API). A base item that cannot be read is left alone
    // (reconcile reports it).
    let count = match base {
        Some(image) => counts_of(image, true).ok()?.into_iter().find(|c| c.marker == instance.marker),
        None => None,
    };
    let now = &current.after;
    let existed = current.before.is_some() || !current.item.is_empty();
    let (after, item) = match (count, instance.member) {
        (Some(c), Some(id)) => {
            let mut slot = match now {
                Marker::Slot(slot) => slot.clone(),
                Marker::One { .. } => keyschema::records::Slot::default(),
            };
            slot.gone.remove(&id);
            slot.reviews.insert(id, c.weight);
            (Marker::Slot(slot), c.marker_item)
        }
        (Some(c), None) => {
            (Marker::One { state: MarkerState::Counted, weight: c.weight, version: c.version }, c.marker_item)
        }
        // Gone (or counting elsewhere): not counted, if there is a marker.
        (None, member) if existed => (now.removed(member), Item::new()),
        (None, _) => return None,
    };
    if &after == now {
        return None;
    }
    if let (Marker::One { version: Some(seen), .. }, Marker::One { version: Some(base), .. }) = (now, &after) {
        // A base item read older than its marker (a favorite removed and
        // added again in between): the marker is newer.
        if seen > base {
            return None;
        }
    }
    Some((after, item))
}

/// A marker as stored.
fn marker_of(item: &Item) -> Result<Marker, DerivedError> {
    let stored: Stored = store::item::from_item(item.clone())?;
    stored.marker(|_| 0)
}

/// What an aggregate holds and what its markers add up to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drift {
    /// (sum, count) as stored: its holder's, with what its parts gained
    /// since the holder's last fold.
    pub stored: (i64, i64),
    /// (sum, count) of its counted markers.
    pub markers: (i64, i64),
    /// Whether it was set to the markers' (`false`: a dry run, or it moved
    /// in between).
    pub repaired: bool,
}

/// Compares an aggregate with the sum of its counted markers and, unless
/// `dry_run`, adds the difference to its holder if the holder's
/// `countVersion` is still the one read, then folds its parts into it.
/// `None` when they agree (or the holder does not exist).
///
/// What an aggregate stands at is its holder's numbers with what its parts
/// gained since the holder's last fold ([`super::fold`]): exact whenever a
/// fold lands between the reads. The parts and the markers are read apart,
/// so they are compared only when the parts' `rev`s are the same after
/// the markers were read as before: every write that moves a marker adds to
/// a part in the same transaction, so nothing moved in between. (A batch
/// that added as many markers as the aggregate had drifted, between the two
/// reads, once made a drifted aggregate look exact.) The holder's
/// `countVersion`, which only a repair moves, is read before and after too.
/// An aggregate that keeps moving is reported as a drift not repaired, for
/// the caller to try again.
pub async fn check_aggregate(
    store: &Store,
    aggregate: &Aggregate,
    dry_run: bool,
) -> Result<Option<Drift>, DerivedError> {
    let mut last = None;
    for _ in 0..SNAPSHOT_ATTEMPTS {
        let Some(read) = snapshot(store, aggregate).await? else { return Ok(None) };
        if read.stable {
            let drift = settle_drift(store, aggregate, &read, dry_run).await?;
            if !dry_run && (read.unfolded || drift.is_some_and(|d| d.repaired)) {
                fold::fold_after(store, aggregate).await;
            }
            return Ok(drift);
        }
        last = Some(read);
    }
    Ok(last.map(|read| Drift { stored: read.stored, markers: read.markers, repaired: false }))
}

/// Reads of an aggregate and its markers tried before it is left as moving.
const SNAPSHOT_ATTEMPTS: u32 = 3;

/// An aggregate as it stands and its markers' sum, read one after the other.
struct Snapshot {
    stored: (i64, i64),
    markers: (i64, i64),
    version: Option<i64>,
    /// Whether its parts and its holder's version were the same after the
    /// markers were read.
    stable: bool,
    /// Whether its holder lacks some of its parts' changes.
    unfolded: bool,
}

async fn snapshot(store: &Store, aggregate: &Aggregate) -> Result<Option<Snapshot>, DerivedError> {
    let Some(item) = fold::holder(store, aggregate).await? else { return Ok(None) };
    let (sum, count) =
        (aggregate.sum.map(|a| number(&item, a)).transpose()?.flatten(), number(&item, aggregate.count)?);
    let version = number(&item, COUNT_VERSION)?;
    let (folded, _) = fold::folded_of(aggregate, &item)?;
    let parts = fold::parts(store, aggregate).await?;
    let mut markers = (0i64, 0i64);
    // Page by page: a category's markers are every review it ever had.
    for query in &aggregate.markers {
        let mut start = None;
        loop {
            let (items, next) = store.query_page_consistent(query, start).await?;
            for m in items.iter().filter(|m| store::item::entity_type(m).is_some()) {
                let (s, c) = marker_of(m)?.counted();
                markers = (markers.0 + s, markers.1 + c);
            }
            match next {
                Some(key) => start = Some(key),
                None => break,
            }
        }
    }
    let parts_after = fold::parts(store, aggregate).await?;
    let stable = match fold::holder(store, aggregate).await? {
        Some(now) => number(&now, COUNT_VERSION)? == version && parts_after.rev == parts.rev,
        None => return Ok(None),
    };
    let gained = (parts.sum - folded.sum, parts.count - folded.count);
    let sum = if aggregate.sum.is_some() { sum.unwrap_or(0) + gained.0 } else { markers.0 };
    let stored = (sum, count.unwrap_or(0) + gained.1);
    Ok(Some(Snapshot { stored, markers, version, stable, unfolded: parts.rev != folded.rev }))
}

/// Adds a drifted aggregate's difference from its markers to its holder if
/// the holder's version is still the one read. A fold adds only what the
/// parts gained, so the two never undo each other.
async fn settle_drift(
    store: &Store,
    aggregate: &Aggregate,
    read: &Snapshot,
    dry_run: bool,
) -> Result<Option<Drift>, DerivedError> {
    let Snapshot { stored, markers, version, .. } = *read;
    if stored == markers {
        return Ok(None);
    }
    if dry_run {
        return Ok(Some(Drift { stored, markers, repaired: false }));
    }
    let mut change = Change::untimed(aggregate.key.clone())
        .add(aggregate.count, markers.1 - stored.1)
        .add(COUNT_VERSION, 1)
        .only_if(Cond::ItemExists)
        .only_if(match version {
            Some(v) => Cond::Eq(COUNT_VERSION, Value::n(v)),
            None => Cond::NotExists(COUNT_VERSION),
        });
    if let Some(attr) = aggregate.sum {
        change = change.add(attr, markers.0 - stored.0);
    }
    match store.update(&change).await {
        Ok(_) => Ok(Some(Drift { stored, markers, repaired: true })),
        Err(e) if e.is_conditional_check_failed() => Ok(Some(Drift { stored, markers, repaired: false })),
        Err(e) => Err(e.into()),
    }
}
