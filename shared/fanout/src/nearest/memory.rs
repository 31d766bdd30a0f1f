//! Cells held in memory: a [`CellAsker`] over items sorted by sort key,
//! answering as DynamoDB does (a query reads one partition of the index,
//! `domain::geo::partition`; more to give whenever it stops at its limit).
//! For the exactness tests and for the capacity model's measure of what a
//! page reads.

use std::convert::Infallible;

use domain::geo::partition::partition;

use super::{CellAnswer, CellAsk, CellAsker, Placed};

/// Every item, in sort-key order, each of [`CARD_BYTES`].
pub struct InMemory<T> {
    items: Vec<(String, T)>,
}

/// An item's bytes: a listing's card in the near index.
pub const CARD_BYTES: usize = 360;

impl<T: Placed> InMemory<T> {
    /// The items, sorted by their sort keys.
    pub fn new(items: impl IntoIterator<Item = T>) -> Self {
        let mut items: Vec<(String, T)> = items.into_iter().map(|i| (i.sort_key(), i)).collect();
        items.sort_by(|a, b| a.0.cmp(&b.0));
        InMemory { items }
    }
}

impl<T: Placed + Clone> CellAsker<T> for InMemory<T> {
    type Error = Infallible;
    async fn ask(&self, asks: Vec<CellAsk>) -> Result<Vec<(CellAsk, CellAnswer<T>)>, Infallible> {
        Ok(asks
            .into_iter()
            .map(|ask| {
                let from = match &ask.after {
                    Some(a) => self.items.partition_point(|(k, _)| k <= a),
                    None => self.items.partition_point(|(k, _)| k.as_str() < ask.prefix.as_str()),
                };
                // A query reads one partition (the index's query of a cell
                // held in more than one fails).
                assert!(partition(&ask.prefix).is_some(), "a query of {} spans partitions", ask.prefix);
                let items: Vec<T> = self.items[from..]
                    .iter()
                    .take_while(|(k, _)| k.starts_with(&ask.prefix))
                    .take_while(|(k, _)| ask.before.as_ref().is_none_or(|b| k < b))
                    .take(ask.limit)
                    .map(|(_, i)| i.clone())
                    .collect();
                let more = items.len() == ask.limit;
                let units = (items.len() * CARD_BYTES).div_ceil(4096).max(1);
                (ask, CellAnswer { items, more, units })
            })
            .collect())
    }

    fn item_bytes(&self) -> usize {
        CARD_BYTES
    }

    /// Exactly: whether any item is in that partition.
    fn may_hold(&self, cell: &str) -> bool {
        let from = self.items.partition_point(|(k, _)| k.as_str() < cell);
        self.items.get(from).is_some_and(|(k, _)| k.starts_with(cell) && partition(k) == Some(cell))
    }
}
