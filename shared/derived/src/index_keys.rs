//! Index keys: the write that brings an item's index keys in line with its
//! fields, as its declaration derives them
//! ([`keyschema::decl::EntityDecl::repair`]). The stream processor keeps
//! the indexes whose declaration names it (a listing's `browse`, `by_price`
//! and `near` keys, present only while it is active: added by it at a
//! relisting, put by the write that creates the listing, the price's sort
//! key moved by the write that changes it, removed by the write that takes
//! the listing out of active; it repairs any of them that drift);
//! reconcile keeps every index (`Keeper::Both`). The write is
//! conditioned on the fields as the image has them, so a replayed,
//! duplicated or reordered record (a stale "active" after "removed") fails
//! its condition and changes nothing.

use keyschema::decl::{EntityDecl, Keeper};
use keyschema::{entities, Attrs, Change, Key};
use store::Store;

use crate::image::{Image, Record};
use crate::DerivedError;

/// What bringing an item's keys in line did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// They were right: nothing sent.
    Exact,
    /// Keys set (the item entered an index or moved in one).
    Indexed,
    /// Keys removed only (the item left its indexes).
    Unindexed,
    /// The item was no longer as the image had it (a stale or repeated
    /// record, or another write in between): nothing changed.
    Stale,
}

/// The keys of one item to bring in line: its declaration and its image.
#[derive(Clone, Debug, PartialEq)]
pub struct KeysOf {
    /// The item's declaration.
    pub decl: &'static EntityDecl,
    /// Its primary key.
    pub key: Key,
    /// The attributes of the image that decides (the item's latest).
    pub attrs: Attrs,
}

impl KeysOf {
    /// The keys `keeper` keeps of the item `image` shows; `None` for an
    /// entity without such indexes.
    pub fn of(image: &Image, keeper: Keeper) -> Result<Option<KeysOf>, DerivedError> {
        let Some(decl) = entities::of(image.entity) else { return Ok(None) };
        let kept = match keeper {
            Keeper::Stream => decl.stream_kept().next().is_some(),
            Keeper::Write | Keeper::Both => !decl.indexes.is_empty(),
        };
        if !kept {
            return Ok(None);
        }
        let attrs = image.attrs();
        let key = decl
            .item_keys(&attrs)
            .map_err(|_| DerivedError::malformed("an image without its primary key"))?
            .table()
            .clone();
        Ok(Some(KeysOf { decl, key, attrs }))
    }

    /// The keys a stream record asks the stream processor to keep: those of
    /// its item's new image (a removal leaves none to keep).
    pub fn of_record(record: &Record) -> Result<Option<KeysOf>, DerivedError> {
        match &record.new {
            Some(image) => KeysOf::of(image, Keeper::Stream),
            None => Ok(None),
        }
    }

    /// The conditional write `keeper`'s part needs; `None` if the keys are right.
    pub fn repair(&self, keeper: Keeper) -> Result<Option<Change>, DerivedError> {
        Ok(self.decl.repair(&self.attrs, keeper)?)
    }

    /// What must be written before `change`: the partition of a dense cell
    /// its near key enters, recorded ([`crate::near_cells`]).
    pub async fn before(&self, store: &Store, change: &Change) -> Result<(), DerivedError> {
        match crate::near_cells::entered(&self.attrs, change) {
            Some(cell) => crate::near_cells::record(store, &cell).await,
            None => Ok(()),
        }
    }

    /// Sends the repair `keeper`'s part needs (after [`KeysOf::before`]).
    pub async fn apply(&self, store: &Store, keeper: Keeper) -> Result<Outcome, DerivedError> {
        let Some(change) = self.repair(keeper)? else { return Ok(Outcome::Exact) };
        self.before(store, &change).await?;
        let outcome = if change.set.is_empty() { Outcome::Unindexed } else { Outcome::Indexed };
        match store.update(&change).await {
            Ok(_) => Ok(outcome),
            Err(e) if e.is_conditional_check_failed() => Ok(Outcome::Stale),
            Err(e) => Err(e.into()),
        }
    }
}
