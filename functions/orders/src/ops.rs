//! The admin's views over the write-sharded status index (GSI3,
//! `STATUS#<status>#<shard>` / `ORDER#<orderId>`): by status (e-commerce
//! AP3), all statuses (AP7) and a date range (AP8, ULID bounds on the sort
//! key). A page is at most two rounds of queries, one per partition still
//! holding orders and then one per partition that may hide orders of the
//! page (see [`read_page`]), each round sent concurrently within the
//! handler's task (bounded); the cursor carries the oldest order returned
//! and which partitions are exhausted.

use api::{ApiError, ListBody, Request, Response};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use keyschema::access;
use keyschema::ids::OrderId;
use keyschema::model::{Order, OrderStatus};
use keyschema::time::{parse_rfc3339, ulid_bounds};
use store::Page;
use ulid::Ulid;

use crate::App;

/// The most partition queries in flight at once.
pub const QUERIES_AT_ONCE: usize = 16;

/// Where the next page starts, whatever the number of partitions: every
/// order newer than `before` has been returned (pages are exact, newest
/// first), so each partition resumes below it; `done` marks the partitions
/// with nothing left (one bit each), which are not queried again. A few
/// hundred bytes even at 100 shards x 5 statuses.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Cursor {
    /// The oldest order returned so far.
    #[serde(rename = "b")]
    before: OrderId,
    /// Exhausted partitions, as a bitmap in lowercase hex.
    #[serde(rename = "d")]
    done: String,
}

fn bitmap(bits: &[bool]) -> String {
    bits.chunks(4)
        .map(|c| c.iter().enumerate().fold(0u8, |n, (i, b)| n | (u8::from(*b) << i)))
        .map(|n| format!("{n:x}"))
        .collect()
}

fn unbitmap(hex: &str, len: usize) -> Option<Vec<bool>> {
    let bits: Vec<bool> = hex
        .chars()
        .map(|c| c.to_digit(16))
        .collect::<Option<Vec<u32>>>()?
        .into_iter()
        .flat_map(|n| (0..4).map(move |i| n & (1 << i) != 0))
        .collect();
    (bits.len() == len.div_ceil(4) * 4).then(|| bits.into_iter().take(len).collect())
}

fn time_param(req: &Request, name: &str) -> Result<Option<u64>, ApiError> {
    match req.query::<String>(name)? {
        None => Ok(None),
        Some(raw) => parse_rfc3339(&raw)
            .map(Some)
            .ok_or_else(|| ApiError::bad_request(format!("{name}: must be YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.sss]Z"))),
    }
}

/// `GET /orders?status=&from=&to=` (admin): newest first across shards.
pub(crate) async fn orders_by_status(app: &App, req: Request) -> Result<Response, ApiError> {
    req.admin()?;
    let page = req.page(&["status", "from", "to"])?;
    let status = req.query::<OrderStatus>("status")?;
    let (from, to) = (time_param(&req, "from")?, time_param(&req, "to")?);
    if let (Some(from), Some(to)) = (from, to) {
        if from > to {
            return Err(ApiError::bad_request("from must not be after to"));
        }
    }
    // An open end is the end of ULID time, not "now": the range (and so
    // the cursor's scope) must be the same on every page. An empty range
    // (from = to, or to at the epoch) is an empty page.
    let Some((low, high)) = ulid_bounds(from.unwrap_or(0), to.unwrap_or(u64::MAX)) else {
        return Response::ok(&ListBody::<Order> { items: Vec::new(), next_cursor: None });
    };
    let statuses = status.map_or_else(|| OrderStatus::ALL.to_vec(), |s| vec![s]);
    let partitions: Vec<(OrderStatus, u16)> =
        statuses.iter().flat_map(|s| (0..app.shards).map(move |shard| (*s, shard))).collect();
    let scope = format!("orders|{status:?}|{low}|{high}|{}", app.shards);
    let (high, mut done) = match &page.cursor {
        None => (high, vec![false; partitions.len()]),
        Some(c) => {
            let cursor = app.cursors.open::<Cursor>(&scope, c)?;
            let done =
                unbitmap(&cursor.done, partitions.len()).ok_or_else(|| ApiError::bad_request("invalid cursor"))?;
            // Strictly older than the oldest order returned.
            let below = cursor
                .before
                .ulid()
                .0
                .checked_sub(1)
                .map(ulid::Ulid)
                .ok_or_else(|| ApiError::bad_request("invalid cursor"))?;
            (below.min(high), done)
        }
    };
    let live: Vec<Partition> = partitions
        .iter()
        .enumerate()
        .filter(|(i, _)| !done[*i])
        .map(|(i, (status, shard))| Partition { index: i, status: *status, shard: *shard })
        .collect();
    let read = read_page(app, &live, low, high, usize::from(page.limit)).await?;
    for (partition, exhausted) in live.iter().zip(read.exhausted) {
        done[partition.index] = exhausted;
    }
    let next_cursor = match read.items.last() {
        Some(oldest) if done.iter().any(|d| !d) => {
            Some(app.cursors.seal(&scope, &Cursor { before: oldest.order_id, done: bitmap(&done) }))
        }
        _ => None,
    };
    Response::ok(&ListBody { items: read.items, next_cursor })
}

/// One partition of the index, `STATUS#<status>#<shard>`.
#[derive(Clone, Copy, Debug)]
struct Partition {
    /// Its place among the query's partitions (its bit in the cursor).
    index: usize,
    status: OrderStatus,
    shard: u16,
}

/// One query of a page: a partition's orders with ULIDs in `low..=high`,
/// newest first, at most `limit` of them.
#[derive(Clone, Copy, Debug)]
struct Ask {
    /// Which of the live partitions.
    part: usize,
    low: Ulid,
    high: Ulid,
    limit: usize,
}

/// What a partition gave so far on this page.
#[derive(Debug, Default)]
struct Seen {
    /// Its orders read, newest first.
    orders: Vec<Order>,
    /// Every order of the partition in the page's range that was not read
    /// is older than this one; `None`: none is left unread.
    unread_below: Option<OrderId>,
}

/// A page: the orders, newest first, and for each live partition whether
/// it is exhausted (nothing of it is left below the page).
struct PageRead {
    items: Vec<Order>,
    exhausted: Vec<bool>,
}

/// How many orders the first round asks of each of `n` live partitions for
/// a page of `limit`: `limit` plus a slack, spread evenly (the remainder
/// going to partitions chosen by `rotate`), at least one each, and never
/// more than `limit + 1` of one partition. The slack, about
/// `sqrt(limit * (n - 1)) / 2` and at least one, was tuned by measurement:
/// less leaves the first round's lower bound loose, so the second round
/// reads more; more reads orders the page does not need. The one extra
/// order means a first round that read no more than `limit` has met an
/// exhausted partition (see [`read_page`] on the last page).
fn first_round_shares(limit: usize, n: usize, rotate: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let slack = (limit * (n - 1)).isqrt().div_ceil(2).max(1);
    let budget = (limit + slack).max(n);
    let (base, extra) = (budget / n, budget % n);
    (0..n).map(|j| (base + usize::from((j + rotate) % n < extra)).min(limit + 1)).collect()
}

/// Sends the asks, at most [`QUERIES_AT_ONCE`] in flight, all in the
/// handler's own task (no spawned task: the invocation's request accounting
/// is task-local). Reads exactly the asked number (no look-ahead item).
async fn ask_all(app: &App, live: &[Partition], asks: Vec<Ask>) -> Result<Vec<(Ask, Page<Order>)>, ApiError> {
    stream::iter(asks)
        .map(|ask| async move {
            let Partition { status, shard, .. } = live[ask.part];
            let range = Some((OrderId::from_ulid(ask.low), OrderId::from_ulid(ask.high)));
            let query = access::orders_by_status_shard(status, shard, range);
            let limit = u16::try_from(ask.limit).unwrap_or(u16::MAX);
            let page = app.store.query_exact::<Order>(&query, limit, None).await?;
            Ok::<_, ApiError>((ask, page))
        })
        .buffer_unordered(QUERIES_AT_ONCE)
        .try_collect()
        .await
}

/// The newest `limit` orders with ULIDs in `low..=high` over the `live`
/// partitions, in at most two rounds of queries.
///
/// **Round 1** asks each live partition for its newest few orders (see
/// [`first_round_shares`]; together a little more than `limit`). A
/// partition that answers with no `LastEvaluatedKey` is exhausted. If the
/// round read more than `limit` orders, the `limit`-th newest of them, `L`,
/// bounds the page from below: `limit` orders at least as new as `L` exist,
/// so no order older than `L` is on the page.
///
/// **Round 2** asks each partition `p` that is not exhausted and whose
/// oldest order read, `o_p`, is newer than `L` (it may hide orders of the
/// page between `L` and `o_p`; the others cannot) for its orders strictly
/// between `L` and `o_p` (a `BETWEEN` on the sort key, so it reads nothing
/// older than `L`), at most `limit - a_p` of them, where `a_p` is the
/// number of orders of the first round at least as new as `o_p`: an order
/// of `p` below `limit - a_p` more of its own has `limit` newer orders and
/// cannot be on the page. When the first round read `limit` orders or
/// fewer (some partitions ran out: the last pages), there is no `L`; every
/// partition not exhausted is asked for everything below `o_p`, one order
/// more than it could place on the page, so that the last page knows it is
/// the last.
///
/// **Exactness.** For each partition, keep a bound `u_p` such that every
/// order of `p` not read is older than `u_p`: the oldest order read while
/// its last query had more to give, `L` once its second query ran out
/// (orders not read are then at or below `L`, and `L` belongs to another
/// partition), nothing once it is exhausted. With `G` the newest of the
/// `u_p`, every order at least as new as `G` has been read, so the newest
/// `limit` of those read ones that are at least as new as `G` are the
/// newest `limit` of the range: the page is exact whatever the queries
/// answered. It is also full: a partition asked in round 2 either ran out
/// (`u_p = L`, and `L` is at or below the page's oldest, as `limit` orders
/// at least as new as `L` were read) or read its `limit - a_p` orders (the
/// `limit` orders at least as new as its new `u_p` were all read, so `u_p`
/// is at or below the page's oldest), and one not asked has `u_p = o_p`
/// at or below `L`. Hence `G` is at or below the page's oldest order. A
/// partition is exhausted for the cursor only when it ran out over the whole
/// range and every order it gave is on the page.
async fn read_page(app: &App, live: &[Partition], low: Ulid, high: Ulid, limit: usize) -> Result<PageRead, ApiError> {
    let mut seen: Vec<Seen> = live.iter().map(|_| Seen::default()).collect();

    // Round 1: each live partition's newest few orders below the cursor.
    let rotate = usize::try_from(high.0 % 1_000_003).unwrap_or(0);
    let asks = first_round_shares(limit, live.len(), rotate)
        .into_iter()
        .enumerate()
        .map(|(part, limit)| Ask { part, low, high, limit })
        .collect();
    for (ask, page) in ask_all(app, live, asks).await? {
        let s = &mut seen[ask.part];
        s.orders = page.items;
        s.unread_below = match (&page.next, s.orders.last()) {
            (None, _) => None,
            (Some(_), Some(oldest)) => Some(oldest.order_id),
            // DynamoDB does not end a page before its first item unless a
            // filter or the 1 MB page size stops it; neither applies here.
            (Some(_), None) => return Err(ApiError::internal("a status shard query stopped before its first order")),
        };
    }

    // Round 2: the partitions that may hide orders of the page.
    let mut first: Vec<OrderId> = seen.iter().flat_map(|s| s.orders.iter().map(|o| o.order_id)).collect();
    first.sort_unstable_by_key(|id| std::cmp::Reverse(*id));
    let floor = (first.len() > limit).then(|| first[limit - 1]);
    let mut asks = Vec::new();
    for (part, s) in seen.iter_mut().enumerate() {
        let Some(oldest) = s.unread_below else { continue };
        if floor.is_some_and(|l| oldest <= l) {
            continue;
        }
        let newer = first.partition_point(|id| *id >= oldest);
        let ask_low = floor.map_or(Some(low), |l| l.ulid().0.checked_add(1).map(Ulid));
        let ask_high = oldest.ulid().0.checked_sub(1).map(Ulid);
        match (ask_low, ask_high) {
            (Some(ask_low), Some(ask_high)) if ask_low <= ask_high => asks.push(Ask {
                part,
                low: ask_low,
                high: ask_high,
                limit: limit - newer + usize::from(floor.is_none()),
            }),
            // Nothing can lie strictly between the bounds.
            _ => s.unread_below = floor,
        }
    }
    for (ask, page) in ask_all(app, live, asks).await? {
        let s = &mut seen[ask.part];
        s.orders.extend(page.items);
        if page.next.is_none() {
            s.unread_below = floor;
        } else if let Some(oldest) = s.orders.last() {
            s.unread_below = Some(oldest.order_id);
        }
    }

    // The newest `limit` of the orders at least as new as every bound.
    let bound = seen.iter().filter_map(|s| s.unread_below).max();
    let mut merged: Vec<(usize, Order)> = Vec::new();
    let mut given = Vec::with_capacity(seen.len());
    for (part, s) in seen.iter_mut().enumerate() {
        given.push(s.orders.len());
        merged.extend(std::mem::take(&mut s.orders).into_iter().map(|o| (part, o)));
    }
    merged.retain(|(_, o)| bound.is_none_or(|b| o.order_id >= b));
    merged.sort_unstable_by_key(|(_, o)| std::cmp::Reverse(o.order_id));
    merged.truncate(limit);
    let mut taken = vec![0usize; seen.len()];
    for (part, _) in &merged {
        taken[*part] += 1;
    }
    let exhausted =
        seen.iter().zip(given.iter().zip(&taken)).map(|(s, (g, t))| s.unread_below.is_none() && g == t).collect();
    Ok(PageRead { items: merged.into_iter().map(|(_, o)| o).collect(), exhausted })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_bitmaps_round_trip() {
        for len in [1usize, 3, 4, 5, 50, 500] {
            let bits: Vec<bool> = (0..len).map(|i| i % 3 == 0 || i % 7 == 0).collect();
            let hex = bitmap(&bits);
            assert_eq!(hex.len(), len.div_ceil(4));
            assert_eq!(unbitmap(&hex, len), Some(bits));
            assert_eq!(unbitmap(&hex, len + 4), None, "a cursor for another partition count");
        }
        assert_eq!(unbitmap("zz", 8), None);
    }

    #[test]
    fn first_round_shares_ask_a_little_more_than_the_page() {
        assert_eq!(first_round_shares(20, 0, 0), Vec::<usize>::new());
        assert_eq!(first_round_shares(20, 1, 5), vec![21], "one partition: the page and one look-ahead order");
        assert_eq!(first_round_shares(20, 10, 0).iter().sum::<usize>(), 27);
        for limit in [1usize, 2, 7, 20, 50, 100] {
            for n in [1usize, 2, 3, 10, 50, 100, 500] {
                for rotate in [0usize, 3, 1_000_002] {
                    let shares = first_round_shares(limit, n, rotate);
                    assert_eq!(shares.len(), n);
                    assert!(shares.iter().all(|k| (1..=limit + 1).contains(k)), "{limit} {n}: {shares:?}");
                    let (least, most) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
                    assert!(most - least <= 1, "spread evenly: {shares:?}");
                    assert!(shares.iter().sum::<usize>() > limit, "more than the page: {shares:?}");
                }
            }
        }
    }
}
