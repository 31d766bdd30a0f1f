//! One page of a view over several partitions of a sorted index (the
//! write-sharded status index, `STATUS#<status>#<shard>`, newest first; a
//! hot category's browse and price keys, newest and cheapest first), exact
//! and full, in at most two rounds of queries, planned here without
//! any I/O: the caller answers each round's [`Ask`]s (`Asker`: DynamoDB in
//! the handler, partitions in memory in the tests).
//!
//! **Round 1** asks each live partition for its newest few items (see
//! [`crate::hint`]; together a little more than `limit`, or at least a
//! floor per partition, see [`page_reading_at_least`]). A partition that
//! answers with no more to give is exhausted. If the round read more than
//! `limit` items, the `limit`-th newest of them, `L`, bounds the page from
//! below: `limit` items at least as new as `L` exist, so no item older
//! than `L` is on the page.
//!
//! **Round 2** asks each partition `p` that is not exhausted and whose
//! oldest item read, `o_p`, is newer than `L` (it may hide items of the
//! page between `L` and `o_p`; the others cannot) for its items strictly
//! between `L` and `o_p`, at most `limit - a_p` of them, where `a_p` is the
//! number of first-round items at least as new as `o_p`: an item of `p`
//! below `limit - a_p` more of its own has `limit` newer items and cannot
//! be on the page. When the first round read `limit` items or fewer (some
//! partitions ran out, as on the last pages, or a hint fell short), there
//! is no `L`; every partition not exhausted is asked for everything below
//! `o_p`, one item more than it could place on the page, so that the last
//! page knows it is the last. Nothing here depends on how many items the
//! first round asked of each partition, so a hint can only make a page
//! cheaper or dearer, never wrong.
//!
//! **Exactness.** For each partition, keep a bound `u_p` such that every
//! item of `p` not read is older than `u_p`: the oldest item read while its
//! last query had more to give, `L` once its second query ran out (items
//! not read are then at or below `L`, and `L` belongs to another
//! partition), nothing once it is exhausted. With `G` the newest of the
//! `u_p`, every item at least as new as `G` has been read, so the newest
//! `limit` of those read ones that are at least as new as `G` are the
//! newest `limit` of the range: the page is exact whatever the queries
//! answered. It is also full: a partition asked in round 2 either ran out
//! (`u_p = L`, and `L` is at or below the page's oldest, as `limit` items
//! at least as new as `L` were read) or read its `limit - a_p` items (the
//! `limit` items at least as new as its new `u_p` were all read, so `u_p`
//! is at or below the page's oldest), and one not asked has `u_p = o_p` at
//! or below `L`. Hence `G` is at or below the page's oldest item. A
//! partition is exhausted for the next page only when it ran out over the
//! whole range and every item it gave is on the page.

//! "Newest" and "oldest" below stand for the greatest and least keys of a
//! [`PageKey`] (a cheapest-first key orders in reverse).

use crate::budget::Budget;
use crate::hint::{first_round_shares, hinted_shares, Hint, Known, HINT_PARTITIONS};
use crate::key::PageKey;

/// An item of the view: walked by its key, greatest ("newest") first.
pub trait Keyed {
    /// The key it is sorted by.
    type Key: PageKey;
    /// Its key.
    fn key(&self) -> Self::Key;
}

/// One query of a page: a partition's items with keys in `low..=high`,
/// greatest first, at most `limit` of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ask<K> {
    /// Which of the live partitions.
    pub part: usize,
    /// Least key wanted.
    pub low: K,
    /// Greatest key wanted.
    pub high: K,
    /// Most items wanted.
    pub limit: usize,
}

/// What a query answered.
#[derive(Debug)]
pub struct Answer<T> {
    /// The items, newest first.
    pub items: Vec<T>,
    /// Whether the query may have more to give (DynamoDB's
    /// `LastEvaluatedKey`, which it also gives when it stopped exactly at
    /// the limit): `false` proves the range has nothing more.
    pub more: bool,
    /// The 4 KB read units it was billed (`store::read_units`: 1 for a
    /// query that read nothing).
    pub units: usize,
}

/// What a page may read ([`Budget`]) and the most one item can weigh (a
/// card of the longest fields): a page keeps its second round within what
/// the first left, each item counted at that weight. The page stays exact;
/// it holds fewer than `limit` items (its cursor going on after them) only
/// when the second round could not read all it needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounded {
    /// The page's requests and read units.
    pub budget: Budget,
    /// The largest item's bytes.
    pub item_bytes: usize,
}

/// Answers a round of asks (each ask's answer, in any order).
pub trait Asker<T: Keyed> {
    /// What a failed query is.
    type Error;
    /// Sends the asks.
    #[allow(clippy::type_complexity)]
    fn ask(
        &self,
        asks: Vec<Ask<T::Key>>,
    ) -> impl std::future::Future<Output = Result<Vec<(Ask<T::Key>, Answer<T>)>, Self::Error>>;
}

/// Where the next page of a walk starts: every item newer than `before`
/// has been returned, so each partition resumes below it; `done` marks the
/// partitions with nothing left; `hint` is what the page learned for the
/// next one's first round (over at most [`HINT_PARTITIONS`] live ones).
#[derive(Clone, Debug, PartialEq)]
pub struct Position<K> {
    /// The oldest item returned so far.
    pub before: K,
    /// Exhausted partitions.
    pub done: Vec<bool>,
    /// What the page learned.
    pub hint: Option<Hint>,
}

/// What a partition gave so far on this page.
struct Seen<T: Keyed> {
    items: Vec<T>,
    /// Every item of the partition in the page's range that was not read is
    /// older than this one; `None`: none is left unread.
    unread_below: Option<T::Key>,
}

/// What a walk pages over: `partitions` partitions of the range
/// `low..=high`, `limit` items a page.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Walk<K> {
    /// How many partitions.
    pub partitions: usize,
    /// The range's oldest key.
    pub low: K,
    /// The range's newest key.
    pub high: K,
    /// Items a page.
    pub limit: usize,
}

/// The next page of `walk`: `limit` items (fewer on the last page), newest
/// first, and where the walk goes on (`None`: it ended). `at` is where the
/// previous page left it (`None` on the first page); a hint for another
/// number of live partitions is ignored.
pub async fn page<T: Keyed, A: Asker<T>>(
    walk: Walk<T::Key>,
    at: Option<&Position<T::Key>>,
    asker: &A,
) -> Result<(Vec<T>, Option<Position<T::Key>>), A::Error> {
    page_reading_at_least(walk, 1, at, None, asker).await
}

/// [`page`], asking each partition in the first round for at least
/// `at_least` items (at most `limit + 1`): where a query is billed by the
/// 4 KB read whatever it holds below that, a first round that reads a
/// full unit of each partition costs no more and leaves the second round
/// rarer (the page is exact either way); within `bounded` if given.
pub async fn page_reading_at_least<T: Keyed, A: Asker<T>>(
    walk: Walk<T::Key>,
    at_least: usize,
    at: Option<&Position<T::Key>>,
    bounded: Option<Bounded>,
    asker: &A,
) -> Result<(Vec<T>, Option<Position<T::Key>>), A::Error> {
    let Walk { partitions, low, high, limit } = walk;
    let (high, mut done) = match at {
        None => (high, vec![false; partitions]),
        // Strictly older than the oldest item returned.
        Some(p) => match p.before.pred() {
            Some(below) => (below.min(high), p.done.clone()),
            None => return Ok((Vec::new(), None)),
        },
    };
    let live: Vec<usize> = (0..partitions).filter(|i| !done.get(*i).copied().unwrap_or(true)).collect();
    let hint = at.and_then(|p| p.hint.as_ref()).filter(|h| h.parts.len() == live.len());
    let rotate = usize::try_from(high.position() % 1_000_003).unwrap_or(0);
    let shares = match hint {
        Some(hint) => hinted_shares(limit, hint),
        None => first_round_shares(limit, live.len(), rotate),
    };
    let shares = shares.into_iter().map(|share| share.max(at_least).min(limit + 1));
    let mut seen: Vec<Seen<T>> = live.iter().map(|_| Seen { items: Vec::new(), unread_below: None }).collect();

    // Round 1: each live partition's newest few items.
    let asks: Vec<_> = shares.enumerate().map(|(part, limit)| Ask { part, low, high, limit }).collect();
    let mut left = bounded.map(|b| b.budget.less(asks.len(), 0));
    for (ask, answer) in asker.ask(asks).await? {
        left = left.map(|l| l.less(0, answer.units));
        let s = &mut seen[ask.part];
        s.items = answer.items;
        // A query that stops with more to give has read at least one item
        // (DynamoDB ends a page early only for a filter or its 1 MB size).
        s.unread_below = if answer.more { s.items.last().map(Keyed::key) } else { None };
    }

    // Round 2: the partitions that may hide items of the page.
    let mut first: Vec<T::Key> = seen.iter().flat_map(|s| s.items.iter().map(Keyed::key)).collect();
    first.sort_unstable_by(|a, b| b.cmp(a));
    let floor = (first.len() > limit).then(|| first[limit - 1]);
    let mut asks = Vec::new();
    for (part, s) in seen.iter_mut().enumerate() {
        let Some(oldest) = s.unread_below else { continue };
        if floor.is_some_and(|l| oldest <= l) {
            continue;
        }
        let newer = first.partition_point(|id| *id >= oldest);
        let ask_low = floor.map_or(Some(low), PageKey::succ);
        let ask_high = oldest.pred();
        match (ask_low, ask_high) {
            (Some(ask_low), Some(ask_high)) if ask_low <= ask_high => {
                let limit = limit - newer + usize::from(floor.is_none());
                asks.push(Ask { part, low: ask_low, high: ask_high, limit });
            }
            // Nothing can lie strictly between the bounds.
            _ => s.unread_below = floor,
        }
    }
    if let (Some(left), Some(b)) = (left, bounded) {
        within(&mut asks, left, b.item_bytes);
    }
    if !asks.is_empty() {
        for (ask, answer) in asker.ask(asks).await? {
            let s = &mut seen[ask.part];
            s.items.extend(answer.items);
            s.unread_below = if answer.more { s.items.last().map(Keyed::key) } else { floor };
        }
    }

    // The newest `limit` of the items at least as new as every bound.
    let bound = seen.iter().filter_map(|s| s.unread_below).max();
    let given: Vec<usize> = seen.iter().map(|s| s.items.len()).collect();
    let mut merged: Vec<(usize, T)> = Vec::new();
    for (part, s) in seen.iter_mut().enumerate() {
        merged.extend(std::mem::take(&mut s.items).into_iter().map(|o| (part, o)));
    }
    merged.retain(|(_, o)| bound.is_none_or(|b| o.key() >= b));
    merged.sort_unstable_by_key(|(_, o)| std::cmp::Reverse(o.key()));
    merged.truncate(limit);
    let mut taken = vec![0usize; seen.len()];
    for (part, _) in &merged {
        taken[*part] += 1;
    }
    for (j, i) in live.iter().enumerate() {
        done[*i] = seen[j].unread_below.is_none() && given[j] == taken[j];
    }
    let items: Vec<T> = merged.into_iter().map(|(_, o)| o).collect();
    let next = match (items.first(), items.last()) {
        (Some(newest), Some(oldest)) if done.iter().any(|d| !d) => {
            // Every item a partition gave but the page did not take is older
            // than the page's oldest, and every item of it above its bound was read.
            let oldest_ms = oldest.key().position();
            let parts: Vec<Known> = (0..seen.len())
                .filter(|j| !done[live[*j]])
                .map(|j| Known {
                    read: given[j].saturating_sub(taken[j]),
                    unknown_below_ms: seen[j].unread_below.map(|u| oldest_ms.saturating_sub(u.position())),
                })
                .collect();
            // The items returned span from the previous page's oldest (or, on
            // the first page, from the newest returned, one item fewer).
            let (returned, since) = match at {
                Some(p) => (items.len(), p.before.position()),
                None => (items.len() - 1, newest.key().position()),
            };
            let span = since.saturating_sub(oldest_ms);
            let rate = Hint::next_rate(hint.map(|h| h.rate), returned, span, live.len());
            let hint = rate.filter(|_| parts.len() <= HINT_PARTITIONS).map(|rate| Hint { rate, parts });
            Some(Position { before: oldest.key(), done, hint })
        }
        _ => None,
    };
    Ok((items, next))
}

/// A second round cut to what `left` holds: a query per request and unit
/// left at most, those asking for the newest items first (they hide the
/// page's newest), each asking for what its share of the units left holds
/// of items of `item_bytes`. A partition not asked, or asked for less, keeps
/// its bound where its answer leaves it, so the page stays exact.
fn within<K: PageKey>(asks: &mut Vec<Ask<K>>, left: Budget, item_bytes: usize) {
    asks.sort_by_key(|a| std::cmp::Reverse(a.high));
    asks.truncate(left.requests.min(left.units));
    let each = left.holds(asks.len(), item_bytes);
    for ask in asks.iter_mut() {
        ask.limit = ask.limit.min(each);
    }
}

#[cfg(test)]
#[path = "tests/page_planner.rs"]
mod tests;
