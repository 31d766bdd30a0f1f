//! Writes cancelled by a conflict (another transaction held one of their
//! items while in flight: `TransactionCanceledException` whose reasons are
//! all `TransactionConflict`, or `TransactionConflictException` for a
//! single write) were not applied, so they are retried here, a few times
//! with a short random pause, while the time budget holds; the SDK's own
//! retries do not cover them. A transaction keeps its `ClientRequestToken`
//! across these attempts, so one that did commit is not applied twice.
//! What is still conflicting after the last attempt goes to the caller (a
//! 409 for an API caller, a retried record for the stream processor).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::StoreError;

/// Attempts of one write, the first included.
pub const ATTEMPTS: u32 = 6;

/// The longest pause before retry `n` (1-based): 20, 40, 80, 160, 320 ms
/// (about 600 ms in all at most); each pause is drawn uniformly below it
/// ("full jitter"), so contenders spread out instead of colliding again.
pub fn max_pause(retry: u32) -> Duration {
    Duration::from_millis(20 << retry.saturating_sub(1).min(4))
}

static RETRIED: AtomicU64 = AtomicU64::new(0);

/// Conflicts retried by this process so far (absorbed or not).
pub fn retried() -> u64 {
    RETRIED.load(Ordering::Relaxed)
}

/// The pause before retry `retry` (1-based) of a write that met a conflict:
/// drawn below [`max_pause`] (for callers that retry a whole request: an
/// order placement, a status change).
pub fn pause(retry: u32) -> Duration {
    jitter(max_pause(retry))
}

/// A random pause below `max` (the ULID generator's randomness).
fn jitter(max: Duration) -> Duration {
    let max_us = max.as_micros().max(1) as u64;
    Duration::from_micros((ulid::Ulid::generate().random() as u64) % max_us)
}

/// Runs `write` until it is not cancelled by a conflict, at most
/// [`ATTEMPTS`] times and while the budget can hold another attempt.
pub async fn retrying<T, F, Fut>(mut write: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, StoreError>>,
{
    let mut retry = 0;
    loop {
        match write().await {
            Err(e) if e.is_transaction_conflict() && retry + 1 < ATTEMPTS && crate::budget::check().is_ok() => {
                retry += 1;
                RETRIED.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(jitter(max_pause(retry))).await;
            }
            result => return result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cancellation;

    fn conflict() -> StoreError {
        StoreError::TransactionCanceled(vec![
            Cancellation { action: "a".into(), code: Some("TransactionConflict".into()), item: None },
            Cancellation { action: "b".into(), code: None, item: None },
        ])
    }

    #[tokio::test]
    async fn a_conflict_is_retried_until_the_write_goes_through() {
        let mut calls = 0;
        let result = retrying(|| {
            calls += 1;
            let answer = if calls < 3 { Err(conflict()) } else { Ok(calls) };
            async move { answer }
        })
        .await;
        assert_eq!(result.unwrap(), 3);
    }

    #[tokio::test]
    async fn conflicts_stop_after_the_last_attempt_and_other_errors_at_once() {
        let mut calls = 0;
        let result: Result<(), _> = retrying(|| {
            calls += 1;
            async { Err(conflict()) }
        })
        .await;
        assert!(result.unwrap_err().is_transaction_conflict());
        assert_eq!(calls, ATTEMPTS);
        let mut calls = 0;
        let result: Result<(), _> = retrying(|| {
            calls += 1;
            let failed = StoreError::TransactionCanceled(vec![Cancellation {
                action: "a".into(),
                code: Some("ConditionalCheckFailed".into()),
                item: None,
            }]);
            async { Err(failed) }
        })
        .await;
        assert!(result.is_err());
        assert_eq!(calls, 1, "a failed condition is an answer, not a conflict");
    }
}
