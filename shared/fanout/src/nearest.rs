//! Nearest first over a geohash index (the `near` index: a partition per
//! 3-character cell, per 5-character one in a dense cell
//! (`domain::geo::partition`), the full geohash then the id in the sort
//! key, so a longer prefix is a smaller cell): one page of the items within
//! a radius of a point, by distance then id, exact, planned here without
//! I/O. A cell held in more than one partition is looked at as its
//! sub-cells, and a partition of a dense cell the asker knows to be empty
//! ([`CellAsker::may_hold`]) is not queried.
//!
//! A best-first search: a heap holds cells (by the nearest any point of
//! them can be) and items (by their distance). The cells covering the
//! circle go in first (as their sub-cells where a cell is larger in area
//! than the circle); the nearest entry comes out: an item is the next result
//! (nothing still unread can be nearer: every cell holding it would have
//! come out first, cells before items at equal values); a cell that comes
//! out is queried together with a few of the next cells in order (up to
//! where the items found could fill the page), each for up to
//! [`CELL_LIMIT`] items (a full-length cell, one place, for as many as the
//! page can take). What a cell answers goes in; if it had more, what is
//! left of it goes in too, never read again (`frontier.rs`: the smallest
//! cell holding what was read is split; a full-length cell goes on after
//! its last item, ordered after the items as near with a lower id, so a
//! crowded place answers a page without being read whole). A page resumes
//! after the last item looked at (distance and id): cells wholly nearer
//! are never queried again, and a crowded place the page read more than
//! one item of is read from where it was left ([`After::within`]). Once it has looked
//! at an item a page keeps to its [`Budget`] (the contract's bound); before,
//! it reads the rest of a crowded place only as far as the budget holds,
//! and once it is spent stops there (empty) if its cursor reads a crowd
//! further and loses no place the old one held ([`cursor::further`]);
//! while it has found nothing beyond its cursor it reads only the cells
//! that fit, and once none does stops there (empty) if it has read to its
//! end one of the cells it started with, or parts of what was left of the
//! first it left in part: its cursor skips those read to their end before
//! the first it left in part ([`After::skip`], [`After::inner`]: a page
//! from the same cursor starts with the same cells, and takes them out in
//! the same order, a total one).
//!
//! What a page reads is measured by `what_a_near_page_reads` (the tests):
//! few cells per round keep a city's page of 20 at 8-12 queries (6.0-12.6
//! RCU of cards, 9-20 were they whole listings), where querying
//! every cell that might hold a result read ten times that; and
//! `a_spot_of_a_thousand_answers_full_pages_at_a_bounded_cost`: a page at
//! a place holding a thousand reads about what it answers.

use std::collections::BTreeMap;

use domain::geo::{Cell, Location, CELL_LEN, HASH_LEN};
use ulid::Ulid;

pub use asker::{CellAnswer, CellAsk, CellAsker, Placed};
use cursor::{further, within, Started};
pub use cursor::{After, Skip, Within, MAX_WITHIN};
use frontier::{Entry, Frontier};

use crate::budget;
pub use crate::budget::Budget;

mod asker;
mod cursor;
mod frontier;
pub mod memory;
mod merge;

pub use merge::merged;

/// Items one cell query asks for before the cell is split.
pub const CELL_LIMIT: usize = 32;
/// Items a query of the rest of a crowded place asks for when none of what
/// it held came out before the rest (the point is not on it): all of it
/// (DynamoDB stops a page at 1 MB), as far as the page's budget holds.
const GREEDY_LIMIT: usize = 4_000;
/// Cells queried in one round: at most this many ...
const CELLS_AT_ONCE: usize = 64;
/// ... the first round one (and every cell as near: all of them must be
/// read before anything is returned, as at a pole), then a tenth of the
/// page, at least this many ...
const MIN_AT_ONCE: usize = 2;
/// ... doubling after a round that found nothing, and every round after
/// this many.
const GROW_AFTER: usize = 4;

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
    /// 4 KB read units the queries cost.
    pub units: usize,
    /// The page stopped before it was full: it reached [`MAX_ROUNDS`] (a
    /// filter, see [`page_where`], or a place denser than any measured) or
    /// its [`Budget`] (items of many bytes); its cursor goes on after the
    /// last item looked at, or, where it looked at none, from where it left
    /// a crowd beside it, or past the cells it read that held nothing
    /// beyond the cursor ([`After::skip`]).
    pub stopped_early: bool,
}

/// Rounds after which a page stops, once it has looked at an item (pages
/// without a filter took at most 10 in the tests, 7 in a city).
pub const MAX_ROUNDS: usize = 16;

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
    page_where(at, radius_km, limit, after, &|_| true, asker, Budget::page(limit)).await
}

/// [`page`] of the items `keep` keeps (a category), within `budget`: the
/// others are looked at in order and passed over. A rare kind in a dense
/// radius would read on and on, so once it has looked at an item (so that
/// every page moves the cursor on) a page stops after [`MAX_ROUNDS`], or
/// when its next cells would take it past `budget`, saying so in its cost;
/// before, only beside a crowd whose cursor it moves on, or past cells that
/// held nothing beyond its cursor (see the loop).
pub async fn page_where<T: Placed, A: CellAsker<T>>(
    at: Location,
    radius_km: f64,
    limit: usize,
    after: Option<After>,
    keep: &(dyn Fn(&T) -> bool + Sync),
    asker: &A,
    budget: Budget,
) -> Result<(Vec<Found<T>>, Option<After>, Cost), A::Error> {
    let holds = |cell: &str| asker.may_hold(cell);
    let cells = Cell::covering(&at, radius_km, CELL_LEN);
    let mut frontier = Frontier::new(at, radius_km, after.as_ref(), holds, cells);
    let (mut out, mut cost) = (Vec::new(), Cost::default());
    let mut looked_at: Option<(f64, Ulid)> = None;
    // A page that stopped before it looked at an item: its cursor's
    // places (a crowd among them read further than the page started), or
    // the cells it read to skip, if none held anything beyond its cursor
    // (`barren`).
    let mut stopped: Option<After> = None;
    let (mut barren, mut started) = (true, Started::default());
    // Keys read per full-length cell (for the cursor's `within`).
    let mut read: BTreeMap<String, BTreeMap<String, Ulid>> = BTreeMap::new();
    // Cells per round: few (a page of 20 in a city needs about a dozen
    // cells, and each cell beyond its end is read for nothing: the first
    // round, where the coarsest cells are, asks one), doubling after a
    // round that found nothing (sparse places, the poles).
    let base = (limit / 10).clamp(MIN_AT_ONCE, CELLS_AT_ONCE);
    let mut at_once = 1;
    let mut left = budget;
    // The bytes of an item: a typical one's, then the most an answer's
    // items were at least on average.
    let mut item_bytes = asker.item_bytes().max(1);
    while out.len() < limit {
        if cost.rounds >= MAX_ROUNDS && looked_at.is_some() {
            cost.stopped_early = true;
            break;
        }
        let Some(top) = frontier.heap.pop() else { break };
        if let Entry::Item { km, id, item, .. } = top {
            looked_at = Some((km, id));
            if keep(&item) {
                out.push(Found { item, km });
            }
            continue;
        }
        // With it, the next cells in order up to where the items already
        // found could fill the page (fewer rounds; a cell beyond the page's
        // end costs a query, never a wrong answer): `at_once` of them, and
        // every one as near as it (all of which must be read before
        // anything is returned).
        let near = top.key().0;
        let heap = &mut frontier.heap;
        let wanted = limit - out.len();
        let fills = |e: &Entry<T>| e.prefix().is_some_and(|p| p.len() == HASH_LEN) && e.reads_on();
        let mut cells = vec![top];
        let mut passed = Vec::new();
        let as_near = |e: Option<&Entry<T>>| matches!(e, Some(Entry::Cell { near: n, .. }) if *n <= near);
        while cells.len() < CELLS_AT_ONCE
            && passed.len() < wanted
            && ((cells.len() < at_once && !cells.iter().any(fills)) || as_near(heap.peek()))
        {
            match heap.pop() {
                Some(cell @ Entry::Cell { .. }) => cells.push(cell),
                Some(item) => passed.push(item),
                None => break,
            }
        }
        heap.extend(passed);
        // Once the page has looked at an item, within what is left: a
        // request and a unit per query, the nearest cells first, each
        // reading what its share of the units holds; none fits: the page
        // stops (its cursor goes on after that item). Before, while it has
        // found nothing beyond its cursor (`barren`: every cell at a pole is
        // as near), it reads the cells that fit; once it has, every cell of
        // the round as if it had no budget (a crowd beside the point must be
        // read whole before any of it comes out; smaller asks would only
        // split cells into more queries), but the rest of a crowded place (a
        // full-length cell read whole at once, `greedy`) only as far as what
        // is left holds. Once nothing fits, a page whose cursor would read a
        // crowd further, and every place the old cursor did as far, stops
        // there, empty ([`After::within`], `stopped`); so does a barren page
        // that read to its end a cell it started with (or parts of what was
        // left of the first it left in part), its cursor skipping those read
        // to their end before the first it left in part ([`After::skip`],
        // [`After::inner`]); any other reads on without a budget (its cursor
        // could not move on).
        let queries = |e: &Entry<T>| e.prefix().map_or(1, |p| asker.queries(p));
        let all: usize = cells.iter().map(queries).sum();
        let (fit, requests, holds) = match (looked_at, left.fit(cells.iter().map(queries))) {
            (Some(_), (0, _)) => {
                heap.extend(cells);
                cost.stopped_early = true;
                break;
            }
            (Some(_), (fit, requests)) => (fit, requests, left.holds(requests, item_bytes)),
            (None, (0, _)) => {
                let on = within(heap, &read, after.as_ref());
                // A crowd: a place the page read more than CELL_LIMIT items of.
                let crowded = |w: &Within| {
                    w.key.get(..HASH_LEN).and_then(|cell| read.get(cell)).is_some_and(|keys| keys.len() > CELL_LIMIT)
                };
                let old = after.as_ref().map_or(&[][..], |a| &a.within);
                // Or nothing read was beyond the cursor: the next page skips
                // what it read to its end ([`Started::skip`]).
                let unread = heap.iter().chain(&cells).filter_map(Entry::tag);
                let skip = match further(&on, old, crowded) {
                    true => Some((on, None, None)),
                    false => barren
                        .then(|| started.skip(unread, &frontier.tops, after.as_ref()))
                        .flatten()
                        .map(|(skip, inner)| (old.to_vec(), skip, inner)),
                };
                if let Some((within, skip, inner)) = skip {
                    heap.extend(cells);
                    cost.stopped_early = true;
                    // Where the page started (nowhere: nothing is nearer than
                    // 0 km or has an id below 0).
                    let (km, id) = after.as_ref().map_or((0.0, Ulid(0)), |a| (a.km, a.id));
                    stopped = Some(After { km, id, within, skip, inner });
                    break;
                }
                (cells.len(), all, usize::MAX)
            }
            // Nothing found beyond the cursor yet: as many as fit (the
            // rest, if they fit no more, on a later page: `skip`).
            (None, (fit, requests)) if barren => (fit, requests, left.holds(requests, item_bytes)),
            (None, _) => (cells.len(), all, left.holds(all, item_bytes)),
        };
        heap.extend(cells.drain(fit..));
        let most = |prefix: &str, greedy: bool| {
            // A full-length cell is one place (5 m): what it holds is read
            // as far as the page could take it, and no cell is added to
            // the round for the page's sake but those as near.
            let most = match (prefix.len() == HASH_LEN, greedy) {
                (true, true) => GREEDY_LIMIT,
                (true, false) => wanted.max(CELL_LIMIT),
                _ => CELL_LIMIT,
            };
            // Before the page has looked at an item, only the reads of all
            // that is left of a crowded place (`greedy`) keep to the budget.
            match looked_at {
                None if !greedy => most,
                _ => most.min(holds),
            }
        };
        // Each ask with the root of its cell and its tag.
        let mut of_root = Vec::new();
        for cell in cells {
            let (root, tag, again) = started.read(&cell, after.as_ref());
            if again {
                frontier.partial = Some(root);
            }
            if let Entry::Cell { prefix, after, before, greedy, .. } = cell {
                of_root.push((CellAsk { limit: most(&prefix, greedy), prefix, after, before }, root, tag));
            }
        }
        let asks: Vec<CellAsk> = of_root.iter().map(|(ask, ..)| ask.clone()).collect();
        cost.rounds += 1;
        cost.queries += requests;
        let found_before = frontier.heap.len();
        let mut units = 0;
        for (ask, answer) in asker.ask(asks).await? {
            cost.read += answer.items.len();
            units += answer.units;
            item_bytes = item_bytes.max(budget::least_item_bytes(answer.units, answer.items.len()));
            let ends = answer.items.first().zip(answer.items.last()).map(|(f, l)| (f.sort_key(), l.sort_key(), l.id()));
            if let (true, Some((first, last, last_id))) = (answer.more, &ends) {
                let nearest = answer.items.iter().filter_map(Placed::location).map(|p| at.distance_km(&p));
                let read = (first.as_str(), last.as_str(), *last_id);
                let (root, tag) = of_root.iter().find(|(a, ..)| *a == ask).map_or((0, None), |(_, r, t)| (*r, *t));
                frontier.rest(
                    &ask.prefix,
                    ask.before.as_deref(),
                    read,
                    (nearest.fold(f64::INFINITY, f64::min), root, tag),
                );
            }
            for item in answer.items {
                let (key, id) = (item.sort_key(), item.id());
                if let Some(cell) = key.get(..HASH_LEN) {
                    read.entry(cell.to_owned()).or_default().insert(key.clone(), id);
                }
                barren &= !frontier.push_item(item, key);
            }
        }
        cost.units += units;
        left = left.less(requests, units);
        let grow = cost.rounds >= GROW_AFTER || frontier.heap.len() == found_before;
        at_once = if grow { (at_once * 2).min(CELLS_AT_ONCE) } else { base };
    }
    let next = match (looked_at, stopped, frontier.heap.is_empty()) {
        (_, _, true) => None,
        (Some((km, id)), _, false) => {
            Some(After { km, id, within: within(&frontier.heap, &read, after.as_ref()), skip: None, inner: None })
        }
        // Where the page started, with the crowded places read on, or the
        // cells read skipped.
        (None, Some(stopped), false) => Some(stopped),
        (None, None, false) => None,
    };
    Ok((out, next, cost))
}

#[cfg(test)]
#[path = "tests/nearest.rs"]
mod tests;
