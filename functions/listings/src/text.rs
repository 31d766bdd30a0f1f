//! Where a listing's description is held: in the listing's own item when
//! the item stays within one write unit with it (a change of the listing
//! then costs what it would without it), else in its details, an item of
//! its own beside it (docs/design.md, "Descriptions").

use api::ApiError;
use domain::model::{Listing, ListingDetails};
use keyschema::{keys, Change, Cond, Value};
use store::item::{keyed, size, within_write_unit, Item, WRITE_UNIT_BYTES};
use store::Store;
use telemetry::tracing::warn;

/// What later writes add to a listing's item, kept free in its write unit:
/// its favorites' fold (`favoritesFoldedRev`, `favoritesFoldedCount`: 60
/// bytes at most), a `favoriteCount` and a price of more digits, a status
/// or a dense cell's near key a few characters longer.
pub const LATER_BYTES: usize = 128;

/// The attribute an inline description is in.
const DESCRIPTION: &str = "description";

/// Gives `listing` its description `text` if its item stays within one
/// write unit with it and [`LATER_BYTES`] (`None`), else the details that
/// hold it.
pub fn inline_or_details(listing: &mut Listing, text: String) -> Result<Option<ListingDetails>, ApiError> {
    listing.description = Some(text);
    if within_write_unit(listing, LATER_BYTES)? {
        return Ok(None);
    }
    let description = listing.description.take().unwrap_or_default();
    Ok(Some(ListingDetails { listing_id: listing.listing_id, description }))
}

/// Whether a changed listing's `item` holds its description and is past
/// its write unit once it has every key its declaration gives it (the
/// stream processor adds a reactivated listing's browse keys after the
/// change). A longer title, not a price of more digits: the room kept for
/// later writes may be spent.
pub fn grown_past(item: &Item, listing: &Listing) -> Result<bool, ApiError> {
    Ok(item.contains_key(DESCRIPTION) && size(&keyed(item, listing)?) > WRITE_UNIT_BYTES)
}

/// Moves the inline description `text` of a listing a longer title took
/// past its write unit into its details, in one transaction: the details
/// put if absent, the text removed only if it is still the one read (no
/// write but another move changes it; nothing else changes, `updatedAt`
/// included). Best effort: the change it follows is applied and its answer
/// holds the text, so a failure is logged, not answered; the next longer
/// title, or reconcile where it runs, moves it. Details already there with
/// the same text: the inline copy goes.
pub async fn move_out(home: &Store, listing: &Listing, text: &str) {
    let id = listing.listing_id;
    let details = ListingDetails { listing_id: id, description: text.to_owned() };
    let outcome = async {
        let remove =
            Change::untimed(keys::listing(&id)?).remove(DESCRIPTION).only_if(Cond::Eq(DESCRIPTION, Value::s(text)));
        let mut tx = home.transaction();
        tx.put_new("details", &details)?;
        tx.update("inline", &remove)?;
        match tx.send().await {
            Err(e) if e.failed("details") => {
                let written = home.get_consistent::<ListingDetails, _>(&keys::listing_details(&id)?).await?;
                if written.is_some_and(|d| d.description == text) {
                    home.update(&remove).await?;
                }
                Ok(())
            }
            other => other,
        }
    };
    let result: Result<(), store::StoreError> = outcome.await;
    if let Err(e) = result {
        warn!(listing = %id, error = %e, "an inline description past its write unit was not moved");
    }
}
