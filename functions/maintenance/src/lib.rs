//! Maintenance jobs over the base data (see docs/operations.md):
//!
//! - [`reconcile`]: brings aggregates, markers and index keys back in line
//!   with the base items after stream records were lost, and backfills a
//!   new or changed key design; a paced, checkpointed parallel scan.
//! - [`expire`]: cancels orders pending for longer than the timeout.
//! - [`redrive`]: re-delivers the stream records the event source mapping
//!   gave up on, while the stream holds them.
//!
//! The Lambda function runs the first two ([`handler`]): the expiry on a
//! schedule, a reconcile by hand or on a schedule (off by default), each
//! within the invocation's time; a reconcile that runs out of time leaves
//! its checkpoints and the next invocation resumes it.

pub mod checkpoints;
pub mod details;
pub mod expire;
pub mod pace;
pub mod reconcile;
pub mod redrive;
mod report;
pub mod review_categories;
pub mod scan;

use std::time::Duration;

use lambda_runtime::LambdaEvent;
use serde::Deserialize;
use store::Store;

/// What an invocation asks.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "job", rename_all = "camelCase", deny_unknown_fields)]
pub enum Job {
    /// Cancel the orders pending for longer than the timeout.
    Expire,
    /// Reconcile (or resume one).
    #[serde(rename_all = "camelCase")]
    Reconcile {
        /// Report only.
        #[serde(default)]
        dry_run: bool,
        /// Start afresh instead of resuming.
        #[serde(default)]
        fresh: bool,
        /// Scan segments (default 4).
        segments: Option<u16>,
        /// Read units per second (default 200).
        read_units_per_second: Option<f64>,
        /// Write units per second (default 100).
        write_units_per_second: Option<f64>,
    },
}

/// The function's configuration, from its environment.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Order status shards (`ORDER_SHARD_COUNT`).
    pub shards: u16,
    /// How long an order may stay pending (`PENDING_ORDER_TIMEOUT_SECONDS`).
    pub timeout: Duration,
}

impl Config {
    /// From the environment.
    pub fn from_env() -> Result<Self, String> {
        Ok(Config { shards: domain::shard::order_shards_from_env()?, timeout: expire::timeout_from_env()? })
    }
}

/// Reconcile options from an invocation's fields (defaults where absent;
/// budgets must be finite and not negative).
fn options(
    dry_run: bool,
    fresh: bool,
    segments: Option<u16>,
    rcu: Option<f64>,
    wcu: Option<f64>,
) -> Result<reconcile::Options, String> {
    let defaults = reconcile::Options::default();
    let rate = |v: Option<f64>, d: f64| match v {
        None => Ok(d),
        Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Some(_) => Err("a capacity budget must be a number of units per second, 0 or more".to_owned()),
    };
    Ok(reconcile::Options {
        segments: segments.filter(|s| (1..=1000).contains(s)).unwrap_or(defaults.segments),
        budget: pace::Budget { rcu: rate(rcu, defaults.budget.rcu)?, wcu: rate(wcu, defaults.budget.wcu)? },
        dry_run,
        fresh,
        ..defaults
    })
}

/// The Lambda handler: runs the job within the invocation's time; answers
/// its report. An expiry that fails is an error (the schedule tries again);
/// a reconcile that stops part way answers its report (`complete: false`).
pub async fn handler(
    store: &Store,
    config: Config,
    event: LambdaEvent<Job>,
) -> Result<serde_json::Value, lambda_runtime::Error> {
    let deadline = event.context.deadline;
    let job = event.payload;
    let answer = store::budget::within(deadline, async {
        match job {
            Job::Expire => {
                let sweep = expire::sweep(store, config.shards, config.timeout).await?;
                telemetry::tracing::info!(
                    examined = sweep.examined,
                    cancelled = sweep.cancelled,
                    movedOn = sweep.moved_on,
                    blocked = sweep.blocked,
                    contended = sweep.contended,
                    "expiry sweep"
                );
                Ok::<_, lambda_runtime::Error>(serde_json::to_value(sweep)?)
            }
            Job::Reconcile { dry_run, fresh, segments, read_units_per_second, write_units_per_second } => {
                let options = options(dry_run, fresh, segments, read_units_per_second, write_units_per_second)?;
                let options =
                    reconcile::Options { sold_postings_for: reconcile::sold_postings_for(config.timeout), ..options };
                // It would write items homed in other regions (docs/regions.md).
                if store.is_global() && !options.dry_run {
                    return Err("reconcile repairs only a single-region table for now; run it with dryRun".into());
                }
                let report = reconcile::run(store, options).await;
                telemetry::tracing::info!(
                    complete = report.complete,
                    scanned = report.scanned,
                    found = report.found(),
                    rcu = report.rcu,
                    wcu = report.wcu,
                    kinds = %serde_json::to_string(&report.kinds)?,
                    "reconcile"
                );
                if report.stopped.is_some() && !report.unavailable {
                    telemetry::handled_errors(1);
                }
                Ok(serde_json::to_value(report)?)
            }
        }
    })
    .await;
    telemetry::handled_errors(u64::from(answer.is_err()));
    telemetry::flush(&event.context.request_id);
    answer
}
