//! Keys: a key pair on one index, the primary key of one entity's item
//! ([`EntityKey`]: a read through it decodes that entity or a part of it,
//! nothing else), and every key of one item.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::ops::Deref;

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

/// The primary key of an item of entity `E` ([`crate::keys`] makes them):
/// `Store::get` of it decodes an `E` (or a type that reads as one,
/// [`crate::ReadAs`]), so a key of one entity cannot read
/// another's type. It is a [`Key`] everywhere else (`Deref`, `From`).
pub struct EntityKey<E> {
    key: Key,
    entity: PhantomData<fn() -> E>,
}

impl<E> EntityKey<E> {
    /// The key of an `E` (only the declarations' key functions call this).
    pub(crate) fn new(key: Key) -> Self {
        EntityKey { key, entity: PhantomData }
    }

    /// The untyped key.
    pub fn into_key(self) -> Key {
        self.key
    }
}

impl<E> Deref for EntityKey<E> {
    type Target = Key;
    fn deref(&self) -> &Key {
        &self.key
    }
}

impl<E> AsRef<Key> for EntityKey<E> {
    fn as_ref(&self) -> &Key {
        &self.key
    }
}

impl AsRef<Key> for Key {
    fn as_ref(&self) -> &Key {
        self
    }
}

impl<E> From<EntityKey<E>> for Key {
    fn from(k: EntityKey<E>) -> Key {
        k.key
    }
}

impl<E> Clone for EntityKey<E> {
    fn clone(&self) -> Self {
        EntityKey::new(self.key.clone())
    }
}

impl<E> PartialEq for EntityKey<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<E> Eq for EntityKey<E> {}

impl<E> std::fmt::Debug for EntityKey<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.key.fmt(f)
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
