//! How a count moves an aggregate, exactly once. Each instance has a marker
//! item ([`Count::marker`]) that records whether it is counted, the weight
//! it counted, and, where one marker serves successive instances (a user's
//! favorite of a listing, added and removed again and again), the version
//! (a ULID) it last saw. An aggregate moves only together with its
//! markers' transitions, in one transaction conditioned on the markers as
//! read:
//!
//! - a change of an older version than the marker's changes nothing;
//! - an insert of a newer version (or of an instance with no marker) counts
//!   it with its weight, unless the marker already counts;
//! - a removal of the marker's version (or of a newer one) uncounts it,
//!   taking away the weight the marker counted, not the record's (a rating
//!   edited outside the API in between does not skew the sum);
//! - an insert of a version whose removal was seen first counts nothing.
//!
//! So a replayed, duplicated, reordered or overlapping record, and the retry
//! of a batch that failed part way, find the markers already moved and
//! change nothing. The changes of one aggregate in a batch are coalesced:
//! one consistent `BatchGetItem` of their markers and one transaction (the
//! aggregate's `ADD` and the markers that move; more if over 99 markers).

use std::collections::{BTreeMap, HashMap};

use keyschema::records::MarkerState;
use keyschema::{write, Cond, Key};
use serde::Deserialize;
use store::{Item, Store, StoreError};
use ulid::Ulid;

use super::{Aggregate, Count};
use crate::DerivedError;

/// Most marker transitions in one transaction (DynamoDB allows 100 actions;
/// one is the aggregate's update).
const MARKERS_PER_TRANSACTION: usize = 99;
/// Attempts per aggregate when another writer moved a marker in between.
pub(crate) const ATTEMPTS: u32 = 5;

/// A marker as stored (or as it will be).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marker {
    /// Counted or removed.
    pub state: MarkerState,
    /// The weight it counted (or would).
    pub weight: u32,
    /// The latest version seen, for markers that have one.
    pub version: Option<Ulid>,
}

impl Marker {
    /// What it contributes to the aggregate: (sum, count).
    pub fn counted(self) -> (i64, i64) {
        match self.state {
            MarkerState::Counted => (i64::from(self.weight), 1),
            MarkerState::Removed => (0, 0),
        }
    }

    /// The marker no longer counting (what it counted kept, to take it away).
    pub fn removed(self) -> Marker {
        Marker { state: MarkerState::Removed, ..self }
    }
}

/// A marker item as stored: its state, weight (markers written before
/// markers recorded it count with the record's) and version.
#[derive(Deserialize)]
pub(crate) struct Stored {
    pub(crate) pk: String,
    pub(crate) sk: String,
    state: MarkerState,
    weight: Option<u32>,
    version: Option<String>,
}

impl Stored {
    /// The marker, `weight_of` its key where it recorded none.
    pub(crate) fn marker(&self, weight_of: impl Fn(&Key) -> u32) -> Result<Marker, DerivedError> {
        let version = match &self.version {
            Some(v) => Some(v.parse::<Ulid>().map_err(|_| {
                DerivedError::malformed(format!("marker {} has a version that is not a ULID", self.sk))
            })?),
            None => None,
        };
        let key = Key { pk: self.pk.clone(), sk: self.sk.clone() };
        Ok(Marker { state: self.state, weight: self.weight.unwrap_or_else(|| weight_of(&key)), version })
    }
}

/// The marker after `count`, from the marker before it (`None`: none yet);
/// `None` if the count changes nothing.
pub fn next(before: Option<Marker>, count: &Count) -> Option<Marker> {
    let state = if count.inserted { MarkerState::Counted } else { MarkerState::Removed };
    let fresh = Marker { state, weight: count.weight, version: count.version };
    match before {
        None => Some(fresh),
        Some(m) => match (m.version, count.version) {
            (Some(seen), Some(v)) if v < seen => None,
            (Some(seen), Some(v)) if v > seen => (m != fresh).then_some(if m.state == state {
                // Counted before and after: the same contribution, a newer version.
                Marker { weight: m.weight, ..fresh }
            } else {
                fresh
            }),
            // The same instance: an insert after its insert or its removal
            // changes nothing; a removal uncounts what was counted.
            _ if count.inserted => None,
            _ => (m.state == MarkerState::Counted).then_some(m.removed()),
        },
    }
}

/// A marker's move: from `before` (as read) to `after`.
#[derive(Debug)]
pub(crate) struct Transition {
    pub(crate) key: Key,
    /// The marker item as first written (for a marker that does not exist yet).
    pub(crate) item: Item,
    pub(crate) before: Option<Marker>,
    pub(crate) after: Marker,
    /// The base item (a review, a favorite) and what it must still be in
    /// the same transaction: reconcile decides from a read of it, which a
    /// removal could outdate before the write.
    pub(crate) base: Option<(Key, Vec<Cond>)>,
}

/// The markers as stored now (consistent), by key. A marker written before
/// markers recorded their weight counts with `weight_of` its key.
async fn stored(
    store: &Store,
    keys: &[Key],
    weight_of: impl Fn(&Key) -> u32,
) -> Result<HashMap<Key, Marker>, DerivedError> {
    let mut out = HashMap::new();
    for item in store.batch_get_items(keys, true).await? {
        let s: Stored = store::item::from_item(item)?;
        out.insert(Key { pk: s.pk.clone(), sk: s.sk.clone() }, s.marker(&weight_of)?);
    }
    Ok(out)
}

/// The marker transitions `counts` (of one aggregate, in stream order)
/// make, from the markers stored now.
async fn plan(store: &Store, counts: &[Count]) -> Result<Vec<Transition>, DerivedError> {
    let mut keys: Vec<Key> = counts.iter().map(|c| c.marker.clone()).collect();
    keys.sort();
    keys.dedup();
    let weight_of = |key: &Key| counts.iter().find(|c| &c.marker == key).map_or(0, |c| c.weight);
    let before = stored(store, &keys, weight_of).await?;
    let mut now: HashMap<Key, Marker> = before.clone();
    let mut items: BTreeMap<Key, Item> = BTreeMap::new();
    for count in counts {
        if let Some(after) = next(now.get(&count.marker).copied(), count) {
            now.insert(count.marker.clone(), after);
            items.entry(count.marker.clone()).or_insert_with(|| count.marker_item.clone());
        }
    }
    Ok(items
        .into_iter()
        .filter_map(|(key, item)| {
            let (before, after) = (before.get(&key).copied(), now.get(&key).copied()?);
            (before != Some(after)).then_some(Transition { key, item, before, after, base: None })
        })
        .collect())
}

/// Applies one aggregate's counts (in stream order): reads their markers,
/// works out which move and by how much the aggregate changes, and writes
/// both in one transaction conditioned on the markers as read. If another
/// writer moved a marker in between, starts over. Returns the transactions
/// sent (0 if nothing had to change).
pub async fn apply(store: &Store, aggregate: &Aggregate, counts: &[Count]) -> Result<usize, DerivedError> {
    let mut sent = 0;
    for _ in 0..ATTEMPTS {
        let transitions = plan(store, counts).await?;
        if transitions.is_empty() {
            return Ok(sent);
        }
        match write_transitions(store, aggregate, &transitions).await {
            Ok(n) => return Ok(sent + n),
            Err(Failed { sent: n, why: Why::Moved }) => sent += n + 1,
            Err(Failed { sent: n, why: Why::NoAggregate }) => {
                // Only an aggregate item that does not exist fails this: the
                // API never writes a review of a user or a favorite of a
                // listing that does not exist, so it can never succeed;
                // leave it (and its markers) alone.
                telemetry::tracing::error!(aggregate = aggregate.key.pk.as_str(), "the counted item does not exist");
                return Ok(sent + n);
            }
            Err(Failed { why: Why::Store(e), .. }) => return Err(e.into()),
        }
    }
    Err(DerivedError::Contended(aggregate.key.pk.clone()))
}

/// The write that moves a marker from `before` to `after`: a put if it has
/// no marker yet, else an update conditioned on the state (and version) read.
fn marker_write(tx: &mut store::Transaction, name: String, t: &Transition) -> Result<(), StoreError> {
    let Transition { key, item, before, after, .. } = t;
    match before {
        None => {
            let mut item = item.clone();
            for (attr, value) in write::marker::fields(after.state, after.weight, after.version.map(|v| v.to_string()))
            {
                item.insert(attr.to_owned(), store::tx::attribute(&value));
            }
            tx.put_item_new(name, item).map(|_| ())
        }
        Some(b) => {
            let change = write::marker::move_to(
                key.clone(),
                (b.state, b.version.map(|v| v.to_string())),
                (after.state, after.weight, after.version.map(|v| v.to_string())),
            );
            tx.update(name, &change).map(|_| ())
        }
    }
}

/// What an action of a marker transaction is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A marker's move.
    Marker,
    /// A base item's check (reconcile's transactions).
    Base,
    /// The aggregate's update.
    Aggregate,
}

/// Why a marker transaction did not commit.
#[derive(Debug)]
pub(crate) enum Why {
    /// A marker or a base item was not as read (another writer moved it).
    Moved,
    /// The aggregate's item does not exist.
    NoAggregate,
    /// Any other failure.
    Store(StoreError),
}

/// A failed [`write_transitions`]: how many transactions had committed, and why.
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) sent: usize,
    pub(crate) why: Why,
}

/// Writes the transitions, at most [`MARKERS_PER_TRANSACTION`] per
/// transaction, each with the aggregate change of its markers.
pub(crate) async fn write_transitions(
    store: &Store,
    aggregate: &Aggregate,
    transitions: &[Transition],
) -> Result<usize, Failed> {
    let mut sent = 0;
    let failed = |sent, e: StoreError| Failed { sent, why: Why::Store(e) };
    // A transaction holds at most 100 actions: the aggregate, the markers
    // and their base items' checks.
    let per = if transitions.iter().any(|t| t.base.is_some()) {
        MARKERS_PER_TRANSACTION / 2
    } else {
        MARKERS_PER_TRANSACTION
    };
    for chunk in transitions.chunks(per) {
        let mut tx = store.transaction();
        let mut roles = Vec::new();
        let (mut sum, mut count) = (0i64, 0i64);
        for (i, t) in chunk.iter().enumerate() {
            marker_write(&mut tx, format!("marker {i}"), t).map_err(|e| failed(sent, e))?;
            roles.push(Role::Marker);
            if let Some((key, condition)) = &t.base {
                tx.check(format!("base {i}"), key, condition).map_err(|e| failed(sent, e))?;
                roles.push(Role::Base);
            }
            let (before_sum, before_count) = t.before.map_or((0, 0), Marker::counted);
            let (after_sum, after_count) = t.after.counted();
            sum += after_sum - before_sum;
            count += after_count - before_count;
        }
        if sum != 0 || count != 0 {
            tx.update("aggregate", &aggregate.add(sum, count)).map_err(|e| failed(sent, e))?;
            roles.push(Role::Aggregate);
        }
        if let Err(e) = tx.send().await {
            let failed: Vec<Role> = e.failed_at().filter_map(|i| roles.get(i).copied()).collect();
            let why = if e.is_transaction_conflict() || failed.iter().any(|r| matches!(r, Role::Marker | Role::Base)) {
                Why::Moved
            } else if failed.contains(&Role::Aggregate) {
                Why::NoAggregate
            } else {
                Why::Store(e)
            };
            return Err(Failed { sent, why });
        }
        sent += 1;
    }
    Ok(sent)
}

#[cfg(test)]
mod tests;
