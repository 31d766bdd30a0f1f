//! Backfill of the category a buyer's review counts in. Reviews written
//! before categories were rated name none, so no rating of a category ever
//! counted them. Reconcile's first pass gives each such review its category
//! (the one its order recorded at placement, else its listing's), before the
//! review's markers are settled: the same pass then counts it into the
//! category's rating, exactly once (the marker decides, as for every count).
//! A seller's review and a review of a catalog order rate no category and
//! are left as they are.

use derived::{Body, Image};
use domain::ids::CategoryId;
use domain::model::{Listing, Order, Review};
use keyschema::write;
use keyschema::Key;
use store::{Store, StoreError};

use crate::pace::Pacer;
use crate::report::{Kind, Tally};

/// What became of one review.
#[derive(Debug, PartialEq, Eq)]
pub enum Backfill {
    /// Given its category (or, in a dry run, found without one).
    Given,
    /// Deleted, or given one by someone else, since it was read.
    Moved,
    /// Its order or listing could not be read or decoded.
    Unreadable,
}

impl Backfill {
    /// The report's kind and tally.
    pub fn tally(&self, dry_run: bool) -> (Kind, Tally) {
        match self {
            Backfill::Given if dry_run => (Kind::ReviewCategories, Tally::found(1)),
            Backfill::Given => (Kind::ReviewCategories, Tally::repaired(1)),
            Backfill::Moved => (Kind::ReviewCategories, Tally::moved(1)),
            Backfill::Unreadable => (Kind::Unreadable, Tally::found(1)),
        }
    }
}

/// The reviews of `images` that should name a category and do not: each is
/// given it, and its image updated to match (so that its markers are
/// settled with it). Two `GetItem`s and an `UpdateItem` per review, once.
pub async fn backfill(
    store: &Store,
    pacer: &Pacer,
    images: &mut [(Key, Image)],
    dry_run: bool,
) -> Result<Vec<Backfill>, StoreError> {
    let mut out = Vec::new();
    for (_, image) in images.iter_mut() {
        let Body::Review(review) = &image.body else { continue };
        if review.category_id.is_some() {
            continue;
        }
        let review = review.clone();
        let category = {
            let _unit = pacer.admit().await;
            match category_of(store, &review).await {
                Ok(Some(category)) => category,
                Ok(None) => continue,
                Err(StoreError::Decode(_)) => {
                    out.push(Backfill::Unreadable);
                    continue;
                }
                Err(e) => return Err(e),
            }
        };
        if dry_run {
            out.push(Backfill::Given);
            continue;
        }
        let change = write::review::backfill_category(&review.reviewed_user_id, &review.review_id, &category)?;
        let _unit = pacer.admit().await;
        match store.update(&change).await {
            Ok(now) => {
                if let Some(now) = Image::of_item(&now) {
                    *image = now;
                }
                out.push(Backfill::Given);
            }
            Err(e) if e.is_conditional_check_failed() => out.push(Backfill::Moved),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The category a review counts in, if it is the buyer's review of a
/// listing order: the order's, else its listing's.
async fn category_of(store: &Store, review: &Review) -> Result<Option<CategoryId>, StoreError> {
    let Some(order) = store.get_consistent::<Order, _>(&keyschema::keys::order(&review.order_id)?).await? else {
        return Ok(None);
    };
    let Some(listing) = order.listing_id.filter(|_| order.buyer_id == review.author_id) else { return Ok(None) };
    if let Some(category) = order.category_id {
        return Ok(Some(category));
    }
    let listing = store.get_consistent::<Listing, _>(&keyschema::keys::listing(&listing)?).await?;
    Ok(listing.map(|l| l.category_id))
}
