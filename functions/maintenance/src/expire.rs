//! The pending-order expiry sweeper: an order still `pending` longer than
//! the timeout is cancelled exactly as a buyer's cancel does (the same
//! conditional transaction, `keyschema::write::order::cancel`: the status
//! only if still pending, the listing relisted, the units back in stock).
//!
//! It reads each shard of the `pending` status partition oldest first,
//! bounded above by the ULID of the cutoff time (order ids are ULIDs of
//! their placement), so it reads only expired orders and stops at the first
//! page that has none left. The index is eventually consistent: an order it
//! lists may have been confirmed or cancelled since; the transaction's
//! condition then fails and the sweeper moves on. A buyer's cancel, a
//! seller's confirm and the sweeper on one order: exactly one wins.

use std::time::Duration;

use domain::model::{Order, OrderStatus};
use domain::time::{now_ms, rfc3339, ulid_bounds};
use futures_util::stream::{self, StreamExt};
use keyschema::write::order::CancelAction;
use keyschema::{access, write};
use serde::Serialize;
use store::{Store, StoreError};

/// Environment variable with the timeout in seconds.
pub const TIMEOUT_VAR: &str = "PENDING_ORDER_TIMEOUT_SECONDS";
/// The timeout when the variable is not set: 30 minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Orders read per query page.
const PAGE: u16 = 25;
/// Shards swept at once.
const SHARDS_AT_ONCE: usize = 4;

/// The timeout from `PENDING_ORDER_TIMEOUT_SECONDS` (whole seconds, at least 1).
pub fn timeout_from_env() -> Result<Duration, String> {
    match std::env::var(TIMEOUT_VAR) {
        Err(_) => Ok(DEFAULT_TIMEOUT),
        Ok(v) => v
            .parse::<u64>()
            .ok()
            .filter(|s| (1..=365 * 86_400).contains(s))
            .map(Duration::from_secs)
            .ok_or(format!("{TIMEOUT_VAR} must be a number of seconds, 1 to 31536000")),
    }
}

/// What one sweep did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sweep {
    /// Expired orders the index listed as pending.
    pub examined: u64,
    /// Cancelled by this sweep.
    pub cancelled: u64,
    /// No longer pending when the sweeper wrote (confirmed, cancelled by
    /// their buyer or another sweep).
    pub moved_on: u64,
    /// Could not be cancelled: giving the units back would pass a product's
    /// maximum stock (an admin's restock in between). Left pending, logged.
    pub blocked: u64,
    /// Met another transaction on one of its items (a busy product's stock,
    /// the order itself): left for the next sweep, the rest swept on.
    pub contended: u64,
}

/// Cancels the orders pending for longer than `timeout`, in every one of
/// `shards` status shards.
pub async fn sweep(store: &Store, shards: u16, timeout: Duration) -> Result<Sweep, StoreError> {
    let now = now_ms();
    let cutoff = now.saturating_sub(u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX));
    let Some((low, high)) = ulid_bounds(0, cutoff) else { return Ok(Sweep::default()) };
    let results: Vec<Result<Sweep, StoreError>> = stream::iter(0..shards.max(1))
        .map(|shard| {
            sweep_shard(
                store,
                shard,
                (domain::ids::OrderId::from_ulid(low), domain::ids::OrderId::from_ulid(high)),
                now,
            )
        })
        .buffer_unordered(SHARDS_AT_ONCE)
        .collect()
        .await;
    let mut total = Sweep::default();
    for r in results {
        let s = r?;
        total.examined += s.examined;
        total.cancelled += s.cancelled;
        total.moved_on += s.moved_on;
        total.blocked += s.blocked;
        total.contended += s.contended;
    }
    Ok(total)
}

async fn sweep_shard(
    store: &Store,
    shard: u16,
    range: (domain::ids::OrderId, domain::ids::OrderId),
    now: u64,
) -> Result<Sweep, StoreError> {
    let query = access::orders_by_status_shard(OrderStatus::Pending, shard, Some(range))?.oldest_first();
    let mut sweep = Sweep::default();
    let mut start = None;
    loop {
        let page = store.query::<Order, _>(&query, PAGE, start.take()).await?;
        // Each region sweeps the orders homed in it (docs/regions.md): the
        // others' are replicas here, cancelled at their home.
        let ours = |o: &&Order| o.status == OrderStatus::Pending && store.is_home(o.home.as_deref());
        for order in page.items.iter().filter(ours) {
            sweep.examined += 1;
            match cancel(store, order, now).await? {
                Outcome::Cancelled => sweep.cancelled += 1,
                Outcome::MovedOn => sweep.moved_on += 1,
                Outcome::Blocked => sweep.blocked += 1,
                Outcome::Contended => sweep.contended += 1,
            }
        }
        match page.next {
            Some(next) => start = Some(next),
            None => return Ok(sweep),
        }
    }
}

enum Outcome {
    Cancelled,
    MovedOn,
    Blocked,
    Contended,
}

async fn cancel(store: &Store, order: &Order, now: u64) -> Result<Outcome, StoreError> {
    let mut tx = store.transaction();
    for (name, change) in write::order::cancel(order, &rfc3339(now))? {
        tx.update(name, &change)?;
    }
    let failed = |e: &StoreError| e.failed_actions().filter_map(CancelAction::parse).collect::<Vec<_>>();
    match tx.send().await {
        Ok(()) => {
            telemetry::tracing::info!(orderId = %order.order_id, "pending order expired: cancelled");
            Ok(Outcome::Cancelled)
        }
        Err(e) if failed(&e).contains(&CancelAction::Order) => Ok(Outcome::MovedOn),
        // At 100x, orders of one hot product share its stock item: a
        // conflict costs this order a minute, not the whole sweep.
        Err(e) if e.is_transaction_conflict() => Ok(Outcome::Contended),
        Err(e) if failed(&e).iter().any(|a| matches!(a, CancelAction::Restock(..) | CancelAction::Relist)) => {
            telemetry::tracing::warn!(
                orderId = %order.order_id,
                failed = ?e.failed_actions().collect::<Vec<_>>(),
                "pending order expired but cannot be cancelled: its stock or listing moved"
            );
            Ok(Outcome::Blocked)
        }
        Err(e) => Err(e),
    }
}
