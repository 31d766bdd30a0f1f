//! The index keys the stream processor keeps: for an entity whose
//! declaration gives the stream processor a part in keeping an index
//! (today: a listing's `browse` and `by_price` keys, present only while it
//! is active; added and moved here, removed by the write that takes it out
//! of active and here when they drift), the write that brings the item's
//! keys in line with its fields ([`keyschema::decl::EntityDecl::repair`]).
//! It is conditioned on the fields as the record's image has them, so a
//! replayed, duplicated or reordered record (a stale "active" after
//! "removed") fails its condition and changes nothing.

use keyschema::decl::{EntityDecl, Keeper};
use keyschema::Attrs;
use store::Store;

use crate::decode::RecordError;
use crate::Outcome;

/// Brings the stream-kept index keys of the item `image` shows in line.
pub async fn repair(store: &Store, decl: &EntityDecl, image: &Attrs) -> Result<Outcome, RecordError> {
    let Some(change) = decl.repair(image, Keeper::Stream).map_err(|e| RecordError::Malformed(e.to_string()))? else {
        return Ok(Outcome::Skipped);
    };
    let outcome = if change.set.is_empty() { Outcome::Unindexed } else { Outcome::Indexed };
    match store.update(&change).await {
        Ok(_) => Ok(outcome),
        Err(e) if e.is_conditional_check_failed() => Ok(Outcome::Stale),
        Err(e) => Err(e.into()),
    }
}
