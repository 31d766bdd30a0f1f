//! Aggregates kept exactly once: one mechanism for every counted instance
//! (a review's rating in its user's `ratingSum`/`reviewCount` and, a
//! buyer's review of a listing order, in its category's; a favorite in its
//! listing's `favoriteCount`).
//!
//! Each instance has a marker item ([`CountChange::marker`]) that records
//! whether it is counted, the weight it counted, and, where one marker
//! serves successive instances (a user's favorite of a listing, added and
//! removed again and again), the version (a ULID) it last saw. An aggregate
//! moves only together with its markers' transitions, in one transaction
//! conditioned on the markers as read:
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

use domain::model::MarkerState;
use keyschema::write;
use keyschema::Change;
use keyschema::Key;
use serde::Deserialize;
use store::{Item, Store, StoreError};
use ulid::Ulid;

/// Most marker transitions in one transaction (DynamoDB allows 100 actions;
/// one is the aggregate's update).
const MARKERS_PER_TRANSACTION: usize = 99;
/// Attempts per aggregate when another writer moved a marker in between.
pub(crate) const ATTEMPTS: u32 = 5;
/// Action-name prefix of the marker transitions.
pub(crate) const MARKER: &str = "marker ";
/// Action name of the aggregate's update.
pub(crate) const AGGREGATE: &str = "aggregate";
/// Names a base item's check in a transaction of the maintenance job.
pub(crate) const BASE: &str = "base ";

/// An aggregate: the item it lives on, the number attributes it adds to,
/// and the queries that read all its markers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aggregate {
    /// What it is, for reports (`user ratings`, `listing favorites`).
    pub name: &'static str,
    /// The item holding it (a user, a listing, a category's rating item).
    pub key: Key,
    /// The attribute summing the weights, if any (`ratingSum`).
    pub sum: Option<&'static str>,
    /// The attribute counting the instances (`reviewCount`, `favoriteCount`).
    pub count: &'static str,
    /// Every marker of the aggregate is in one of these.
    pub markers: Vec<keyschema::KeyQuery>,
    /// Attributes set with every change of it, so that its first change
    /// creates its item (an aggregate in an item of its own: a category's
    /// rating); empty: the item must exist (a user, a listing).
    pub init: Vec<(&'static str, keyschema::Value)>,
}

impl Aggregate {
    /// The `ADD` of `sum` and `count` (and 1 to its version): only if the
    /// item exists (never creates a partial item), or with its `init`.
    fn add(&self, sum: i64, count: i64) -> Change {
        let change = Change::untimed(self.key.clone()).add(self.count, count).add(write::attr::COUNT_VERSION, 1);
        let change = match self.sum {
            Some(attr) => change.add(attr, sum),
            None => change,
        };
        if self.init.is_empty() {
            return change.only_if(keyschema::Cond::ItemExists);
        }
        self.init.iter().fold(change, |c, (attr, value)| c.set(attr, value.clone()))
    }
}

/// One instance's effect on an aggregate, from one stream record.
#[derive(Clone, Debug)]
pub struct CountChange {
    /// The record's sequence number (to report it if it fails).
    pub sequence_number: String,
    /// Whose aggregate.
    pub aggregate: Aggregate,
    /// The marker's key.
    pub marker: Key,
    /// The marker item as first written, without its state, version and
    /// weight (its keys, entity type and the ids it is about).
    pub marker_item: Item,
    /// The instance's version where one marker serves successive instances
    /// (a favoriting); `None` where the marker is the instance's own.
    pub version: Option<Ulid>,
    /// What it adds to the sum while counted (a review's rating; 1 for a favorite).
    pub weight: u32,
    /// Inserted (`true`) or removed.
    pub inserted: bool,
}

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
}

/// The marker after `change`, from the marker before it (`None`: none yet);
/// `None` if the change changes nothing.
pub fn next(before: Option<Marker>, change: &CountChange) -> Option<Marker> {
    let state = if change.inserted { MarkerState::Counted } else { MarkerState::Removed };
    let fresh = Marker { state, weight: change.weight, version: change.version };
    match before {
        None => Some(fresh),
        Some(m) => match (m.version, change.version) {
            (Some(seen), Some(v)) if v < seen => None,
            (Some(seen), Some(v)) if v > seen => (m != fresh).then_some(if m.state == state {
                // Counted before and after: the same contribution, a newer version.
                Marker { weight: m.weight, ..fresh }
            } else {
                fresh
            }),
            // The same instance: an insert after its insert or its removal
            // changes nothing; a removal uncounts what was counted.
            _ if change.inserted => None,
            _ => (m.state == MarkerState::Counted).then_some(Marker { state: MarkerState::Removed, ..m }),
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
    /// the same transaction: the maintenance job decides from a read of
    /// it, which a removal could outdate before the write.
    pub(crate) base: Option<(Key, Vec<keyschema::Cond>)>,
}

/// The markers as stored now (consistent), by key. A marker written before
/// markers recorded their weight counts with `weight_of` its key (the
/// weight of the record at hand, as then).
pub(crate) async fn stored(
    store: &Store,
    keys: &[Key],
    weight_of: impl Fn(&Key) -> u32,
) -> Result<HashMap<Key, Marker>, StoreError> {
    #[derive(Deserialize)]
    struct Stored {
        pk: String,
        sk: String,
        state: MarkerState,
        weight: Option<u32>,
        version: Option<String>,
    }
    let found: Vec<Stored> = store.batch_get(keys, true).await?;
    let mut out = HashMap::new();
    for s in found {
        let key = Key { pk: s.pk, sk: s.sk };
        let version = match s.version {
            Some(v) => Some(v.parse::<Ulid>().map_err(|_| StoreError::Service {
                code: "MalformedMarker".into(),
                message: format!("marker {} has a version that is not a ULID", key.sk),
            })?),
            None => None,
        };
        let weight = s.weight.unwrap_or_else(|| weight_of(&key));
        out.insert(key, Marker { state: s.state, weight, version });
    }
    Ok(out)
}

/// The marker transitions `changes` (of one aggregate, in stream order) make,
/// from the markers stored now.
async fn plan(store: &Store, changes: &[CountChange]) -> Result<Vec<Transition>, StoreError> {
    let mut keys: Vec<Key> = changes.iter().map(|c| c.marker.clone()).collect();
    keys.sort_by(|a, b| (&a.pk, &a.sk).cmp(&(&b.pk, &b.sk)));
    keys.dedup();
    let weight_of = |key: &Key| changes.iter().find(|c| &c.marker == key).map_or(0, |c| c.weight);
    let before = stored(store, &keys, weight_of).await?;
    let mut now: HashMap<Key, Marker> = before.clone();
    let mut items: BTreeMap<(String, String), (Key, Item)> = BTreeMap::new();
    for change in changes {
        if let Some(after) = next(now.get(&change.marker).copied(), change) {
            now.insert(change.marker.clone(), after);
            let k = (change.marker.pk.clone(), change.marker.sk.clone());
            items.entry(k).or_insert_with(|| (change.marker.clone(), change.marker_item.clone()));
        }
    }
    Ok(items
        .into_values()
        .filter_map(|(key, item)| {
            let (before, after) = (before.get(&key).copied(), now.get(&key).copied()?);
            (before != Some(after)).then_some(Transition { key, item, before, after, base: None })
        })
        .collect())
}

/// Applies one aggregate's changes (in stream order): reads their markers,
/// works out which move and by how much the aggregate changes, and writes
/// both in one transaction conditioned on the markers as read. If another
/// writer moved a marker in between, starts over. Returns the transactions
/// sent (0 if nothing had to change).
pub async fn apply(store: &Store, aggregate: &Aggregate, changes: &[CountChange]) -> Result<usize, StoreError> {
    let mut sent = 0;
    for _ in 0..ATTEMPTS {
        let transitions = plan(store, changes).await?;
        if transitions.is_empty() {
            return Ok(sent);
        }
        match write_transitions(store, aggregate, &transitions).await {
            Ok(n) => return Ok(sent + n),
            Err((n, e)) if e.is_transaction_conflict() || e.failed_actions().any(|a| a.starts_with(MARKER)) => {
                sent += n + 1;
            }
            Err((n, e)) if e.failed(AGGREGATE) => {
                // Only an aggregate item that does not exist fails this: the
                // API never writes a review of a user or a favorite of a
                // listing that does not exist, so it can never succeed;
                // leave it (and its markers) alone.
                telemetry::tracing::error!(aggregate = aggregate.key.pk.as_str(), "the counted item does not exist");
                return Ok(sent + n);
            }
            Err((_, e)) => return Err(e),
        }
    }
    Err(StoreError::Service {
        code: "Contended".into(),
        message: format!("markers of {} kept moving", aggregate.key.pk),
    })
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

/// Writes the transitions, at most [`MARKERS_PER_TRANSACTION`] per
/// transaction, each with the aggregate change of its markers. On failure,
/// also says how many transactions had committed.
pub(crate) async fn write_transitions(
    store: &Store,
    aggregate: &Aggregate,
    transitions: &[Transition],
) -> Result<usize, (usize, StoreError)> {
    let mut sent = 0;
    // A transaction holds at most 100 actions: the aggregate, the markers
    // and their base items' checks.
    let per = if transitions.iter().any(|t| t.base.is_some()) {
        MARKERS_PER_TRANSACTION / 2
    } else {
        MARKERS_PER_TRANSACTION
    };
    for chunk in transitions.chunks(per) {
        let mut tx = store.transaction();
        let (mut sum, mut count) = (0i64, 0i64);
        for (i, t) in chunk.iter().enumerate() {
            marker_write(&mut tx, format!("{MARKER}{i}"), t).map_err(|e| (sent, e))?;
            if let Some((key, condition)) = &t.base {
                tx.check(format!("{BASE}{i}"), key, condition).map_err(|e| (sent, e))?;
            }
            let (before_sum, before_count) = t.before.map_or((0, 0), Marker::counted);
            let (after_sum, after_count) = t.after.counted();
            sum += after_sum - before_sum;
            count += after_count - before_count;
        }
        if sum != 0 || count != 0 {
            tx.update(AGGREGATE, &aggregate.add(sum, count)).map_err(|e| (sent, e))?;
        }
        tx.send().await.map_err(|e| (sent, e))?;
        sent += 1;
    }
    Ok(sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(version: Option<u128>, weight: u32, inserted: bool) -> CountChange {
        CountChange {
            sequence_number: String::new(),
            aggregate: Aggregate {
                name: "test",
                key: Key { pk: "A".into(), sk: "A".into() },
                sum: None,
                count: "n",
                markers: vec![],
                init: vec![],
            },
            marker: Key { pk: "M".into(), sk: "M".into() },
            marker_item: Item::new(),
            version: version.map(Ulid),
            weight,
            inserted,
        }
    }

    fn marker(state: MarkerState, weight: u32, version: Option<u128>) -> Marker {
        Marker { state, weight, version: version.map(Ulid) }
    }

    /// Applies changes in the given order; the contribution at the end.
    fn run(order: &[CountChange]) -> (i64, i64) {
        let mut m = None;
        for c in order {
            if let Some(after) = next(m, c) {
                m = Some(after);
            }
        }
        m.map_or((0, 0), Marker::counted)
    }

    #[test]
    fn a_removal_takes_away_what_was_counted() {
        use MarkerState::*;
        let counted = marker(Counted, 5, None);
        assert_eq!(next(Some(counted), &change(None, 1, false)), Some(marker(Removed, 5, None)));
        assert_eq!(next(Some(counted), &change(None, 5, true)), None, "a replayed insert");
        assert_eq!(next(Some(marker(Removed, 5, None)), &change(None, 5, true)), None, "removed before inserted");
        assert_eq!(next(None, &change(None, 4, false)), Some(marker(Removed, 4, None)));
    }

    #[test]
    fn versions_order_successive_instances() {
        use MarkerState::*;
        let at = |v| Some(marker(Counted, 1, Some(v)));
        assert_eq!(next(at(5), &change(Some(4), 1, false)), None, "an older removal");
        assert_eq!(next(at(5), &change(Some(6), 1, true)), Some(marker(Counted, 1, Some(6))), "a newer add");
        assert_eq!(next(at(5), &change(Some(6), 1, false)), Some(marker(Removed, 1, Some(6))));
        // Every order of add(1) remove(1) add(2) ends counted once; of add(1)
        // remove(1) add(2) remove(2), uncounted.
        let cycle = [change(Some(1), 1, true), change(Some(1), 1, false), change(Some(2), 1, true)];
        let perms = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        for p in perms {
            let order: Vec<_> = p.iter().map(|i| cycle[*i].clone()).collect();
            assert_eq!(run(&order), (1, 1), "{p:?}");
        }
        let mut ended = cycle.to_vec();
        ended.push(change(Some(2), 1, false));
        assert_eq!(run(&ended), (0, 0));
        ended.reverse();
        assert_eq!(run(&ended), (0, 0));
    }
}
