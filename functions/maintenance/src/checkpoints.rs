//! A job's checkpoints: one item per scan segment saying where the segment
//! got to (`after`: the scan's `LastEvaluatedKey`; none: done), written
//! after each page it finished, so an interrupted run (a Lambda's time
//! limit, a failure) resumes where it stopped and a page is at most redone.

use std::collections::BTreeMap;

use keyschema::records::Checkpoint;
use keyschema::{access, keys};
use store::{Store, StoreError};

/// Where a segment starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resume {
    /// From the beginning.
    Start,
    /// After this key (JSON of the scan's `LastEvaluatedKey`).
    After(store::StartKey),
    /// Nothing left: the segment is done.
    Done,
}

/// The checkpoints of `job`, by segment, and the segment count they were
/// written for (`None` if there are none).
pub async fn load(store: &Store, job: &str) -> Result<(Option<u16>, BTreeMap<u16, Resume>), StoreError> {
    let mut segments = None;
    let mut out = BTreeMap::new();
    for item in store.query_all_consistent(&access::checkpoints_of(job)?).await? {
        // An unreadable checkpoint (written by another version?) must not
        // stop every run: its segment starts over.
        let Ok(c) = store::item::from_item::<Checkpoint>(item) else {
            telemetry::tracing::warn!(job, "an unreadable checkpoint: its segment starts over");
            continue;
        };
        segments = Some(c.segments);
        let resume = match c.after {
            None => Resume::Done,
            Some(json) => match serde_json::from_str(&json) {
                Ok(key) => Resume::After(key),
                // An unreadable checkpoint: redo the segment.
                Err(_) => Resume::Start,
            },
        };
        out.insert(c.segment, resume);
    }
    Ok((segments, out))
}

/// Records that `segment` of `job` (of `segments`) got to `after` (`None`: done).
pub async fn save(
    store: &Store,
    job: &str,
    segment: u16,
    segments: u16,
    after: Option<&store::StartKey>,
) -> Result<(), StoreError> {
    let checkpoint = Checkpoint {
        job: job.to_owned(),
        segment,
        segments,
        after: after.map(json_of),
        updated_at: domain::time::rfc3339(domain::time::now_ms()),
    };
    store.put(&checkpoint).await
}

/// A scan position as a checkpoint holds it: JSON, which [`load`] reads
/// back (a map of strings always encodes, so no error to invent).
fn json_of(key: &store::StartKey) -> String {
    let fields = key.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(v.as_str())));
    serde_json::Value::Object(fields.collect()).to_string()
}

/// Removes every checkpoint of `job` (the run is complete, or starts afresh).
pub async fn clear(store: &Store, job: &str) -> Result<(), StoreError> {
    let (_, found) = load(store, job).await?;
    for segment in found.keys() {
        store.delete(&keys::checkpoint(job, segment)?).await?;
    }
    Ok(())
}
