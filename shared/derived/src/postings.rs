//! Search postings (`SEARCH#<term>` / `LISTING#<listingId>`): kept from the
//! listing's *current* state, read strongly consistent, never from a
//! record's image. An active listing has its title's postings; a sold one
//! keeps them while the order that bought it is pending (a cancel, the
//! buyer's or the expiry sweeper's after `PendingOrderTimeoutSeconds`,
//! relists it with its postings still there), until the seller accepts it
//! (confirmed); any other has none. What the current state asks for is put
//! and every other term named is deleted, so a replayed, duplicated or
//! reordered record changes nothing (it rewrites the current state; a
//! replayed confirmation of an earlier order deletes the postings of a
//! listing sold again and pending, which is safe), and a posting a record
//! left behind is deleted by the next record of the listing, whose old
//! image names it. Every write is followed by a read of the listing, and a
//! change meanwhile settles it again (see [`sync`]).
//!
//! - The stream processor: [`Touched::of_record`] (a record that changes
//!   what a listing is found by: an insert, a removal, a new title, status
//!   or category; or an order's record that accepts a listing's sale),
//!   then [`sync`].
//! - Reconcile: every listing a scan page holds, and every listing of a
//!   posting it holds that its listing would not have ([`Named`]), is
//!   [`settle`]d: the postings read and compared, missing or stale ones
//!   put, others deleted. It reads no orders: a sold listing sold longer
//!   ago than an order may stay pending ([`Sale::AcceptedIfSoldBefore`])
//!   loses its postings (its sale was accepted, or the sweeper is about to
//!   cancel it; deleting is always safe, a relisting puts back what is
//!   missing), a younger one keeps them. The writes
//!   are unconditioned (a `BatchWriteItem`), so the listing is read again
//!   after them: if it changed in between (its `updatedAt`), the postings
//!   are settled again from the newer state.
//!
//! A listing leaves the results when it leaves `active`, whatever its
//! postings: the search answer reads the listings it returns, so it never
//! shows one no longer active or no longer matching.

use std::collections::BTreeSet;

use domain::ids::ListingId;
use domain::model::{Listing, ListingStatus};
use keyschema::key::EntityKey;
use keyschema::records::Posting;
use keyschema::{keys, Key};
use store::{Store, StoreError};

use crate::image::{Body, Event, Image, ListingImage, OrderImage, Record};
use crate::DerivedError;

mod settle;

pub use settle::{settle, Named, Settled};

/// What is known of a sold listing's sale, which decides its postings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sale {
    /// Nothing: it keeps them (its order may be pending).
    Unknown,
    /// An order's record accepted it: they go.
    Accepted,
    /// Reconcile's rule (it reads no orders): they go if it was sold
    /// before this time (RFC 3339, its `updatedAt`), when its order can no
    /// longer be pending.
    AcceptedIfSoldBefore(String),
}

/// A listing whose postings a record may change, every term its images
/// were posted under, and what the records said of its sale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Touched {
    /// The listing.
    pub listing: ListingId,
    /// The terms of the images (the current state's are computed on write).
    pub terms: BTreeSet<String>,
    /// What is known of its sale, if it is sold.
    pub sale: Sale,
    /// A record took it from sold back to active (a cancel): its postings
    /// were kept through the sale, so they are read before any is put.
    pub relisted: bool,
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
        if let Some(sale) = Touched::of_accepted_sale(record) {
            return Ok(Some(sale));
        }
        let listing = |image: &Option<Image>| match image {
            Some(i) if i.entity == keyschema::table::EntityType::Listing => match &i.body {
                Body::Listing(l) => Ok(Some(l.clone())),
                _ => Err(i.unreadable().unwrap_or_else(|| DerivedError::malformed("listing image"))),
            },
            _ => Ok(None),
        };
        let mut relisted = false;
        let images: Vec<ListingImage> = match record.event {
            Event::Insert => listing(&record.new)?.into_iter().collect(),
            Event::Remove => listing(&record.old)?.into_iter().collect(),
            Event::Modify => match (listing(&record.old), listing(&record.new)) {
                (Err(e), Err(_)) => return Err(e),
                // Not a change of what it is found by.
                (Ok(Some(o)), Ok(Some(n))) if o == n => Vec::new(),
                (o, n) => {
                    let (o, n) = (o.ok().flatten(), n.ok().flatten());
                    relisted = o.as_ref().is_some_and(|o| o.status == ListingStatus::Sold)
                        && n.as_ref().is_some_and(|n| n.status == ListingStatus::Active);
                    o.into_iter().chain(n).collect()
                }
            },
        };
        let Some(first) = images.first() else { return Ok(None) };
        Ok(Some(Touched {
            listing: first.listing_id,
            terms: images.iter().flat_map(terms).collect(),
            sale: Sale::Unknown,
            relisted,
        }))
    }

    /// A listing order's record that accepted its sale: its status moved
    /// out of pending into an accepted one (confirmed), or it was inserted
    /// already accepted (a restore); a later move of an accepted order
    /// (shipped, delivered) accepts nothing new.
    fn of_accepted_sale(record: &Record) -> Option<Touched> {
        let order = |image: &Option<Image>| match image {
            Some(Image { body: Body::Order(o), .. }) => Some(o.clone()),
            _ => None,
        };
        let OrderImage { listing_id: Some(listing), status } = order(&record.new)? else { return None };
        let was_accepted = order(&record.old).is_some_and(|o| o.status.is_accepted());
        (status.is_accepted() && !was_accepted).then(|| Touched { sale: Sale::Accepted, ..Touched::listing(listing) })
    }

    /// A listing to bring to its current state alone (no terms named,
    /// nothing known of its sale).
    pub fn listing(listing: ListingId) -> Touched {
        Touched { listing, terms: BTreeSet::new(), sale: Sale::Unknown, relisted: false }
    }

    /// Adds another record's terms and findings of the same listing (an
    /// accepted sale wins: deleting a sold listing's postings is always
    /// safe; only the stream merges, and it knows a sale as accepted or not
    /// at all).
    pub fn merge(&mut self, other: Touched) {
        self.terms.extend(other.terms);
        if other.sale == Sale::Accepted {
            self.sale = Sale::Accepted;
        }
        self.relisted |= other.relisted;
    }
}

/// What a listing's current state asks of its postings.
#[derive(Default)]
struct Want {
    /// Whether it is active: then it must have its title's postings.
    active: bool,
    /// Its title's postings, whatever its status.
    title: Vec<Posting>,
    /// The terms it may keep (any other is deleted): its title's while
    /// active, or sold and the sale not accepted.
    allowed: BTreeSet<String>,
}

impl Want {
    fn of(current: Option<&Listing>, sale: &Sale) -> Want {
        let Some(listing) = current else { return Want::default() };
        let title = Posting::of_title(listing);
        let keeps = match (listing.status, sale) {
            (ListingStatus::Active, _) => true,
            (ListingStatus::Sold, Sale::Unknown) => true,
            (ListingStatus::Sold, Sale::Accepted) => false,
            (ListingStatus::Sold, Sale::AcceptedIfSoldBefore(cutoff)) => listing.updated_at >= *cutoff,
            (ListingStatus::Removed, _) => false,
        };
        let allowed = if keeps { title.iter().map(|p| p.term.clone()).collect() } else { BTreeSet::new() };
        Want { active: listing.status == ListingStatus::Active, title, allowed }
    }

    /// The postings it must have.
    fn put(&self) -> &[Posting] {
        if self.active {
            &self.title
        } else {
            &[]
        }
    }

    /// The postings it must have that `held` lacks.
    fn missing(&self, held: &[Posting]) -> Vec<Posting> {
        self.put().iter().filter(|p| !held.contains(p)).cloned().collect()
    }

    /// Whether the state puts a posting under `term`.
    fn puts(&self, term: &str) -> bool {
        self.put().iter().any(|p| p.term == term)
    }

    /// Whether a held posting is as the listing may keep it.
    fn keeps(&self, held: &Posting) -> bool {
        self.allowed.contains(&held.term) && self.title.contains(held)
    }

    /// The terms to delete of those named (`terms`) and of its title.
    fn stale<'a>(&'a self, terms: &'a BTreeSet<String>) -> BTreeSet<&'a str> {
        let title = self.title.iter().map(|p| &p.term);
        terms.iter().chain(title).filter(|t| !self.allowed.contains(*t)).map(String::as_str).collect()
    }
}

/// Brings the listing's postings to what its current state asks: puts the
/// postings it must have (after reading them if it was relisted: kept
/// through the sale, they are usually all there) and deletes every term
/// named or of its title it may not keep. Then it reads the listing
/// again: if another writer changed it meanwhile (a relisting on the
/// listing's shard relying on postings an order's record on another shard
/// is deleting, or a sale of a listing whose postings it is putting), it
/// settles again from the newer state, deleting what it put unless that
/// state puts it too (a sold listing's postings are optional: a relisting
/// puts back what is missing). Returns the writes sent (`BatchWriteItem`
/// requests).
pub async fn sync(store: &Store, touched: &Touched) -> Result<usize, StoreError> {
    let listing = &touched.listing;
    let key = keys::listing(listing)?;
    let mut current: Option<Listing> = store.get_consistent(&key).await?;
    let (mut writes, mut mine) = (0, BTreeSet::new());
    for round in 0..ATTEMPTS {
        let want = Want::of(current.as_ref(), &touched.sale);
        let mut stale: BTreeSet<&str> = want.stale(&touched.terms);
        stale.extend(mine.iter().map(String::as_str).filter(|t| !want.puts(t)));
        let deletes = stale.into_iter().map(|t| keys::posting(t, listing).map(Key::from));
        let deletes = deletes.collect::<Result<Vec<Key>, _>>()?;
        let puts = if (touched.relisted || round > 0) && !want.put().is_empty() {
            let asked = want.put().iter().map(|p| keys::posting(&p.term, listing)).collect::<Result<Vec<_>, _>>()?;
            want.missing(&store.batch_get(&asked, true).await?)
        } else {
            want.put().to_vec()
        };
        if puts.is_empty() && deletes.is_empty() {
            break;
        }
        writes += store.write_batch(&puts, &deletes).await?;
        mine.extend(puts.into_iter().map(|p| p.term));
        match moved(store, &key, current.as_ref()).await? {
            Some(now) => current = now,
            None => break,
        }
    }
    Ok(writes)
}

/// The listing read again (strongly consistent) after writing its
/// postings: its newer state if another writer changed it since `read`
/// (its `updatedAt`), `None` if not.
async fn moved(
    store: &Store,
    key: &EntityKey<Listing>,
    read: Option<&Listing>,
) -> Result<Option<Option<Listing>>, StoreError> {
    let now: Option<Listing> = store.get_consistent(key).await?;
    let changed = now.as_ref().map(|l| &l.updated_at) != read.map(|l| &l.updated_at);
    Ok(changed.then_some(now))
}

/// Reads and writes of one listing's postings that its writer moved in between.
const ATTEMPTS: u32 = 5;
#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "01KBZ0000000000000000000AB";

    fn order(status: &str, listing: bool) -> Option<Image> {
        let mut order =
            serde_json::json!({ "entityType": "Order", "orderId": "01KBZ0000000000000000000CD", "status": status });
        if listing {
            order["listingId"] = LISTING.into();
        }
        Image::parse(&serde_dynamo::to_item(order).ok()?)
    }

    fn sale(old: Option<&str>, new: &str, listing: bool) -> Option<(ListingId, bool, usize)> {
        let event = if old.is_some() { Event::Modify } else { Event::Insert };
        let record = Record {
            event,
            sequence_number: "1".into(),
            old: old.and_then(|o| order(o, listing)),
            new: order(new, listing),
        };
        let touched = Touched::of_record(&record).ok()??;
        Some((touched.listing, touched.sale == Sale::Accepted, touched.terms.len()))
    }

    /// Only a listing order's record that moves it out of pending into an
    /// accepted status accepts its sale (not a later write of an accepted
    /// order: a shipment, a review's id): seen failing with the previous
    /// status not checked.
    #[test]
    fn an_order_leaving_pending_for_confirmed_accepts_its_listing_s_sale() {
        let listing: ListingId = LISTING.parse().unwrap();
        assert_eq!(sale(Some("pending"), "confirmed", true), Some((listing, true, 0)));
        assert_eq!(sale(None, "delivered", true), Some((listing, true, 0)), "restored as delivered");
        let later = [("confirmed", "shipped"), ("shipped", "delivered"), ("delivered", "delivered")];
        for (old, new) in later.into_iter().chain([("pending", "cancelled"), ("confirmed", "cancelled")]) {
            assert_eq!(sale(Some(old), new, true), None, "{old} -> {new}");
        }
        assert_eq!(sale(Some("pending"), "confirmed", false), None, "a catalog order sold no listing");
    }
}
