//! Reconcile: brings everything derived from the base items back in line
//! with them, and backfills a new or changed key design. Two passes of a
//! parallel `Scan` (`Segment`/`TotalSegments`, the one place this project
//! scans), each checkpointed per segment and paced to a capacity budget:
//!
//! 1. **Settle**: every item's index keys are made what its declaration
//!    derives from its fields (`EntityDecl::repair` with `Keeper::Both`:
//!    missing, stale or extra keys of any index, conditioned on the fields as
//!    read, so a write in between wins); every listing's search postings
//!    made those of its current state ([`crate::postings`]); every counted
//!    instance (a review, a
//!    favorite) and every marker is settled ([`stream_processor::settle`]:
//!    the marker made to say what its base item says, with its aggregate's
//!    change, in one transaction conditioned on the marker as read).
//! 2. **Aggregates**: every aggregate (a user's ratings, a listing's
//!    favorites, a category's rating) is compared with the sum of its
//!    markers (read page by page) and set to it if it has not moved since
//!    it was read ([`stream_processor::settle::check_aggregate`]).
//!
//! The markers decide who counted what: a review written while the job runs
//! is counted by whichever of the stream processor and the job moves its
//! marker first; the other finds it moved and adds nothing.

use std::collections::BTreeMap;
use std::sync::Mutex;

use futures_util::stream::{self, StreamExt, TryStreamExt};
use keyschema::decl::{EntityDecl, Keeper};
use keyschema::{entities, Key};
use serde::Serialize;
use store::{Item, Store, StoreError};
use stream_processor::counted;
use stream_processor::counters::Aggregate;
use stream_processor::settle::{self, Instance};

use crate::checkpoints::{self, Resume};
use crate::pace::{Budget, Pacer, Sample};

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
}

impl Default for Options {
    fn default() -> Self {
        Options { segments: 4, page: 100, budget: Budget { rcu: 200.0, wcu: 100.0 }, dry_run: false, fresh: false }
    }
}

/// Found and repaired, for one kind of derived data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Items (keys, markers, aggregates) that differed from their base data.
    pub found: u64,
    /// Of those, repaired by this run.
    pub repaired: u64,
    /// Of those, changed by someone else between the read and the repair
    /// (left to them: their own write or the stream processor is newer).
    pub moved: u64,
}

/// What a run did.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Per kind: `index keys: listing`, `markers: user ratings`,
    /// `aggregate: listing favorites`, `unreadable items`.
    pub kinds: BTreeMap<String, Tally>,
    /// Items scanned (both passes).
    pub scanned: u64,
    /// Whether it resumed an interrupted run.
    pub resumed: bool,
    /// Whether both passes finished (else: run again to resume).
    pub complete: bool,
    /// Why it stopped, if it did not finish.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// It stopped because DynamoDB could not be reached in the time left
    /// (the invocation's time ran out: the next one resumes).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unavailable: bool,
    /// Capacity consumed and time taken.
    pub rcu: f64,
    /// See `rcu`.
    pub wcu: f64,
    /// See `rcu`.
    pub seconds: f64,
    /// What was consumed when (for the rate check).
    #[serde(skip)]
    pub samples: Vec<Sample>,
}

impl Report {
    /// Every kind's found count, summed.
    pub fn found(&self) -> u64 {
        self.kinds.values().map(|t| t.found).sum()
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

struct Run<'a> {
    store: &'a Store,
    options: Options,
    segments: u16,
    pacer: Pacer,
    report: Mutex<Report>,
}

impl Run<'_> {
    fn tally(&self, kind: &str, found: u64, repaired: u64, moved: u64) {
        let mut report = self.report.lock().unwrap_or_else(|p| p.into_inner());
        let t = report.kinds.entry(kind.to_owned()).or_default();
        t.found += found;
        t.repaired += repaired;
        t.moved += moved;
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
    let mut run = Run {
        store,
        options,
        segments: options.segments.max(1),
        pacer: Pacer::new(options.budget, usage),
        report: Mutex::new(Report::default()),
    };
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

/// Brings an item's index keys in line with its fields; if it changed
/// since it was read, reads it again (consistently) and tries again.
async fn repair_keys(run: &Run<'_>, decl: &EntityDecl, key: &Key, item: &Item) -> Result<(), StoreError> {
    let kind = format!("index keys: {}", decl.entity.as_str());
    match repair_keys_of(run, decl, key, item).await? {
        KeyRepair::Exact => {}
        KeyRepair::Unreadable => run.tally("unreadable items", 1, 0, 0),
        KeyRepair::Differs => run.tally(&kind, 1, 0, 0),
        KeyRepair::Repaired => run.tally(&kind, 1, 1, 0),
        KeyRepair::Moved => run.tally(&kind, 1, 0, 1),
    }
    Ok(())
}

enum KeyRepair {
    Exact,
    Unreadable,
    /// Found in a dry run.
    Differs,
    Repaired,
    /// Someone else's write made them right, or deleted the item.
    Moved,
}

async fn repair_keys_of(run: &Run<'_>, decl: &EntityDecl, key: &Key, item: &Item) -> Result<KeyRepair, StoreError> {
    let mut attrs = store::item::attrs(item);
    for attempt in 0..ATTEMPTS {
        let change = match decl.repair(&attrs, Keeper::Both) {
            Ok(None) if attempt == 0 => return Ok(KeyRepair::Exact),
            Ok(None) => return Ok(KeyRepair::Moved),
            Ok(Some(change)) => change,
            Err(_) => return Ok(KeyRepair::Unreadable),
        };
        if run.options.dry_run {
            return Ok(KeyRepair::Differs);
        }
        let _unit = run.pacer.admit().await;
        match run.store.update(&change).await {
            Ok(_) => return Ok(KeyRepair::Repaired),
            Err(e) if e.is_conditional_check_failed() => {}
            Err(e) => return Err(e),
        }
        match run.store.batch_get_items(std::slice::from_ref(key), true).await?.pop() {
            Some(now) => attrs = store::item::attrs(&now),
            None => return Ok(KeyRepair::Moved),
        }
    }
    Ok(KeyRepair::Moved)
}

/// Pass 1 over one page: search postings, reviews' categories, index keys,
/// then the instances and markers, by aggregate.
async fn settle_page(run: &Run<'_>, mut items: Vec<Item>) -> Result<(), StoreError> {
    let named = crate::postings::named(&items);
    for settled in crate::postings::settle_all(run.store, &run.pacer, named, run.options.dry_run).await? {
        match settled.tally() {
            Some((found, repaired, moved)) => run.tally("search postings", found, repaired, moved),
            None if settled == crate::postings::Settled::Unreadable => run.tally("unreadable items", 1, 0, 0),
            None => {}
        }
    }
    for done in crate::review_categories::backfill(run.store, &run.pacer, &mut items, run.options.dry_run).await? {
        let (kind, found, repaired, moved) = done.tally(run.options.dry_run);
        run.tally(kind, found, repaired, moved);
    }
    let mut groups: BTreeMap<Key, (Aggregate, Vec<Instance>)> = BTreeMap::new();
    for item in items {
        let (Some(entity), Some(key)) =
            (store::item::entity_type(&item).map(str::to_owned), store::item::key_of(&item))
        else {
            continue;
        };
        let Some(decl) = entities::ALL.iter().copied().find(|d| d.entity.as_str() == entity) else { continue };
        repair_keys(run, decl, &key, &item).await?;
        let image = serde_dynamo::Item::from(item);
        let mut add = |aggregate: Aggregate, instance: Instance| {
            groups.entry(aggregate.key.clone()).or_insert_with(|| (aggregate, Vec::new())).1.push(instance);
        };
        match counted::instances(&entity, image.clone(), String::new(), true) {
            Ok(changes) => {
                for c in changes {
                    add(c.aggregate, Instance { marker: c.marker, base: key.clone() });
                }
            }
            Err(_) => run.tally("unreadable items", 1, 0, 0),
        }
        match counted::marker(&entity, image) {
            Ok(Some((marker, base, aggregate))) => add(aggregate, Instance { marker, base }),
            Ok(None) => {}
            Err(_) => run.tally("unreadable items", 1, 0, 0),
        }
    }
    let work = groups.into_values().flat_map(|(aggregate, mut instances)| {
        instances.sort_by(|a, b| (&a.marker, &a.base).cmp(&(&b.marker, &b.base)));
        instances.dedup();
        let chunks: Vec<Vec<Instance>> = instances.chunks(INSTANCES_PER_SETTLE).map(<[Instance]>::to_vec).collect();
        chunks.into_iter().map(move |chunk| (aggregate.clone(), chunk))
    });
    stream::iter(work)
        .map(|(aggregate, chunk)| async move {
            let _unit = run.pacer.admit().await;
            let moved = settle::settle(run.store, &aggregate, &chunk, run.options.dry_run).await?;
            let repaired = if run.options.dry_run { 0 } else { moved as u64 };
            run.tally(&format!("markers: {}", aggregate.name), moved as u64, repaired, 0);
            Ok::<(), StoreError>(())
        })
        .buffer_unordered(AT_ONCE)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// Pass 2 over one page: each aggregate an item holds against its markers.
async fn aggregates_page(run: &Run<'_>, items: Vec<Item>) -> Result<(), StoreError> {
    let mut aggregates = Vec::new();
    for item in items {
        let Some(entity) = store::item::entity_type(&item).map(str::to_owned) else { continue };
        match counted::aggregate_held(&entity, serde_dynamo::Item::from(item)) {
            Ok(Some(aggregate)) => aggregates.push(aggregate),
            Ok(None) => {}
            Err(_) => run.tally("unreadable items", 1, 0, 0),
        }
    }
    stream::iter(aggregates)
        .map(|aggregate| async move {
            let kind = format!("aggregate: {}", aggregate.name);
            // An aggregate that moved while read is read again: a live
            // write moves it by its own amount and keeps the drift.
            for attempt in 0..ATTEMPTS {
                let _unit = run.pacer.admit().await;
                match settle::check_aggregate(run.store, &aggregate, run.options.dry_run).await {
                    Ok(None) if attempt == 0 => {}
                    Ok(None) => run.tally(&kind, 1, 0, 1),
                    Ok(Some(drift)) if drift.repaired => run.tally(&kind, 1, 1, 0),
                    Ok(Some(_)) if run.options.dry_run => run.tally(&kind, 1, 0, 0),
                    Ok(Some(_)) if attempt + 1 < ATTEMPTS => continue,
                    Ok(Some(_)) => run.tally(&kind, 1, 0, 1),
                    Err(StoreError::Service { code, .. }) if code.starts_with("Malformed") => {
                        run.tally("unreadable items", 1, 0, 0)
                    }
                    Err(e) => return Err(e),
                }
                break;
            }
            Ok(())
        })
        .buffer_unordered(AT_ONCE)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}
