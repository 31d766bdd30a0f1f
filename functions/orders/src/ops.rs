//! The admin's views over the write-sharded status index (GSI3,
//! `STATUS#<status>#<shard>` / `ORDER#<orderId>`): by status (e-commerce
//! AP3), all statuses (AP7) and a date range (AP8, ULID bounds on the sort
//! key). One page is one query per partition still holding orders, sent in
//! parallel (bounded), merged newest first by ULID; the cursor carries the
//! oldest order returned and which partitions are exhausted.

use api::{ApiError, ListBody, Request, Response};
use keyschema::access;
use keyschema::ids::OrderId;
use keyschema::model::{Order, OrderStatus};
use keyschema::time::{parse_rfc3339, ulid_bounds};

use crate::App;

/// The most partition queries in flight at once.
pub const QUERIES_AT_ONCE: usize = 16;

/// Where the next page starts, whatever the number of partitions: every
/// order newer than `before` has been returned (pages are merged newest
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
    let range = Some((OrderId::from_ulid(low), OrderId::from_ulid(high)));

    // One query per partition not yet exhausted, at most QUERIES_AT_ONCE in flight.
    let mut tasks = tokio::task::JoinSet::new();
    let mut pages = Vec::new();
    for (i, (status, shard)) in partitions.iter().enumerate().filter(|(i, _)| !done[*i]) {
        if tasks.len() >= QUERIES_AT_ONCE {
            if let Some(joined) = tasks.join_next().await {
                let (i, result) = joined.map_err(ApiError::internal)?;
                pages.push((i, result?));
            }
        }
        let (store, query, limit) =
            (app.store.clone(), access::orders_by_status_shard(*status, *shard, range), page.limit);
        tasks.spawn(async move { (i, store.query::<Order>(&query, limit, None).await) });
    }
    while let Some(joined) = tasks.join_next().await {
        let (i, result) = joined.map_err(ApiError::internal)?;
        pages.push((i, result?));
    }

    // Merge newest first and keep `limit`; each partition's page is its own
    // newest `limit`, so the merged head is the global newest `limit`.
    let mut merged: Vec<(usize, Order)> =
        pages.iter().flat_map(|(i, p)| p.items.iter().map(move |o| (*i, o.clone()))).collect();
    merged.sort_by_key(|(_, o)| std::cmp::Reverse(o.order_id));
    merged.truncate(usize::from(page.limit));

    // A partition is done once everything it holds in the range was returned.
    for (i, partition) in &pages {
        let taken = merged.iter().filter(|(j, _)| j == i).count();
        done[*i] = partition.next.is_none() && taken == partition.items.len();
    }
    let next_cursor = match merged.last() {
        Some((_, oldest)) if done.iter().any(|d| !d) => {
            Some(app.cursors.seal(&scope, &Cursor { before: oldest.order_id, done: bitmap(&done) }))
        }
        _ => None,
    };
    let items: Vec<Order> = merged.into_iter().map(|(_, o)| o).collect();
    Response::ok(&ListBody { items, next_cursor })
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
}
