//! Near a point over a geohash index (the `near` index: a partition per
//! 3-character cell, per 5-character one in a dense cell
//! (`domain::geo::partition`), the full geohash then the id in the sort
//! key, so a longer prefix is a smaller cell): one page of the items within
//! a radius of a point, nearest first by ring ([`Rings`]: within 100 m,
//! then rings each a quarter farther out than the last), within a ring by
//! sort key; exact, planned here, each query sent by the [`CellAsker`].
//!
//! An exact nearest-first order cannot keep later pages of a walk within a
//! fixed bound: the next items lie along a circle that grows with the
//! walk, in as many runs of the sort key as cells it crosses, and each must
//! be read again to prove the first of a page (measured 2026-12-02: page
//! 10 of a city's walk 19.9 RCU on average, at most 29; docs/capacity.md).
//! By ring then key, every read moves the walk on: a page sweeps a ring's
//! cells in key order from its cursor (a ring and a sort key), so each ring
//! reads the cells it meets once a walk (a cell meeting several rings is
//! read for each; a page keeps the cells it read whole for its own later
//! rings), and a page can stop wherever its [`Budget`] ends, its cursor
//! after the last key it read.
//!
//! A ring's sweep: the cells covering the circle, in key order; a cell no
//! point of which is in the ring is passed over; one held in more than one
//! partition is looked at as its sub-cells, and a partition of a dense cell
//! the asker knows to be empty is not queried. A cell meeting the ring in
//! most of its sub-cells is read from the cursor for what the page still
//! wants. One meeting it in fewer is read whole where the density the page
//! read last says it holds no more than what a query per meeting sub-cell
//! would read (at least [`MIN_READ_UNITS`], at most half the units left),
//! else looked at as its sub-cells; before the page has read anything, for
//! a unit's worth first, to learn. A cell read whole is kept for the page's
//! later rings; one found to hold more is looked at as its sub-cells in
//! them.

use std::collections::{HashMap, HashSet};

use domain::geo::partition::{is_dense, partition};
use domain::geo::{Cell, Location, CELL_LEN, HASH_LEN};

pub use asker::{CellAnswer, CellAsk, CellAsker, Placed};
pub use rings::{Class, Rings, FIRST_KM, GROWTH};

pub use crate::budget::Budget;
use crate::budget::{self, UNIT_BYTES};

mod asker;
pub mod memory;
mod merge;
mod rings;

pub use merge::merged;

/// The geohash alphabet: a cell's sub-cells, in key order.
const BASE32: &str = "0123456789bcdefghjkmnpqrstuvwxyz";
/// The units a cell meeting a ring in few sub-cells may be read whole for
/// at least, rather than split, while half the units left hold that much
/// (what it holds beyond the ring serves the page's later rings: a sparse
/// place is read whole once a page).
const MIN_READ_UNITS: usize = 2;
/// Above every character of a sort key: `prefix~` is past every key of
/// the cell `prefix`.
const PAST: char = '~';

/// A result: the item and its distance in km.
#[derive(Debug)]
pub struct Found<T> {
    /// The item.
    pub item: T,
    /// Its distance from the point.
    pub km: f64,
}

/// What a page cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Cell queries (two where a cell is read in two partitions).
    pub queries: usize,
    /// Asks sent, one after another.
    pub rounds: usize,
    /// Items the queries read.
    pub read: usize,
    /// 4 KB read units the queries cost.
    pub units: usize,
    /// The page stopped at its [`Budget`] before it was full (a filter,
    /// large items, cells that hold little of a ring); its cursor goes on
    /// after the last key it read.
    pub stopped_early: bool,
}

/// Where a walk goes on: in ring `ring`, after sort key `key` (from the
/// ring's first cell if `None`). Every item of an earlier ring, and of
/// this one up to the key, has been looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct After {
    /// The ring.
    pub ring: usize,
    /// The last sort key passed (a key read, or a cell's end: `prefix~`).
    pub key: Option<String>,
}

/// One page: up to `limit` items within `radius_km` of `at` (inclusive),
/// by ring then sort key, after `after`; where the next page starts
/// (`None`: the walk ended); what it cost.
pub async fn page<T: Placed, A: CellAsker<T>>(
    at: Location,
    radius_km: f64,
    limit: usize,
    after: Option<After>,
    asker: &A,
) -> Result<(Vec<Found<T>>, Option<After>, Cost), A::Error> {
    page_where(at, radius_km, limit, after, &|_| true, asker, Budget::page(limit)).await
}

/// [`page`] of the items `keep` keeps (a category), the others looked at
/// in order and passed over, within `budget`: a query is sent only if it
/// fits what is left (its limit cut to what the units left hold of the
/// largest items, [`CellAsker::most_item_bytes`]), but for a page's first,
/// so that every page moves the walk on.
pub async fn page_where<T: Placed, A: CellAsker<T>>(
    at: Location,
    radius_km: f64,
    limit: usize,
    after: Option<After>,
    keep: &(dyn Fn(&T) -> bool + Sync),
    asker: &A,
    budget: Budget,
) -> Result<(Vec<Found<T>>, Option<After>, Cost), A::Error> {
    let rings = Rings::new(radius_km);
    let mut tops = Cell::covering(&at, radius_km, CELL_LEN);
    tops.sort();
    tops.dedup();
    let item_bytes = asker.item_bytes().max(1);
    let mut sweep = Sweep {
        at,
        rings,
        limit,
        keep,
        asker,
        left: budget,
        item_bytes,
        cost: Cost::default(),
        out: Vec::new(),
        whole: HashMap::new(),
        crowded: HashSet::new(),
        per_km2: None,
    };
    let (mut ring, mut key) = after.map_or((0, None), |a| (a.ring, a.key));
    if limit == 0 {
        return Ok((Vec::new(), Some(After { ring, key }), sweep.cost));
    }
    while ring < sweep.rings.count() {
        match sweep.ring(ring, &tops, key.take()).await? {
            Flow::Swept => ring += 1,
            Flow::Full(last) => return Ok((sweep.out, Some(After { ring, key: Some(last) }), sweep.cost)),
            Flow::Spent(key) => {
                sweep.cost.stopped_early = true;
                return Ok((sweep.out, Some(After { ring, key }), sweep.cost));
            }
        }
    }
    Ok((sweep.out, None, sweep.cost))
}

/// How a ring's sweep ended.
enum Flow {
    /// Every cell of the ring read.
    Swept,
    /// The page is full, its last item's key.
    Full(String),
    /// The budget is spent, this far.
    Spent(Option<String>),
}

/// One page's sweep of rings.
struct Sweep<'a, T, A> {
    at: Location,
    rings: Rings,
    limit: usize,
    keep: &'a (dyn Fn(&T) -> bool + Sync),
    asker: &'a A,
    left: Budget,
    /// A typical item's bytes, then the most an answer showed its items to
    /// be on average: what a probe asks for.
    item_bytes: usize,
    cost: Cost,
    out: Vec<Found<T>>,
    /// Cells read whole from their start: their keys and items (each
    /// taken out when it is answered, in its ring).
    whole: HashMap<String, Vec<(String, Option<T>)>>,
    /// Cells found to hold more than a probe read: later rings look at
    /// them as their sub-cells.
    crowded: HashSet<String>,
    /// Listings per km² where the page read last (`None` before a read).
    per_km2: Option<f64>,
}

impl<T: Placed, A: CellAsker<T>> Sweep<'_, T, A> {
    /// Ring `k` from `pos`, its cells in key order.
    async fn ring(&mut self, k: usize, tops: &[String], mut pos: Option<String>) -> Result<Flow, A::Error> {
        let mut stack: Vec<String> = tops.iter().rev().cloned().collect();
        while let Some(prefix) = stack.pop() {
            if pos.as_deref().is_some_and(|p| past(&prefix).as_str() <= p) {
                continue;
            }
            let Some(cell) = Cell::of(&prefix) else { continue };
            let class = self.rings.class(&cell, &self.at, k);
            if class == Class::Out {
                continue;
            }
            let Some(part) = partition(&prefix) else {
                push_subcells(&mut stack, &prefix, pos.as_deref());
                continue;
            };
            if is_dense(part) && !self.asker.may_hold(part) {
                continue;
            }
            if let Some(items) = self.whole.get_mut(&prefix) {
                for (key, slot) in items.iter_mut() {
                    if pos.as_deref().is_some_and(|p| key.as_str() <= p) {
                        continue;
                    }
                    if let Some(full) = take(slot, key, k, &self.rings, &self.at, self.keep, &mut self.out, self.limit)
                    {
                        return Ok(Flow::Full(full));
                    }
                }
                pos = Some(past(&prefix));
                continue;
            }
            let meet = self.meeting(&prefix, k, class);
            // Meeting the ring in fewer than half its sub-cells, a cell found
            // crowded before is looked at as its sub-cells.
            let sparse = meet < 24;
            if sparse && self.crowded.contains(&prefix) {
                push_subcells(&mut stack, &prefix, pos.as_deref());
                continue;
            }
            // What the cell answered from its start, while it may be kept whole.
            let mut kept: Option<Vec<(String, Option<T>)>> =
                pos.as_deref().is_none_or(|p| p <= prefix.as_str()).then(Vec::new);
            // What is left of it as the density read last says, and what a
            // read of it may take: a query per sub-cell meeting the ring, at
            // least MIN_READ_UNITS, at most half the units left.
            let area = cell.area_km2();
            let expected = |pos: Option<&str>, per_km2: f64| per_km2 * area * (1.0 - through(&prefix, pos));
            let room = |left: Budget| meet.max(MIN_READ_UNITS).min(left.units / 2).max(1) * UNIT_BYTES;
            let mut want = match (sparse, self.per_km2) {
                // Too many to read whole as far as the page knows: its sub-cells.
                // (A cell meeting it in few sub-cells has them: it is not of
                // full length, `meeting`.)
                (true, Some(d)) if expected(pos.as_deref(), d) * self.item_bytes as f64 > room(self.left) as f64 => {
                    push_subcells(&mut stack, &prefix, pos.as_deref());
                    continue;
                }
                // Few enough: all of it, generously (an estimate short by a
                // few reads the cell again).
                (true, Some(d)) => (expected(pos.as_deref(), d) * 2.0).ceil() as usize + 8,
                // Nothing known: a unit's worth, to learn.
                (true, None) => (UNIT_BYTES / self.item_bytes).max(1),
                (false, _) => (self.limit - self.out.len()).saturating_mul(32) / meet.max(1),
            };
            loop {
                let queries = self.asker.queries(&prefix).max(1);
                if self.cost.rounds > 0 && (self.left.requests < queries || self.left.units < queries) {
                    return Ok(Flow::Spent(pos));
                }
                // Each query billed on its own: the units left shared out first.
                let fits = self.left.holds(queries, self.asker.most_item_bytes());
                let limit = want.min(fits).max(1);
                let from = pos.clone().filter(|p| p.as_str() > prefix.as_str());
                let ask = CellAsk { prefix: prefix.clone(), after: from.clone(), before: None, limit };
                // An asker answers every ask; one that did not, stops the page
                // here rather than pass the cell over.
                let Some((_, answer)) = self.asker.ask(vec![ask]).await?.pop() else {
                    return Ok(Flow::Spent(pos));
                };
                self.cost.rounds += 1;
                self.cost.queries += queries;
                self.cost.read += answer.items.len();
                self.cost.units += answer.units;
                self.left = self.left.less(queries, answer.units);
                self.item_bytes = self.item_bytes.max(budget::least_item_bytes(answer.units, answer.items.len()));
                let read = answer.items.len();
                // The density it shows, per km² (by how far through the cell's
                // keys it read).
                let to = answer.items.last().map(Placed::sort_key);
                let upto = if answer.more { through(&prefix, to.as_deref()) } else { 1.0 };
                let span = upto - through(&prefix, from.as_deref());
                if span > 0.0 && area > 0.0 {
                    self.per_km2 = Some(read as f64 / (span * area));
                }
                let mut items: Vec<(String, Option<T>)> =
                    answer.items.into_iter().map(|i| (i.sort_key(), Some(i))).collect();
                for (key, slot) in items.iter_mut() {
                    if let Some(full) = take(slot, key, k, &self.rings, &self.at, self.keep, &mut self.out, self.limit)
                    {
                        return Ok(Flow::Full(full));
                    }
                    pos = Some(key.clone());
                }
                let last = pos.clone();
                if let Some(whole) = kept.as_mut() {
                    whole.extend(items);
                }
                if !answer.more {
                    if let Some(whole) = kept {
                        self.whole.insert(prefix.clone(), whole);
                    }
                    pos = Some(past(&prefix));
                    break;
                }
                let wanted = self.limit - self.out.len();
                if !sparse || prefix.len() >= HASH_LEN {
                    want = wanted.saturating_mul(32) / meet.max(1);
                    continue;
                }
                // What is left of it, by how far through its keys the read went.
                let (start, end) = (through(&prefix, from.as_deref()), through(&prefix, last.as_deref()));
                let left = match end > start {
                    true => read as f64 * (1.0 - end) / (end - start),
                    false => f64::INFINITY,
                };
                if left * self.item_bytes as f64 <= room(self.left) as f64 {
                    want = (left * 2.0).ceil() as usize + 8;
                    continue;
                }
                if kept.is_some() {
                    self.crowded.insert(prefix.clone());
                }
                push_subcells(&mut stack, &prefix, pos.as_deref());
                break;
            }
        }
        Ok(Flow::Swept)
    }

    /// Of the 32 sub-cells of `prefix`, how many meet ring `k` (32 for a
    /// cell wholly in it or of full length).
    fn meeting(&self, prefix: &str, k: usize, class: Class) -> usize {
        if class == Class::In || prefix.len() >= HASH_LEN {
            return 32;
        }
        BASE32
            .chars()
            .filter_map(|c| Cell::of(&format!("{prefix}{c}")))
            .filter(|sub| self.rings.class(sub, &self.at, k) != Class::Out)
            .count()
    }
}

/// How far through the keys of cell `prefix` position `key` lies, from 0
/// (its start, or `None`) to 1 (past it), by the geohash characters after
/// the prefix.
fn through(prefix: &str, key: Option<&str>) -> f64 {
    let (mut at, mut scale) = (0.0, 1.0);
    for c in key.and_then(|k| k.get(prefix.len()..)).unwrap_or("").chars() {
        if c == PAST {
            return at + scale;
        }
        let Some(digit) = BASE32.find(c) else { break };
        scale /= 32.0;
        at += digit as f64 * scale;
    }
    at
}

/// Puts `slot`'s item on the page if it is in ring `k` (within the radius)
/// and kept: the key of the page's last item once it is full.
#[allow(clippy::too_many_arguments)]
fn take<T: Placed>(
    slot: &mut Option<T>,
    key: &str,
    k: usize,
    rings: &Rings,
    at: &Location,
    keep: &(dyn Fn(&T) -> bool + Sync),
    out: &mut Vec<Found<T>>,
    limit: usize,
) -> Option<String> {
    let km = slot.as_ref()?.location().map(|p| at.distance_km(&p))?;
    if rings.of(km) != Some(k) {
        return None;
    }
    let item = slot.take()?;
    if keep(&item) {
        out.push(Found { item, km });
    }
    (out.len() >= limit).then(|| key.to_owned())
}

/// Past every key of cell `prefix`.
fn past(prefix: &str) -> String {
    format!("{prefix}{PAST}")
}

/// Pushes the sub-cells of `prefix` not wholly at or before `pos`, so that
/// the first in key order comes off the stack first.
fn push_subcells(stack: &mut Vec<String>, prefix: &str, pos: Option<&str>) {
    for c in BASE32.chars().rev() {
        let sub = format!("{prefix}{c}");
        if pos.is_none_or(|p| past(&sub).as_str() > p) {
            stack.push(sub);
        }
    }
}

#[cfg(test)]
#[path = "tests/nearest.rs"]
mod tests;
