//! Reconcile's side of search postings: what a scan page names
//! ([`Named`]) and settling one listing ([`settle`]): its postings read and
//! compared with what its current state asks, missing or stale ones put,
//! others deleted, again if the listing changed meanwhile.

use std::collections::{BTreeMap, BTreeSet};

use domain::ids::ListingId;
use domain::model::Listing;
use keyschema::records::Posting;
use keyschema::{keys, Key};
use store::{Store, StoreError};

use super::{moved, Sale, Touched, Want, ATTEMPTS};
use crate::image::{Body, Image};

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

/// What a scan page holds of search: its listings (by id) and the postings
/// it holds of other listings.
#[derive(Default)]
pub struct Named {
    /// Listings the page holds: their postings are settled.
    pub listings: BTreeSet<ListingId>,
    /// Postings the page holds, by listing: checked against the listing.
    pub postings: BTreeMap<ListingId, Vec<Posting>>,
}

impl Named {
    /// Notes what an image of a scan page names.
    pub fn add(&mut self, image: &Image) {
        match &image.body {
            Body::Posting(p) => self.postings.entry(p.listing_id).or_default().push(p.clone()),
            _ => {
                if let Some(listing) = image.listing_id() {
                    self.listings.insert(listing);
                }
            }
        }
    }

    /// The listings whose postings need settling, with the terms of their
    /// postings to check: the page's own, and those of its postings that
    /// their listing (read in one `BatchGetItem`) would not keep as they
    /// are; a sold listing's sale taken as accepted if it was sold before
    /// `sold_before` (RFC 3339).
    pub async fn to_settle(self, store: &Store, sold_before: &str) -> Result<BTreeMap<ListingId, Touched>, StoreError> {
        let sale = Sale::AcceptedIfSoldBefore(sold_before.to_owned());
        let blank = |l: ListingId| Touched { sale: sale.clone(), ..Touched::listing(l) };
        // A page's own listing is settled with the terms of its postings the
        // page holds too (a stray one among them is deleted).
        let touched = |l: &ListingId| Touched {
            terms: self.postings.get(l).into_iter().flatten().map(|p| p.term.clone()).collect(),
            ..blank(*l)
        };
        let mut out: BTreeMap<ListingId, Touched> = self.listings.iter().map(|l| (*l, touched(l))).collect();
        let others: Vec<ListingId> = self.postings.keys().filter(|l| !out.contains_key(*l)).copied().collect();
        let keys = others.iter().map(|l| keys::listing(l).map(Key::from)).collect::<Result<Vec<_>, _>>()?;
        // One by one: a listing that does not decode is left (reconcile's
        // other parts report it), not a failed page.
        let current: BTreeMap<ListingId, Listing> = store
            .batch_get_items(&keys, true)
            .await?
            .into_iter()
            .filter_map(|i| store::item::from_item::<Listing>(i).ok())
            .map(|l| (l.listing_id, l))
            .collect();
        for listing in others {
            let want = Want::of(current.get(&listing), &sale);
            for p in self.postings.get(&listing).into_iter().flatten() {
                if !want.keeps(p) {
                    out.entry(listing).or_insert_with(|| blank(listing)).terms.insert(p.term.clone());
                }
            }
        }
        Ok(out)
    }
}

/// Settles one listing's postings: those its current state asks for (and
/// what is known of its sale, `touched`), and the terms of `touched`
/// (postings seen of it) deleted unless the current state may keep them.
/// A listing or posting that does not decode is left (`Unreadable`).
pub async fn settle(store: &Store, touched: &Touched, dry_run: bool) -> Result<Settled, StoreError> {
    match settle_readable(store, touched, dry_run).await {
        Err(StoreError::Decode(_)) => Ok(Settled::Unreadable),
        other => other,
    }
}

async fn settle_readable(store: &Store, touched: &Touched, dry_run: bool) -> Result<Settled, StoreError> {
    let listing = &touched.listing;
    let key = keys::listing(listing)?;
    let mut current: Option<Listing> = store.get_consistent(&key).await?;
    // What this settle put: deleted in a later round unless that state puts it.
    let mut mine: BTreeSet<String> = BTreeSet::new();
    let mut repaired = false;
    for _ in 0..ATTEMPTS {
        let want = Want::of(current.as_ref(), &touched.sale);
        // The postings the state puts and those seen of it (the scan meets
        // every posting, so a listing's title terms need no read of their own).
        let mut asked: BTreeSet<&str> = want.put().iter().map(|p| p.term.as_str()).collect();
        asked.extend(touched.terms.iter().chain(&mine).map(String::as_str));
        let asked = asked.into_iter().map(|t| keys::posting(t, listing)).collect::<Result<Vec<_>, _>>()?;
        let held: Vec<Posting> = store.batch_get(&asked, true).await?;
        let puts = want.missing(&held);
        // A held posting the state puts is overwritten by its put.
        let deletes: Vec<Key> = held
            .iter()
            .filter(|h| !want.puts(&h.term) && (!want.keeps(h) || mine.contains(&h.term)))
            .map(|h| keys::posting(&h.term, listing).map(Key::from))
            .collect::<Result<_, _>>()?;
        if puts.is_empty() && deletes.is_empty() {
            return Ok(if repaired { Settled::Repaired } else { Settled::Exact });
        }
        if dry_run {
            return Ok(Settled::Differs);
        }
        store.write_batch(&puts, &deletes).await?;
        repaired = true;
        mine.extend(puts.into_iter().map(|p| p.term));
        // Changed: the next round deletes what this one put unless the
        // newer state puts it too (the stream may have processed the change
        // before this round's writes landed).
        match moved(store, &key, current.as_ref()).await? {
            Some(now) => current = now,
            None => return Ok(Settled::Repaired),
        }
    }
    Ok(Settled::Moved)
}
