//! The maintenance jobs from the command line (`./dev reconcile`, `./dev
//! redrive`, `./dev expire`), against `DYNAMODB_ENDPOINT` (AWS when unset)
//! and `TABLE_NAME`, and the expiry sweeper of the local stack.

use std::path::PathBuf;
use std::time::Duration;

use maintenance::{expire, pace, reconcile, redrive};
use store::Store;

/// The table the jobs work on: `TABLE_NAME` at `DYNAMODB_ENDPOINT`; the
/// local stack's table name when only a local endpoint is given. On AWS
/// (no endpoint) the table must be named.
async fn target() -> Result<(Store, store::Endpoint), String> {
    let endpoint = store::Endpoint::from_env();
    let table = match (std::env::var(store::TABLE_VAR), &endpoint) {
        (Ok(table), _) => table,
        (Err(_), store::Endpoint::Url(_)) => crate::DEFAULT_TABLE.to_owned(),
        (Err(_), _) => return Err("set TABLE_NAME (and DYNAMODB_ENDPOINT for a local table)".into()),
    };
    let client = store::aws_sdk_dynamodb::Client::from_conf(store::client::config(&endpoint).await.build());
    // As the functions read (`LIST_INDEX_READS`, while GSI1-3 move to GSI6-8).
    Ok((Store::new(client, table).reading(store::IndexReads::from_env()?), endpoint))
}

fn value<T: std::str::FromStr>(args: &[String], flag: &str) -> Result<Option<T>, String> {
    match args.iter().position(|a| a == flag) {
        None => Ok(None),
        Some(i) => args.get(i + 1).and_then(|v| v.parse().ok()).map(Some).ok_or(format!("{flag} needs a number")),
    }
}

/// `reconcile [--dry-run | --check] [--fresh] [--segments N] [--rcu N] [--wcu N]`:
/// runs (or resumes) a reconcile and prints its report, one line per kind;
/// `--check`: a dry run that fails if it finds anything (after `./dev load`).
pub async fn reconcile(args: &[String]) -> Result<(), String> {
    let known = ["--dry-run", "--check", "--fresh", "--segments", "--rcu", "--wcu"];
    let check = args.iter().any(|a| a == "--check");
    if let Some(bad) = args.iter().find(|a| a.starts_with("--") && !known.contains(&a.as_str())) {
        return Err(format!("unknown option {bad}; reconcile takes {}", known.join(" ")));
    }
    let defaults = reconcile::Options::default();
    let options = reconcile::Options {
        dry_run: check || args.iter().any(|a| a == "--dry-run"),
        fresh: args.iter().any(|a| a == "--fresh"),
        segments: value(args, "--segments")?.unwrap_or(defaults.segments).max(1),
        budget: pace::Budget {
            rcu: value(args, "--rcu")?.unwrap_or(defaults.budget.rcu),
            wcu: value(args, "--wcu")?.unwrap_or(defaults.budget.wcu),
        },
        sold_postings_for: reconcile::sold_postings_for(maintenance::expire::timeout_from_env()?),
        ..defaults
    };
    let (store, _) = target().await?;
    let report = reconcile::run(&store, options).await;
    let mode = if options.dry_run { " (dry run: nothing written)" } else { "" };
    println!("reconcile {}{mode}: {} items read over its two passes", store.table(), report.scanned);
    println!("{:<34} {:>8} {:>8} {:>8}", "kind", "found", "repaired", "moved");
    for (kind, t) in &report.kinds {
        println!("{:<34} {:>8} {:>8} {:>8}", kind.to_string(), t.found, t.repaired, t.moved);
    }
    println!(
        "{:.1} s, {:.1} read units ({:.1}/s), {:.1} write units{}",
        report.seconds,
        report.rcu,
        report.rcu / report.seconds.max(0.001),
        report.wcu,
        if report.resumed { ", resumed an interrupted run" } else { "" }
    );
    match report.stopped {
        None if check && report.found() > 0 => Err(format!("found {} to repair", report.found())),
        None => Ok(()),
        Some(why) => Err(format!("stopped before the end ({why}); run it again to resume")),
    }
}

/// `redrive [FILE]`: re-delivers the records the messages in FILE (the
/// local failure file by default, or `aws sqs receive-message` output)
/// point to; rewrites the local file with the messages still to redrive.
pub async fn redrive(args: &[String]) -> Result<(), String> {
    let file = args.first().map_or_else(crate::stream::failures_file, PathBuf::from);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("redrive: {} does not exist: nothing was given up on", file.display());
            return Ok(());
        }
        Err(e) => return Err(format!("{}: {e}", file.display())),
    };
    let messages = redrive::parse_messages(&text)?;
    let (store, endpoint) = target().await?;
    let streams = redrive::streams_client(&endpoint).await;
    let outcomes = redrive::redrive(&store, &streams, &messages).await;
    let mut keep = Vec::new();
    for (message, outcome) in messages.iter().zip(&outcomes) {
        let b = &message.batch;
        let what = match outcome {
            Ok(redrive::Redriven::Delivered { records }) => format!("delivered {records} records"),
            Ok(redrive::Redriven::Expired) => "no longer in the stream: run ./dev reconcile".to_owned(),
            Ok(redrive::Redriven::Failed { records }) => {
                keep.push(message);
                format!("{records} records still fail; kept")
            }
            Err(e) => {
                keep.push(message);
                format!("{e}; kept")
            }
        };
        println!("shard {} {}..{}: {what}", b.shard_id, b.start_sequence_number, b.end_sequence_number);
    }
    if args.is_empty() {
        let lines: Vec<String> = keep.iter().filter_map(|m| serde_json::to_string(m).ok()).collect();
        let text = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    match keep.len() {
        0 => Ok(()),
        n => Err(format!("{n} of {} messages not redriven", messages.len())),
    }
}

/// `expire`: one sweep of the orders pending longer than the timeout.
pub async fn expire() -> Result<(), String> {
    let (store, _) = target().await?;
    let timeout = expire::timeout_from_env()?;
    let s = expire::sweep(&store, shards(), timeout).await.map_err(|e| e.to_string())?;
    println!(
        "expire {}: orders pending over {} s: {} examined, {} cancelled, {} moved on, {} blocked, {} contended",
        store.table(),
        timeout.as_secs(),
        s.examined,
        s.cancelled,
        s.moved_on,
        s.blocked,
        s.contended
    );
    Ok(())
}

fn shards() -> u16 {
    domain::shard::order_shards_from_env().unwrap_or(domain::shard::DEFAULT_SHARD_COUNT)
}

/// The local stack's sweeper: a sweep every `every`, as the schedule does
/// in AWS (once a minute there).
pub async fn sweeper(store: Store, timeout: Duration, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        match expire::sweep(&store, shards(), timeout).await {
            Ok(s) if s.cancelled > 0 || s.blocked > 0 || s.contended > 0 => eprintln!("expiry: {s:?}"),
            Ok(_) => {}
            Err(e) => eprintln!("expiry: sweep failed: {e}"),
        }
    }
}
