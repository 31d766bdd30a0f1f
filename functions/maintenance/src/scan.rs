//! The one place this project scans: a page of one segment of a parallel
//! `Scan`, for reconcile reading the base data at a paced rate. Not in the
//! store crate, so no request path can reach it (the functions' IAM
//! policies do not allow `dynamodb:Scan` either; a test checks them).

use store::aws_sdk_dynamodb::types::{AttributeValue, ReturnConsumedCapacity};
use store::{Item, Page, StartKey, Store, StoreError};

/// One page of segment `segment` of a parallel `Scan` in `segments`
/// (eventually consistent), at most `limit` items, from `start`. Asks for
/// its consumed capacity, so the job's pacer is charged for it.
pub async fn page(
    store: &Store,
    segment: u16,
    segments: u16,
    limit: u16,
    start: Option<StartKey>,
) -> Result<Page<Item>, StoreError> {
    let start = start.map(|s| s.into_iter().map(|(k, v)| (k, AttributeValue::S(v))).collect());
    let out = store
        .client()
        .scan()
        .table_name(store.table())
        .segment(i32::from(segment))
        .total_segments(i32::from(segments.max(1)))
        .limit(i32::from(limit.max(1)))
        .set_exclusive_start_key(start)
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await?;
    let next = out.last_evaluated_key.map(|key| {
        key.into_iter().filter_map(|(k, v)| if let AttributeValue::S(s) = v { Some((k, s)) } else { None }).collect()
    });
    let read_units = store::read_units(out.consumed_capacity.as_ref());
    Ok(Page { items: out.items.unwrap_or_default(), next, read_units })
}
