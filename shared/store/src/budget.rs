//! The time budget of an invocation: a function has a deadline (Lambda's
//! context gives it), and a DynamoDB operation may take up to its operation
//! timeout. An operation is started only while the time left can hold one
//! (the timeout plus a margin); otherwise it fails at once with
//! `StoreError::Unavailable` (a 503 for an API caller, a record reported for
//! retry by the stream processor) instead of the function being killed
//! part way through a retry loop. A task without a deadline (the local
//! stack, tests) has no budget.

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

tokio::task_local! {
    static DEADLINE: Option<SystemTime>;
}

/// The operation timeout (the client's): an operation, with its retries,
/// gets this long.
pub const OPERATION_TIMEOUT_MS: u64 = 5_000;

/// What an operation needs left to start: its timeout and a margin for the
/// answer to reach the caller.
pub const RESERVE: Duration = Duration::from_millis(OPERATION_TIMEOUT_MS + 500);

/// The error an operation fails with when the budget cannot hold it.
#[derive(Debug, thiserror::Error)]
#[error("time budget: {left_ms} ms left, an operation may take {reserve_ms} ms")]
pub struct OutOfTime {
    /// Milliseconds left before the deadline.
    pub left_ms: u128,
    /// Milliseconds an operation needs.
    pub reserve_ms: u128,
}

/// The earliest deadline taken as one (2001-09-09): Lambda sends
/// milliseconds since the epoch; smaller values are something else (cargo
/// lambda's emulator sends the function's timeout, 600000) and mean none.
const EARLIEST_DEADLINE_MS: u64 = 1_000_000_000_000;

/// Runs `work` with a deadline given as milliseconds since the Unix epoch
/// (Lambda's `Context::deadline`); 0, or anything that cannot be an epoch
/// time, means none.
pub async fn within<F: Future>(deadline_ms: u64, work: F) -> F::Output {
    let deadline = (deadline_ms >= EARLIEST_DEADLINE_MS).then(|| UNIX_EPOCH + Duration::from_millis(deadline_ms));
    DEADLINE.scope(deadline, work).await
}

/// Time left in the current task's budget; `None` without a deadline.
pub fn left() -> Option<Duration> {
    let deadline = DEADLINE.try_with(|d| *d).ok().flatten()?;
    Some(deadline.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

/// `Err` if the budget cannot hold another operation.
pub fn check() -> Result<(), OutOfTime> {
    match left() {
        Some(left) if left < RESERVE => Err(OutOfTime { left_ms: left.as_millis(), reserve_ms: RESERVE.as_millis() }),
        _ => Ok(()),
    }
}

/// Whether `error` (or what caused it) is the budget running out.
pub fn is_out_of_time(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if e.is::<OutOfTime>() {
            return true;
        }
        cause = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now_ms() -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn an_operation_starts_only_while_the_budget_holds_one() {
        assert!(check().is_ok(), "no deadline, no budget");
        assert!(within(0, async { check() }).await.is_ok(), "a zero deadline is none");
        assert!(within(600_000, async { check() }).await.is_ok(), "a timeout is not a deadline");
        assert!(within(now_ms() + 60_000, async { check() }).await.is_ok());
        let short = within(now_ms() + 3_000, async { check() }).await;
        assert!(short.is_err(), "3 s cannot hold a 5 s operation");
        assert!(within(now_ms().saturating_sub(10), async { check() }).await.is_err(), "past the deadline");
    }
}
