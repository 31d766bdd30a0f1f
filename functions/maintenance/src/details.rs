//! Descriptions held inline where they no longer belong: a product's (all
//! written before descriptions moved to an item of their own beside their
//! listing or product, `keyschema::entities::details`), and a listing's
//! that takes its item past one write unit (1 KB; written before, or left
//! by a longer title whose own move failed). A new listing
//! holds its description inline only if the item stays within the unit
//! with it (`functions/listings`, `text`). Reconcile's settle pass moves each
//! into its details item, in one transaction that puts the details (if
//! absent) and removes the inline description (only if it is still the one
//! read), so a move in between wins and the next run moves what is left.
//! Until moved, the item is still answered with its inline description.

use domain::ids::{ListingId, ProductId};
use domain::model::{ListingDetails, ProductDetails};
use keyschema::table::EntityType;
use keyschema::{keys, Change, Cond, Key, Value};
use store::aws_sdk_dynamodb::types::AttributeValue;
use store::item::entity_type;
use store::{Item, Store, StoreError, Transaction};

use crate::pace::Pacer;
use crate::report::{Kind, Tally};

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

/// The details a scanned product should have if it holds its description
/// inline, and a listing if it holds one past one write unit (`None` for
/// any other item).
fn inline(item: &Item) -> Result<Option<Inline>, StoreError> {
    let Some(description) = text(item, DESCRIPTION) else { return Ok(None) };
    let entity = entity_type(item).and_then(|t| t.parse::<EntityType>().ok());
    let fits = store::item::size(item) <= store::item::WRITE_UNIT_BYTES;
    Ok(match entity {
        Some(EntityType::Listing) if fits => None,
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

/// What became of one inline description.
#[derive(Debug, PartialEq, Eq)]
pub enum Moved {
    /// Moved into its details item (or, in a dry run, found).
    Moved,
    /// Changed or moved by another writer since it was read (the next
    /// run moves what is there then).
    ByOther,
    /// Its details hold another text: left as it is, reported.
    Differs,
}

impl Moved {
    /// The report's kind and tally.
    pub fn tally(&self, dry_run: bool) -> (Kind, Tally) {
        match self {
            Moved::Moved if dry_run => (Kind::InlineDescriptions, Tally::found(1)),
            Moved::Moved => (Kind::InlineDescriptions, Tally::repaired(1)),
            Moved::ByOther => (Kind::InlineDescriptions, Tally::moved(1)),
            Moved::Differs => (Kind::Unreadable, Tally::found(1)),
        }
    }
}

/// Moves a scanned item's inline description into its details item (or,
/// on a dry run, only finds it); `None`: it has none.
async fn move_inline(store: &Store, item: &Item, dry_run: bool) -> Result<Option<Moved>, StoreError> {
    let Some(found) = inline(item)? else { return Ok(None) };
    if dry_run {
        return Ok(Some(Moved::Moved));
    }
    let (description, key) = match &found {
        Inline::Listing(d, key) => (d.description.clone(), key.clone()),
        Inline::Product(d, key) => (d.description.clone(), key.clone()),
    };
    let remove = Change::untimed(key).remove(DESCRIPTION).only_if(Cond::Eq(DESCRIPTION, Value::s(description.clone())));
    let mut tx: Transaction = store.transaction();
    match &found {
        Inline::Listing(d, _) => tx.put_new("details", d)?,
        Inline::Product(d, _) => tx.put_new("details", d)?,
    };
    tx.update("inline", &remove)?;
    let outcome = match tx.send().await {
        Ok(()) => Moved::Moved,
        Err(e) if e.failed("inline") => Moved::ByOther,
        // Details written by someone else (no write of this code puts both
        // an inline text and details): the inline copy goes only if the
        // details hold the same text.
        Err(e) if e.failed("details") => {
            let written = match &found {
                Inline::Listing(d, _) => {
                    let key = keys::listing_details(&d.listing_id)?;
                    store.get_consistent::<ListingDetails, _>(&key).await?.map(|d| d.description)
                }
                Inline::Product(d, _) => {
                    let key = keys::product_details(&d.product_id)?;
                    store.get_consistent::<ProductDetails, _>(&key).await?.map(|d| d.description)
                }
            };
            if written.as_deref() != Some(description.as_str()) {
                return Ok(Some(Moved::Differs));
            }
            match store.update(&remove).await {
                Ok(_) => Moved::Moved,
                Err(StoreError::ConditionFailed(_)) => Moved::ByOther,
                Err(e) => return Err(e),
            }
        }
        Err(e) => return Err(e),
    };
    Ok(Some(outcome))
}

/// Moves the inline descriptions of a scan page's items, each write paced:
/// what became of each.
pub async fn backfill(store: &Store, pacer: &Pacer, items: &[Item], dry_run: bool) -> Result<Vec<Moved>, StoreError> {
    let mut out = Vec::new();
    for item in items {
        if inline(item)?.is_none() {
            continue;
        }
        let _unit = pacer.admit().await;
        out.extend(move_inline(store, item, dry_run).await?);
    }
    Ok(out)
}
