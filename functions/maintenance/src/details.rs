//! Descriptions written inline, before they moved to an item of their own
//! beside their listing or product (`keyschema::entities::details`):
//! reconcile's settle pass moves each into its details item, in one
//! transaction that puts the details (if absent) and removes the inline
//! description (only if it is still the one read), so a write in between
//! wins and the next run moves what is left. Until moved, the item is still
//! answered with its inline description; no write puts one inline now.

use domain::ids::{ListingId, ProductId};
use domain::model::{ListingDetails, ProductDetails};
use keyschema::table::EntityType;
use keyschema::{keys, Change, Cond, Key, Value};
use store::aws_sdk_dynamodb::types::AttributeValue;
use store::item::entity_type;
use store::{Item, Store, StoreError, Transaction};

use crate::pace::Pacer;

/// The attribute a description was written in.
const DESCRIPTION: &str = "description";

/// What a scanned item needs.
enum Inline {
    Listing(ListingDetails, Key),
    Product(ProductDetails, Key),
}

fn text(item: &Item, name: &str) -> Option<String> {
    match item.get(name) {
        Some(AttributeValue::S(s)) => Some(s.clone()),
        _ => None,
    }
}

/// The details a scanned listing or product should have, if it holds its
/// description inline (`None` for any other item).
fn inline(item: &Item) -> Result<Option<Inline>, StoreError> {
    let Some(description) = text(item, DESCRIPTION) else { return Ok(None) };
    let entity = entity_type(item).and_then(|t| t.parse::<EntityType>().ok());
    Ok(match entity {
        Some(EntityType::Listing) => match text(item, "listingId").and_then(|id| id.parse::<ListingId>().ok()) {
            Some(listing_id) => {
                let key = keys::listing(&listing_id)?.into_key();
                Some(Inline::Listing(ListingDetails { listing_id, description }, key))
            }
            None => None,
        },
        Some(EntityType::Product) => match text(item, "productId").and_then(|id| id.parse::<ProductId>().ok()) {
            Some(product_id) => {
                let key = keys::product(&product_id)?.into_key();
                Some(Inline::Product(ProductDetails { product_id, description }, key))
            }
            None => None,
        },
        _ => None,
    })
}

/// Moves a scanned item's inline description into its details item (or,
/// on a dry run, only finds it). `Ok(true)`: it had one (moved, unless it
/// changed in between or `dry_run`).
async fn move_inline(store: &Store, item: &Item, dry_run: bool) -> Result<bool, StoreError> {
    let Some(found) = inline(item)? else { return Ok(false) };
    if dry_run {
        return Ok(true);
    }
    let (description, key) = match &found {
        Inline::Listing(d, key) => (d.description.clone(), key.clone()),
        Inline::Product(d, key) => (d.description.clone(), key.clone()),
    };
    let remove = Change::untimed(key).remove(DESCRIPTION).only_if(Cond::Eq(DESCRIPTION, Value::s(description)));
    let mut tx: Transaction = store.transaction();
    match &found {
        Inline::Listing(d, _) => tx.put_new("details", d)?,
        Inline::Product(d, _) => tx.put_new("details", d)?,
    };
    tx.update("inline", &remove)?;
    match tx.send().await {
        Ok(()) => Ok(true),
        // Changed since it was read: the next run moves what is there then.
        Err(e) if e.failed("inline") => Ok(true),
        // Details already written (by a run whose answer was lost, say):
        // the inline copy only goes.
        Err(e) if e.failed("details") => match store.update(&remove).await {
            Ok(_) | Err(StoreError::ConditionFailed(_)) => Ok(true),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    }
}

/// Moves the inline descriptions of a scan page's items, each write paced:
/// how many it found.
pub async fn backfill(store: &Store, pacer: &Pacer, items: &[Item], dry_run: bool) -> Result<u64, StoreError> {
    let mut found = 0;
    for item in items {
        if inline(item)?.is_none() {
            continue;
        }
        let _unit = pacer.admit().await;
        if move_inline(store, item, dry_run).await? {
            found += 1;
        }
    }
    Ok(found)
}
