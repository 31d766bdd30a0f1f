//! The replication of a DynamoDB global table in its default mode,
//! multi-Region eventual consistency (MREC), between two local regions, as
//! AWS documents it: every change of an item in one region is written to the
//! other asynchronously (after [`Settings::delay`]); a conflict is settled
//! per item by the last writer's timestamp; the replicated write appears in
//! the target's stream like any write (no origin marker); several changes
//! of an item waiting together are folded into its last image.
//!
//! A test harness, not a product part. Timestamps are when the replicator
//! read the change from its region's stream (within a poll of the write):
//! changes of one item in two regions within one poll are ordered by that.
//! Unlike DynamoDB, a replicated write can overwrite a local write of the
//! same item it has not read yet; with every item written only in its home
//! region (issue 36) no item has local writes in both.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use aws_sdk_dynamodbstreams::types::{OperationType, Record};

use super::homes_check::Homes;
use super::{canonical, RegionTable};
use crate::shards::{shard_ids, ShardCursor};

/// How replication behaves.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// How long a change waits before it is written to the other region
    /// (DynamoDB: usually under a second).
    pub delay: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { delay: Duration::from_millis(200) }
    }
}

/// What replication did, per region (the index of [`Replicator::regions`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Changes written by the region's own clients.
    pub local: [u64; 2],
    /// Changes written into the region by replication.
    pub replicated: [u64; 2],
    /// Changes replaced by a later change of the item before they were
    /// written to the other region (folded).
    pub folded: u64,
    /// Changes not written because the target's item was written later
    /// (last writer wins).
    pub superseded: u64,
    /// Items written locally in both regions (each such item is a conflict
    /// that last-writer-wins settles by dropping one side's change).
    pub written_in_both: u64,
    /// Writes by a region's own clients of an item homed in the other
    /// (`keyschema::homes`; the first region is the primary).
    pub outside_home: u64,
}

/// One item's change waiting to be written to the other region.
#[derive(Clone, Debug)]
struct Change {
    keys: HashMap<String, AttributeValue>,
    /// The new image (`None`: the item was deleted).
    image: Option<HashMap<String, AttributeValue>>,
    at: u64,
    due: Instant,
}

/// Replication between two regions' tables.
pub struct Replicator {
    /// The two regions.
    pub regions: [RegionTable; 2],
    settings: Settings,
    /// Per region, where each shard of its stream has been read to.
    shards: [BTreeMap<String, ShardCursor>; 2],
    /// Per region, the timestamp of each item's last write there.
    clocks: [HashMap<String, u64>; 2],
    /// Per region, the images replication wrote there and whose stream
    /// records are still to be read (not replicated back).
    echoes: [HashMap<String, VecDeque<String>>; 2],
    /// Per target region, the changes waiting for it.
    pending: [BTreeMap<String, Change>; 2],
    /// Per region, the items written there by their own clients.
    written: [HashMap<String, u64>; 2],
    last_at: u64,
    homes: Homes,
    outside: Vec<String>,
    /// What it did.
    pub stats: Stats,
}

impl Replicator {
    /// Replication between `a` and `b` (their tables created, streams on),
    /// from the start of each stream.
    pub fn new(a: RegionTable, b: RegionTable, settings: Settings) -> Self {
        let primary = a.name.clone();
        Replicator {
            homes: Homes::new(&primary),
            regions: [a, b],
            settings,
            shards: Default::default(),
            clocks: Default::default(),
            echoes: Default::default(),
            pending: Default::default(),
            written: Default::default(),
            last_at: 0,
            outside: Vec::new(),
            stats: Stats::default(),
        }
    }

    /// Reads both streams once and writes the changes that are due; how
    /// many records it read.
    pub async fn step(&mut self) -> Result<usize, String> {
        let mut read = 0;
        for region in 0..2 {
            for record in self.read(region).await? {
                read += 1;
                self.observe(region, record);
            }
        }
        for target in 0..2 {
            self.apply_due(target).await?;
        }
        Ok(read)
    }

    /// Steps until nothing is left to read or to write (every change in
    /// both regions), at most `within`.
    pub async fn settle(&mut self, within: Duration) -> Result<(), String> {
        let until = Instant::now() + within;
        let mut quiet = 0;
        while quiet < 2 {
            if Instant::now() > until {
                return Err(format!("replication did not settle within {within:?}: {:?}", self.stats));
            }
            let read = self.step().await?;
            quiet = if read == 0 && self.pending.iter().all(BTreeMap::is_empty) { quiet + 1 } else { 0 };
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }

    /// Steps forever, every `interval` (for `./dev up --regions 2`).
    pub async fn run(mut self, interval: Duration) {
        loop {
            if let Err(e) = self.step().await {
                eprintln!("replication: {e}");
            }
            tokio::time::sleep(interval).await;
        }
    }

    /// Whether no change waits to be written.
    pub fn is_idle(&self) -> bool {
        self.pending.iter().all(BTreeMap::is_empty)
    }

    /// Items written by their own clients in both regions, by key.
    pub fn written_in_both(&self) -> Vec<String> {
        let mut both: Vec<String> =
            self.written[0].keys().filter(|k| self.written[1].contains_key(*k)).cloned().collect();
        both.sort();
        both
    }

    /// The writes of items outside their homes, as `<region>: <item>`.
    pub fn written_outside_home(&self) -> &[String] {
        &self.outside
    }

    /// A record read from `region`'s stream: an echo of a replicated write,
    /// or a local change to replicate to the other region.
    fn observe(&mut self, region: usize, record: Record) {
        let Some(change) = record.dynamodb else { return };
        let keys = convert(change.keys.unwrap_or_default());
        let key = canonical(&keys);
        let removed = record.event_name == Some(OperationType::Remove);
        let image = if removed { None } else { change.new_image.map(convert) };
        let was = if removed { change.old_image.map(convert) } else { None };
        let seen = image.as_ref().map_or_else(|| DELETED.to_owned(), canonical);
        let echoes = self.echoes[region].entry(key.clone()).or_default();
        if let Some(i) = echoes.iter().position(|e| *e == seen) {
            echoes.remove(i);
            return;
        }

        let now = self.tick();
        self.stats.local[region] += 1;
        let home = image.as_ref().or(was.as_ref()).and_then(|i| self.homes.expected(i));
        if home.as_ref().is_some_and(|h| *h != self.regions[region].name) {
            self.stats.outside_home += 1;
            self.outside.push(format!("{}: {key}", self.regions[region].name));
        }
        if !image.as_ref().or(was.as_ref()).is_some_and(Homes::anywhere) {
            let count = self.written[region].entry(key.clone()).or_default();
            *count += 1;
            if *count == 1 && self.written[1 - region].contains_key(&key) {
                self.stats.written_in_both += 1;
            }
        }
        self.clocks[region].insert(key.clone(), now);
        let due = Instant::now() + self.settings.delay;
        let target = &mut self.pending[1 - region];
        match target.get_mut(&key) {
            Some(waiting) => {
                self.stats.folded += 1;
                waiting.image = image;
                waiting.at = now;
            }
            None => {
                target.insert(key, Change { keys, image, at: now, due });
            }
        }
    }

    /// Writes the changes due for `target`, last writer winning.
    async fn apply_due(&mut self, target: usize) -> Result<(), String> {
        let now = Instant::now();
        let due: Vec<String> =
            self.pending[target].iter().filter(|(_, c)| c.due <= now).map(|(k, _)| k.clone()).collect();
        for key in due {
            let Some(change) = self.pending[target].remove(&key) else { continue };
            if self.clocks[target].get(&key).is_some_and(|t| *t >= change.at) {
                self.stats.superseded += 1;
                continue;
            }
            let region = &self.regions[target];
            let seen = change.image.as_ref().map_or_else(|| DELETED.to_owned(), canonical);
            let (client, table) = (&region.client, &region.table);
            let failed = |e: &dyn std::error::Error| format!("replicating into {}: {e}", region.name);
            // What was there before: a write that changes nothing (a put of
            // the item as it is, a delete of an absent one) leaves no record
            // in the stream, so no echo is waited for.
            let old = match change.image.clone() {
                Some(image) => client
                    .put_item()
                    .table_name(table)
                    .set_item(Some(image))
                    .return_values(ReturnValue::AllOld)
                    .send()
                    .await
                    .map(|out| out.attributes)
                    .map_err(|e| failed(&e)),
                None => client
                    .delete_item()
                    .table_name(table)
                    .set_key(Some(change.keys.clone()))
                    .return_values(ReturnValue::AllOld)
                    .send()
                    .await
                    .map(|out| out.attributes)
                    .map_err(|e| failed(&e)),
            };
            let old = match old {
                Ok(old) => old.map(|o| canonical(&o)),
                Err(e) => {
                    // Waits again (DynamoDB retries replication until it lands).
                    self.pending[target].insert(key, change);
                    return Err(e);
                }
            };
            let changed = match (&old, change.image.is_some()) {
                (None, false) => false,
                (Some(old), true) => *old != seen,
                _ => true,
            };
            if changed {
                self.echoes[target].entry(key.clone()).or_default().push_back(seen);
            }
            self.clocks[target].insert(key, change.at);
            self.stats.replicated[target] += 1;
        }
        Ok(())
    }

    /// A timestamp later than every one given so far.
    fn tick(&mut self) -> u64 {
        self.last_at = domain::time::now_ms().max(self.last_at + 1);
        self.last_at
    }

    async fn read(&mut self, region: usize) -> Result<Vec<Record>, String> {
        let r = &self.regions[region];
        let shards = &mut self.shards[region];
        let failed = |e: String| format!("{} in {}", e, r.name);
        for id in shard_ids(&r.streams, &r.stream_arn).await.map_err(failed)? {
            shards.entry(id).or_default();
        }
        let mut out = Vec::new();
        for (id, cursor) in shards.iter_mut().filter(|(_, c)| !c.closed()) {
            let read = cursor.next(&r.streams, &r.stream_arn, id, None).await.map_err(failed)?;
            out.extend(read.unwrap_or_default());
        }
        Ok(out)
    }
}

/// What an echo of a delete is compared by.
const DELETED: &str = "(deleted)";

/// A Streams API image as the DynamoDB API's attribute values.
fn convert(image: HashMap<String, aws_sdk_dynamodbstreams::types::AttributeValue>) -> HashMap<String, AttributeValue> {
    serde_dynamo::Item::from(image).into()
}
