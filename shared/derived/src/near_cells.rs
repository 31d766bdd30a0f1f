//! The partitions of the near index's dense cells that hold listings
//! ([`keyschema::records::NearCell`]): before a listing's near key goes
//! into a partition of a dense cell (`domain::geo::partition`), that
//! partition is recorded as holding one, so a search of the cell queries
//! only the partitions recorded. Put once per partition, region and
//! process (the same item whoever puts it: a repeat, a replay or another
//! region's put changes nothing), never removed: a partition emptied since
//! costs a search one query, never a listing.

use std::collections::BTreeSet;
use std::sync::Mutex;

use keyschema::records::NearCell;
use keyschema::{entities, Attrs, Change, Value};
use store::Store;

use crate::DerivedError;

/// The partitions this process has recorded, per region and table.
static RECORDED: Mutex<BTreeSet<(String, String, String)>> = Mutex::new(BTreeSet::new());

/// The partition of a dense cell a change puts a listing's near key in
/// (the item's `attrs` as the change is conditioned on), if it does.
pub fn entered(attrs: &Attrs, change: &Change) -> Option<NearCell> {
    let near = entities::listing::NEAR.key.index.pk();
    change.set.iter().any(|(name, _)| *name == near).then(|| of_geohash(attrs)).flatten()
}

/// The partition of a dense cell an item's near key is in now (its
/// attributes as read), if it is in one.
pub fn held(attrs: &Attrs) -> Option<NearCell> {
    attrs.contains_key(entities::listing::NEAR.key.index.pk()).then(|| of_geohash(attrs)).flatten()
}

/// The partition of a dense cell the item's `geohash` is keyed in, if any.
fn of_geohash(attrs: &Attrs) -> Option<NearCell> {
    match attrs.get("geohash") {
        Some(Value::S(hash)) => NearCell::of(hash),
        _ => None,
    }
}

/// The process's memory of `cell` put in `store`'s table.
fn known(store: &Store, cell: &NearCell) -> (String, String, String) {
    (store.region().to_owned(), store.table().to_owned(), cell.cell.clone())
}

/// Whether `cell`'s record was missing (read consistently): reconcile's
/// check, once a run per partition, which puts it back if `write` (the
/// listings keyed there are hidden from every search otherwise).
pub async fn ensure(store: &Store, cell: &NearCell, write: bool) -> Result<bool, DerivedError> {
    let key = keyschema::keys::near_cell(&cell.dense, &cell.cell)?;
    let missing = store.get_consistent::<NearCell, _>(&key).await?.is_none();
    if missing && write {
        store.put(cell).await?;
        if let Ok(mut r) = RECORDED.lock() {
            r.insert(known(store, cell));
        }
    }
    Ok(missing)
}

/// Records `cell` as holding a listing, unless this process already has.
pub async fn record(store: &Store, cell: &NearCell) -> Result<(), DerivedError> {
    let known = known(store, cell);
    if RECORDED.lock().is_ok_and(|r| r.contains(&known)) {
        return Ok(());
    }
    store.put(cell).await?;
    if let Ok(mut r) = RECORDED.lock() {
        r.insert(known);
    }
    Ok(())
}
