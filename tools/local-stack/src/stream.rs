//! Plays the Lambda event source mapping of the table's stream: polls the
//! real stream (DynamoDB Local implements the Streams API), hands batches to
//! the stream processor's handler as `aws_lambda_events` DynamoDB events,
//! and honours partial batch failures as Lambda does: the batch is retried
//! from the first failed record, up to a bounded number of attempts, after
//! which the records go to the "on-failure destination" (here: the log).

use std::collections::HashMap;
use std::time::Duration;

use aws_lambda_events::dynamodb::{Event, EventRecord, StreamRecord, StreamViewType};
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_dynamodbstreams::types::{Record, ShardIteratorType};
use aws_sdk_dynamodbstreams::Client as StreamsClient;
use lambda_runtime::{Context, LambdaEvent};
use store::Store;

/// Records per batch, as `BatchSize` in template.yaml.
pub const BATCH_SIZE: i32 = 100;
/// Retries of a failing batch before it goes to the on-failure destination,
/// as `MaximumRetryAttempts` in template.yaml.
pub const MAX_RETRIES: u32 = 5;

/// A client of the Streams API at a local endpoint.
pub fn streams_client(endpoint: &str) -> StreamsClient {
    let config = aws_sdk_dynamodbstreams::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("local", "local", None, None, "dynamodb-local"))
        .endpoint_url(endpoint)
        .http_client(aws_smithy_http_client::Builder::new().build_http())
        .build();
    StreamsClient::from_conf(config)
}

#[derive(Default)]
struct Shard {
    iterator: Option<String>,
    last_sequence: Option<String>,
    /// Records handed over but not yet processed successfully.
    pending: Vec<EventRecord>,
    attempts: u32,
    closed: bool,
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
}

/// Polls one table's stream.
pub struct StreamPoller {
    streams: StreamsClient,
    store: Store,
    stream_arn: String,
    shards: HashMap<String, Shard>,
}

impl StreamPoller {
    /// A poller of `store`'s table stream, from its start (TRIM_HORIZON).
    pub async fn new(store: Store, endpoint: &str) -> Result<Self, String> {
        let table =
            store.client().describe_table().table_name(store.table()).send().await.map_err(|e| e.to_string())?;
        let stream_arn = table
            .table
            .and_then(|t| t.latest_stream_arn)
            .ok_or_else(|| format!("table {} has no stream", store.table()))?;
        Ok(StreamPoller { streams: streams_client(endpoint), store, stream_arn, shards: HashMap::new() })
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
        let mut start = None;
        loop {
            let out = self
                .streams
                .describe_stream()
                .stream_arn(&self.stream_arn)
                .set_exclusive_start_shard_id(start.take())
                .send()
                .await
                .map_err(|e| format!("DescribeStream: {e}"))?;
            let Some(description) = out.stream_description else { return Ok(()) };
            for shard in description.shards.unwrap_or_default() {
                if let Some(id) = shard.shard_id {
                    self.shards.entry(id).or_default();
                }
            }
            match description.last_evaluated_shard_id {
                Some(last) => start = Some(last),
                None => return Ok(()),
            }
        }
    }

    async fn poll_shard(&mut self, id: &str, report: &mut PollReport) -> Result<(), String> {
        let shard = self.shards.entry(id.to_owned()).or_default();
        if shard.pending.is_empty() {
            if shard.closed {
                return Ok(());
            }
            if shard.iterator.is_none() {
                let mut req = self.streams.get_shard_iterator().stream_arn(&self.stream_arn).shard_id(id);
                req = match &shard.last_sequence {
                    Some(seq) => req.shard_iterator_type(ShardIteratorType::AfterSequenceNumber).sequence_number(seq),
                    None => req.shard_iterator_type(ShardIteratorType::TrimHorizon),
                };
                shard.iterator = req.send().await.map_err(|e| format!("GetShardIterator: {e}"))?.shard_iterator;
            }
            let Some(iterator) = shard.iterator.take() else {
                shard.closed = true;
                return Ok(());
            };
            match self.streams.get_records().shard_iterator(iterator).limit(BATCH_SIZE).send().await {
                Ok(out) => {
                    shard.iterator = out.next_shard_iterator;
                    shard.closed = shard.iterator.is_none();
                    let records = out.records.unwrap_or_default();
                    if let Some(last) = records.last().and_then(|r| r.dynamodb.as_ref()?.sequence_number.clone()) {
                        shard.last_sequence = Some(last);
                    }
                    shard.pending = records.into_iter().map(|r| to_event_record(r, &self.stream_arn)).collect();
                }
                // An expired iterator is fetched again after the last sequence number read.
                Err(_) => return Ok(()),
            }
        }
        if shard.pending.is_empty() {
            return Ok(());
        }
        let mut batch = Event::default();
        batch.records = shard.pending.clone();
        report.batches += 1;
        report.records += batch.records.len();
        let mut context = Context::default();
        context.request_id = ulid::Ulid::new().to_string();
        let response = match stream_processor::handler(&self.store, LambdaEvent::new(batch, context)).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        report.failed += response.batch_item_failures.len();
        // Retry from the first failed record, as Lambda does.
        let first_failed = shard
            .pending
            .iter()
            .position(|r| response.batch_item_failures.iter().any(|f| f.item_identifier == r.change.sequence_number));
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
                    let seqs: Vec<_> = shard.pending.iter().filter_map(|r| r.change.sequence_number.clone()).collect();
                    eprintln!(
                        "stream: on-failure destination: {} records after {MAX_RETRIES} retries: {seqs:?}",
                        seqs.len()
                    );
                    shard.pending.clear();
                    shard.attempts = 0;
                }
            }
        }
        Ok(())
    }
}

/// A Streams API record as the Lambda event source mapping delivers it.
pub fn to_event_record(record: Record, stream_arn: &str) -> EventRecord {
    let mut out = EventRecord::default();
    out.aws_region = "us-east-1".to_owned();
    out.event_id = record.event_id.unwrap_or_default();
    out.event_name = record.event_name.map(|n| n.as_str().to_owned()).unwrap_or_default();
    out.event_source = Some("aws:dynamodb".to_owned());
    out.event_version = record.event_version;
    out.event_source_arn = Some(stream_arn.to_owned());
    let mut change = StreamRecord::default();
    if let Some(d) = record.dynamodb {
        change.keys = d.keys.unwrap_or_default().into();
        change.new_image = d.new_image.unwrap_or_default().into();
        change.old_image = d.old_image.unwrap_or_default().into();
        change.sequence_number = d.sequence_number;
        change.size_bytes = d.size_bytes.unwrap_or_default();
        change.stream_view_type = Some(StreamViewType::NewAndOldImages);
    }
    out.change = change;
    out
}
