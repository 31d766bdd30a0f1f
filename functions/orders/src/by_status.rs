//! The admin's views over the write-sharded status index (GSI8,
//! `STATUS#<status>#<shard>` / `ORDER#<orderId>`): by status (e-commerce
//! AP3), all statuses (AP7) and a date range (AP8, ULID bounds on the sort
//! key). A page is at most two rounds of queries, planned by
//! [`fanout::page_planner`], each round sent concurrently within the
//! handler's task (bounded); the cursor carries the oldest order returned,
//! which partitions are exhausted and, over a few partitions, what the page
//! learned to size the next page's first round (a [`Hint`]).

use api::{ApiError, ListBody, Request, Response};
use domain::answers::OrderAnswer;
use domain::ids::OrderId;
use domain::model::{Order, OrderStatus};
use domain::time::{parse_rfc3339, ulid_bounds};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use keyschema::access;
use ulid::Ulid;

use fanout::bitmap;
use fanout::hint::Hint;
use fanout::page_planner::{self, Answer, Ask, Asker, Keyed, Position, Walk};

use crate::App;

/// The most partition queries in flight at once.
pub const QUERIES_AT_ONCE: usize = 16;

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

/// An order of the view, sorted by its id.
struct ByStatus(Order);

impl Keyed for ByStatus {
    type Key = Ulid;
    fn key(&self) -> Ulid {
        self.0.order_id.ulid()
    }
}

/// Answers a page's asks with DynamoDB queries of the status partitions, at
/// most [`QUERIES_AT_ONCE`] in flight, all in the handler's own task (no
/// spawned task: the invocation's request accounting is task-local). Reads
/// exactly the asked number (no look-ahead item).
struct Partitions<'a> {
    app: &'a App,
    /// The live partitions, in the planner's order.
    live: Vec<(OrderStatus, u16)>,
}

impl Asker<ByStatus> for Partitions<'_> {
    type Error = ApiError;

    async fn ask(&self, asks: Vec<Ask<Ulid>>) -> Result<Vec<(Ask<Ulid>, Answer<ByStatus>)>, ApiError> {
        stream::iter(asks)
            .map(|ask| async move {
                let (status, shard) = self.live[ask.part];
                let range = Some((OrderId::from_ulid(ask.low), OrderId::from_ulid(ask.high)));
                let query = access::orders_by_status_shard(status, shard, range)?;
                let limit = u16::try_from(ask.limit).unwrap_or(u16::MAX);
                let page = self.app.deps.store.query_exact::<Order, _>(&query, limit, None).await?;
                let items = page.items.into_iter().map(ByStatus).collect();
                Ok::<_, ApiError>((ask, Answer { items, more: page.next.is_some(), units: page.read_units }))
            })
            .buffer_unordered(QUERIES_AT_ONCE)
            .try_collect()
            .await
    }
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
        return Response::ok(&ListBody::<OrderAnswer> { items: Vec::new(), next_cursor: None });
    };
    let statuses = status.map_or_else(|| OrderStatus::ALL.to_vec(), |s| vec![s]);
    let partitions: Vec<(OrderStatus, u16)> =
        statuses.iter().flat_map(|s| (0..app.shards).map(move |shard| (*s, shard))).collect();
    let scope = format!("orders|{status:?}|{low}|{high}|{}", app.shards);
    let at = match &page.cursor {
        None => None,
        Some(c) => Some(app.deps.cursors.open::<Cursor>(&scope, c)?.position(partitions.len())?),
    };
    let live_now: Vec<(OrderStatus, u16)> = match &at {
        None => partitions.clone(),
        Some(p) => partitions.iter().zip(&p.done).filter(|(_, d)| !**d).map(|(p, _)| *p).collect(),
    };
    let asker = Partitions { app, live: live_now };
    let walk = Walk { partitions: partitions.len(), low, high, limit: usize::from(page.limit) };
    let (items, next) = page_planner::page(walk, at.as_ref(), &asker).await?;
    let next_cursor = next.map(|p| app.deps.cursors.seal(&scope, &Cursor::of(&p)));
    let items: Vec<OrderAnswer> = items.into_iter().map(|o| OrderAnswer::from(o.0)).collect();
    Response::ok(&ListBody { items, next_cursor })
}

impl Cursor {
    fn of(p: &Position<Ulid>) -> Self {
        Cursor {
            before: OrderId::from_ulid(p.before),
            done: bitmap::encode(&p.done),
            hint: p.hint.as_ref().map(Hint::encode),
        }
    }

    /// The walk's position over `partitions` partitions (400 for a cursor
    /// of another partition count); a hint that does not decode is none.
    fn position(&self, partitions: usize) -> Result<Position<Ulid>, ApiError> {
        let done = bitmap::decode(&self.done, partitions).ok_or_else(|| ApiError::bad_request("invalid cursor"))?;
        if self.before.ulid().0 == 0 {
            return Err(ApiError::bad_request("invalid cursor"));
        }
        let live = done.iter().filter(|d| !**d).count();
        let hint = self.hint.as_deref().and_then(|h| Hint::decode(h, live));
        Ok(Position { before: self.before.ulid(), done, hint })
    }
}
