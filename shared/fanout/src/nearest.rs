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
//! would read (at least `sweep::MIN_READ_UNITS`, at most half the units left),
//! else looked at as its sub-cells; before the page has read anything, for
//! a unit's worth first, to learn. A cell read whole is kept for the page's
//! later rings; one found to hold more is looked at as its sub-cells in
//! them. A query of a cell met in few sub-cells, from its start, takes
//! with it, in one round, up to two of the next cells the page will read
//! whole while they are expected to hold less than the page still wants
//! (`sweep.rs`): 9.3 rounds for 11.3 queries on a city's first page.

use domain::geo::{Cell, Location, CELL_LEN};

pub use asker::{CellAnswer, CellAsk, CellAsker, Placed};
pub use rings::{Class, Rings, FIRST_KM, GROWTH};

pub use crate::budget::Budget;
use sweep::{Flow, Sweep};

mod asker;
mod keys;
pub mod memory;
mod merge;
mod rings;
mod sweep;

pub use merge::merged;

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
    /// Rounds of asks (a cell, and up to two read ahead), one after
    /// another.
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
    let mut sweep = Sweep::new(at, rings, limit, keep, asker, budget);
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
#[cfg(test)]
#[path = "tests/nearest.rs"]
mod tests;
