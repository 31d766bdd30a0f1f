//! A capacity budget per second for a job beside live traffic: a token
//! bucket per kind (read and write units) that refills at the budget and
//! holds at most one second of it, charged with what DynamoDB reports each
//! request consumed (the [`store::Usage`] the job runs in). A job asks
//! [`Pacer::wait`] before each request; it sleeps while a bucket is in debt,
//! so over any stretch of time the job consumes at most its budget plus one
//! second's worth (none at the start: the buckets start empty) and the
//! requests in flight (whose cost is known only when they answer).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use store::Usage;

/// Read and write units per second a job may consume.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// Read capacity units per second.
    pub rcu: f64,
    /// Write capacity units per second.
    pub wcu: f64,
}

/// What the job consumed by a point in time (for the report and its test).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Sample {
    /// Seconds since the job started.
    pub seconds: f64,
    /// Read units consumed so far.
    pub rcu: f64,
    /// Write units consumed so far.
    pub wcu: f64,
}

struct Buckets {
    last: Instant,
    /// Read and write tokens (negative: in debt).
    rcu: f64,
    wcu: f64,
    /// The usage totals already charged.
    charged: (f64, f64),
    samples: Vec<Sample>,
}

/// Paces the requests recorded in `usage` to `budget`.
pub struct Pacer {
    budget: Budget,
    usage: Usage,
    started: Instant,
    buckets: Mutex<Buckets>,
    turn: tokio::sync::Mutex<()>,
    units: tokio::sync::Semaphore,
}

/// Units of work in flight at most: their cost is known only when they
/// answer, so a small budget lets few through at once (one per 20 units
/// of budget, 1 to 16; unpaced 64).
fn units_in_flight(budget: Budget) -> usize {
    let limits = [budget.rcu, budget.wcu].into_iter().filter(|b| *b > 0.0);
    match limits.fold(None, |least: Option<f64>, b| Some(least.map_or(b, |l| l.min(b)))) {
        None => 64,
        Some(least) => ((least / 20.0).floor() as usize).clamp(1, 16),
    }
}

impl Pacer {
    /// A pacer of what `usage` records, starting with empty buckets: over a
    /// whole run the job consumes at most its budget times the run's time,
    /// plus what the requests in flight at the end consumed.
    pub fn new(budget: Budget, usage: Usage) -> Self {
        let now = Instant::now();
        let buckets = Buckets { last: now, rcu: 0.0, wcu: 0.0, charged: (0.0, 0.0), samples: Vec::new() };
        let units = tokio::sync::Semaphore::new(units_in_flight(budget));
        Pacer { budget, usage, started: now, buckets: Mutex::new(buckets), turn: tokio::sync::Mutex::new(()), units }
    }

    /// Admits one unit of work (a request, or a few that belong together):
    /// waits for a place among the units in flight and for the budget
    /// ([`Pacer::wait`]); the unit runs while the permit is held.
    pub async fn admit(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        let permit = self.units.acquire().await.ok();
        self.wait().await;
        permit
    }

    /// Charges what was consumed since the last call, then sleeps until
    /// neither bucket is in debt. One waiter at a time: the others queue
    /// behind it, so those that waited are let through one by one, each
    /// seeing what the ones before it consumed.
    pub async fn wait(&self) {
        let _turn = self.turn.lock().await;
        loop {
            let pause = self.charge();
            if pause <= 0.0 {
                return;
            }
            tokio::time::sleep(Duration::from_secs_f64(pause.min(60.0))).await;
        }
    }

    /// Refills the buckets for the time passed, charges what was consumed
    /// since the last charge; the seconds until neither is in debt.
    fn charge(&self) -> f64 {
        let totals = self.usage.totals();
        let mut b = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let elapsed = now.duration_since(b.last).as_secs_f64();
        b.last = now;
        b.rcu = (b.rcu + elapsed * self.budget.rcu).min(self.budget.rcu) - (totals.rcu - b.charged.0);
        b.wcu = (b.wcu + elapsed * self.budget.wcu).min(self.budget.wcu) - (totals.wcu - b.charged.1);
        b.charged = (totals.rcu, totals.wcu);
        let seconds = now.duration_since(self.started).as_secs_f64();
        b.samples.push(Sample { seconds, rcu: totals.rcu, wcu: totals.wcu });
        let debt = |tokens: f64, rate: f64| if tokens < 0.0 && rate > 0.0 { -tokens / rate } else { 0.0 };
        debt(b.rcu, self.budget.rcu).max(debt(b.wcu, self.budget.wcu))
    }

    /// What was consumed when, at each [`Pacer::wait`] and now.
    pub fn samples(&self) -> Vec<Sample> {
        let totals = self.usage.totals();
        let mut samples = self.buckets.lock().unwrap_or_else(|p| p.into_inner()).samples.clone();
        samples.push(Sample { seconds: self.started.elapsed().as_secs_f64(), rcu: totals.rcu, wcu: totals.wcu });
        samples
    }
}
