//! Plays the Lambda event source mapping of the table's stream: polls the
//! real stream (DynamoDB Local implements the Streams API), hands batches to
//! the stream processor's handler as `aws_lambda_events` DynamoDB events,
//! and honours partial batch failures as Lambda does: the batch is retried
//! from the first failed record, up to a bounded number of attempts, after
//! which the batch goes to the "on-failure destination": a file of the same
//! messages Lambda sends to SQS (one per line), which `local-stack redrive`
//! reads.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use aws_lambda_events::dynamodb::EventRecord;
use aws_sdk_dynamodbstreams::Client as StreamsClient;
use lambda_runtime::Context;
pub use maintenance::redrive::to_event_record;
use maintenance::redrive::FailureMessage;
use store::Store;

use crate::shards::{shard_ids, ShardCursor};

pub use maintenance::redrive::{BATCH_SIZE, MAX_RETRIES};

/// Environment variable naming the local on-failure destination file.
pub const FAILURES_VAR: &str = "STREAM_FAILURE_FILE";
/// The file when the variable is not set (under the repository's `.tools/`).
pub const DEFAULT_FAILURES: &str = ".tools/stream-failures.jsonl";

/// The local on-failure destination: `STREAM_FAILURE_FILE` or the default.
pub fn failures_file() -> PathBuf {
    std::env::var_os(FAILURES_VAR).map_or_else(|| PathBuf::from(DEFAULT_FAILURES), PathBuf::from)
}

#[derive(Default)]
struct Shard {
    cursor: ShardCursor,
    /// Records handed over but not yet processed successfully.
    pending: Vec<EventRecord>,
    attempts: u32,
}

/// What one poll did, for tests and the log.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PollReport {
    /// Handler invocations.
    pub batches: usize,
    /// Records delivered (retries count again).
    pub records: usize,
    /// Records reported failed by the handler.
    pub failed: usize,
    /// Records given up on (sent to the on-failure destination).
    pub dropped: usize,
    /// Shards whose records could not be read this time (read again next time).
    pub unread: usize,
}

/// Polls one table's stream.
pub struct StreamPoller {
    streams: StreamsClient,
    store: Store,
    stream_arn: String,
    shards: HashMap<String, Shard>,
    failures: Option<PathBuf>,
}

impl StreamPoller {
    /// A poller of `store`'s table stream at DynamoDB Local's `endpoint`
    /// (in the store's region), from its start (TRIM_HORIZON).
    pub async fn new(store: Store, endpoint: &str) -> Result<Self, String> {
        let table =
            store.client().describe_table().table_name(store.table()).send().await.map_err(|e| e.to_string())?;
        let stream_arn = table
            .table
            .and_then(|t| t.latest_stream_arn)
            .ok_or_else(|| format!("table {} has no stream", store.table()))?;
        // The store's region: DynamoDB Local keeps a database per region.
        let region = store.client().config().region().map_or("us-east-1", |r| r.as_ref()).to_owned();
        let streams = maintenance::redrive::local_streams_client(endpoint, &region);
        Ok(StreamPoller { streams, store, stream_arn, shards: HashMap::new(), failures: None })
    }

    /// Appends each batch given up on to `file` as an on-failure message.
    pub fn with_failures_file(mut self, file: PathBuf) -> Self {
        self.failures = Some(file);
        self
    }

    /// The table's stream.
    pub fn stream_arn(&self) -> &str {
        &self.stream_arn
    }

    /// Polls forever, every `interval`.
    pub async fn run(mut self, interval: Duration) {
        loop {
            match self.poll_once().await {
                Ok(r) if r.failed > 0 || r.dropped > 0 => eprintln!("stream: {r:?}"),
                Ok(_) => {}
                Err(e) => eprintln!("stream: poll failed: {e}"),
            }
            tokio::time::sleep(interval).await;
        }
    }

    /// Reads every shard once and delivers what it got.
    pub async fn poll_once(&mut self) -> Result<PollReport, String> {
        self.discover_shards().await?;
        let mut report = PollReport::default();
        let ids: Vec<String> = self.shards.keys().cloned().collect();
        for id in ids {
            self.poll_shard(&id, &mut report).await?;
        }
        Ok(report)
    }

    async fn discover_shards(&mut self) -> Result<(), String> {
        for id in shard_ids(&self.streams, &self.stream_arn).await? {
            self.shards.entry(id).or_default();
        }
        Ok(())
    }

    async fn poll_shard(&mut self, id: &str, report: &mut PollReport) -> Result<(), String> {
        let shard = self.shards.entry(id.to_owned()).or_default();
        if shard.pending.is_empty() {
            match shard.cursor.next(&self.streams, &self.stream_arn, id, Some(BATCH_SIZE)).await? {
                Some(records) => {
                    shard.pending = records.into_iter().map(|r| to_event_record(r, &self.stream_arn)).collect();
                }
                None => {
                    report.unread += 1;
                    return Ok(());
                }
            }
        }
        if shard.pending.is_empty() {
            return Ok(());
        }
        report.batches += 1;
        report.records += shard.pending.len();
        let mut context = Context::default();
        context.request_id = ulid::Ulid::generate().to_string();
        context.xray_trace_id = Some(crate::xray::new_trace_header());
        let (failed, first_failed) = maintenance::redrive::invoke(&self.store, &shard.pending, context).await;
        report.failed += failed;
        // Retry from the first failed record, as Lambda does.
        match first_failed {
            None => {
                shard.pending.clear();
                shard.attempts = 0;
            }
            Some(i) => {
                shard.pending.drain(..i);
                shard.attempts += 1;
                if shard.attempts > MAX_RETRIES {
                    report.dropped += shard.pending.len();
                    let message =
                        FailureMessage::for_records(&self.stream_arn, id, &shard.pending, "RetryAttemptsExhausted");
                    shard.pending.clear();
                    shard.attempts = 0;
                    if let Some(message) = message {
                        give_up(self.failures.as_ref(), &message);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Sends a batch given up on to the on-failure destination: a line in the
/// failure file (and the log).
fn give_up(file: Option<&PathBuf>, message: &FailureMessage) {
    let b = &message.batch;
    eprintln!(
        "stream: on-failure destination: {} records after {MAX_RETRIES} retries (shard {}, {}..{})",
        b.batch_size, b.shard_id, b.start_sequence_number, b.end_sequence_number
    );
    let Some(file) = file else { return };
    let written = serde_json::to_string(message).map_err(|e| e.to_string()).and_then(|line| {
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(file).map_err(|e| e.to_string())?;
        writeln!(f, "{line}").map_err(|e| e.to_string())
    });
    if let Err(e) = written {
        eprintln!("stream: cannot write the failure file {}: {e}", file.display());
    }
}
