//! Search postings (`SEARCH#<term>` / `LISTING#<listingId>`): kept from the
//! listing's *current* state, read strongly consistent, never from a
//! record's image. The postings of the current state are put (whatever
//! they held) and every other term named is deleted, so a replayed,
//! duplicated or reordered record changes nothing (it rewrites the current
//! state), and a posting a record left behind is deleted by the next record
//! of the listing, whose old image names it.
//!
//! - The stream processor: [`Touched::of_record`] (a record that changes
//!   what a listing is found by: an insert, a removal, a new title, status
//!   or category), then [`sync`].
//! - Reconcile: every listing a scan page holds, and every listing of a
//!   posting it holds that its listing would not have ([`Named`]), is
//!   [`settle`]d: the postings read and compared, missing or stale ones
//!   put, others deleted. The writes are unconditioned (a
//!   `BatchWriteItem`), so the listing is read again after them: if it
//!   changed in between (its `updatedAt`), the postings are settled again
//!   from the newer state.
//!
//! A listing leaves the results when its record is processed (the
//! stream's lag); the search answer reads the listings it returns, so it
//! never shows one no longer active or no longer matching.

use std::collections::{BTreeMap, BTreeSet};

use domain::ids::ListingId;
use domain::model::Listing;
use keyschema::records::Posting;
use keyschema::{keys, Key};
use store::{Store, StoreError};

use crate::image::{Body, Event, Image, ListingImage, Record};
use crate::DerivedError;

/// A listing whose postings a record may change, and every term its
/// images were posted under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Touched {
    /// The listing.
    pub listing: ListingId,
    /// The terms of the images (the current state's are computed on write).
    pub terms: BTreeSet<String>,
}

fn terms(l: &ListingImage) -> BTreeSet<String> {
    let id = l.listing_id.ulid();
    domain::words::terms(&domain::words::indexed(&l.title)).iter().map(|t| t.key_for(id)).collect()
}

impl Touched {
    /// The listing a record may change the postings of, if any. Of a
    /// modification, a side that does not decode names no terms (the other
    /// still has the listing synced from its current state); both: malformed.
    pub fn of_record(record: &Record) -> Result<Option<Touched>, DerivedError> {
        let listing = |image: &Option<Image>| match image {
            Some(i) if i.entity == keyschema::table::EntityType::Listing => match &i.body {
                Body::Listing(l) => Ok(Some(l.clone())),
                _ => Err(i.unreadable().unwrap_or_else(|| DerivedError::malformed("listing image"))),
            },
            _ => Ok(None),
        };
        let images: Vec<ListingImage> = match record.event {
            Event::Insert => listing(&record.new)?.into_iter().collect(),
            Event::Remove => listing(&record.old)?.into_iter().collect(),
            Event::Modify => match (listing(&record.old), listing(&record.new)) {
                (Err(e), Err(_)) => return Err(e),
                // Not a change of what it is found by.
                (Ok(Some(o)), Ok(Some(n))) if o == n => Vec::new(),
                (o, n) => o.ok().flatten().into_iter().chain(n.ok().flatten()).collect(),
            },
        };
        let Some(first) = images.first() else { return Ok(None) };
        Ok(Some(Touched { listing: first.listing_id, terms: images.iter().flat_map(terms).collect() }))
    }

    /// Adds another record's terms of the same listing.
    pub fn merge(&mut self, other: Touched) {
        self.terms.extend(other.terms);
    }
}

/// Puts the postings of the listing's current state and deletes the terms
/// of `touched` it does not have. Returns the writes sent (`BatchWriteItem` requests).
pub async fn sync(store: &Store, listing: &ListingId, touched: &BTreeSet<String>) -> Result<usize, StoreError> {
    let current: Option<Listing> = store.get_consistent(&keys::listing(listing)?).await?;
    let postings = current.as_ref().map(Posting::of_listing).unwrap_or_default();
    let keep: BTreeSet<&str> = postings.iter().map(|p| p.term.as_str()).collect();
    let stale = touched.iter().filter(|t| !keep.contains(t.as_str()));
    let deletes = stale.map(|t| keys::posting(t, listing).map(Key::from)).collect::<Result<Vec<Key>, _>>()?;
    store.write_batch(&postings, &deletes).await
}

/// Reads and writes of one listing's postings that its writer moved in between.
const ATTEMPTS: u32 = 5;

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
    /// their listing (read in one `BatchGetItem`) would not have as they are.
    pub async fn to_settle(self, store: &Store) -> Result<BTreeMap<ListingId, BTreeSet<String>>, StoreError> {
        // A page's own listing is settled with the terms of its postings the
        // page holds too (a stray one among them is deleted).
        let terms_of = |l: &ListingId| self.postings.get(l).into_iter().flatten().map(|p| p.term.clone()).collect();
        let mut out: BTreeMap<ListingId, BTreeSet<String>> = self.listings.iter().map(|l| (*l, terms_of(l))).collect();
        let others: Vec<ListingId> = self.postings.keys().filter(|l| !self.listings.contains(*l)).copied().collect();
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
            let want = current.get(&listing).map(Posting::of_listing).unwrap_or_default();
            for p in self.postings.get(&listing).into_iter().flatten() {
                if !want.contains(p) {
                    out.entry(listing).or_default().insert(p.term.clone());
                }
            }
        }
        Ok(out)
    }
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
        let mut asked = want.iter().map(|p| keys::posting(&p.term, listing)).collect::<Result<Vec<_>, _>>()?;
        for t in terms.iter().filter(|t| !keep.contains(t.as_str())) {
            asked.push(keys::posting(t, listing)?);
        }
        let held: Vec<Posting> = store.batch_get(&asked, true).await?;
        let puts: Vec<Posting> = want.iter().filter(|p| !held.contains(p)).cloned().collect();
        let deletes: Vec<Key> = held
            .iter()
            .filter(|h| !keep.contains(h.term.as_str()))
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
