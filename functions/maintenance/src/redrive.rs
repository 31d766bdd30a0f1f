//! Redrive: the event source mapping gives a batch up after its retries (or
//! once its records are older than `MaximumRecordAgeInSeconds`) and sends
//! its on-failure destination a message that points into the stream (shard,
//! first and last sequence number), not the records. While the stream still
//! holds them (24 hours), [`redrive`] reads the records back and delivers
//! them to the stream processor's handler, as the mapping would (retrying
//! from the first failed record); its conditions and markers make records
//! already applied change nothing. After that, the answer is
//! [`crate::reconcile`].

use std::cmp::Ordering;

use aws_lambda_events::dynamodb::{Event, EventRecord, StreamRecord, StreamViewType};
use aws_sdk_dynamodbstreams::types::{Record, ShardIteratorType};
use aws_sdk_dynamodbstreams::Client as StreamsClient;
use lambda_runtime::{Context, LambdaEvent};
use serde::{Deserialize, Serialize};
use store::Store;

/// Records per delivery, as `BatchSize` in template.yaml.
pub const BATCH_SIZE: i32 = 100;
/// Retries of a failing delivery, as `MaximumRetryAttempts` in template.yaml.
pub const MAX_RETRIES: u32 = 5;
/// `GetRecords` answers without a record, in a row, before a shard that is
/// still open is taken to hold nothing more of the range.
const EMPTY_READS: u32 = 5;

/// The on-failure destination's message for a DynamoDB stream batch (the
/// body of the SQS message), as Lambda writes it; only the batch matters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureMessage {
    /// Why and when (kept as sent).
    #[serde(rename = "requestContext", default, skip_serializing_if = "Option::is_none")]
    pub request_context: Option<serde_json::Value>,
    /// When the batch was given up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Where its records are.
    #[serde(rename = "DDBStreamBatchInfo")]
    pub batch: BatchInfo,
}

/// Where a batch's records are in the stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchInfo {
    /// The shard.
    pub shard_id: String,
    /// The first record's sequence number.
    pub start_sequence_number: String,
    /// The last record's sequence number.
    pub end_sequence_number: String,
    /// Records in the batch.
    pub batch_size: u32,
    /// The stream.
    pub stream_arn: String,
}

impl FailureMessage {
    /// The message for a batch of `records` of `shard` (as the local stream
    /// poller writes it when it gives a batch up); `None` for no records.
    pub fn for_records(stream_arn: &str, shard_id: &str, records: &[EventRecord], reason: &str) -> Option<Self> {
        let first = records.first()?.change.sequence_number.clone()?;
        let last = records.last()?.change.sequence_number.clone()?;
        Some(FailureMessage {
            request_context: Some(serde_json::json!({ "condition": reason })),
            timestamp: Some(domain::time::rfc3339(domain::time::now_ms())),
            batch: BatchInfo {
                shard_id: shard_id.to_owned(),
                start_sequence_number: first,
                end_sequence_number: last,
                batch_size: u32::try_from(records.len()).unwrap_or(u32::MAX),
                stream_arn: stream_arn.to_owned(),
            },
        })
    }
}

/// The messages in `text`: one message per line (the local failure file),
/// or the output of `aws sqs receive-message` (`{"Messages": [{"Body": ...}]}`).
pub fn parse_messages(text: &str) -> Result<Vec<FailureMessage>, String> {
    #[derive(Deserialize)]
    struct Received {
        #[serde(rename = "Messages", default)]
        messages: Vec<Sqs>,
    }
    #[derive(Deserialize)]
    struct Sqs {
        #[serde(rename = "Body")]
        body: String,
    }
    if let Ok(received) = serde_json::from_str::<Received>(text.trim()) {
        return received.messages.iter().map(|m| serde_json::from_str(&m.body).map_err(|e| e.to_string())).collect();
    }
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// What became of one message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "outcome")]
pub enum Redriven {
    /// Its records were delivered and processed.
    Delivered {
        /// Records delivered.
        records: usize,
    },
    /// The stream no longer holds them (past retention): run reconcile.
    Expired,
    /// Delivered, but the processor still failed some after its retries;
    /// the message should be kept.
    Failed {
        /// Records that failed.
        records: usize,
    },
}

/// Compares stream sequence numbers (decimal strings of any length).
fn sequence_cmp(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// Reads the records `batch` points to, if the stream still holds them.
async fn read_batch(streams: &StreamsClient, batch: &BatchInfo) -> Result<Option<Vec<EventRecord>>, String> {
    let iterator = streams
        .get_shard_iterator()
        .stream_arn(&batch.stream_arn)
        .shard_id(&batch.shard_id)
        .shard_iterator_type(ShardIteratorType::AtSequenceNumber)
        .sequence_number(&batch.start_sequence_number)
        .send()
        .await;
    let mut iterator = match iterator {
        Ok(out) => out.shard_iterator,
        Err(e) if e.as_service_error().is_some_and(|s| s.is_trimmed_data_access_exception()) => return Ok(None),
        Err(e) if e.as_service_error().is_some_and(|s| s.is_resource_not_found_exception()) => return Ok(None),
        Err(e) => return Err(format!("GetShardIterator: {}", aws_sdk_dynamodbstreams::error::DisplayErrorContext(e))),
    };
    let mut out = Vec::new();
    let mut empty = 0;
    while let Some(it) = iterator.take() {
        let page = match streams.get_records().shard_iterator(it).limit(BATCH_SIZE).send().await {
            Ok(page) => page,
            Err(e) if e.as_service_error().is_some_and(|s| s.is_trimmed_data_access_exception()) => return Ok(None),
            Err(e) => return Err(format!("GetRecords: {}", aws_sdk_dynamodbstreams::error::DisplayErrorContext(e))),
        };
        let records = page.records.unwrap_or_default();
        empty = if records.is_empty() { empty + 1 } else { 0 };
        for record in records {
            let seq = record.dynamodb.as_ref().and_then(|d| d.sequence_number.clone()).unwrap_or_default();
            if sequence_cmp(&seq, &batch.end_sequence_number) == Ordering::Greater {
                return Ok(Some(out));
            }
            out.push(to_event_record(record, &batch.stream_arn));
        }
        if empty >= EMPTY_READS {
            break;
        }
        iterator = page.next_shard_iterator;
    }
    Ok(Some(out))
}

/// Re-delivers the records of each message to the stream processor.
pub async fn redrive(
    store: &Store,
    streams: &StreamsClient,
    messages: &[FailureMessage],
) -> Vec<Result<Redriven, String>> {
    let mut out = Vec::new();
    for message in messages {
        out.push(match read_batch(streams, &message.batch).await {
            Ok(None) => Ok(Redriven::Expired),
            Ok(Some(records)) => Ok(deliver(store, records).await),
            Err(e) => Err(e),
        });
    }
    out
}

/// One invocation of the stream processor's handler with `records`, as the
/// event source mapping makes it (inside the runtime's request span): how
/// many records it reported failed, and the position of the first, from
/// which Lambda retries the batch.
pub async fn invoke(store: &Store, records: &[EventRecord], context: Context) -> (usize, Option<usize>) {
    let mut event = Event::default();
    event.records = records.to_vec();
    let span = lambda_runtime::layers::trace::request_span(&context);
    let invocation = stream_processor::handler(store, LambdaEvent::new(event, context));
    let response = match telemetry::tracing::Instrument::instrument(invocation, span).await {
        Ok(r) => r,
        Err(never) => match never {},
    };
    let failures = &response.batch_item_failures;
    let first = records.iter().position(|r| failures.iter().any(|f| f.item_identifier == r.change.sequence_number));
    (failures.len(), first)
}

/// Delivers records to the stream processor's handler in batches, each
/// retried from its first failed record up to [`MAX_RETRIES`] times.
pub async fn deliver(store: &Store, records: Vec<EventRecord>) -> Redriven {
    let total = records.len();
    let mut failed = 0;
    for chunk in records.chunks(BATCH_SIZE as usize) {
        let mut pending = chunk.to_vec();
        for attempt in 0..=MAX_RETRIES {
            let mut context = Context::default();
            context.request_id = format!("redrive-{}", ulid::Ulid::generate());
            match invoke(store, &pending, context).await.1 {
                None => break,
                Some(i) if attempt == MAX_RETRIES => failed += pending.len() - i,
                Some(i) => {
                    pending.drain(..i);
                }
            }
        }
    }
    if failed == 0 {
        Redriven::Delivered { records: total }
    } else {
        Redriven::Failed { records: failed }
    }
}

/// A Streams API record as the Lambda event source mapping delivers it.
pub fn to_event_record(record: Record, stream_arn: &str) -> EventRecord {
    let mut out = EventRecord::default();
    out.aws_region = stream_arn.split(':').nth(3).filter(|r| !r.is_empty()).unwrap_or("us-east-1").to_owned();
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

/// A Streams API client for `endpoint`: DynamoDB Local's with its static
/// credentials, or AWS's from the default chains.
pub async fn streams_client(endpoint: &store::Endpoint) -> StreamsClient {
    use aws_sdk_dynamodbstreams::config::BehaviorVersion;
    let http = store::client::http_client(endpoint);
    match endpoint {
        store::Endpoint::Url(url) if url.starts_with("http://") => {
            let region = std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".to_owned());
            local_streams_client(url, &region)
        }
        _ => {
            let mut loader = aws_config::defaults(BehaviorVersion::latest()).http_client(http);
            if let store::Endpoint::Url(url) = endpoint {
                loader = loader.endpoint_url(url);
            }
            StreamsClient::new(&loader.load().await)
        }
    }
}

/// A Streams API client for DynamoDB Local at `url` (`http://`), signing with
/// `region`: DynamoDB Local keeps a database per region, so this reads the
/// streams of the tables a DynamoDB client of that region created.
pub fn local_streams_client(url: &str, region: &str) -> StreamsClient {
    use aws_sdk_dynamodbstreams::config::{BehaviorVersion, Credentials, Region};
    let endpoint = store::Endpoint::Url(url.to_owned());
    let config = aws_sdk_dynamodbstreams::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region.to_owned()))
        .credentials_provider(Credentials::new("local", "local", None, None, "dynamodb-local"))
        .endpoint_url(url)
        .http_client(store::client::http_client(&endpoint))
        .build();
    StreamsClient::from_conf(config)
}
