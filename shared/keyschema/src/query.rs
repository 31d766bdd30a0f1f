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

/// A query of the items of entity `E` ([`crate::access`] makes them):
/// `Store::query` of it decodes `E`s (or a type that reads as one,
/// [`crate::ReadAs`]), so a query of one entity cannot read another's
/// type, as [`crate::EntityKey`] does for a key. It is a [`KeyQuery`]
/// everywhere else (`Deref`, [`EntityQuery::into_query`]).
pub struct EntityQuery<E> {
    query: KeyQuery,
    entity: std::marker::PhantomData<fn() -> E>,
}

impl<E> EntityQuery<E> {
    /// A query of `E`s (only the access functions call this).
    pub(crate) fn new(query: KeyQuery) -> Self {
        EntityQuery { query, entity: std::marker::PhantomData }
    }

    /// The untyped query.
    pub fn into_query(self) -> KeyQuery {
        self.query
    }

    /// The same query in ascending sort-key order (oldest first).
    pub fn oldest_first(mut self) -> Self {
        self.query.newest_first = false;
        self
    }
}

impl<E> std::ops::Deref for EntityQuery<E> {
    type Target = KeyQuery;
    fn deref(&self) -> &KeyQuery {
        &self.query
    }
}

impl<E> From<EntityQuery<E>> for KeyQuery {
    fn from(q: EntityQuery<E>) -> KeyQuery {
        q.query
    }
}

impl<E> Clone for EntityQuery<E> {
    fn clone(&self) -> Self {
        EntityQuery::new(self.query.clone())
    }
}

impl<E> std::fmt::Debug for EntityQuery<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.query.fmt(f)
    }
}

impl<E> PartialEq for EntityQuery<E> {
    fn eq(&self, other: &Self) -> bool {
        self.query == other.query
    }
}

/// A query of an item of entity `E` and its details `D` (the two items of
/// its partition, [`crate::access::listing_with_details`]): only
/// `Store::get_with_details` reads it, as an `E` and a `D` by their types,
/// so it cannot be read as a list of either. A [`KeyQuery`] everywhere else.
pub struct DetailsQuery<E, D> {
    query: KeyQuery,
    types: std::marker::PhantomData<fn() -> (E, D)>,
}

impl<E, D> DetailsQuery<E, D> {
    /// A query of an `E` and its `D` (only the access functions call this).
    pub(crate) fn new(query: KeyQuery) -> Self {
        DetailsQuery { query, types: std::marker::PhantomData }
    }

    /// The untyped query.
    pub fn into_query(self) -> KeyQuery {
        self.query
    }
}

impl<E, D> std::ops::Deref for DetailsQuery<E, D> {
    type Target = KeyQuery;
    fn deref(&self) -> &KeyQuery {
        &self.query
    }
}

impl<E, D> From<DetailsQuery<E, D>> for KeyQuery {
    fn from(q: DetailsQuery<E, D>) -> KeyQuery {
        q.query
    }
}
