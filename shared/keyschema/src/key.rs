//! Keys: a key pair on one index, and every key of one item.

use std::collections::BTreeMap;

use crate::table::{EntityType, Index};

/// A key pair on one index.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// Partition key value.
    pub pk: String,
    /// Sort key value.
    pub sk: String,
}

impl Key {
    /// A key pair.
    pub fn new(pk: impl Into<String>, sk: impl Into<String>) -> Self {
        Key { pk: pk.into(), sk: sk.into() }
    }
}

/// All key attributes of one item: its primary key and its key on each
/// index it is in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemKeys {
    /// Which entity the item is.
    pub entity: EntityType,
    /// The key on each index the item is in (the table always).
    pub keys: BTreeMap<Index, Key>,
}

impl ItemKeys {
    /// The primary key.
    pub fn table(&self) -> &Key {
        // Built with the table key by every constructor.
        &self.keys[&Index::Table]
    }

    /// The key on one index, if the item is in it.
    pub fn on(&self, index: Index) -> Option<&Key> {
        self.keys.get(&index)
    }

    /// `(attribute, value)` for every key attribute the item has, in index order.
    pub fn attributes(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.keys.iter().flat_map(|(i, k)| [(i.pk(), k.pk.as_str()), (i.sk(), k.sk.as_str())])
    }
}
