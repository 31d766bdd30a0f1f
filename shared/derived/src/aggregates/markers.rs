//! How counts move an aggregate, exactly once: an aggregate moves only
//! together with its markers' transitions ([`super::marker`]), in one
//! transaction conditioned on the markers as read. So a replayed,
//! duplicated, reordered or overlapping record, and the retry of a batch
//! that failed part way, find the markers already moved and change nothing.
//! The counts of one aggregate in a batch are coalesced: one consistent
//! `BatchGetItem` of their markers and one transaction (the `ADD` to one of
//! the aggregate's parts and the markers that move; more if over 99
//! actions). The parts are folded into the holder apart ([`super::fold`]).

use std::collections::{BTreeMap, HashMap};

use keyschema::table::PK;
use keyschema::{write, Cond, Key, Value};
use store::{Item, Store, StoreError};

use super::marker::{next, Marker, Stored};
use super::{Aggregate, Count};
use crate::DerivedError;

/// Most actions in one transaction (DynamoDB allows 100; one is the update
/// of one of the aggregate's parts).
const ACTIONS_PER_TRANSACTION: usize = 99;
/// Attempts per aggregate when another writer moved a marker in between.
pub(crate) const ATTEMPTS: u32 = 5;

/// A marker's move: from `before` (as read) to `after`.
#[derive(Debug)]
pub(crate) struct Transition {
    pub(crate) key: Key,
    /// The marker item as first written (its keys, type and ids).
    pub(crate) item: Item,
    pub(crate) before: Option<Marker>,
    pub(crate) after: Marker,
    /// The base items (reviews, a favorite) and what each must still be in
    /// the same transaction: reconcile decides from a read of them, which a
    /// removal could outdate before the write.
    pub(crate) bases: Vec<(Key, Vec<Cond>)>,
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
        if let Some(after) = next(now.get(&count.marker), count) {
            now.insert(count.marker.clone(), after);
            items.entry(count.marker.clone()).or_insert_with(|| count.marker_item.clone());
        }
    }
    Ok(items
        .into_iter()
        .filter_map(|(key, item)| {
            let (before, after) = (before.get(&key).cloned(), now.remove(&key)?);
            (before.as_ref() != Some(&after)).then_some(Transition { key, item, before, after, bases: Vec::new() })
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
            Err(Failed { why: Why::Error(e), .. }) => return Err(e),
        }
    }
    Err(DerivedError::Contended(aggregate.key.pk.clone()))
}

/// The write that moves a marker from `before` to `after`: a put if it has
/// none yet, an update conditioned on the state (and version) read, or a
/// slot's put conditioned on the `rev` read.
fn marker_write(tx: &mut store::Transaction, name: String, t: &Transition) -> Result<(), DerivedError> {
    let Transition { key, item, before, after, .. } = t;
    let version = |v: &Option<ulid::Ulid>| v.map(|v| v.to_string());
    match (before, after) {
        (None, Marker::One { state, weight, version: v }) => {
            let mut item = item.clone();
            for (attr, value) in write::marker::fields(*state, *weight, version(v)) {
                item.insert(attr.to_owned(), store::tx::attribute(&value));
            }
            tx.put_item_new(name, item)?;
            Ok(())
        }
        (Some(Marker::One { state: was, version: seen, .. }), Marker::One { state, weight, version: v }) => {
            let change = write::marker::move_to(key.clone(), (*was, version(seen)), (*state, *weight, version(v)));
            tx.update(name, &change)?;
            Ok(())
        }
        (before, Marker::Slot(slot)) => {
            let rev = match before {
                Some(Marker::Slot(b)) => b.rev,
                _ => 0,
            };
            let mut item = item.clone();
            let mut slot = slot.clone();
            slot.rev = rev + 1;
            let fields: Item = serde_dynamo::to_item(&slot).map_err(StoreError::from)?;
            item.extend(fields);
            let condition = match before {
                Some(_) => Cond::Eq(write::attr::REV, Value::n(rev)),
                None => Cond::NotExists(PK),
            };
            tx.put_item_if(name, item, &[condition])?;
            Ok(())
        }
        (Some(Marker::Slot(_)), Marker::One { .. }) => {
            Err(DerivedError::malformed(format!("marker {} changes kind", key.sk)))
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
    /// The update of one of the aggregate's parts.
    Part,
}

/// Why a marker transaction did not commit.
#[derive(Debug)]
pub(crate) enum Why {
    /// A marker or a base item was not as read (another writer moved it).
    Moved,
    /// Any other failure (the table's, or a marker that cannot move so).
    Error(DerivedError),
}

/// A failed [`write_transitions`]: how many transactions had committed, and why.
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) sent: usize,
    pub(crate) why: Why,
}

/// The transitions in transactions of at most [`ACTIONS_PER_TRANSACTION`]
/// actions (a marker and its base items' checks each).
fn chunks(transitions: &[Transition]) -> Vec<&[Transition]> {
    let mut out = Vec::new();
    let (mut from, mut actions) = (0, 0);
    for (i, t) in transitions.iter().enumerate() {
        let needs = 1 + t.bases.len();
        if actions + needs > ACTIONS_PER_TRANSACTION && i > from {
            out.push(&transitions[from..i]);
            (from, actions) = (i, 0);
        }
        actions += needs;
    }
    if from < transitions.len() {
        out.push(&transitions[from..]);
    }
    out
}

/// Writes the transitions, each transaction with its markers' change to one
/// of the aggregate's parts.
pub(crate) async fn write_transitions(
    store: &Store,
    aggregate: &Aggregate,
    transitions: &[Transition],
) -> Result<usize, Failed> {
    let mut sent = 0;
    let failed = |sent, e: DerivedError| Failed { sent, why: Why::Error(e) };
    for chunk in chunks(transitions) {
        let mut tx = store.transaction();
        let mut roles = Vec::new();
        let (mut sum, mut count) = (0i64, 0i64);
        for (i, t) in chunk.iter().enumerate() {
            marker_write(&mut tx, format!("marker {i}"), t).map_err(|e| failed(sent, e))?;
            roles.push(Role::Marker);
            for (j, (key, condition)) in t.bases.iter().enumerate() {
                tx.check(format!("base {i}.{j}"), key, condition).map_err(|e| failed(sent, e.into()))?;
                roles.push(Role::Base);
            }
            let (before_sum, before_count) = t.before.as_ref().map_or((0, 0), Marker::counted);
            let (after_sum, after_count) = t.after.counted();
            sum += after_sum - before_sum;
            count += after_count - before_count;
        }
        // Even when the numbers do not move (a count that came and went), so
        // that a part's `rev` moves with every marker (reconcile's snapshot).
        let part = aggregate.add_to_part(sum, count).map_err(|e| failed(sent, e))?;
        tx.update("part", &part).map_err(|e| failed(sent, e.into()))?;
        roles.push(Role::Part);
        if let Err(e) = tx.send().await {
            let failed: Vec<Role> = e.failed_at().filter_map(|i| roles.get(i).copied()).collect();
            let why = if e.is_transaction_conflict() || failed.iter().any(|r| matches!(r, Role::Marker | Role::Base)) {
                Why::Moved
            } else {
                Why::Error(e.into())
            };
            return Err(Failed { sent, why });
        }
        sent += 1;
    }
    Ok(sent)
}
