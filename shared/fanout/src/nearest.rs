//! Nearest first over a geohash index (the `near` index: a partition per
//! 3-character cell, the full geohash then the id in the sort key, so a
//! longer prefix is a smaller cell): one page of the items within a radius
//! of a point, by distance then id, exact, planned here without I/O.
//!
//! A best-first search: a heap holds cells (by the nearest any point of
//! them can be) and items (by their distance). The cells covering the
//! circle go in first (as their sub-cells where a cell is larger in area
//! than the circle); the nearest entry comes out: an item is the next result
//! (nothing still unread can be nearer: every cell holding it would have
//! come out first, cells before items at equal values); a cell that comes
//! out is queried together with a few of the next cells in order (up to
//! where the items found could fill the page), each for up to
//! [`CELL_LIMIT`] items. A cell that answers with all its items puts them
//! in; one that has more is split into its sub-cells (or, at full length,
//! continued after its last item). A page resumes after the last item
//! looked at (distance and id): cells wholly nearer are never queried again.
//!
//! What a page reads is measured by `what_a_near_page_reads` (the tests):
//! few cells per round keep a city's page of 20 near 20 queries (15 read
//! units of the index's small copies, 32 were they whole listings), where
//! querying every cell that might hold a result read ten times that.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use domain::geo::{Cell, Location, CELL_LEN, HASH_LEN};
use ulid::Ulid;

pub mod memory;

/// Items one cell query asks for before the cell is split.
pub const CELL_LIMIT: usize = 32;
/// Cells queried in one round: at most this many ...
const CELLS_AT_ONCE: usize = 64;
/// ... and at first a fifth of the page, at least this many (plus every
/// cell as near as the first: all of them must be read before anything is
/// returned, as at a pole) ...
const MIN_AT_ONCE: usize = 4;
/// ... doubling after a round that found nothing, and every round after
/// this many.
const GROW_AFTER: usize = 4;
/// A cell larger than the circle (in area) is looked at as its sub-cells
/// that meet the circle ...
const REFINE: f64 = 1.0;
/// ... unless they are more than this many.
const MAX_REFINED: usize = 64;
const BASE32: &str = "0123456789bcdefghjkmnpqrstuvwxyz";

/// An item of the index.
pub trait Placed {
    /// Where it is (`None`: not placed, never returned).
    fn location(&self) -> Option<Location>;
    /// Its id (ties at one distance go by id).
    fn id(&self) -> Ulid;
    /// Its sort key in the index (`<geohash>#<id>`), to continue after it.
    fn sort_key(&self) -> String;
}

/// One query: a cell's items (a geohash prefix), after a sort key if given,
/// in sort-key order, at most `limit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellAsk {
    /// The cell.
    pub prefix: String,
    /// Only items whose sort key is above this one.
    pub after: Option<String>,
    /// Most items wanted.
    pub limit: usize,
}

/// What a cell query answered.
#[derive(Debug)]
pub struct CellAnswer<T> {
    /// The items, in sort-key order.
    pub items: Vec<T>,
    /// Whether it may have more to give (`false` proves it has not).
    pub more: bool,
}

/// Answers a round of cell queries.
pub trait CellAsker<T> {
    /// What a failed query is.
    type Error;
    /// Sends the asks (answers in any order).
    #[allow(clippy::type_complexity)]
    fn ask(
        &self,
        asks: Vec<CellAsk>,
    ) -> impl std::future::Future<Output = Result<Vec<(CellAsk, CellAnswer<T>)>, Self::Error>>;
}

/// Where a walk is: every item nearer than `km` (or as near, with an id up
/// to `id`) has been looked at (returned, unless a filter passed it over).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct After {
    /// The distance of the last item returned.
    pub km: f64,
    /// Its id.
    pub id: Ulid,
}

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
    /// Cell queries.
    pub queries: usize,
    /// Rounds of queries (each sent at once).
    pub rounds: usize,
    /// Items the queries read.
    pub read: usize,
    /// The page reached [`MAX_ROUNDS`] before it was full (a filter, see
    /// [`page_where`], or a place denser than any measured); its cursor goes
    /// on after the last item looked at.
    pub stopped_early: bool,
}

/// Rounds after which a page stops, once it has looked at an item (pages
/// without a filter took at most 10 in the tests, 7 in a city).
pub const MAX_ROUNDS: usize = 16;

enum Entry<T> {
    Cell { near: f64, prefix: String, after: Option<String> },
    Item { km: f64, id: Ulid, item: T },
}

impl<T> Entry<T> {
    /// Nearest first; a cell before an item at the same value; items by id.
    fn key(&self) -> (f64, u8, Ulid) {
        match self {
            Entry::Cell { near, .. } => (*near, 0, Ulid(0)),
            Entry::Item { km, id, .. } => (*km, 1, *id),
        }
    }
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    /// Reversed, so that `BinaryHeap` (a max-heap) gives the nearest first.
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.key(), other.key());
        b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2))
    }
}

/// One page: up to `limit` items within `radius_km` of `at` (inclusive),
/// nearest first, after `after`; where the next page starts (`None`: the
/// walk ended); what it cost.
pub async fn page<T: Placed, A: CellAsker<T>>(
    at: Location,
    radius_km: f64,
    limit: usize,
    after: Option<After>,
    asker: &A,
) -> Result<(Vec<Found<T>>, Option<After>, Cost), A::Error> {
    page_where(at, radius_km, limit, after, &|_| true, asker).await
}

/// [`page`] of the items `keep` keeps (a category): the others are looked
/// at in order and passed over. A rare kind in a dense radius would read on
/// and on, so a page stops after [`MAX_ROUNDS`] once it has looked at an
/// item (so that every page moves the cursor on), saying so in its cost.
pub async fn page_where<T: Placed, A: CellAsker<T>>(
    at: Location,
    radius_km: f64,
    limit: usize,
    after: Option<After>,
    keep: &(dyn Fn(&T) -> bool + Sync),
    asker: &A,
) -> Result<(Vec<Found<T>>, Option<After>, Cost), A::Error> {
    let mut heap: BinaryHeap<Entry<T>> = BinaryHeap::new();
    let push = |heap: &mut BinaryHeap<Entry<T>>, prefix: String, after_key: Option<String>| {
        push_cell(heap, &at, radius_km, after, prefix, after_key)
    };
    for prefix in refined(&at, radius_km, Cell::covering(&at, radius_km, CELL_LEN)) {
        push(&mut heap, prefix, None);
    }
    let (mut out, mut cost) = (Vec::new(), Cost::default());
    let mut looked_at: Option<After> = None;
    // Cells per round: a few (a page of 20 in a city needs about a dozen
    // cells, and each cell beyond its end is read for nothing), doubling
    // after a round that found nothing (sparse places, the poles).
    let base = (limit / 5).clamp(MIN_AT_ONCE, CELLS_AT_ONCE);
    let mut at_once = base;
    while out.len() < limit {
        if cost.rounds >= MAX_ROUNDS && looked_at.is_some() {
            cost.stopped_early = true;
            break;
        }
        let Some(top) = heap.pop() else { break };
        let asks = match top {
            Entry::Item { km, item, .. } => {
                looked_at = Some(After { km, id: item.id() });
                if keep(&item) {
                    out.push(Found { item, km });
                }
                continue;
            }
            Entry::Cell { near, prefix, after } => {
                // With it, the next cells in order up to where the items
                // already found could fill the page (fewer rounds; a cell
                // beyond the page's end costs a query, never a wrong answer):
                // `at_once` of them, and every one as near as it (all of
                // which must be read before anything is returned).
                let mut asks = vec![CellAsk { prefix, after, limit: CELL_LIMIT }];
                let (mut passed, wanted) = (Vec::new(), limit - out.len());
                let as_near = |e: Option<&Entry<T>>| matches!(e, Some(Entry::Cell { near: n, .. }) if *n <= near);
                while asks.len() < CELLS_AT_ONCE
                    && passed.len() < wanted
                    && (asks.len() < at_once || as_near(heap.peek()))
                {
                    match heap.pop() {
                        Some(Entry::Cell { prefix, after, .. }) => {
                            asks.push(CellAsk { prefix, after, limit: CELL_LIMIT })
                        }
                        Some(item) => passed.push(item),
                        None => break,
                    }
                }
                heap.extend(passed);
                asks
            }
        };
        cost.rounds += 1;
        cost.queries += asks.len();
        let found_before = heap.len();
        for (ask, answer) in asker.ask(asks).await? {
            cost.read += answer.items.len();
            if answer.more && ask.prefix.len() < HASH_LEN {
                // Too many to take at once: its sub-cells, nearest first.
                let subs = BASE32.chars().map(|c| format!("{}{c}", ask.prefix)).collect();
                for prefix in refined(&at, radius_km, subs) {
                    push(&mut heap, prefix, None);
                }
                continue;
            }
            if answer.more {
                // A full-length cell with many items (one place): the rest of it.
                if let Some(last) = answer.items.last() {
                    push(&mut heap, ask.prefix.clone(), Some(last.sort_key()));
                }
            }
            for item in answer.items {
                let Some(place) = item.location() else { continue };
                let (km, id) = (at.distance_km(&place), item.id());
                let beyond = after.is_none_or(|a| km.total_cmp(&a.km).then(id.cmp(&a.id)) == Ordering::Greater);
                if km <= radius_km && beyond {
                    heap.push(Entry::Item { km, id, item });
                }
            }
        }
        let grow = cost.rounds >= GROW_AFTER || heap.len() == found_before;
        at_once = if grow { (at_once * 2).min(CELLS_AT_ONCE) } else { base };
    }
    let next = match (looked_at, heap.is_empty()) {
        (Some(last), false) => Some(last),
        _ => None,
    };
    Ok((out, next, cost))
}

/// Puts a cell in the heap if any point of it is within the radius (and,
/// on a later page, not wholly nearer than where the walk is).
fn push_cell<T>(
    heap: &mut BinaryHeap<Entry<T>>,
    at: &Location,
    radius_km: f64,
    after: Option<After>,
    prefix: String,
    after_key: Option<String>,
) {
    let Some(cell) = Cell::of(&prefix) else { return };
    let (near, far) = cell.distance_bounds_km(at);
    if near <= radius_km && after.is_none_or(|a| far >= a.km) {
        heap.push(Entry::Cell { near, prefix, after: after_key });
    }
}

/// The cells to look at in place of `cells`: while each of them is more than
/// [`REFINE`] times the circle's area and their sub-cells that meet the
/// circle are at most [`MAX_REFINED`], those sub-cells (no query is sent: a
/// query of a cell larger than the circle reads items outside it).
fn refined(at: &Location, radius_km: f64, mut cells: Vec<String>) -> Vec<String> {
    let circle = std::f64::consts::PI * radius_km * radius_km;
    loop {
        let big = |p: &String| p.len() < HASH_LEN && Cell::of(p).is_some_and(|c| c.area_km2() > REFINE * circle);
        if cells.is_empty() || !cells.iter().all(big) {
            return cells;
        }
        let mut finer = Vec::new();
        for p in &cells {
            for c in BASE32.chars() {
                let sub = format!("{p}{c}");
                if Cell::of(&sub).is_some_and(|cell| cell.distance_bounds_km(at).0 <= radius_km) {
                    finer.push(sub);
                }
            }
            if finer.len() > MAX_REFINED {
                return cells;
            }
        }
        cells = finer;
    }
}

#[cfg(test)]
#[path = "tests/nearest.rs"]
mod tests;
