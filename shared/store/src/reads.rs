//! Which index a query reads while an index moves
//! (`keyschema::table::card_move`): GSI6-8 replace GSI1-3 on the same
//! keys, and until the move's fourth step a query of GSI6-8 goes to the
//! retired index beside it, as `LIST_INDEX_READS=GSI1-3` says (the
//! template's `CardIndexMove` sets it).

use keyschema::table::Index;

/// The variable naming the indexes lists read.
pub const LIST_INDEX_READS_VAR: &str = "LIST_INDEX_READS";

/// Which of the two indexes on one set of keys a query reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IndexReads {
    /// The indexes declared (GSI6-8): the move's reads have moved.
    #[default]
    Declared,
    /// The retired ones still beside them (GSI1-3).
    Retired,
}

impl IndexReads {
    /// From `LIST_INDEX_READS`: `GSI1-3` (or unset, `GSI6-8`).
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(LIST_INDEX_READS_VAR).as_deref() {
            Err(_) | Ok("") | Ok("GSI6-8") => Ok(IndexReads::Declared),
            Ok("GSI1-3") => Ok(IndexReads::Retired),
            Ok(other) => Err(format!("{LIST_INDEX_READS_VAR}={other}: give GSI6-8 or GSI1-3")),
        }
    }

    /// The name a query of `index` sends.
    pub fn name_of(self, index: Index) -> Option<&'static str> {
        match (self, index.moved_from()) {
            (IndexReads::Retired, Some(old)) => old.name(),
            _ => index.name(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retired_reads_go_to_the_index_beside_on_the_same_keys() {
        assert_eq!(IndexReads::Declared.name_of(Index::Gsi6), Some("GSI6"));
        assert_eq!(IndexReads::Retired.name_of(Index::Gsi6), Some("GSI1"));
        assert_eq!(IndexReads::Retired.name_of(Index::Gsi8), Some("GSI3"));
        assert_eq!(IndexReads::Retired.name_of(Index::Gsi5), Some("GSI5"));
        assert_eq!(IndexReads::Retired.name_of(Index::Table), None);
        for moved in [Index::Gsi6, Index::Gsi7, Index::Gsi8] {
            let old = moved.moved_from().unwrap();
            assert_eq!((old.pk(), old.sk(), old.keys_from()), (moved.pk(), moved.sk(), moved));
        }
    }
}
