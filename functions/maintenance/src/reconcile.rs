//! Reconcile: brings everything derived from the base items back in line
//! with them, and backfills a new or changed key design. Two passes of a
//! parallel `Scan` (`Segment`/`TotalSegments`, the one place this project
//! scans), each checkpointed per segment and paced to a capacity budget:
//!
//! 1. **Settle**: every item's index keys are made what its declaration
//!    derives from its fields (`EntityDecl::repair` with `Keeper::Both`:
//!    missing, stale or extra keys of any index, conditioned on the fields as
//!    read, so a write in between wins; the record of each partition of a
//!    dense cell a near key is in, checked once a run and put back if
//!    gone: [`derived::near_cells::ensure`]); every listing's search postings
//!    made those of its current state ([`derived::postings`]); every counted
//!    instance (a review, a favorite) and every marker is settled
//!    ([`derived::aggregates::settle`]: the marker made to say what its
//!    base item says, with its aggregate's change, in one transaction
//!    conditioned on the marker as read).
//! 2. **Aggregates**: every aggregate (a user's ratings, a listing's
//!    favorites, a category's rating) is compared with the sum of its
//!    markers (read page by page), the difference added if it has not moved
//!    since it was read, and its parts folded in
//!    ([`derived::aggregates::settle::check_aggregate`]); a category's
//!    rating that only its parts hold yet is created by a fold.
//!
//! Each scanned item is parsed once ([`derived::Image`]) and asked for each
//! kind of derived data, as the stream processor asks each record.
//!
//! The markers decide who counted what: a review written while the job runs
//! is counted by whichever of the stream processor and the job moves its
//! marker first; the other finds it moved and adds nothing.

use std::collections::BTreeMap;
use std::time::Duration;

use derived::aggregates::fold::{self, Folding};
use derived::aggregates::settle::{self, check_aggregate};
use derived::aggregates::{self, Aggregate, Instance};
use derived::index_keys::KeysOf;
use derived::postings::{self, Named, Settled};
use derived::{Body, DerivedError, Image};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use keyschema::decl::Keeper;
use keyschema::Key;
use store::{Item, Store, StoreError};

use crate::checkpoints::{self, Resume};
use crate::pace::{Budget, Pacer};
pub use crate::report::{Kind, Report, Tally};
use index_keys::repair_keys;
use run::Run;

mod index_keys;
mod run;

/// The checkpoint names of the two passes.
pub const SETTLE_JOB: &str = "reconcile-settle";
/// See [`SETTLE_JOB`].
pub const AGGREGATES_JOB: &str = "reconcile-aggregates";
/// Instances settled per transaction group (a `BatchGetItem` reads two keys each).
const INSTANCES_PER_SETTLE: usize = 50;
/// Aggregates or instance groups of one page worked on at once.
const AT_ONCE: usize = 8;
/// Reads and repairs of one item or aggregate that another writer moved in between.
const ATTEMPTS: u32 = 5;

/// How to run.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Scan segments (run at once); a resumed run keeps its own count.
    pub segments: u16,
    /// Items per scan page.
    pub page: u16,
    /// Capacity per second the job may consume (0: unpaced).
    pub budget: Budget,
    /// Report what differs, write nothing (no checkpoints either).
    pub dry_run: bool,
    /// Ignore (and remove) the checkpoints of an interrupted run.
    pub fresh: bool,
    /// How long a sold listing may keep its search postings (its order may
    /// be pending): `PENDING_ORDER_TIMEOUT_SECONDS` and the sweeper's
    /// schedule, [`sold_postings_for`].
    pub sold_postings_for: Duration,
}

/// How long a sold listing may keep its search postings when orders stay
/// pending at most `timeout`: that and 5 minutes (the sweeper runs every
/// minute; clocks differ).
pub fn sold_postings_for(timeout: Duration) -> Duration {
    timeout.saturating_add(Duration::from_secs(300))
}

impl Default for Options {
    fn default() -> Self {
        Options {
            segments: 4,
            page: 100,
            budget: Budget { rcu: 200.0, wcu: 100.0 },
            dry_run: false,
            fresh: false,
            sold_postings_for: sold_postings_for(crate::expire::DEFAULT_TIMEOUT),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    Settle,
    Aggregates,
}

impl Pass {
    fn job(self) -> &'static str {
        match self {
            Pass::Settle => SETTLE_JOB,
            Pass::Aggregates => AGGREGATES_JOB,
        }
    }
}

/// Runs (or resumes) a reconcile of `store`'s table.
pub async fn run(store: &Store, options: Options) -> Report {
    let usage = store::Usage::default();
    let started = std::time::Instant::now();
    let mut report = usage.scope(run_in(store, options, usage.clone())).await;
    let totals = usage.totals();
    (report.rcu, report.wcu, report.seconds) = (totals.rcu, totals.wcu, started.elapsed().as_secs_f64());
    report
}

async fn run_in(store: &Store, options: Options, usage: store::Usage) -> Report {
    let mut run = Run::new(store, options, Pacer::new(options.budget, usage));
    let outcome = passes(&mut run).await;
    let mut report = run.report.into_inner().unwrap_or_else(|p| p.into_inner());
    report.samples = run.pacer.samples();
    match outcome {
        Ok(()) => report.complete = true,
        Err(e) => {
            report.unavailable = matches!(e, StoreError::Unavailable(_));
            report.stopped = Some(telemetry::redacted(&e));
        }
    }
    report
}

async fn passes(run: &mut Run<'_>) -> Result<(), StoreError> {
    let mut resume = BTreeMap::new();
    if !run.options.dry_run {
        if run.options.fresh {
            for pass in [Pass::Settle, Pass::Aggregates] {
                checkpoints::clear(run.store, pass.job()).await?;
            }
        }
        for pass in [Pass::Settle, Pass::Aggregates] {
            let (segments, found) = checkpoints::load(run.store, pass.job()).await?;
            if let Some(n) = segments {
                run.segments = n;
                run.report.lock().unwrap_or_else(|p| p.into_inner()).resumed = true;
            }
            resume.insert(pass.job(), found);
        }
    }
    for pass in [Pass::Settle, Pass::Aggregates] {
        let found = resume.remove(pass.job()).unwrap_or_default();
        let run: &Run<'_> = run;
        let segments = (0..run.segments).map(|s| {
            let from = found.get(&s).cloned().unwrap_or(Resume::Start);
            segment(run, pass, s, from)
        });
        // Every segment runs to its end or its error; the first error stops the run.
        let results = futures_util::future::join_all(segments).await;
        results.into_iter().collect::<Result<Vec<()>, StoreError>>()?;
    }
    if !run.options.dry_run {
        for pass in [Pass::Settle, Pass::Aggregates] {
            checkpoints::clear(run.store, pass.job()).await?;
        }
    }
    Ok(())
}

async fn segment(run: &Run<'_>, pass: Pass, segment: u16, from: Resume) -> Result<(), StoreError> {
    let mut start = match from {
        Resume::Done => return Ok(()),
        Resume::Start => None,
        Resume::After(key) => Some(key),
    };
    loop {
        let page = {
            let _unit = run.pacer.admit().await;
            crate::scan::page(run.store, segment, run.segments, run.options.page, start.take()).await?
        };
        run.report.lock().unwrap_or_else(|p| p.into_inner()).scanned += page.items.len() as u64;
        match pass {
            Pass::Settle => settle_page(run, page.items).await?,
            Pass::Aggregates => aggregates_page(run, page.items).await?,
        }
        if !run.options.dry_run {
            let _unit = run.pacer.admit().await;
            checkpoints::save(run.store, pass.job(), segment, run.segments, page.next.as_ref()).await?;
        }
        match page.next {
            Some(next) => start = Some(next),
            None => return Ok(()),
        }
    }
}

/// A derivation's error in a reconcile: an unreadable item is tallied and
/// left; a store error stops the run (the next one resumes).
fn unreadable(run: &Run<'_>, e: DerivedError) -> Result<(), StoreError> {
    match e {
        DerivedError::Store(e) => Err(e),
        DerivedError::Malformed(_) => {
            run.tally(Kind::Unreadable, Tally::found(1));
            Ok(())
        }
        // Settling markers tallies its own contention; a fold left
        // contended is its parts' records' to finish.
        DerivedError::Contended(_) => Ok(()),
    }
}

/// Pass 1 over one page: search postings, reviews' categories, index keys,
/// then the instances and markers, by aggregate.
async fn settle_page(run: &Run<'_>, items: Vec<Item>) -> Result<(), StoreError> {
    // Each item parsed once, with its primary key.
    let mut images: Vec<(Key, Image)> =
        items.iter().filter_map(|i| Some((store::item::key_of(i)?, Image::of_item(i)?))).collect();
    settle_postings(run, &images).await?;
    for moved in crate::details::backfill(run.store, &run.pacer, &items, run.options.dry_run).await? {
        let (kind, tally) = moved.tally(run.options.dry_run);
        run.tally(kind, tally);
    }
    for done in crate::review_categories::backfill(run.store, &run.pacer, &mut images, run.options.dry_run).await? {
        let (kind, tally) = done.tally(run.options.dry_run);
        run.tally(kind, tally);
    }
    let mut groups: BTreeMap<Key, (Aggregate, Vec<Instance>)> = BTreeMap::new();
    let mut add = |aggregate: Aggregate, instances: Vec<Instance>| {
        groups.entry(aggregate.key.clone()).or_insert_with(|| (aggregate, Vec::new())).1.extend(instances);
    };
    for (key, image) in &images {
        if image.body == Body::Retired {
            retire(run, key).await?;
            continue;
        }
        match KeysOf::of(image, Keeper::Both) {
            Ok(Some(keys)) => repair_keys(run, keys).await?,
            Ok(None) => {}
            Err(e) => unreadable(run, e)?,
        }
        match aggregates::counts_of(image, true) {
            Ok(counts) => {
                for c in counts {
                    add(c.aggregate, vec![Instance { marker: c.marker, base: key.clone(), member: c.member }]);
                }
            }
            Err(e) => unreadable(run, e)?,
        }
        match aggregates::marker_of(image) {
            Ok(Some((aggregate, instances))) => add(aggregate, instances),
            Ok(None) => {}
            Err(e) => unreadable(run, e)?,
        }
    }
    let work = groups.into_values().flat_map(|(aggregate, mut instances)| {
        instances.sort();
        instances.dedup();
        let chunks: Vec<Vec<Instance>> = instances.chunks(INSTANCES_PER_SETTLE).map(<[Instance]>::to_vec).collect();
        chunks.into_iter().map(move |chunk| (aggregate.clone(), chunk))
    });
    stream::iter(work)
        .map(|(aggregate, chunk)| async move {
            let _unit = run.pacer.admit().await;
            let kind = Kind::Markers(aggregate.kind);
            match settle::settle(run.store, &aggregate, &chunk, run.options.dry_run).await {
                Ok(moved) => run.tally(kind, run.fixed(moved as u64)),
                // Live writers kept moving them: theirs to count.
                Err(DerivedError::Contended(_)) => run.tally(kind, Tally::moved(chunk.len() as u64)),
                Err(e) => unreadable(run, e)?,
            }
            Ok::<(), StoreError>(())
        })
        .buffer_unordered(AT_ONCE)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// Deletes a marker of a retired kind (a per-review rating marker: slots
/// replaced them; the aggregates pass then sets each aggregate to its
/// slots' sum).
async fn retire(run: &Run<'_>, key: &Key) -> Result<(), StoreError> {
    if run.options.dry_run {
        run.tally(Kind::Retired, Tally::found(1));
        return Ok(());
    }
    let _unit = run.pacer.admit().await;
    run.store.delete(key).await?;
    run.tally(Kind::Retired, Tally::repaired(1));
    Ok(())
}

/// The page's search postings: its listings', and its postings' listings'
/// where a posting is not as its listing would have it.
async fn settle_postings(run: &Run<'_>, images: &[(Key, Image)]) -> Result<(), StoreError> {
    let mut named = Named::default();
    for (_, image) in images {
        named.add(image);
    }
    let kept_ms = u64::try_from(run.options.sold_postings_for.as_millis()).unwrap_or(u64::MAX);
    let sold_before = domain::time::rfc3339(domain::time::now_ms().saturating_sub(kept_ms));
    let to_settle = {
        let _unit = run.pacer.admit().await;
        named.to_settle(run.store, &sold_before).await?
    };
    let settled: Vec<Settled> = stream::iter(to_settle)
        .map(|(_, touched)| async move {
            let _unit = run.pacer.admit().await;
            postings::settle(run.store, &touched, run.options.dry_run).await
        })
        .buffer_unordered(AT_ONCE)
        .try_collect()
        .await?;
    for s in settled {
        match s {
            Settled::Exact => {}
            Settled::Differs => run.tally(Kind::SearchPostings, Tally::found(1)),
            Settled::Repaired => run.tally(Kind::SearchPostings, Tally::repaired(1)),
            Settled::Moved => run.tally(Kind::SearchPostings, Tally::moved(1)),
            Settled::Unreadable => run.tally(Kind::Unreadable, Tally::found(1)),
        }
    }
    Ok(())
}

/// Pass 2 over one page: each aggregate an item holds against its markers.
async fn aggregates_page(run: &Run<'_>, items: Vec<Item>) -> Result<(), StoreError> {
    let mut held = Vec::new();
    let mut unheld = BTreeMap::new();
    for image in items.iter().filter_map(Image::of_item) {
        match aggregates::held_by(&image) {
            Ok(aggregates) => held.extend(aggregates),
            Err(e) => unreadable(run, e)?,
        }
        // An aggregate in an item of its own (a category's rating) is
        // created by its first fold: its parts may be all there is of it.
        match aggregates::of_part(&image) {
            Ok(Some(aggregate)) if !aggregate.init.is_empty() => {
                unheld.insert(aggregate.key.clone(), aggregate);
            }
            Ok(_) => {}
            Err(e) => unreadable(run, e)?,
        }
    }
    // (One whose item exists is checked as held, with its parts' gain.)
    for aggregate in unheld.into_values() {
        let _unit = run.pacer.admit().await;
        let kind = Kind::Aggregate(aggregate.kind);
        match fold::unheld(run.store, &aggregate).await {
            Ok(false) => {}
            Ok(true) if run.options.dry_run => run.tally(kind, Tally::found(1)),
            Ok(true) => match fold::fold(run.store, &aggregate).await {
                Ok(Folding::Folded) => run.tally(kind, Tally::repaired(1)),
                Ok(_) => run.tally(kind, Tally::moved(1)),
                Err(e) => unreadable(run, e)?,
            },
            Err(e) => unreadable(run, e)?,
        }
    }
    stream::iter(held)
        .map(|aggregate| async move {
            let kind = Kind::Aggregate(aggregate.kind);
            // An aggregate that moved while read is read again: a live
            // write moves it by its own amount and keeps the drift.
            for attempt in 0..ATTEMPTS {
                let _unit = run.pacer.admit().await;
                match check_aggregate(run.store, &aggregate, run.options.dry_run).await {
                    Ok(None) if attempt == 0 => {}
                    Ok(None) => run.tally(kind, Tally::moved(1)),
                    Ok(Some(drift)) if drift.repaired => run.tally(kind, Tally::repaired(1)),
                    Ok(Some(_)) if run.options.dry_run => run.tally(kind, Tally::found(1)),
                    Ok(Some(_)) if attempt + 1 < ATTEMPTS => continue,
                    Ok(Some(_)) => run.tally(kind, Tally::moved(1)),
                    Err(e) => unreadable(run, e)?,
                }
                break;
            }
            Ok::<(), StoreError>(())
        })
        .buffer_unordered(AT_ONCE)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}
