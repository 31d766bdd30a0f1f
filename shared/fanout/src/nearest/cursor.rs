//! Where a page leaves off: the last item looked at, the full-length cells
//! it read more than one item of, in part or to their end
//! ([`After::within`]), and, after a page that found nothing beyond the
//! cursor, how far it read the cells it started with ([`After::skip`],
//! [`After::inner`]).

use std::collections::{BTreeMap, BinaryHeap};

use domain::geo::HASH_LEN;
use ulid::Ulid;

use super::frontier::{Entry, Tag};

/// Where a walk is: every item nearer than `km` (or as near, with an id up
/// to `id`) has been looked at (returned, unless a filter passed it over),
/// and so has every item of each `within` cell up to its key.
#[derive(Clone, Debug, PartialEq)]
pub struct After {
    /// The distance of the last item looked at (0 before any: a page
    /// stopped before it looked at an item keeps where it started).
    pub km: f64,
    /// Its id.
    pub id: Ulid,
    /// Full-length cells the page read more than one item of (in part or
    /// to their end), or carried from the old cursor, at most
    /// [`MAX_WITHIN`], the most read first: a later page reads each from
    /// where this one left it, not from its start.
    pub within: Vec<Within>,
    /// Set by a page that stopped before it looked at an item, no cell it
    /// read holding anything beyond the cursor (a pole's wedges, the end of
    /// a walk): of the cells it started with, the last it read to its end
    /// (and all that was left of it) before the first it left in part, in
    /// the order cells are read (if it read none to its end, the old
    /// cursor's `skip`). A page from the same `km`, `id` and
    /// `within` starts with the same cells and takes them out in that
    /// order, so it skips each up to this one.
    pub skip: Option<Skip>,
    /// Set (with `skip` or without) where the next cell it started with is one it left
    /// in part: that cell, and the last of what was left of it that the
    /// page read to its end (with all left of that) before the first it
    /// left in part, in the same order. The next page reads that cell
    /// again and skips what was left of it up to there.
    pub inner: Option<Inner>,
}

/// A cell a page started with and the last part of what was left of it
/// to skip ([`After::inner`]).
pub type Inner = (Skip, Skip);

/// A cell's place in the order a page reads cells (nearest first, then by
/// the rest of [`super::frontier::Entry`]'s order): the cell's least
/// distance from the point, its prefix and the keys it is read between.
#[derive(Clone, Debug, PartialEq)]
pub struct Skip {
    /// The least distance of any point of the cell from the point.
    pub near: f64,
    /// The cell.
    pub prefix: String,
    /// Read above this sort key.
    pub after: Option<String>,
    /// Read below this cell.
    pub before: Option<String>,
    /// Read on from this item (a full-length cell).
    pub from: Option<Ulid>,
}

/// A full-length cell looked at up to an item: every item of the cell with
/// a sort key up to `key` has been looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Within {
    /// The item's sort key (its first [`HASH_LEN`] characters: the cell).
    pub key: String,
    /// Its id.
    pub id: Ulid,
}

/// Full-length cells a cursor names (the most read of the page).
pub const MAX_WITHIN: usize = 4;

/// The cells a page started with that it read, in order ([`Entry::root`]),
/// and what was left of them that it read (with its root).
#[derive(Default)]
pub(super) struct Started {
    roots: Vec<Skip>,
    left: Vec<(usize, Skip)>,
}

impl Started {
    /// Notes a cell read: its root (a cell the page started with is its
    /// own, the next root), its tag, and whether it is the cell the cursor
    /// says to read again to skip what was left of it ([`After::inner`]).
    pub fn read<T>(&mut self, cell: &Entry<T>, after: Option<&After>) -> (usize, Option<Tag>, bool) {
        let (root, tag) = (cell.root().unwrap_or(self.roots.len()), cell.tag());
        match (tag, cell.skip()) {
            (Some(_), Some(skip)) => self.left.push((root, skip)),
            (None, Some(skip)) => {
                let again = after.and_then(|a| a.inner.as_ref()).is_some_and(|(r, _)| r.rank() == skip.rank());
                self.roots.push(skip);
                return (root, tag, again);
            }
            _ => {}
        }
        (root, tag, false)
    }

    /// Where the next page skips to ([`After::skip`] and [`After::inner`])
    /// once a page found nothing beyond its cursor, `unread` the tags of
    /// what is still to read, `tops` those tags' parts: the cells read
    /// before the first with some of it unread (`k`; the old skip if none),
    /// and what was left of that one read before the first part of it with
    /// some unread. `None`: it would skip nothing more than the old cursor.
    pub fn skip(
        &self,
        unread: impl Iterator<Item = Tag> + Clone,
        tops: &[Skip],
        after: Option<&After>,
    ) -> Option<(Option<Skip>, Option<Inner>)> {
        let k = unread.clone().map(|t| t.root).min().unwrap_or(self.roots.len());
        let first =
            unread.filter(|t| t.root == k).filter_map(|t| tops.get(t.top)).min_by(|a, b| a.rank().cmp(&b.rank()));
        let upto = self.left.iter().filter(|(r, s)| *r == k && first.is_none_or(|f| s.rank() < f.rank()));
        let upto = upto.map(|(_, s)| s).max_by(|a, b| a.rank().cmp(&b.rank()));
        // (Only a cell shorter than a place: a query of it asks the same
        // whatever the page, so reading it again leaves the same.)
        let partial = self.roots.get(k).filter(|r| r.prefix.len() < HASH_LEN);
        let inner = partial.zip(upto).map(|(root, upto)| (root.clone(), upto.clone()));
        let outer = k.checked_sub(1).and_then(|k| self.roots.get(k)).or(after.and_then(|a| a.skip.as_ref()));
        (k > 0 || inner.is_some()).then(|| (outer.cloned(), inner))
    }
}

/// Whether a cursor within `now` reads on from further than one within
/// `before`: each cell of `before` as far at least, and one that
/// `crowded` says is a crowd further (so a walk of such pages ends: each
/// reads a crowded place on).
pub(super) fn further(now: &[Within], before: &[Within], crowded: impl Fn(&Within) -> bool) -> bool {
    let key = |of: &[Within], cell: &Within| {
        of.iter().find(|w| w.key.get(..HASH_LEN) == cell.key.get(..HASH_LEN)).map(|w| w.key.clone())
    };
    before.iter().all(|b| key(now, b).is_some_and(|k| k >= b.key))
        && now.iter().any(|n| crowded(n) && key(before, n).is_none_or(|k| n.key > k))
}

/// The full-length cells a page read, for its cursor: of each cell read
/// (of which it read more than one item, or the old cursor held; its
/// reads run on from its start or from where the cursor
/// left it), the greatest key read below every item still unreturned, or
/// the old cursor's key there if greater; then the old cursor's cells this
/// page did not read (still true: a cell read to its end reads nothing
/// more, and would otherwise be read again from its start); the
/// [`MAX_WITHIN`] cells read most, those last.
pub(super) fn within<T>(
    heap: &BinaryHeap<Entry<T>>,
    read: &BTreeMap<String, BTreeMap<String, Ulid>>,
    after: Option<&After>,
) -> Vec<Within> {
    let mut waiting: BTreeMap<&str, &str> = BTreeMap::new();
    for entry in heap {
        if let Entry::Item { key, .. } = entry {
            if let Some(cell) = key.get(..HASH_LEN) {
                let least = waiting.entry(cell).or_insert(key);
                if key.as_str() < *least {
                    *least = key;
                }
            }
        }
    }
    let mut cells: Vec<(usize, Within)> = read
        .iter()
        .filter_map(|(cell, keys)| {
            let below = match waiting.get(cell.as_str()) {
                Some(least) => {
                    keys.range::<str, _>((std::ops::Bound::Unbounded, std::ops::Bound::Excluded(*least))).next_back()
                }
                None => keys.iter().next_back(),
            };
            let before = after.and_then(|a| a.within.iter().find(|w| w.key.get(..HASH_LEN) == Some(cell.as_str())));
            let here = below.map(|(key, id)| Within { key: key.clone(), id: *id });
            let best = match (here, before) {
                (Some(h), Some(b)) if b.key > h.key => b.clone(),
                (Some(h), _) => h,
                (None, b) => b?.clone(),
            };
            Some((keys.len(), before.is_some(), best))
        })
        .filter(|(n, carried, _)| *n > 1 || *carried)
        .map(|(n, _, w)| (n, w))
        .collect();
    let unread = after.map_or(&[][..], |a| &a.within[..]);
    let unread = unread.iter().filter(|w| w.key.get(..HASH_LEN).is_none_or(|cell| !read.contains_key(cell)));
    cells.extend(unread.map(|w| (0, w.clone())));
    cells.sort_by_key(|c| std::cmp::Reverse(c.0));
    cells.into_iter().take(MAX_WITHIN).map(|(_, w)| w).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(key: &str) -> Within {
        Within { key: key.to_owned(), id: Ulid(1) }
    }

    /// A page stopped before it looked at an item moves its walk on only
    /// if it read a crowded place further and lost none (else its next
    /// page could do the same again, for ever).
    #[test]
    fn a_cursor_is_further_only_when_it_reads_a_place_on_and_loses_none() {
        let (a1, a2, b1) = (w("dr5regw3p#01"), w("dr5regw3p#02"), w("dr5regw3q#01"));
        let (a1, a2, b1, a1b1, a2b1) =
            (vec![a1.clone()], vec![a2.clone()], vec![b1.clone()], vec![a1, b1.clone()], vec![a2, b1]);
        let all = |_: &Within| true;
        assert!(further(&a1, &[], all));
        assert!(further(&a2, &a1, all));
        assert!(further(&a2b1, &a1b1, all));
        assert!(!further(&[], &[], all));
        assert!(!further(&a1, &a1, all));
        assert!(!further(&a1, &a2, all));
        assert!(!further(&b1, &a1, all), "a place read on, another lost");
        assert!(!further(&a2, &a1, |_| false), "no crowd read on");
        assert!(!further(&a2b1, &a1b1, |w| w.key.starts_with("dr5regw3q")), "only a place that is no crowd on");
    }
}
