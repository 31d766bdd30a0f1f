//! The admin's views over the write-sharded status index (GSI3,
//! `STATUS#<status>#<shard>` / `ORDER#<orderId>`): by status (e-commerce
//! AP3), all statuses (AP7) and a date range (AP8, ULID bounds on the sort
//! key). A page is at most two rounds of queries, one per partition still
//! holding orders and then one per partition that may hide orders of the
//! page (see [`read_page`]), each round sent concurrently within the
//! handler's task (bounded); the cursor carries the oldest order returned,
//! which partitions are exhausted and, over a few partitions, what the page
//! learned to size the next page's first round (a [`Hint`]).

use api::{ApiError, ListBody, Request, Response};
use domain::ids::OrderId;
use domain::model::{Order, OrderStatus};
use domain::time::{parse_rfc3339, ulid_bounds};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use keyschema::access;
use store::Page;
use ulid::Ulid;

use crate::App;

/// The most partition queries in flight at once.
pub const QUERIES_AT_ONCE: usize = 16;

/// The most live partitions a cursor carries a [`Hint`] for: about ten
/// bytes each, so that a cursor stays under 1 KiB. Beyond that the first
/// round shares evenly (where there are about as many partitions as orders
/// on a page, each is asked for one or two anyway).
const HINT_PARTITIONS: usize = 32;

/// Where the next page starts, whatever the number of partitions: every
/// order newer than `before` has been returned (pages are exact, newest
/// first), so each partition resumes below it; `done` marks the partitions
/// with nothing left (one bit each), which are not queried again. Under
/// 1 KiB with or without a hint, even at 100 shards x 5 statuses.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Cursor {
    /// The oldest order returned so far.
    #[serde(rename = "b")]
    before: OrderId,
    /// Exhausted partitions, as a bitmap in lowercase hex.
    #[serde(rename = "d")]
    done: String,
    /// What the page learned, for the next one's first round (see [`Hint`]).
    #[serde(rename = "h", default, skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

/// What one page learned of the orders below it, so the next page's first
/// round can ask each partition for about what it will give rather than an
/// even share. Only a hint: every live partition is still asked for at
/// least one order, and the page is exact whatever the hint says (it only
/// sets the first round's limits; see [`read_page`]).
#[derive(Clone, Debug, PartialEq)]
struct Hint {
    /// Orders per millisecond of ULID time per live partition, smoothed
    /// over the pages so far.
    rate: f64,
    /// For each live partition, in order.
    parts: Vec<Known>,
}

/// What a page knows of one partition below its oldest order returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Known {
    /// Orders it read there but did not return (the next page's newest of
    /// this partition: every order of it above `unknown_below_ms` was read).
    read: usize,
    /// How far below the page's oldest order (in ms) its unread orders
    /// begin; `None`: it has no unread order left.
    unknown_below_ms: Option<u64>,
}

impl Hint {
    /// How much a new observation moves the rate.
    const WEIGHT: f64 = 0.3;

    /// `rate` then each partition as `read.gap` (`read.-` when nothing is
    /// unread), e.g. `2.778e-8/2.7200000,0.3600000,1.-`.
    fn encode(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|k| match k.unknown_below_ms {
                Some(gap) => format!("{}.{gap}", k.read),
                None => format!("{}.-", k.read),
            })
            .collect();
        format!("{:.3e}/{}", self.rate, parts.join(","))
    }

    /// The hint for `partitions` live partitions, or `None` for anything
    /// else (a hint is never worth an error).
    fn decode(text: &str, partitions: usize) -> Option<Hint> {
        let (rate, parts) = text.split_once('/')?;
        let rate: f64 = rate.parse().ok().filter(|r: &f64| r.is_finite() && *r > 0.0)?;
        let parts = parts
            .split(',')
            .map(|p| {
                let (read, gap) = p.split_once('.')?;
                let unknown_below_ms = if gap == "-" { None } else { Some(gap.parse().ok()?) };
                Some(Known { read: read.parse().ok()?, unknown_below_ms })
            })
            .collect::<Option<Vec<Known>>>()?;
        (parts.len() == partitions).then_some(Hint { rate, parts })
    }

    /// The rate after a page of `returned` orders over `span_ms` ms of ULID
    /// time across `partitions` partitions, from the previous estimate.
    fn next_rate(previous: Option<f64>, returned: usize, span_ms: u64, partitions: usize) -> Option<f64> {
        let observed = (span_ms > 0 && returned > 0 && partitions > 0)
            .then(|| returned as f64 / span_ms as f64 / partitions as f64)
            .filter(|r| r.is_finite() && *r > 0.0);
        match (previous, observed) {
            (Some(p), Some(o)) => Some(p * (1.0 - Self::WEIGHT) + o * Self::WEIGHT),
            (p, o) => o.or(p),
        }
    }
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
    let opened = match &page.cursor {
        None => None,
        Some(c) => Some(app.cursors.open::<Cursor>(&scope, c)?),
    };
    let (high, mut done) = match &opened {
        None => (high, vec![false; partitions.len()]),
        Some(cursor) => {
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
    let hint = opened.as_ref().and_then(|c| c.hint.as_deref()).and_then(|h| Hint::decode(h, live.len()));
    let read = read_page(app, &live, low, high, usize::from(page.limit), hint.as_ref()).await?;
    for (partition, exhausted) in live.iter().zip(&read.exhausted) {
        done[partition.index] = *exhausted;
    }
    let next_cursor = match (read.items.first(), read.items.last()) {
        (Some(newest), Some(oldest)) if done.iter().any(|d| !d) => {
            // The orders returned span from the previous page's oldest (or,
            // on the first page, from the newest returned, one order fewer).
            let (returned, since) = match &opened {
                Some(c) => (read.items.len(), c.before.timestamp_ms()),
                None => (read.items.len() - 1, newest.order_id.timestamp_ms()),
            };
            let span = since.saturating_sub(oldest.order_id.timestamp_ms());
            let rate = Hint::next_rate(hint.map(|h| h.rate), returned, span, live.len());
            let parts: Vec<Known> =
                live.iter().zip(read.left).filter(|(p, _)| !done[p.index]).map(|(_, known)| known).collect();
            let hint = rate.filter(|_| parts.len() <= HINT_PARTITIONS).map(|rate| Hint { rate, parts }.encode());
            Some(app.cursors.seal(&scope, &Cursor { before: oldest.order_id, done: bitmap(&done), hint }))
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
/// it is exhausted (nothing of it is left below the page) and what is known
/// of it below the page.
struct PageRead {
    items: Vec<Order>,
    exhausted: Vec<bool>,
    left: Vec<Known>,
}

/// How many orders more than `limit` the first round asks of `n` live
/// partitions: `sqrt(limit * (n - 1)) / 2` rounded down, at least one,
/// tuned by measurement. Less leaves the first round's lower bound loose,
/// so the second round reads more; more reads orders the page does not
/// need.
fn slack(limit: usize, n: usize) -> usize {
    (limit.saturating_mul(n.saturating_sub(1)).isqrt() / 2).max(1)
}

/// How many orders the first round asks of each of `n` live partitions for
/// a page of `limit`: `limit` plus a slack, spread evenly (the remainder
/// going to partitions chosen by `rotate`), at least one each, and never
/// more than `limit + 1` of one partition (see [`slack`]). The one extra
/// order means a first round that read no more than `limit` has met an
/// exhausted partition (see [`read_page`] on the last page).
fn first_round_shares(limit: usize, n: usize, rotate: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let budget = (limit + slack(limit, n)).max(n);
    let (base, extra) = (budget / n, budget % n);
    (0..n).map(|j| (base + usize::from((j + rotate) % n < extra)).min(limit + 1)).collect()
}

/// How many orders the first round asks of each live partition when the
/// previous page left a [`Hint`]: its orders already known to lie below the
/// cursor, plus those expected in its unread range down to the depth where
/// all partitions together are expected to hold `limit` plus the same
/// [`slack`] as an even first round; at least one each, one more than the
/// known ones of a partition with nothing unread (so that it answers
/// exhausted), at most `limit + 1`, and more than `limit` in all (topped up
/// where rounding lost most), as [`first_round_shares`] asks. Measured over
/// steady, random, daily-cycle and bursty arrivals at 10 shards and limit
/// 20: a slack of `sqrt(limit)` (4) read up to 1.69 orders per order
/// returned, 5 to 7 read 1.44-1.50 (6 is [`slack`]'s).
fn hinted_shares(limit: usize, hint: &Hint) -> Vec<usize> {
    let most = limit.saturating_add(1);
    let target = limit.saturating_add(slack(limit, hint.parts.len())) as f64;
    let known = hint.parts.iter().fold(0usize, |n, k| n.saturating_add(k.read));
    // The depth `d` (ms below the cursor) where the unread ranges, each
    // starting at its gap, are expected to hold what the known orders lack:
    // rate * sum over gaps below d of (d - gap) = target - known.
    let mut gaps: Vec<f64> = hint.parts.iter().filter_map(|k| k.unknown_below_ms).map(|g| g as f64).collect();
    gaps.sort_by(f64::total_cmp);
    let lacking = (target - known as f64).max(0.0) / hint.rate;
    let mut depth = None;
    let mut sum = 0.0;
    for (i, gap) in gaps.iter().enumerate() {
        sum += gap;
        let count = (i + 1) as f64;
        // With the first i+1 ranges open, d = (lacking + sum) / count; it
        // holds if no further range would open above it.
        let d = (lacking + sum) / count;
        if gaps.get(i + 1).is_none_or(|next| d <= *next) {
            depth = Some(d);
            break;
        }
    }
    let expected: Vec<f64> = hint
        .parts
        .iter()
        .map(|k| match (depth, k.unknown_below_ms) {
            (Some(d), Some(gap)) if lacking > 0.0 => (hint.rate * (d - gap as f64).max(0.0)).min(most as f64),
            _ => 0.0,
        })
        .collect();
    let mut shares: Vec<usize> = hint
        .parts
        .iter()
        .zip(&expected)
        .map(|(k, e)| {
            let exhausted = usize::from(k.unknown_below_ms.is_none());
            // A saturating float-to-int cast of a value within 0..=most.
            k.read.saturating_add(e.round() as usize).saturating_add(exhausted).clamp(1, most)
        })
        .collect();
    // Rounding many small expectations down can leave the round at `limit`
    // or less, and then no `L`: add one at a time where the most was lost.
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|a, b| (expected[*b] - expected[*b].round()).total_cmp(&(expected[*a] - expected[*a].round())));
    let mut total = shares.iter().fold(0usize, |n, k| n.saturating_add(*k));
    for i in order.iter().cycle().take(most.saturating_mul(shares.len())) {
        if total > limit {
            break;
        }
        if shares[*i] < most {
            shares[*i] += 1;
            total += 1;
        }
    }
    shares
}

/// Sends the asks, at most [`QUERIES_AT_ONCE`] in flight, all in the
/// handler's own task (no spawned task: the invocation's request accounting
/// is task-local). Reads exactly the asked number (no look-ahead item).
async fn ask_all(app: &App, live: &[Partition], asks: Vec<Ask>) -> Result<Vec<(Ask, Page<Order>)>, ApiError> {
    stream::iter(asks)
        .map(|ask| async move {
            let Partition { status, shard, .. } = live[ask.part];
            let range = Some((OrderId::from_ulid(ask.low), OrderId::from_ulid(ask.high)));
            let query = access::orders_by_status_shard(status, shard, range)?;
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
/// [`first_round_shares`], or [`hinted_shares`] after a page that left a
/// [`Hint`]; together a little more than `limit`). A
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
/// fewer (some partitions ran out, as on the last pages, or a hint fell
/// short), there is no `L`; every partition not exhausted is asked for
/// everything below `o_p`, one order more than it could place on the page,
/// so that the last page knows it is the last. Nothing here depends on how
/// many orders the first round asked of each partition, so a hint can
/// only make a page cheaper or dearer, never wrong.
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
/// range and every order it gave is on the page. A `hint` has one entry per
/// live partition ([`Hint::decode`] checks it).
async fn read_page(
    app: &App,
    live: &[Partition],
    low: Ulid,
    high: Ulid,
    limit: usize,
    hint: Option<&Hint>,
) -> Result<PageRead, ApiError> {
    let mut seen: Vec<Seen> = live.iter().map(|_| Seen::default()).collect();

    // Round 1: each live partition's newest few orders below the cursor.
    let rotate = usize::try_from(high.0 % 1_000_003).unwrap_or(0);
    let shares = match hint {
        Some(hint) => hinted_shares(limit, hint),
        None => first_round_shares(limit, live.len(), rotate),
    };
    let asks = shares.into_iter().enumerate().map(|(part, limit)| Ask { part, low, high, limit }).collect();
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
    // Every order a partition gave but the page did not take is older than
    // the page's oldest, and every order of it above its bound was read.
    let oldest_ms = merged.last().map_or(0, |(_, o)| o.order_id.timestamp_ms());
    let left = seen
        .iter()
        .zip(given.iter().zip(&taken))
        .map(|(s, (g, t))| Known {
            read: g.saturating_sub(*t),
            unknown_below_ms: s.unread_below.map(|u| oldest_ms.saturating_sub(u.timestamp_ms())),
        })
        .collect();
    Ok(PageRead { items: merged.into_iter().map(|(_, o)| o).collect(), exhausted, left })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn known(read: usize, gap: Option<u64>) -> Known {
        Known { read, unknown_below_ms: gap }
    }

    #[test]
    fn hints_round_trip_and_anything_else_is_no_hint() {
        let hint = Hint { rate: 2.7777e-8, parts: vec![known(2, Some(7_200_000)), known(0, Some(0)), known(1, None)] };
        let text = hint.encode();
        assert_eq!(text, "2.778e-8/2.7200000,0.0,1.-");
        let back = Hint::decode(&text, 3).unwrap();
        assert_eq!(back.parts, hint.parts);
        assert!((back.rate - 2.778e-8).abs() < 1e-12);
        assert_eq!(Hint::decode(&text, 2), None, "another partition count");
        for bad in ["", "/", "0/1.2", "-1e-3/1.2", "NaN/1.2", "inf/1.2", "1e-3/1", "1e-3/x.2", "1e-3/1.y", "1e-3/1.2,"]
        {
            assert_eq!(Hint::decode(bad, 1), None, "{bad:?}");
        }
    }

    #[test]
    fn the_rate_follows_pages_smoothly() {
        assert_eq!(Hint::next_rate(None, 20, 0, 10), None, "twenty orders in one millisecond say nothing");
        assert_eq!(Hint::next_rate(None, 20, 1_000, 10), Some(0.002));
        assert_eq!(Hint::next_rate(Some(0.001), 0, 1_000, 10), Some(0.001));
        let r = Hint::next_rate(Some(0.001), 20, 1_000, 10).unwrap();
        assert!((r - 0.0013).abs() < 1e-12, "{r}");
    }

    #[test]
    fn hinted_shares_ask_what_each_partition_is_expected_to_give() {
        // Ten partitions, nothing known, all unread from the cursor down,
        // 2 orders each per 1,000 ms: 26 orders (20 + 6 slack) lie within
        // 1,300 ms, 2.6 each, rounded to 3.
        let even = Hint { rate: 0.002, parts: vec![known(0, Some(0)); 10] };
        assert_eq!(hinted_shares(20, &even), vec![3; 10]);
        // Each expects 0.4 more than its one known order: rounded down, the
        // round would read only the page; topped up to one order more.
        let small = Hint { rate: 0.0004, parts: vec![known(1, Some(0)); 10] };
        assert_eq!(hinted_shares(10, &small).iter().sum::<usize>(), 11);
        // Known orders are asked for again; a partition whose unread orders
        // start deeper than the others gets fewer new ones.
        let mut parts = vec![known(0, Some(0)); 10];
        parts[0] = known(4, Some(1_000));
        parts[1] = known(1, None);
        let shares = hinted_shares(20, &Hint { rate: 0.002, parts });
        assert_eq!(shares[1], 2, "its one order left, and one more to find it exhausted: {shares:?}");
        assert!(shares[0] >= 4 && shares[0] < 4 + shares[2], "{shares:?}");
        // Enough known: each partition is asked for what it is known to hold.
        let parts = vec![known(30, Some(5)), known(0, Some(0)), known(0, None)];
        assert_eq!(hinted_shares(20, &Hint { rate: 1.0, parts }), vec![21, 1, 1]);
        assert_eq!(hinted_shares(1, &Hint { rate: 1e-9, parts: vec![known(0, Some(9))] }), vec![2]);
    }

    proptest! {
        #[test]
        fn hinted_shares_stay_within_bounds(
            limit in 1usize..=100,
            rate in prop_oneof![Just(f64::MIN_POSITIVE), 1e-12f64..1e3, Just(f64::MAX)],
            parts in proptest::collection::vec((0usize..=101, proptest::option::of(0u64..=u64::MAX >> 16)), 1..=HINT_PARTITIONS),
        ) {
            let hint = Hint { rate, parts: parts.iter().map(|(r, g)| known(*r, *g)).collect() };
            let shares = hinted_shares(limit, &hint);
            prop_assert_eq!(shares.len(), hint.parts.len());
            for (share, k) in shares.iter().zip(&hint.parts) {
                prop_assert!((1..=limit + 1).contains(share), "{} of {:?}", share, k);
                prop_assert!(*share >= k.read.clamp(1, limit + 1), "{} of {:?}", share, k);
            }
            prop_assert!(shares.iter().sum::<usize>() > limit, "{:?}", shares);
            if rate < 1e300 {
                prop_assert_eq!(Hint::decode(&hint.encode(), hint.parts.len()).map(|h| h.parts), Some(hint.parts));
            }
        }
    }

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
        assert_eq!(first_round_shares(20, 10, 0).iter().sum::<usize>(), 26);
        assert_eq!(slack(20, 10), 6);
        assert_eq!(slack(20, 1), 1);
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
