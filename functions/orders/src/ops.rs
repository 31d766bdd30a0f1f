//! The admin's views over the write-sharded status index (GSI3,
//! `STATUS#<status>#<shard>` / `ORDER#<orderId>`): by status (e-commerce
//! AP3), all statuses (AP7) and a date range (AP8, ULID bounds on the sort
//! key). One page is one query per partition still holding orders, sent in
//! parallel, merged newest first by ULID; the cursor carries every
//! partition's position.

use api::{ApiError, ListBody, Request, Response};
use keyschema::access::{self, KeyQuery};
use keyschema::ids::OrderId;
use keyschema::model::{Order, OrderStatus};
use keyschema::schema::{Index, PK, SK};
use keyschema::time::{parse_rfc3339, ulid_bounds};
use store::StartKey;

use crate::App;

/// Where one partition's next query starts.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Position {
    /// From the newest order.
    #[serde(rename = "s")]
    Start,
    /// Right after this order.
    #[serde(rename = "a")]
    After(OrderId),
    /// Nothing left.
    #[serde(rename = "d")]
    Done,
}

/// The start key that resumes `query` (a GSI3 query) after `order`.
fn start_after(query: &KeyQuery, order: &OrderId) -> StartKey {
    let sort = keyschema::keys::order::sort_value(order);
    StartKey::from([
        (PK.to_owned(), keyschema::keys::order::key(order).pk),
        (SK.to_owned(), keyschema::keys::METADATA.to_owned()),
        (Index::Gsi3.pk().to_owned(), query.pk.clone()),
        (Index::Gsi3.sk().to_owned(), sort),
    ])
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
    let range = match (from, to) {
        (None, None) => None,
        (from, to) => {
            // An open end is the end of ULID time, not "now": the range (and
            // so the cursor's scope) must be the same on every page.
            let (low, high) = ulid_bounds(from.unwrap_or(0), to.unwrap_or(u64::MAX))
                .ok_or_else(|| ApiError::bad_request("from must be before to"))?;
            Some((OrderId::from_ulid(low), OrderId::from_ulid(high)))
        }
    };
    let statuses = status.map_or_else(|| OrderStatus::ALL.to_vec(), |s| vec![s]);
    let queries: Vec<KeyQuery> = statuses
        .iter()
        .flat_map(|s| (0..app.shards).map(move |shard| access::orders_by_status_shard(*s, shard, range)))
        .collect();
    let scope = format!("orders|{status:?}|{range:?}|{}", app.shards);
    let positions = match &page.cursor {
        None => vec![Position::Start; queries.len()],
        Some(c) => app.cursors.open::<Vec<Position>>(&scope, c)?,
    };
    if positions.len() != queries.len() {
        return Err(ApiError::bad_request("invalid cursor"));
    }

    // One query per partition not yet exhausted, all in flight at once.
    let mut tasks = tokio::task::JoinSet::new();
    for (i, (query, position)) in queries.iter().zip(&positions).enumerate() {
        let start = match position {
            Position::Done => continue,
            Position::Start => None,
            Position::After(order) => Some(start_after(query, order)),
        };
        let (store, query, limit) = (app.store.clone(), query.clone(), page.limit);
        tasks.spawn(async move { (i, store.query::<Order>(&query, limit, start).await) });
    }
    let mut pages = Vec::new();
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

    let mut next = positions;
    for (i, partition) in &pages {
        let taken: Vec<&Order> = merged.iter().filter(|(j, _)| j == i).map(|(_, o)| o).collect();
        next[*i] = match taken.last() {
            None if partition.items.is_empty() => Position::Done,
            None => next[*i].clone(),
            Some(_) if taken.len() == partition.items.len() && partition.next.is_none() => Position::Done,
            Some(last) => Position::After(last.order_id),
        };
    }
    let next_cursor = next.iter().any(|p| *p != Position::Done).then(|| app.cursors.seal(&scope, &next));
    let items: Vec<Order> = merged.into_iter().map(|(_, o)| o).collect();
    Response::ok(&ListBody { items, next_cursor })
}
