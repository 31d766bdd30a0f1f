//! `Idempotency-Key`: one mechanism for every route that takes one.
//!
//! Routes: `POST /orders` (required, route `orders`), `POST /listings`
//! (optional, `listings`), `POST /products/{productId}/stock` (optional,
//! `stock`). A key is remembered per caller and per route
//! (`IDEMPOTENCY#<callerId>#<route>#<key>`), with a hash of the request it
//! came with, by a record put (only if absent) in the same transaction as
//! the request's writes: the key is taken exactly when the request
//! succeeded. A request whose key was taken by the same request answers
//! what that one did (marked replayed); by another request, 422. A request
//! that fails its own checks looks at the key again before answering
//! ([`Idempotency::seen`]): a retry racing the first request may find the
//! listing it sold or the stock it took, and then it answers that order,
//! not a conflict.

use domain::ids::{ListingId, OrderId, UserId};
use domain::time::now_ms;
use keyschema::keys;
use keyschema::records::IdempotencyRecord;
use store::{item::from_item, Store, StoreError, Transaction};

use crate::{ApiError, Request};

/// How long a key is remembered (DynamoDB's TTL deletes the record after).
pub const TTL_SECS: u64 = 24 * 3600;
/// The transaction action that puts the record.
pub const ACTION: &str = "idempotency";

/// The `Idempotency-Key` header, if given: `[A-Za-z0-9_-]{1,128}` (400 otherwise).
pub fn header(req: &Request) -> Result<Option<String>, ApiError> {
    let Some(key) = req.header("idempotency-key") else { return Ok(None) };
    let ok = (1..=128).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(Some(key.to_owned()))
    } else {
        Err(ApiError::bad_request("Idempotency-Key must be 1-128 characters of [A-Za-z0-9_-]"))
    }
}

/// The answer to a key that came with another request.
pub fn reused() -> ApiError {
    ApiError::unprocessable("idempotency_key_reused", "this Idempotency-Key was used with a different request")
}

/// SHA-256 of a request, in hex.
fn hash(request: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(request).iter().map(|b| format!("{b:02x}")).collect()
}

/// One caller's key on one route, for one request.
#[derive(Clone, Debug)]
pub struct Idempotency {
    record: IdempotencyRecord,
}

impl Idempotency {
    /// The request's key, if it has one: `caller`'s on `route` (a short
    /// name, such as `orders`), for the request whose identifying bytes are
    /// `request` (its body as parsed, and any path parameters).
    pub fn of(req: &Request, caller: &UserId, route: &'static str, request: &[u8]) -> Result<Option<Self>, ApiError> {
        Ok(header(req)?.map(|key| Idempotency {
            record: IdempotencyRecord {
                caller_id: caller.clone(),
                route: route.to_owned(),
                key,
                request_hash: hash(request),
                order_id: None,
                listing_id: None,
                expires_at: now_ms() / 1000 + TTL_SECS,
            },
        }))
    }

    /// [`Idempotency::of`], 400 if the request has no key.
    pub fn required(req: &Request, caller: &UserId, route: &'static str, request: &[u8]) -> Result<Self, ApiError> {
        Self::of(req, caller, route, request)?
            .ok_or_else(|| ApiError::bad_request("the Idempotency-Key header is required"))
    }

    /// The same key, remembering the order this attempt creates.
    pub fn with_order(&self, order: OrderId) -> Self {
        let mut next = self.clone();
        next.record.order_id = Some(order);
        next
    }

    /// The same key, remembering the listing this request creates.
    pub fn with_listing(&self, listing: ListingId) -> Self {
        let mut next = self.clone();
        next.record.listing_id = Some(listing);
        next
    }

    /// The record as it will be stored.
    pub fn record(&self) -> &IdempotencyRecord {
        &self.record
    }

    /// Adds the record's put (only if absent) to `tx`, as action [`ACTION`].
    pub fn put_in(&self, tx: &mut Transaction) -> Result<(), StoreError> {
        tx.put_new(ACTION, &self.record).map(|_| ())
    }

    /// The record of the request that took this key, if one did (a
    /// strongly consistent read); 422 if it was another request.
    pub async fn seen(&self, store: &Store) -> Result<Option<IdempotencyRecord>, ApiError> {
        let key = keys::idempotency(&self.record.caller_id, &self.record.route, &self.record.key)
            .map_err(StoreError::from)?;
        let found = store.get_consistent::<IdempotencyRecord, _>(&key).await?;
        self.same_request(found)
    }

    /// Takes the key where `store` writes, on its own (a put only if
    /// absent), for a request whose creation is written in another region
    /// (docs/regions.md: keys live at the primary, with their caller): the
    /// record of the request that took it, this one's or an earlier one's
    /// with the same request (whose order or listing this one then makes
    /// or answers); 422 if it was another request.
    pub async fn reserve(&self, store: &Store) -> Result<IdempotencyRecord, ApiError> {
        match store.put_new(&self.record).await {
            Ok(()) => Ok(self.record.clone()),
            Err(StoreError::ConditionFailed(Some(first))) => Ok(self
                .same_request(Some(from_item::<IdempotencyRecord>(first)?))?
                .unwrap_or_else(|| self.record.clone())),
            Err(e) => Err(e.into()),
        }
    }

    /// After a transaction with [`Idempotency::put_in`] failed: the record
    /// of the request that took the key, if the key's condition failed;
    /// 422 if it was another request.
    pub fn taken_by(&self, err: &StoreError) -> Result<Option<IdempotencyRecord>, ApiError> {
        if !err.failed(ACTION) {
            return Ok(None);
        }
        match err.failed_item(ACTION).cloned().map(from_item::<IdempotencyRecord>).transpose()? {
            Some(first) => self.same_request(Some(first)),
            // Taken, then expired and deleted in between: as if never taken.
            None => Ok(None),
        }
    }

    fn same_request(&self, first: Option<IdempotencyRecord>) -> Result<Option<IdempotencyRecord>, ApiError> {
        match first {
            Some(first) if first.request_hash != self.record.request_hash => Err(reused()),
            other => Ok(other),
        }
    }
}
