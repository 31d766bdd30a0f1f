//! Which near-index partition holds a geohash: its [`CELL_LEN`]-character
//! cell (about 156 km), except in the [`DENSE`] cells, the busiest places,
//! whose listings are held in [`FINE_LEN`]-character cells (about 5 km) so
//! that no one partition takes a whole city's reads and writes.
//!
//! The [`CELL_LEN`]-character partition of a cell holding dense cells
//! holds none of their listings, but those keyed before a cell was declared
//! dense and not moved yet (docs/operations.md, "A dense cell").

use super::CELL_LEN;

/// Characters of a dense cell (about 39 km by 20 km).
pub const DENSE_LEN: usize = 4;
/// Characters of a dense cell's partitions (about 5 km by 5 km).
pub const FINE_LEN: usize = 5;

/// The dense cells: Paris (`u09t`, `u09w`), the capacity model's hot city
/// (tools/capacity: 20% of the listings made and looked for near). A
/// listing's partition follows from its geohash and this list alone, so
/// adding a cell moves the keys of the listings already there (a key
/// repair: docs/operations.md, "A dense cell").
pub const DENSE: &[&str] = &["u09t", "u09w"];

/// Whether `prefix` lies in a dense cell (its first [`DENSE_LEN`]
/// characters are one).
pub fn is_dense(prefix: &str) -> bool {
    prefix.get(..DENSE_LEN).is_some_and(|cell| DENSE.contains(&cell))
}

/// The partition holding every key under `prefix` (a geohash or a cell):
/// its first [`FINE_LEN`] characters in a dense cell, its first
/// [`CELL_LEN`] otherwise; `None` where they are held in more than one (a
/// dense cell spans 32 partitions, a cell holding one spans them and its
/// own, a prefix shorter than [`CELL_LEN`] spans cells): a search looks at
/// such a cell as its sub-cells.
pub fn partition(prefix: &str) -> Option<&str> {
    if is_dense(prefix) {
        prefix.get(..FINE_LEN)
    } else if DENSE.iter().any(|cell| cell.starts_with(prefix)) {
        None
    } else {
        prefix.get(..CELL_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_geohash_is_held_by_its_cell_or_in_a_dense_cell_by_its_fine_cell() {
        assert_eq!(partition("u4pruydqq"), Some("u4p"));
        assert_eq!(partition("u09tvwxyz"), Some("u09tv"));
        assert_eq!(partition("u09wb"), Some("u09wb"));
        assert_eq!(partition("u09s"), Some("u09"), "a cell beside a dense one");
        assert_eq!(partition("u09"), None, "a cell holding dense cells spans their partitions");
        assert_eq!(partition("u4p"), Some("u4p"));
        assert_eq!(partition("u09t"), None, "a dense cell spans 32 partitions");
        assert_eq!(partition("u4"), None);
    }

    #[test]
    fn dense_cells_are_cells_of_their_length_and_in_order() {
        for cell in DENSE {
            assert_eq!(cell.len(), DENSE_LEN, "{cell}");
            assert!(super::super::Cell::of(cell).is_some(), "{cell}");
        }
        assert!(DENSE.windows(2).all(|w| w[0] < w[1]));
    }
}
