//! Reconcile's part for the search postings: every listing a scan page
//! holds, or holds a posting of, gets exactly the postings of its current
//! state ([`domain::model::Posting::of_listing`]): missing or stale ones
//! put, ones of terms it no longer has deleted. The postings are written
//! without conditions (a `BatchWriteItem`), so the listing is read again
//! after the writes: if it changed in between (its `updatedAt`), the
//! postings are settled again from the newer state, the terms just written
//! among those it may delete (the stream processor may have handled the
//! change before they landed).

use std::collections::{BTreeMap, BTreeSet};

use domain::ids::ListingId;
use domain::model::{Listing, Posting};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use keyschema::table::EntityType;
use keyschema::{keys, Key};
use store::{Item, Store, StoreError};

use crate::pace::Pacer;

/// Reads and writes of one listing's postings that its writer moved in between.
const ATTEMPTS: u32 = 5;
/// Listings settled at once.
const AT_ONCE: usize = 8;

/// What settling one listing's postings did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    /// Exact.
    Exact,
    /// Differed (found in a dry run).
    Differs,
    /// Differed and written.
    Repaired,
    /// The listing kept changing: left to the stream processor.
    Moved,
    /// The listing or one of its postings does not decode: left.
    Unreadable,
}

impl Settled {
    /// As the report counts it: found, repaired, moved (`None`: exact).
    pub fn tally(self) -> Option<(u64, u64, u64)> {
        match self {
            Settled::Exact => None,
            Settled::Differs => Some((1, 0, 0)),
            Settled::Repaired => Some((1, 1, 0)),
            Settled::Moved => Some((1, 0, 1)),
            Settled::Unreadable => None,
        }
    }
}

/// What a page holds of search: its listings (by id) and the postings it
/// holds of other listings.
#[derive(Default)]
pub struct Named {
    /// Listings the page holds: their postings are settled.
    pub listings: BTreeSet<ListingId>,
    /// Postings the page holds, by listing: checked against the listing.
    pub postings: BTreeMap<ListingId, Vec<Posting>>,
}

/// The listings and postings a page holds.
pub fn named(items: &[Item]) -> Named {
    let mut out = Named::default();
    for item in items {
        let of = |t: EntityType| store::item::entity_type(item) == Some(t.as_str());
        if of(EntityType::Listing) {
            if let Ok(l) = store::item::from_item::<ListingRef>(item.clone()) {
                out.listings.insert(l.listing_id);
            }
        } else if of(EntityType::Posting) {
            if let Ok(p) = store::item::from_item::<Posting>(item.clone()) {
                out.postings.entry(p.listing_id).or_default().push(p);
            }
        }
    }
    out
}

/// The listings whose postings need settling: the page's own, and those of
/// its postings that their listing (read in one `BatchGetItem`) would not
/// have as they are, with the terms of those postings.
async fn to_settle(store: &Store, named: Named) -> Result<BTreeMap<ListingId, BTreeSet<String>>, StoreError> {
    // A page's own listing is settled with the terms of its postings the
    // page holds too (a stray one among them is deleted).
    let terms_of = |l: &ListingId| named.postings.get(l).into_iter().flatten().map(|p| p.term.clone()).collect();
    let mut out: BTreeMap<ListingId, BTreeSet<String>> = named.listings.iter().map(|l| (*l, terms_of(l))).collect();
    let others: Vec<ListingId> = named.postings.keys().filter(|l| !named.listings.contains(*l)).copied().collect();
    let keys = others.iter().map(keys::listing).collect::<Result<Vec<_>, _>>()?;
    // One by one: a listing that does not decode is left (reconcile's other
    // parts report it), not a failed page.
    let current: BTreeMap<ListingId, Listing> = store
        .batch_get_items(&keys, true)
        .await?
        .into_iter()
        .filter_map(|i| store::item::from_item::<Listing>(i).ok())
        .map(|l| (l.listing_id, l))
        .collect();
    for listing in others {
        let want = current.get(&listing).map(Posting::of_listing).unwrap_or_default();
        for p in named.postings.get(&listing).into_iter().flatten() {
            if !want.contains(p) {
                out.entry(listing).or_default().insert(p.term.clone());
            }
        }
    }
    Ok(out)
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListingRef {
    listing_id: ListingId,
}

/// Settles the postings of the page's listings, and of the listings of
/// its postings that are not as their listing would have them, [`AT_ONCE`]
/// at a time.
pub async fn settle_all(store: &Store, pacer: &Pacer, named: Named, dry_run: bool) -> Result<Vec<Settled>, StoreError> {
    let named = {
        let _unit = pacer.admit().await;
        to_settle(store, named).await?
    };
    stream::iter(named)
        .map(|(listing, terms)| async move {
            let _unit = pacer.admit().await;
            settle(store, &listing, &terms, dry_run).await
        })
        .buffer_unordered(AT_ONCE)
        .try_collect()
        .await
}

/// Settles one listing's postings: those of its current state, and `terms`
/// (postings seen of it) deleted unless the current state has them. A
/// listing or posting that does not decode is left (`Unreadable`).
pub async fn settle(
    store: &Store,
    listing: &ListingId,
    terms: &BTreeSet<String>,
    dry_run: bool,
) -> Result<Settled, StoreError> {
    match settle_readable(store, listing, terms, dry_run).await {
        Err(StoreError::Decode(_)) => Ok(Settled::Unreadable),
        other => other,
    }
}

async fn settle_readable(
    store: &Store,
    listing: &ListingId,
    terms: &BTreeSet<String>,
    dry_run: bool,
) -> Result<Settled, StoreError> {
    let key = keys::listing(listing)?;
    let mut current: Option<Listing> = store.get_consistent(&key).await?;
    let mut terms = terms.clone();
    let mut repaired = false;
    for _ in 0..ATTEMPTS {
        let want = current.as_ref().map(Posting::of_listing).unwrap_or_default();
        let keep: BTreeSet<&str> = want.iter().map(|p| p.term.as_str()).collect();
        let mut asked: Vec<Key> = want.iter().map(|p| keys::posting(&p.term, listing)).collect::<Result<_, _>>()?;
        for t in terms.iter().filter(|t| !keep.contains(t.as_str())) {
            asked.push(keys::posting(t, listing)?);
        }
        let held: Vec<Posting> = store.batch_get(&asked, true).await?;
        let puts: Vec<Posting> = want.iter().filter(|p| !held.contains(p)).cloned().collect();
        let deletes: Vec<Key> = held
            .iter()
            .filter(|h| !keep.contains(h.term.as_str()))
            .map(|h| keys::posting(&h.term, listing))
            .collect::<Result<_, _>>()?;
        if puts.is_empty() && deletes.is_empty() {
            return Ok(if repaired { Settled::Repaired } else { Settled::Exact });
        }
        if dry_run {
            return Ok(Settled::Differs);
        }
        store.write_batch(&puts, &deletes).await?;
        repaired = true;
        let now: Option<Listing> = store.get_consistent(&key).await?;
        if now.as_ref().map(|l| &l.updated_at) == current.as_ref().map(|l| &l.updated_at) {
            return Ok(Settled::Repaired);
        }
        // It changed: the next round deletes what this one wrote unless the
        // newer state has it too (the stream may have processed the change
        // before this round's writes landed).
        terms.extend(puts.into_iter().map(|p| p.term));
        current = now;
    }
    Ok(Settled::Moved)
}
