//! The search postings (`SEARCH#<term>` / `LISTING#<listingId>`): kept from
//! the listing's *current* state, read (strongly consistent) when a record
//! changes what the listing is found by (an insert, a removal, a new
//! title, status or category). The postings of the current state are put
//! (whatever they held), and every term of the record's images that the
//! current state does not have is deleted. So a replayed, duplicated or
//! reordered record changes nothing (it rewrites the current state), and
//! a posting a record left behind is deleted by the next record of the
//! listing, whose old image names it. A listing leaves the results when
//! its record is processed (the stream's lag); the search answer reads the
//! listings it returns, so it never shows one no longer active or no longer
//! matching.

use std::collections::BTreeSet;

use aws_lambda_events::dynamodb::EventRecord;
use domain::ids::{CategoryId, ListingId};
use domain::model::{Listing, ListingStatus, Posting};
use keyschema::table::EntityType;
use keyschema::{keys, Key};
use serde::Deserialize;
use store::{Store, StoreError};

use crate::decode::RecordError;

/// A listing whose postings a record may change, and every term its
/// images were posted under.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    /// The terms of the images (the current state's are computed on write).
    pub terms: BTreeSet<String>,
}

/// What a listing image is found by.
#[derive(Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
struct Searchable {
    listing_id: ListingId,
    title: String,
    status: ListingStatus,
    category_id: CategoryId,
}

impl Searchable {
    fn terms(&self) -> BTreeSet<String> {
        domain::words::terms(&domain::words::indexed(&self.title)).iter().map(|t| t.key()).collect()
    }
}

fn searchable(image: &serde_dynamo::Item) -> Result<Option<Searchable>, RecordError> {
    match image.get(keyschema::table::ENTITY_TYPE) {
        Some(serde_dynamo::AttributeValue::S(t)) if t == EntityType::Listing.as_str() => {
            let s =
                serde_dynamo::from_item(image.clone()).map_err(|e| RecordError::Malformed(format!("listing: {e}")))?;
            Ok(Some(s))
        }
        _ => Ok(None),
    }
}

/// The listing a record may change the postings of, if any.
pub fn touched(record: &EventRecord) -> Result<Option<(ListingId, Touched)>, RecordError> {
    let (old, new) = (&record.change.old_image, &record.change.new_image);
    let images: Vec<Searchable> = match record.event_name.as_str() {
        "INSERT" => searchable(new)?.into_iter().collect(),
        "REMOVE" => searchable(old)?.into_iter().collect(),
        // One side that does not decode names no terms; the other still
        // has the listing synced from its current state.
        "MODIFY" => match (searchable(old), searchable(new)) {
            (Err(e), Err(_)) => return Err(e),
            (Ok(Some(o)), Ok(Some(n))) if o == n => Vec::new(),
            (o, n) => o.ok().flatten().into_iter().chain(n.ok().flatten()).collect(),
        },
        _ => Vec::new(),
    };
    let Some(first) = images.first() else { return Ok(None) };
    let listing = first.listing_id;
    Ok(Some((listing, Touched { terms: images.iter().flat_map(Searchable::terms).collect() })))
}

/// The listing's key (the item its work is grouped under).
pub fn listing_key(listing: &ListingId) -> Result<Key, RecordError> {
    Ok(keys::listing(listing)?)
}

/// Puts the postings of the listing's current state and deletes the terms
/// of `touched` it does not have. Returns the writes sent (`BatchWriteItem` requests).
pub async fn sync(store: &Store, listing: &ListingId, touched: &Touched) -> Result<usize, StoreError> {
    let current: Option<Listing> = store.get_consistent(&keys::listing(listing)?).await?;
    let postings = current.as_ref().map(Posting::of_listing).unwrap_or_default();
    let keep: BTreeSet<&str> = postings.iter().map(|p| p.term.as_str()).collect();
    let stale = touched.terms.iter().filter(|t| !keep.contains(t.as_str()));
    let deletes = stale.map(|t| keys::posting(t, listing)).collect::<Result<Vec<Key>, _>>()?;
    store.write_batch(&postings, &deletes).await
}
