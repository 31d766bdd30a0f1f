//! `./dev capacity --explain`: each request kind's actions, item by item,
//! for one cold draw of the skew (no hot entity), priced as [`crate::evaluate`]
//! prices them: what a read reads and what a write writes, with the index
//! copies it rewrites, so a saving can be looked for where the units are.

use crate::kinds::{self, Kind};
use crate::requests::Action;
use crate::{ids_of, index_name, units, Mix, DRAWS};

/// The draw shown: one that draws no hot entity in any dimension.
fn cold_draw(mix: &Mix) -> usize {
    (0..DRAWS)
        .find(|&j| {
            ids_of(j, mix).is_ok_and(|ids| {
                !ids.in_city
                    && ids.category.as_str() != "books"
                    && ids.seller.as_str() != "mega-seller"
                    && ids.term != "s*"
                    && ids.product_shards == 1
            })
        })
        .unwrap_or(0)
}

/// One line per action of each kind asked (every kind if none), then the
/// kind's units.
pub fn report(mix: &Mix, only: &[Kind]) -> Result<(), String> {
    let j = cold_draw(mix);
    let ids = ids_of(j, mix)?;
    for kind in mix.requests_per_second.keys().filter(|k| only.is_empty() || only.contains(k)) {
        let actions =
            kinds::actions(*kind, &ids, mix.item_kb, mix.page_items).map_err(|e| format!("{}: {e}", kind.name()))?;
        println!("{} (draw {j}):", kind.name());
        let (mut rru, mut wru) = (0.0, 0.0);
        for action in actions {
            match action {
                Action::Read { index, pk, items, kb, consistent, ttl, times } => {
                    let r = units(items * kb, 4.0) * if consistent { 1.0 } else { 0.5 } * times;
                    let cached = ttl.map_or(String::new(), |t| format!(", cached {t:.0} s"));
                    let how = if consistent { "consistent" } else { "eventual" };
                    println!(
                        "  read   {:<6} {pk:<48} {items:>5.1} x {kb:.2} KB {how}{cached}, x{times:.2}: {r:.2} RRU",
                        index_name(index)
                    );
                    if ttl.is_none() {
                        rru += r;
                    }
                }
                Action::Write { key, kb, tx, check, copies, coalesced, spread, .. } => {
                    let item = units(kb, 1.0) * if tx { 2.0 } else { 1.0 };
                    let copy_units: f64 = copies.iter().map(|_| units(kb, 1.0)).sum();
                    let mut tags = Vec::new();
                    tags.extend(tx.then_some("tx"));
                    tags.extend(check.then_some("check"));
                    tags.extend(coalesced.then_some("coalesced"));
                    let spread = if spread > 1 { format!(" (one of {spread})") } else { String::new() };
                    let copies: Vec<String> = copies.iter().map(|(i, pk)| format!("{} {pk}", index_name(*i))).collect();
                    println!(
                        "  write  {:<55} {kb:.2} KB [{}]{spread}: {item:.0} + copies {copy_units:.0} [{}]",
                        format!("{} / {}", key.pk, key.sk),
                        tags.join(", "),
                        copies.join("; ")
                    );
                    wru += item + copy_units;
                }
            }
        }
        println!("  = {rru:.2} RRU, {wru:.2} WRU (uncached, before coalescing)");
    }
    Ok(())
}
