//! One page's sweep of rings ([`super::page_where`]): each ring's cells in
//! key order from the cursor, each read whole, read for what the page
//! wants, or looked at as its sub-cells (the module's doc says when); a
//! query of a cell from its start takes with it, in one round, up to
//! [`AHEAD`] of the next cells the page's density says it will read whole.

use std::collections::{HashMap, HashSet};

use domain::geo::partition::{is_dense, partition};
use domain::geo::{Cell, Location, HASH_LEN};

use super::keys::{past, push_subcells, through, BASE32};
use super::{CellAnswer, CellAsk, CellAsker, Class, Cost, Found, Placed, Rings};
use crate::budget::{self, Budget, UNIT_BYTES};

/// A cell meeting a ring in this many of its 32 sub-cells or more is read
/// for its share of what the page wants; in fewer, whole or as its
/// sub-cells.
const MOST_MET: usize = 24;
/// The units a cell meeting a ring in few sub-cells may be read whole for
/// at least, rather than split, while half the units left hold that much
/// (what it holds beyond the ring serves the page's later rings: a sparse
/// place is read whole once a page).
pub(super) const MIN_READ_UNITS: usize = 2;
/// The next cells a round reads with the one the page is at: those it
/// would read whole next (a round trip each, one after another, else).
pub(super) const AHEAD: usize = 2;
/// How a ring's sweep ended.
pub(super) enum Flow {
    /// Every cell of the ring read.
    Swept,
    /// The page is full, its last item's key.
    Full(String),
    /// The budget is spent, this far.
    Spent(Option<String>),
}

/// How a cell is read for a ring.
enum Plan {
    /// As its sub-cells, with no read of its own.
    Split,
    /// For this many items.
    Read(usize),
}

/// One page's sweep of rings.
pub(super) struct Sweep<'a, T, A> {
    at: Location,
    pub(super) rings: Rings,
    limit: usize,
    keep: &'a (dyn Fn(&T) -> bool + Sync),
    asker: &'a A,
    left: Budget,
    /// A typical item's bytes, then the most an answer showed its items to
    /// be on average: what a probe asks for.
    item_bytes: usize,
    pub(super) cost: Cost,
    pub(super) out: Vec<Found<T>>,
    /// Cells read whole from their start: their keys and items (each
    /// taken out when it is answered, in its ring).
    whole: HashMap<String, Vec<(String, Option<T>)>>,
    /// Cells found to hold more than a probe read: later rings look at
    /// them as their sub-cells.
    crowded: HashSet<String>,
    /// Listings per km² where the page read last (`None` before a read).
    per_km2: Option<f64>,
    /// Answers of cells read ahead, from their start, not yet reached.
    ahead: HashMap<String, CellAnswer<T>>,
}

impl<'a, T: Placed, A: CellAsker<T>> Sweep<'a, T, A> {
    /// A page of `limit` near `at` over `rings`, within `left`.
    pub(super) fn new(
        at: Location,
        rings: Rings,
        limit: usize,
        keep: &'a (dyn Fn(&T) -> bool + Sync),
        asker: &'a A,
        left: Budget,
    ) -> Self {
        let item_bytes = asker.item_bytes().max(1);
        let (whole, crowded, ahead) = (HashMap::new(), HashSet::new(), HashMap::new());
        let (cost, out, per_km2) = (Cost::default(), Vec::new(), None);
        Sweep { at, rings, limit, keep, asker, left, item_bytes, cost, out, whole, crowded, per_km2, ahead }
    }

    /// Ring `k` from `pos`, its cells in key order.
    pub(super) async fn ring(&mut self, k: usize, tops: &[String], mut pos: Option<String>) -> Result<Flow, A::Error> {
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
            let from_start = pos.as_deref().is_none_or(|p| p <= prefix.as_str());
            // What the cell answered from its start, while it may be kept whole.
            let mut kept: Option<Vec<(String, Option<T>)>> = from_start.then(Vec::new);
            // Read ahead with an earlier cell: its first answer.
            let mut ready = if from_start { self.ahead.remove(&prefix) } else { None };
            let meet = self.meeting(&prefix, k, class);
            let sparse = meet < MOST_MET;
            let area = cell.area_km2();
            let mut want = match (&ready, self.plan(&prefix, &cell, meet, pos.as_deref())) {
                (None, Plan::Split) => {
                    push_subcells(&mut stack, &prefix, pos.as_deref());
                    continue;
                }
                (_, Plan::Read(want)) => want,
                (Some(_), Plan::Split) => 1,
            };
            loop {
                let from = pos.clone().filter(|p| p.as_str() > prefix.as_str());
                let answer = match ready.take() {
                    Some(answer) => answer,
                    None => {
                        let ask = |limit| CellAsk { prefix: prefix.clone(), after: from.clone(), before: None, limit };
                        // What this cell is expected to give the page: all it
                        // wants, met in most sub-cells; else its share of
                        // what it is asked for (twice what it holds, and 8).
                        let gives = match sparse {
                            false => f64::INFINITY,
                            true => want.saturating_sub(8) as f64 / 2.0 * meet as f64 / 32.0,
                        };
                        let extra = match from.is_none() {
                            true => self.read_ahead(&stack, k, gives),
                            false => Vec::new(),
                        };
                        match self.round(ask(want), extra).await? {
                            Some(answer) => answer,
                            None => return Ok(Flow::Spent(pos)),
                        }
                    }
                };
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
                if !sparse || prefix.len() >= HASH_LEN {
                    want = self.share(meet);
                    continue;
                }
                // What is left of it, by how far through its keys the read went.
                let (start, end) = (through(&prefix, from.as_deref()), through(&prefix, last.as_deref()));
                let left = match end > start {
                    true => read as f64 * (1.0 - end) / (end - start),
                    false => f64::INFINITY,
                };
                if let Some(whole) = self.whole_read(left, meet) {
                    want = whole;
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

    /// How to read `cell` for the ring `meet` of its sub-cells meet, from
    /// `pos`: meeting it in most, for its share of what the page still
    /// wants; in few, whole where the density read last says it holds no
    /// more than [`Sweep::room`] (else as its sub-cells, as a cell found
    /// crowded before); before the page has read anything, a unit's worth,
    /// to learn.
    fn plan(&self, prefix: &str, cell: &Cell, meet: usize, pos: Option<&str>) -> Plan {
        if meet >= MOST_MET {
            return Plan::Read(self.share(meet));
        }
        if self.crowded.contains(prefix) {
            return Plan::Split;
        }
        let Some(per_km2) = self.per_km2 else { return Plan::Read((UNIT_BYTES / self.item_bytes).max(1)) };
        let expected = per_km2 * cell.area_km2() * (1.0 - through(prefix, pos));
        // (A cell meeting it in few sub-cells has them: not of full length.)
        self.whole_read(expected, meet).map_or(Plan::Split, Plan::Read)
    }

    /// What the page still wants of a cell meeting the ring in `meet` of
    /// its sub-cells: its share of that in all the cell holds.
    fn share(&self, meet: usize) -> usize {
        (self.limit - self.out.len()).saturating_mul(32) / meet.max(1)
    }

    /// The limit of a read of the `expected` items left of a cell meeting
    /// the ring in `meet` sub-cells, if they fit [`Sweep::room`]:
    /// generously (twice, and 8: an estimate short by a few reads the cell
    /// again).
    fn whole_read(&self, expected: f64, meet: usize) -> Option<usize> {
        let fits = expected * self.item_bytes as f64 <= self.room(meet) as f64;
        fits.then(|| (expected * 2.0).ceil() as usize + 8)
    }

    /// What a read of a cell meeting a ring in `meet` sub-cells may take,
    /// in bytes: a query per meeting sub-cell, at least [`MIN_READ_UNITS`],
    /// at most half the units left.
    fn room(&self, meet: usize) -> usize {
        meet.max(MIN_READ_UNITS).min(self.left.units / 2).max(1) * UNIT_BYTES
    }

    /// Up to [`AHEAD`] of the next cells on `stack` the page will read
    /// whole from their start (in ring `k`, as the density read says),
    /// before the first it would not, and while what they and the cell
    /// read with them (`gives`) are expected to hold of the ring is short
    /// of what the page still wants: asks of them.
    fn read_ahead(&self, stack: &[String], k: usize, gives: f64) -> Vec<CellAsk> {
        let (mut asks, mut expected) = (Vec::new(), gives);
        let wanted = (self.limit - self.out.len()) as f64;
        for prefix in stack.iter().rev() {
            if asks.len() == AHEAD || self.per_km2.is_none() || expected >= wanted {
                break;
            }
            let Some(cell) = Cell::of(prefix) else { continue };
            let class = self.rings.class(&cell, &self.at, k);
            if class == Class::Out {
                continue;
            }
            let Some(part) = partition(prefix) else { break };
            if (is_dense(part) && !self.asker.may_hold(part)) || self.whole.contains_key(prefix) {
                continue;
            }
            let meet = self.meeting(prefix, k, class);
            match (meet < MOST_MET, self.plan(prefix, &cell, meet, None)) {
                (true, Plan::Read(limit)) if !self.ahead.contains_key(prefix) => {
                    // (Asked for twice what it holds, and 8, in `plan`.)
                    expected += limit.saturating_sub(8) as f64 / 2.0 * meet as f64 / 32.0;
                    asks.push(CellAsk { prefix: prefix.clone(), after: None, before: None, limit });
                }
                _ => break,
            }
        }
        asks
    }

    /// Sends `ask` (its limit cut to what the units left hold of the
    /// largest items, each of its queries billed on its own) with those of
    /// `extra` that the units left beyond it hold whole, in one round; keeps
    /// the extra answers for when the sweep reaches their cells: `ask`'s
    /// answer (`None`: no budget left, or no answer).
    async fn round(&mut self, mut ask: CellAsk, extra: Vec<CellAsk>) -> Result<Option<CellAnswer<T>>, A::Error> {
        let most = self.asker.most_item_bytes().max(1);
        let queries = |a: &CellAsk| self.asker.queries(&a.prefix).max(1);
        // The units a query of `limit` items may bill, in `queries` queries.
        let worst = |limit: usize, queries: usize| limit.saturating_mul(most).div_ceil(UNIT_BYTES).max(1) * queries;
        let mut total = queries(&ask);
        if self.cost.rounds > 0 && self.left.requests.min(self.left.units) < total {
            return Ok(None);
        }
        ask.limit = ask.limit.min(self.left.holds(total, most)).max(1);
        let mut spare = self.left.less(total, worst(ask.limit, total));
        let first = ask.clone();
        let mut asks = vec![ask];
        for a in extra {
            let q = queries(&a);
            let units = worst(a.limit, q);
            if q <= spare.requests && units <= spare.units {
                spare = spare.less(q, units);
                total += q;
                asks.push(a);
            }
        }
        let answers = self.asker.ask(asks).await?;
        let units: usize = answers.iter().map(|(_, a)| a.units).sum();
        self.cost.rounds += 1;
        self.cost.queries += total;
        self.cost.units += units;
        self.left = self.left.less(total, units);
        let mut mine = None;
        for (a, answer) in answers {
            self.cost.read += answer.items.len();
            self.item_bytes = self.item_bytes.max(budget::least_item_bytes(answer.units, answer.items.len()));
            match a == first {
                true => mine = Some(answer),
                false => {
                    self.ahead.insert(a.prefix, answer);
                }
            }
        }
        Ok(mine)
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
