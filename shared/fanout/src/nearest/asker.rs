//! What a page asks of the index: the items it holds ([`Placed`]), one
//! cell query ([`CellAsk`]) and its answer, and who answers them
//! ([`CellAsker`]).

use domain::geo::Location;
use ulid::Ulid;

use crate::budget::TYPICAL_ITEM_BYTES;

/// An item of the index.
pub trait Placed {
    /// Where it is (`None`: not placed, never returned).
    fn location(&self) -> Option<Location>;
    /// Its id.
    fn id(&self) -> Ulid;
    /// Its sort key in the index (`<geohash>#<id>`, the full geohash of
    /// [`HASH_LEN`](domain::geo::HASH_LEN) characters, so that within a
    /// cell keys order as ids do), to continue after it.
    fn sort_key(&self) -> String;
}

/// One query: a cell's items (a geohash prefix), after a sort key if given,
/// in sort-key order, at most `limit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellAsk {
    /// The cell.
    pub prefix: String,
    /// Only items whose sort key is above this one.
    pub after: Option<String>,
    /// Only items whose sort key is below those of this cell (a geohash
    /// prefix longer than `prefix`, so no key equals it).
    pub before: Option<String>,
    /// Most items wanted.
    pub limit: usize,
}

/// What a cell query answered.
#[derive(Debug)]
pub struct CellAnswer<T> {
    /// The items, in sort-key order.
    pub items: Vec<T>,
    /// Whether it may have more to give (`false` proves it has not).
    pub more: bool,
    /// The 4 KB read units its queries cost (at least one a query).
    pub units: usize,
}

/// Answers a round of cell queries.
pub trait CellAsker<T> {
    /// What a failed query is.
    type Error;
    /// Sends the asks (answers in any order): the first's failure fails
    /// the call; a later one (a cell read ahead) may be left out.
    #[allow(clippy::type_complexity)]
    fn ask(
        &self,
        asks: Vec<CellAsk>,
    ) -> impl std::future::Future<Output = Result<Vec<(CellAsk, CellAnswer<T>)>, Self::Error>>;

    /// Whether partition `cell` of a dense cell (`domain::geo::partition`)
    /// may hold an item (`false` proves it holds none: it is not queried).
    fn may_hold(&self, cell: &str) -> bool {
        let _ = cell;
        true
    }

    /// The queries an ask of cell `prefix` sends (more than one where the
    /// cell is read in two partitions).
    fn queries(&self, prefix: &str) -> usize {
        let _ = prefix;
        1
    }

    /// The bytes of a typical item, as DynamoDB sizes it: a page sizes its
    /// asks by it ([`crate::budget::Budget`]) until its answers show items larger.
    fn item_bytes(&self) -> usize {
        TYPICAL_ITEM_BYTES
    }

    /// The most an item can weigh, as DynamoDB sizes it: a query's limit
    /// is cut so that what it reads fits the units left of a page's budget.
    fn most_item_bytes(&self) -> usize {
        self.item_bytes()
    }
}
