//! Sparse browse keys: an active listing carries its GSI2 keys
//! (`CATEGORY#<categoryId>` / `LISTING#<listingId>`) and its GSI3 price keys
//! (`PRICE#<categoryId>` / `LISTING#<cents>#<listingId>`), a sold or removed
//! one neither; a price change moves the GSI3 key. The write that takes a
//! listing out of `active` drops them itself; here they are added to active
//! listings, moved, and drift is repaired. Each decision is a conditional
//! write on the listing's *current* state, not on the record's: a replayed,
//! duplicated or reordered record (a stale "active" after "removed") fails
//! its condition and changes nothing.

use keyschema::model::ListingStatus;
use keyschema::write;
use store::Store;

use crate::decode::{ListingImage, RecordError};
use crate::Outcome;

/// Sets or removes a listing's browse keys so that exactly the active
/// listings are in the browse indexes, at their current price.
pub async fn browse_flag(store: &Store, listing: &ListingImage, indexed: bool) -> Result<Outcome, RecordError> {
    let active = listing.status == ListingStatus::Active;
    let (change, outcome) = match (active, indexed) {
        (true, false) => {
            let change = write::listing::index_for_browse(&listing.listing_id, &listing.category_id, listing.price);
            (change, Outcome::Indexed)
        }
        (false, true) => (write::listing::unindex_for_browse(&listing.listing_id), Outcome::Unindexed),
        _ => return Ok(Outcome::Skipped),
    };
    match store.update(&change).await {
        Ok(_) => Ok(outcome),
        Err(e) if e.is_conditional_check_failed() => Ok(Outcome::Stale),
        Err(e) => Err(e.into()),
    }
}
