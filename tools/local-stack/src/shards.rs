//! Reading a table's stream shard by shard, as the Streams API serves it:
//! the stream's shards (`DescribeStream`, every page), and for each one a
//! cursor that reads on from the last record read. The stream poller
//! (`stream`) and the two-region replicator (`regions::replicator`) both
//! read through it.

use aws_sdk_dynamodbstreams::types::{Record, ShardIteratorType};
use aws_sdk_dynamodbstreams::Client as StreamsClient;

/// Every shard of the stream at `arn`, by id.
pub async fn shard_ids(streams: &StreamsClient, arn: &str) -> Result<Vec<String>, String> {
    let (mut out, mut start) = (Vec::new(), None);
    loop {
        let page = streams
            .describe_stream()
            .stream_arn(arn)
            .set_exclusive_start_shard_id(start.take())
            .send()
            .await
            .map_err(|e| format!("DescribeStream: {e}"))?;
        let Some(description) = page.stream_description else { return Ok(out) };
        out.extend(description.shards.unwrap_or_default().into_iter().filter_map(|s| s.shard_id));
        match description.last_evaluated_shard_id {
            Some(last) => start = Some(last),
            None => return Ok(out),
        }
    }
}

/// Where one shard has been read to: its next iterator, the last sequence
/// number read, whether it has ended.
#[derive(Default)]
pub struct ShardCursor {
    iterator: Option<String>,
    last_sequence: Option<String>,
    closed: bool,
}

impl ShardCursor {
    /// Whether the shard has ended (closed and read to its end).
    pub fn closed(&self) -> bool {
        self.closed
    }

    /// The shard's next records (at most `limit`), from its start or after
    /// the last one read; `None` when they could not be read this time (an
    /// expired iterator: fetched again next time, after the last record
    /// read); empty once it has ended.
    pub async fn next(
        &mut self,
        streams: &StreamsClient,
        arn: &str,
        shard: &str,
        limit: Option<i32>,
    ) -> Result<Option<Vec<Record>>, String> {
        if self.closed {
            return Ok(Some(Vec::new()));
        }
        if self.iterator.is_none() {
            let mut req = streams.get_shard_iterator().stream_arn(arn).shard_id(shard);
            req = match &self.last_sequence {
                Some(seq) => req.shard_iterator_type(ShardIteratorType::AfterSequenceNumber).sequence_number(seq),
                None => req.shard_iterator_type(ShardIteratorType::TrimHorizon),
            };
            self.iterator = req.send().await.map_err(|e| format!("GetShardIterator: {e}"))?.shard_iterator;
        }
        let Some(iterator) = self.iterator.take() else {
            self.closed = true;
            return Ok(Some(Vec::new()));
        };
        let Ok(page) = streams.get_records().shard_iterator(iterator).set_limit(limit).send().await else {
            return Ok(None);
        };
        self.iterator = page.next_shard_iterator;
        self.closed = self.iterator.is_none();
        let records = page.records.unwrap_or_default();
        if let Some(last) = records.last().and_then(|r| r.dynamodb.as_ref()?.sequence_number.clone()) {
            self.last_sequence = Some(last);
        }
        Ok(Some(records))
    }
}
