//! The move of GSI1-3 (every attribute) to GSI6-8 (on the same keys,
//! holding what lists answer): DynamoDB cannot change a projection in
//! place, and takes one index creation or deletion per table update, so the
//! move is seven steps, each a deploy with the template's `CardIndexMove`
//! parameter (docs/operations.md, "Moving an index"): a new index each of
//! the first three, the reads next, then an old index each.

use super::Index;

/// The last step (the default: a new stack starts there).
pub const LAST: u8 = 7;

/// The table's GSIs at `step` (0: as before the move).
pub fn indexes_at(step: u8) -> Vec<Index> {
    let mut out = Vec::new();
    for (old, new, made, dropped) in
        [(Index::Gsi1, Index::Gsi6, 1, 5), (Index::Gsi2, Index::Gsi7, 2, 6), (Index::Gsi3, Index::Gsi8, 3, 7)]
    {
        if step < dropped {
            out.push(old);
        }
        if step >= made {
            out.push(new);
        }
    }
    out.push(Index::Gsi5);
    out.sort();
    out
}

/// Whether reads go to GSI6-8 at `step` (from step 4), not GSI1-3.
pub fn reads_cards(step: u8) -> bool {
    step >= 4
}
