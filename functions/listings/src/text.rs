//! Where a listing's description is held: in the listing's own item when
//! the item stays within one write unit with it (a change of the listing
//! then costs what it would without it), else in its details, an item of
//! its own beside it (docs/design.md, "Descriptions").

use api::ApiError;
use domain::model::{Listing, ListingDetails};
use keyschema::{keys, Change, Cond, Value};
use store::item::{size, within_write_unit, Item, WRITE_UNIT_BYTES};
use store::Store;

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

/// Whether a changed listing's `item` holds its description and has grown
/// past its write unit (a longer title; the room kept for later writes
/// may be spent: a price of more digits moves no text).
pub fn grown_past(item: &Item) -> bool {
    item.contains_key(DESCRIPTION) && size(item) > WRITE_UNIT_BYTES
}

/// Moves the inline description `text` of a listing a longer title took
/// past its write unit into its details, in one transaction: the details
/// put if absent, the text removed only if it is still the one read
/// (nothing else changes, `updatedAt` included). A write in between wins
/// (the move is left to reconcile, which moves what is left).
pub async fn move_out(home: &Store, listing: &Listing, text: &str) -> Result<(), ApiError> {
    let details = ListingDetails { listing_id: listing.listing_id, description: text.to_owned() };
    let remove = Change::untimed(keys::listing(&listing.listing_id)?)
        .remove(DESCRIPTION)
        .only_if(Cond::Eq(DESCRIPTION, Value::s(text)));
    let mut tx = home.transaction();
    tx.put_new("details", &details)?;
    tx.update("inline", &remove)?;
    match tx.send().await {
        Ok(()) => Ok(()),
        Err(e) if e.failed("details") || e.failed("inline") => Ok(()),
        Err(e) => Err(e.into()),
    }
}
