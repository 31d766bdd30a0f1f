//! The search's frontier: the heap of cells still to read and items read
//! but not yet returned, nearest first, and what is left of a cell once a
//! query has read part of it.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use domain::geo::partition::{is_dense, partition};
use domain::geo::{Cell, Location, HASH_LEN};
use ulid::Ulid;

use super::{After, Placed, Skip, Within};

/// A cell larger than the circle (in area) is looked at as its sub-cells
/// that meet the circle ...
const REFINE: f64 = 1.0;
/// ... unless they are more than this many.
const MAX_REFINED: usize = 64;
const BASE32: &str = "0123456789bcdefghjkmnpqrstuvwxyz";

/// An entry of the heap.
pub(super) enum Entry<T> {
    /// The items of a cell (a geohash prefix) with a sort key above `after`
    /// and below cell `before` (`None`: no bound), none nearer than `near`.
    /// `from`: the cell is full-length and `after` is an item's key, so each
    /// of those items has an id above `from` (within a full-length cell keys
    /// order as ids do).
    /// `greedy`: a full-length cell whose items were farther than `near`
    /// (no item comes out before the rest of it is read): read all of it at
    /// once, as far as the page's budget holds. `root`: what is left of a
    /// cell a query read in part ([`Frontier::rest`]): of which cell the
    /// page started with, and of which cell left of that one ([`Tag`]).
    Cell {
        near: f64,
        prefix: String,
        after: Option<String>,
        before: Option<String>,
        from: Option<Ulid>,
        greedy: bool,
        root: Option<Tag>,
    },
    /// An item read, within the radius and beyond the cursor.
    Item { km: f64, id: Ulid, key: String, item: T },
}

impl<T> Entry<T> {
    /// Nearest first; items at one distance by id. A cell comes before
    /// every item as near as it, but a cell with `from` only before the
    /// items as near with a greater id: each item it may hold is beyond
    /// both (so a place holding thousands answers a page without reading
    /// them all).
    pub fn key(&self) -> (f64, u8, Ulid, u8) {
        match self {
            Entry::Cell { near, from, .. } => cell_key(*near, *from),
            Entry::Item { km, id, .. } => (*km, 1, *id, 0),
        }
    }

    /// Its place in the order a page takes entries out (ascending): by
    /// [`Entry::key`], then cells as near by prefix and keys, so that a
    /// page from the same cursor reads the same cells in the same order.
    fn rank(&self) -> Rank<'_> {
        match self {
            Entry::Cell { prefix, after, before, .. } => {
                Rank { key: self.key(), tie: (prefix, after.as_deref(), before.as_deref()) }
            }
            Entry::Item { .. } => Rank { key: self.key(), tie: ("", None, None) },
        }
    }

    /// A cell's place, for a cursor ([`Skip`]).
    pub fn skip(&self) -> Option<Skip> {
        match self {
            Entry::Cell { near, prefix, after, before, from, .. } => Some(Skip {
                near: *near,
                prefix: prefix.clone(),
                after: after.clone(),
                before: before.clone(),
                from: *from,
            }),
            Entry::Item { .. } => None,
        }
    }

    /// A cell's prefix.
    pub fn prefix(&self) -> Option<&str> {
        match self {
            Entry::Cell { prefix, .. } => Some(prefix),
            Entry::Item { .. } => None,
        }
    }

    /// Of a cell left of one the page started with: that one.
    pub fn root(&self) -> Option<usize> {
        self.tag().map(|t| t.root)
    }

    /// Of a cell left of one the page started with: which.
    pub fn tag(&self) -> Option<Tag> {
        match self {
            Entry::Cell { root, .. } => *root,
            Entry::Item { .. } => None,
        }
    }

    /// A cell read on from an item's key.
    pub fn reads_on(&self) -> bool {
        matches!(self, Entry::Cell { after: Some(_), .. })
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
        other.rank().cmp(&self.rank())
    }
}

/// Where what is left of a cell comes from: the page's `root`-th cell it
/// started with that it read, and of what was left of that one the
/// `top`-th ([`Frontier::tops`]) it is, or is left of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Tag {
    pub root: usize,
    pub top: usize,
}

fn cell_key(near: f64, from: Option<Ulid>) -> (f64, u8, Ulid, u8) {
    match from {
        None => (near, 0, Ulid(0), 0),
        Some(id) => (near, 1, id, 1),
    }
}

/// An entry's place in the order entries come out ([`Entry::rank`]).
#[derive(PartialEq)]
pub(super) struct Rank<'a> {
    key: (f64, u8, Ulid, u8),
    tie: (&'a str, Option<&'a str>, Option<&'a str>),
}

impl Eq for Rank<'_> {}
impl PartialOrd for Rank<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Rank<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.key, other.key);
        a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)).then(a.3.cmp(&b.3)).then(self.tie.cmp(&other.tie))
    }
}

impl Skip {
    pub(super) fn rank(&self) -> Rank<'_> {
        Rank { key: cell_key(self.near, self.from), tie: (&self.prefix, self.after.as_deref(), self.before.as_deref()) }
    }
}

/// The heap of one page: the point, the radius and the cursor it started
/// from decide which cells and items go in.
pub(super) struct Frontier<'a, T, H> {
    pub heap: BinaryHeap<Entry<T>>,
    at: Location,
    radius_km: f64,
    after: Option<&'a After>,
    /// While [`Frontier::rest`] pushes: the nearest item the answer read,
    /// and the cell the page started with that what is left is of, with
    /// the tag of the cell read (`None`: that cell itself).
    seen_km: Option<f64>,
    resting: Option<(usize, Option<Tag>)>,
    parent_near: Option<f64>,
    /// What was left of the cells the page started with, as they were
    /// left ([`Tag::top`]).
    pub tops: Vec<Skip>,
    /// The root whose leftovers up to `After::inner`'s are not put in.
    pub partial: Option<usize>,
    /// Whether a partition of a dense cell may hold an item.
    holds: H,
}

impl<'a, T: Placed, H: Fn(&str) -> bool> Frontier<'a, T, H> {
    /// The cells covering the circle.
    pub fn new(at: Location, radius_km: f64, after: Option<&'a After>, holds: H, cells: Vec<String>) -> Self {
        let (seen_km, resting, parent_near, tops, partial) = (None, None, None, Vec::new(), None);
        let heap = BinaryHeap::new();
        let mut f = Frontier { heap, at, radius_km, after, seen_km, resting, parent_near, tops, partial, holds };
        for prefix in f.refined(cells) {
            f.push_cell(prefix, None, None);
        }
        f
    }

    /// Puts a cell in if any point of it is within the radius (and, on a
    /// later page, not wholly nearer than where the walk is): its items
    /// after `after` (a sort key and, in a full-length cell, that item's
    /// id) and below cell `before`. A full-length cell the cursor says was
    /// looked at in part is read from where it was left; a cell holding
    /// one, as that one and the rest of it on either side.
    pub fn push_cell(&mut self, prefix: String, after: Option<(String, Option<Ulid>)>, before: Option<&str>) {
        if after.is_none() {
            match partition(&prefix) {
                // Held in more than one partition (a dense cell, or a cell
                // holding one: `domain::geo::partition`): its sub-cells.
                // (What is left of a cell read in part is within its
                // partition.)
                None => {
                    for c in BASE32.chars() {
                        self.push_cell(format!("{prefix}{c}"), None, before);
                    }
                    return;
                }
                // Within a partition of a dense cell that holds nothing.
                Some(cell) if is_dense(cell) && !(self.holds)(cell) => return,
                Some(_) => {}
            }
        }
        let before = match before {
            Some(b) if b.starts_with(&prefix) && b.len() > prefix.len() => Some(b.to_owned()),
            // Wholly below it, or wholly at or above it.
            Some(b) if prefix.as_str() < b && !prefix.starts_with(b) => None,
            Some(_) => return,
            None => None,
        };
        let Some(cell) = Cell::of(&prefix) else { return };
        let (near, far) = cell.distance_bounds_km(&self.at);
        if near > self.radius_km || self.after.is_some_and(|a| far < a.km) {
            return;
        }
        let inside = |w: &&Within| w.key.get(..HASH_LEN).is_some_and(|c| c.starts_with(&prefix));
        let mut after = after;
        match self.after.and_then(|a| a.within.iter().find(inside)).cloned() {
            Some(w) if prefix.len() < HASH_LEN && after.is_none() && before.is_none() => {
                // Only what is left of the one looked at in part is read
                // again: it after its key, the rest of this cell on either
                // side of it.
                let Some(held) = w.key.get(..HASH_LEN).map(str::to_owned) else { return };
                let (above, greedy) = (Some(format!("{held}~")), false);
                let below = Some(held.clone());
                self.put(Entry::Cell {
                    near,
                    prefix: prefix.clone(),
                    after: None,
                    before: below,
                    from: None,
                    greedy,
                    root: None,
                });
                self.put(Entry::Cell { near, prefix, after: above, before: None, from: None, greedy, root: None });
                return self.push_cell(held, Some((w.key, Some(w.id))), None);
            }
            Some(w) if prefix.len() == HASH_LEN && after.as_ref().is_none_or(|(key, _)| *key < w.key) => {
                after = Some((w.key, Some(w.id)));
            }
            _ => {}
        }
        let (after, from) = match after {
            Some((key, id)) => (Some(key), id.filter(|_| prefix.len() == HASH_LEN)),
            None => (None, None),
        };
        let greedy = from.is_some() && self.seen_km.is_some_and(|km| km > near);
        self.put(Entry::Cell { near, prefix, after, before, from, greedy, root: None });
    }

    /// Puts a cell in unless the cursor says a page from it read the cell
    /// and found nothing beyond it ([`After::skip`], [`After::inner`]).
    fn put(&mut self, mut cell: Entry<T>) {
        // What is left of a cell is no nearer than the cell (in exact
        // arithmetic; so in floating point too, for `skip`: it ranks after).
        if let (Entry::Cell { near, .. }, Some(least)) = (&mut cell, self.parent_near) {
            *near = near.max(least);
        }
        let tag = self.resting.map(|(root, of)| match of {
            Some(tag) => tag,
            None => {
                self.tops.extend(cell.skip());
                Tag { root, top: self.tops.len() - 1 }
            }
        });
        if let Entry::Cell { root, .. } = &mut cell {
            *root = tag;
        }
        let skipped = self.after.and_then(|a| a.skip.as_ref()).is_some_and(|s| cell.rank() <= s.rank());
        let inner =
            self.after.and_then(|a| a.inner.as_ref()).filter(|_| tag.is_some_and(|t| self.partial == Some(t.root)));
        if !skipped && inner.is_none_or(|(_, upto)| cell.rank() > upto.rank()) {
            self.heap.push(cell);
        }
    }

    /// Puts an item in if it is within the radius and beyond the cursor;
    /// whether it did.
    pub fn push_item(&mut self, item: T, key: String) -> bool {
        let Some(place) = item.location() else { return false };
        let (km, id) = (self.at.distance_km(&place), item.id());
        let beyond = self.after.is_none_or(|a| km.total_cmp(&a.km).then(id.cmp(&a.id)) == Ordering::Greater);
        if km <= self.radius_km && beyond {
            self.heap.push(Entry::Item { km, id, key, item });
            return true;
        }
        false
    }

    /// What is left of cell `prefix` (read after its `after`) once a query
    /// has read `first..=last` of it (`read`: sort keys and the last item's
    /// id; `of`: how far the nearest of them is, the root of the cell and
    /// its tag, [`Entry::tag`]) and had more to give, nothing read read
    /// again: the smallest cell holding all it read (a crowded place: a few
    /// characters longer than `prefix`) is split, its sub-cell holding the
    /// last item going on after it (at full length, that cell itself), the
    /// sub-cells after it from their start, as are the cells after each
    /// cell on the way down to it.
    pub fn rest(
        &mut self,
        prefix: &str,
        before: Option<&str>,
        read: (&str, &str, Ulid),
        of: (f64, usize, Option<Tag>),
    ) {
        (self.seen_km, self.resting) = (Some(of.0), Some((of.1, of.2)));
        // As the cell's `near` was worked out when it went in.
        self.parent_near = Cell::of(prefix).map(|c| c.distance_bounds_km(&self.at).0);
        self.rest_of(prefix, before, read.0, read.1, read.2);
        (self.seen_km, self.resting, self.parent_near) = (None, None, None);
    }

    fn rest_of(&mut self, prefix: &str, before: Option<&str>, first: &str, last: &str, last_id: Ulid) {
        let (Some(first_hash), Some(last_hash)) = (first.get(..HASH_LEN), last.get(..HASH_LEN)) else {
            // Not a key of the index's shape: the cell after its last item.
            return self.push_cell(prefix.to_owned(), Some((last.to_owned(), None)), before);
        };
        if prefix.len() >= HASH_LEN || !first_hash.starts_with(prefix) || !last_hash.starts_with(prefix) {
            return self.push_cell(prefix.to_owned(), Some((last.to_owned(), Some(last_id))), before);
        }
        let shared = first_hash.bytes().zip(last_hash.bytes()).take_while(|(a, b)| a == b).count();
        let split = (shared + 1).min(HASH_LEN);
        let mut later = Vec::new();
        for len in prefix.len() + 1..=split {
            let (parent, own) = (&last_hash[..len - 1], &last_hash[len - 1..len]);
            later.extend(BASE32.chars().filter(|c| c.to_string().as_str() > own).map(|c| format!("{parent}{c}")));
        }
        self.push_cell(last_hash[..split].to_owned(), Some((last.to_owned(), Some(last_id))), before);
        for sub in self.refined(later) {
            self.push_cell(sub, None, before);
        }
    }

    /// The cells to look at in place of `cells`: while each of them is more
    /// than [`REFINE`] times the circle's area and their sub-cells that meet
    /// the circle are at most [`MAX_REFINED`], those sub-cells (no query is
    /// sent: a query of a cell larger than the circle reads items outside it).
    pub fn refined(&self, mut cells: Vec<String>) -> Vec<String> {
        let (at, radius_km) = (&self.at, self.radius_km);
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
}
