//! What each request of the mix does to the table, item by item: its reads
//! (which index, which partition), its writes (which item, in a transaction
//! or not, which index copies they rewrite) and what the stream processor
//! then writes for it. The steps per request mirror the handlers; every key,
//! every query and every index a write touches comes from the key design
//! itself (`keyschema`: the declarations, their access functions and the
//! changes of `write`), so a key change shows up here without an edit.

use std::collections::BTreeMap;

use domain::model::OrderStatus;
use keyschema::decl::{EntityDecl, SchemaError};
use keyschema::table::Index;
use keyschema::value::Attrs;
use keyschema::Entity;
use keyschema::{keys, Change, Key, KeyQuery};

pub(crate) use crate::examples::{attrs, listing, order, product, user, Ids, NOW};

/// One item-level action.
#[derive(Clone, Debug)]
pub enum Action {
    /// A read of `items` items of `kb` each from one partition, `times`
    /// per request on average (a sharded page's second round: sometimes);
    /// `ttl`: the seconds a function instance keeps the answer (`api::cache`).
    Read { index: Index, pk: String, items: f64, kb: f64, consistent: bool, ttl: Option<f64>, times: f64 },
    /// A write (or a transaction's condition check) of one table item, with
    /// the index copies it rewrites (every index the item is in, before or
    /// after, unless the index holds none of what changed); `spread`: the
    /// item is one of that many in its partition, at random (an aggregate's
    /// parts, a product's stock shares), each written its share of the time.
    Write {
        key: Key,
        kb: f64,
        tx: bool,
        check: bool,
        copies: Vec<(Index, String)>,
        stream: bool,
        coalesced: bool,
        spread: u16,
    },
}

/// Item sizes (KB) by kind, from the mix file.
#[derive(Clone, Copy, Debug, serde::Deserialize)]
pub struct Sizes {
    pub listing: f64,
    pub product: f64,
    pub user: f64,
    pub order: f64,
    pub small: f64,
    /// A share of a product's stock (`#STOCK#<n>`; a test holds the item to it).
    pub share: f64,
    /// A search posting.
    pub posting: f64,
    /// A listing's copy in GSI5 (its card, with the keys).
    pub card: f64,
    /// A partition of a dense cell that holds listings (`NearCell`; a test
    /// holds the item to it).
    #[serde(rename = "nearCell")]
    pub near_cell: f64,
}

pub(crate) type R = Result<Vec<Action>, Box<dyn std::error::Error + Send + Sync>>;

/// Search postings per listing (the corpus's mean, 8.2, rounded down:
/// `fanout` `a_title_of_the_corpus_has_eight_postings`; 11.2 with a
/// posting per whole word too, before issue 33).
pub(crate) const POSTINGS_PER_LISTING: usize = 8;

pub(crate) fn read(q: impl Into<KeyQuery>, items: f64, kb: f64) -> Action {
    let q: KeyQuery = q.into();
    Action::Read { index: q.index, pk: q.pk, items, kb, consistent: false, ttl: None, times: 1.0 }
}

pub(crate) fn get(key: impl Into<Key>, kb: f64, consistent: bool) -> Action {
    let key: Key = key.into();
    Action::Read { index: Index::Table, pk: key.pk, items: 1.0, kb, consistent, ttl: None, times: 1.0 }
}

/// A first page over a category's shards, each shard's query built by
/// `query`: round 1 on every shard, round 2 on some (as the page planner
/// does, measured by [`crate::fanout_reads`]).
pub(crate) fn sharded<Q: Into<KeyQuery>>(
    ids: &Ids,
    page: f64,
    kb: f64,
    query: impl Fn(u16) -> Result<Q, SchemaError>,
) -> R {
    let rounds = crate::fanout_reads::first_page(ids.category_shards, page as usize);
    let mut out = Vec::new();
    for shard in 0..ids.category_shards {
        for (times, items) in rounds.iter().filter(|(times, _)| *times > 0.0) {
            let q: KeyQuery = query(shard)?.into();
            out.push(Action::Read {
                index: q.index,
                pk: q.pk,
                items: *items,
                kb,
                consistent: false,
                ttl: None,
                times: *times,
            });
        }
    }
    Ok(out)
}

/// A new item put with the keys its write adds.
pub(crate) fn put<E: Entity>(record: &E, kb: f64, tx: bool) -> Result<Action, SchemaError> {
    let keys = record.item_keys()?;
    let copies = keys.keys.iter().filter(|(i, _)| **i != Index::Table).map(|(i, k)| (*i, k.pk.clone())).collect();
    Ok(plain_write(keys.table().clone(), kb, tx, copies))
}

/// A change of an item whose fields were `before`: the index writes it
/// makes, in every index it is in before or after (a key moved is two), but
/// for an index that holds none of the attributes changed and whose key stays.
pub(crate) fn update(
    decl: &EntityDecl,
    before: &Attrs,
    change: &Change,
    kb: f64,
    tx: bool,
) -> Result<Action, SchemaError> {
    update_from(decl, decl.item_keys(before)?.keys, before, change, kb, tx)
}

/// [`update`] by a write that sets only the index keys it knows (a
/// listing brought back to active: its `by_seller` key), then the stream
/// processor's write that adds the others (its browse, price and near
/// keys) and their copies.
pub(crate) fn update_then_stream(
    decl: &EntityDecl,
    before: &Attrs,
    change: &Change,
    kb: f64,
    tx: bool,
) -> Result<Vec<Action>, SchemaError> {
    let was = decl.item_keys(before)?.keys;
    let after = applied(before, change);
    // What the write leaves: the keys it sets or removes, the others as
    // they were.
    let mut written = was.clone();
    for index in decl.indexes.iter().map(|i| i.key.index) {
        let set = |attr: &str| change.set.iter().find(|(name, _)| *name == attr).map(|(_, v)| v.text());
        if let (Some(pk), Some(sk)) = (set(index.pk()), set(index.sk())) {
            written.insert(index, Key::new(pk, sk));
        } else if change.remove.contains(&index.pk()) {
            written.remove(&index);
        }
    }
    let api = write_between(&was, &written, change, kb, tx);
    let stream = update_from(decl, written, &after, &Change::untimed(change.key.clone()), kb, false)?;
    Ok(vec![api, stream])
}

/// [`update`] of an item whose index keys are `was` (a new item has only
/// those its write put: the stream processor adds the others).
pub(crate) fn update_from(
    decl: &EntityDecl,
    was: BTreeMap<Index, Key>,
    before: &Attrs,
    change: &Change,
    kb: f64,
    tx: bool,
) -> Result<Action, SchemaError> {
    let now = decl.item_keys(&applied(before, change))?.keys;
    Ok(write_between(&was, &now, change, kb, tx))
}

/// The fields of an item that were `before` once `change` is applied.
fn applied(before: &Attrs, change: &Change) -> Attrs {
    let mut after = before.clone();
    for (name, value) in &change.set {
        after.insert((*name).to_owned(), value.clone());
    }
    for name in &change.remove {
        after.remove(*name);
    }
    after
}

/// The write of `change` that moves an item's index keys from `was` to
/// `now`, with the index copies it rewrites.
fn write_between(was: &BTreeMap<Index, Key>, now: &BTreeMap<Index, Key>, change: &Change, kb: f64, tx: bool) -> Action {
    let mut changed: Vec<&str> =
        change.set.iter().chain(&change.add).map(|(name, _)| *name).chain(change.remove.iter().copied()).collect();
    // The key attributes of every index whose key moves are attributes
    // written too: an index that holds them is rewritten.
    for index in Index::GSIS {
        if was.get(&index.keys_from()) != now.get(&index.keys_from()) {
            changed.extend([index.pk(), index.sk()]);
        }
    }
    // As DynamoDB writes an index: a key that moves is a delete of the old
    // entry and a put of the new (two writes, even in one partition); one
    // that stays is rewritten if the change touches what the index holds.
    let mut copies = Vec::new();
    for index in Index::GSIS {
        match (was.get(&index.keys_from()), now.get(&index.keys_from())) {
            (Some(old), Some(new)) if old == new => {
                if changed.iter().any(|name| index.projection().holds(name)) {
                    copies.push((index, new.pk.clone()));
                }
            }
            (old, new) => copies.extend([old, new].into_iter().flatten().map(|k| (index, k.pk.clone()))),
        }
    }
    plain_write(change.key.clone(), kb, tx, copies)
}

/// A read answered from the function's memory for `ttl` seconds.
pub(crate) fn cached(action: Action, seconds: f64) -> Action {
    match action {
        Action::Read { index, pk, items, kb, consistent, times, .. } => {
            Action::Read { index, pk, items, kb, consistent, ttl: Some(seconds), times }
        }
        write => write,
    }
}

#[allow(dead_code)]
pub(crate) fn check(key: impl Into<Key>, kb: f64) -> Action {
    let key: Key = key.into();
    Action::Write { key, kb, tx: true, check: true, copies: Vec::new(), stream: false, coalesced: false, spread: 1 }
}

/// Parts a fold reads (consistently) on average: a hot aggregate's many,
/// a cold one's few (docs/capacity.md).
const PARTS_READ_PER_FOLD: f64 = 16.0;
/// An aggregate part's size (KB).
const PART_KB: f64 = 0.15;

/// The stream processor's aggregate writes for a counted instance: the
/// marker (its own partition) and one of the aggregate's parts, one
/// transaction per batch and aggregate (coalesced); then, from the part's
/// record, the fold: the holder and the parts read consistently and the
/// holder updated by a plain write (coalesced).
pub(crate) fn counted(marker: impl Into<Key>, holder: Action, of: &derived::aggregates::Aggregate) -> R {
    let marker: Key = marker.into();
    let part: Key = keys::aggregate_part(of.kind.tag(), &of.of, &0)?.into();
    // The marker is read first, strongly consistent (`markers::apply`).
    let read = get(marker.clone(), 0.2, true);
    let marker = Action::Write {
        key: marker,
        kb: 0.2,
        tx: true,
        check: false,
        copies: vec![],
        stream: false,
        coalesced: false,
        spread: 1,
    };
    let part_write = Action::Write {
        key: part.clone(),
        kb: PART_KB,
        tx: true,
        check: false,
        copies: vec![],
        stream: true,
        coalesced: true,
        spread: of.parts,
    };
    let parts = Action::Read {
        index: Index::Table,
        pk: part.pk,
        items: PARTS_READ_PER_FOLD.min(f64::from(of.parts)),
        kb: PART_KB,
        consistent: true,
        ttl: None,
        times: 1.0,
    };
    let (holder_read, holder_write) = match holder {
        Action::Write { key, kb, copies, .. } => (
            get(key.clone(), kb, true),
            Action::Write { key, kb, tx: false, check: false, copies, stream: false, coalesced: true, spread: 1 },
        ),
        read => (read.clone(), read),
    };
    Ok(vec![read, marker, part_write, holder_read, parts, holder_write])
}

/// A plain (not indexed, not coalesced) write of a small item.
pub(crate) fn small_write(key: impl Into<Key>, kb: f64, tx: bool) -> Action {
    plain_write(key.into(), kb, tx, Vec::new())
}

/// A write of one item and its index copies, recorded in the stream: not a
/// condition check, not coalesced, to one item.
fn plain_write(key: Key, kb: f64, tx: bool, copies: Vec<(Index, String)>) -> Action {
    Action::Write { key, kb, tx, check: false, copies, stream: true, coalesced: false, spread: 1 }
}

/// What an item held in its order adds to it (an id, a title or a name, a
/// quantity and a price; the order's fields are not repeated).
const HELD_ITEM_KB: f64 = 0.1;

/// An order's placement (`orders::place`): the idempotency record read, what
/// is bought and the buyer read; one transaction with the record, the
/// order, its item and `take` (the listing sold, the stock taken). The
/// order holds its item where the two fit a write unit (mix.json's order
/// and a typical item do: `orders::place::placement`), else the item is
/// one beside it.
pub(crate) fn placement(ids: &Ids, kb: Sizes, of_listing: bool, bought: (Key, String, f64), take: Action) -> R {
    let (bought_key, item_id, bought_kb) = bought;
    let record: Key = keys::idempotency(&ids.buyer, "POST /orders", "k")?.into();
    let order = order(ids, of_listing, OrderStatus::Pending);
    let held = kb.order + HELD_ITEM_KB;
    let mut out = vec![
        get(record.clone(), kb.small, true),
        get(bought_key, bought_kb, false),
        get(keys::user(&ids.buyer)?, kb.user, false),
        small_write(record, kb.small, true),
    ];
    // (With the room kept for later writes: `orders::place::LATER_BYTES`.)
    if held + 0.125 <= 1.0 {
        out.push(put(&order, held, true)?);
    } else {
        out.push(put(&order, kb.order, true)?);
        out.push(small_write(keys::order_item(&ids.order, &item_id)?, kb.small, true));
    }
    out.push(take);
    Ok(out)
}
