//! Reconcile's repair of one item's index keys: made what its declaration
//! derives from its fields, conditioned on the fields as read; an item that
//! changed in between is read again and tried again.

use derived::index_keys::KeysOf;
use keyschema::decl::Keeper;
use store::StoreError;

use super::{Kind, Run, Tally, ATTEMPTS};

/// Brings an item's index keys in line with its fields; if it changed
/// since it was read, reads it again (consistently) and tries again. Keys
/// already right in a partition of a dense cell: that partition's record
/// is checked (and put back if gone: `derived::near_cells::ensure`).
pub(super) async fn repair_keys(run: &Run<'_>, keys: KeysOf) -> Result<(), StoreError> {
    let kind = Kind::IndexKeys(keys.decl.entity);
    let held = derived::near_cells::held(&keys.attrs);
    match repair_keys_of(run, keys).await? {
        KeyRepair::Exact => {
            if let Some(cell) = held.filter(|c| run.first_check(&c.cell)) {
                let write = !run.options.dry_run;
                match derived::near_cells::ensure(run.store, &cell, write).await {
                    Ok(false) => {}
                    Ok(true) if write => run.tally(Kind::NearCells, Tally::repaired(1)),
                    Ok(true) => run.tally(Kind::NearCells, Tally::found(1)),
                    Err(derived::DerivedError::Store(e)) => return Err(e),
                    Err(_) => run.tally(Kind::Unreadable, Tally::found(1)),
                }
            }
        }
        KeyRepair::Unreadable => run.tally(Kind::Unreadable, Tally::found(1)),
        KeyRepair::Differs => run.tally(kind, Tally::found(1)),
        KeyRepair::Repaired => run.tally(kind, Tally::repaired(1)),
        KeyRepair::Moved => run.tally(kind, Tally::moved(1)),
    }
    Ok(())
}

enum KeyRepair {
    Exact,
    Unreadable,
    /// Found in a dry run.
    Differs,
    Repaired,
    /// Someone else's write made them right, or deleted the item.
    Moved,
}

async fn repair_keys_of(run: &Run<'_>, mut keys: KeysOf) -> Result<KeyRepair, StoreError> {
    for attempt in 0..ATTEMPTS {
        let change = match keys.repair(Keeper::Both) {
            Ok(None) if attempt == 0 => return Ok(KeyRepair::Exact),
            Ok(None) => return Ok(KeyRepair::Moved),
            Ok(Some(change)) => change,
            Err(_) => return Ok(KeyRepair::Unreadable),
        };
        if run.options.dry_run {
            return Ok(KeyRepair::Differs);
        }
        let _unit = run.pacer.admit().await;
        match keys.before(run.store, &change).await {
            Ok(()) => {}
            Err(derived::DerivedError::Store(e)) => return Err(e),
            Err(_) => return Ok(KeyRepair::Unreadable),
        }
        match run.store.update(&change).await {
            Ok(_) => return Ok(KeyRepair::Repaired),
            Err(e) if e.is_conditional_check_failed() => {}
            Err(e) => return Err(e),
        }
        match run.store.batch_get_items(std::slice::from_ref(&keys.key), true).await?.pop() {
            Some(now) => keys.attrs = store::item::attrs(&now),
            None => return Ok(KeyRepair::Moved),
        }
    }
    Ok(KeyRepair::Moved)
}
