//! `BatchWriteItem`: unconditional puts and deletes, 25 to a request, of
//! items derived whole from another item (the search postings, derived from
//! a listing's current state by the stream processor and reconcile, each of
//! which reads the listing again to settle a race).

use aws_sdk_dynamodb::types::{DeleteRequest, PutRequest, WriteRequest};
use keyschema::{Entity, Key};

use crate::{item, Store, StoreError, TOTAL};

/// Rounds of a batch request (its unprocessed part sent again) before `Throttled`.
const ATTEMPTS: u32 = 5;

impl Store {
    /// Puts `puts` (replacing any item with the same key) and deletes
    /// `deletes` (present or not), in requests of 25. Items DynamoDB leaves
    /// unprocessed are sent again after a growing pause, a bounded number of
    /// times (then `Throttled`). Returns the requests sent.
    pub async fn write_batch<E: Entity>(&self, puts: &[E], deletes: &[Key]) -> Result<usize, StoreError> {
        let mut writes = Vec::with_capacity(puts.len() + deletes.len());
        for entity in puts {
            let put = PutRequest::builder().set_item(Some(item::to_item(entity)?)).build().map_err(invalid)?;
            writes.push(WriteRequest::builder().put_request(put).build());
        }
        for key in deletes {
            let delete = DeleteRequest::builder().set_key(Some(item::key_item(key))).build().map_err(invalid)?;
            writes.push(WriteRequest::builder().delete_request(delete).build());
        }
        let mut requests = 0;
        for chunk in writes.chunks(25) {
            let mut pending = chunk.to_vec();
            let mut attempt = 0u32;
            loop {
                let out = self
                    .client
                    .batch_write_item()
                    .request_items(self.table(), pending)
                    .return_consumed_capacity(TOTAL)
                    .send()
                    .await?;
                requests += 1;
                match out.unprocessed_items.and_then(|mut u| u.remove(self.table())) {
                    Some(rest) if !rest.is_empty() => pending = rest,
                    _ => break,
                }
                back_off(&mut attempt).await?;
            }
        }
        Ok(requests)
    }
}

/// Before a batch request sends what the previous one left unprocessed: a
/// growing pause, or `Throttled` after [`ATTEMPTS`] rounds.
pub(crate) async fn back_off(attempt: &mut u32) -> Result<(), StoreError> {
    *attempt += 1;
    if *attempt >= ATTEMPTS {
        return Err(StoreError::Throttled);
    }
    tokio::time::sleep(std::time::Duration::from_millis(20 << *attempt)).await;
    Ok(())
}

/// A request the SDK's builder refused (a bug, never input).
pub(crate) fn invalid(e: impl std::fmt::Display) -> StoreError {
    StoreError::Service { code: "InvalidRequest".into(), message: e.to_string() }
}
