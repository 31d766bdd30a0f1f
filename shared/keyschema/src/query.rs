//! One `Query` request: an index, a partition, a sort-key condition, an order.

use crate::key::{ItemKeys, Key};
use crate::table::Index;

/// A condition on the sort key of a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// `begins_with(sk, prefix)`.
    BeginsWith(String),
    /// `sk BETWEEN low AND high` (inclusive).
    Between(String, String),
}

/// One `Query` request: an index, a partition, a sort-key condition, an order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyQuery {
    /// Which index.
    pub index: Index,
    /// The partition key value.
    pub pk: String,
    /// The sort key condition.
    pub sk: SortKey,
    /// Descending sort key order (newest first for ULID keys).
    pub newest_first: bool,
}

impl KeyQuery {
    /// The same query in descending sort-key order.
    pub fn newest_first(mut self) -> Self {
        self.newest_first = true;
        self
    }

    /// A stable description of the query, used to bind a pagination cursor to it.
    pub fn fingerprint(&self) -> String {
        let sk = match &self.sk {
            SortKey::BeginsWith(p) => format!("begins_with({p})"),
            SortKey::Between(l, h) => format!("between({l},{h})"),
        };
        format!("{}|{}|{}|{}", self.index, self.pk, sk, if self.newest_first { "desc" } else { "asc" })
    }

    /// Whether an item with these keys is selected by the query.
    pub fn selects(&self, item: &ItemKeys) -> bool {
        item.on(self.index).is_some_and(|k| self.contains(k))
    }

    /// Whether a key on the query's index (from a cursor) lies in the
    /// query's partition and sort-key range.
    pub fn contains(&self, key: &Key) -> bool {
        key.pk == self.pk
            && match &self.sk {
                SortKey::BeginsWith(p) => key.sk.starts_with(p.as_str()),
                SortKey::Between(l, h) => l <= &key.sk && &key.sk <= h,
            }
    }

    /// The key condition, such as
    /// `gsi1pk = BRAND#acme, begins_with(gsi1sk, CATEGORY#), descending`.
    pub fn condition(&self) -> String {
        let sk = match &self.sk {
            SortKey::BeginsWith(p) => format!("begins_with({}, {p})", self.index.sk()),
            SortKey::Between(l, h) => format!("{} BETWEEN {l} AND {h}", self.index.sk()),
        };
        let order = if self.newest_first { ", descending" } else { "" };
        format!("{} = {}, {sk}{order}", self.index.pk(), self.pk)
    }
}
