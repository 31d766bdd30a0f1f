//! A change to one item: what is set, removed and added, and the condition
//! under which it applies. The store renders it into an `UpdateItem` or one
//! action of a transaction; [`crate::memory`] applies it to an attribute map.

use crate::key::Key;
use crate::value::Value;

/// One clause of a change's condition (all clauses must hold).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    /// The item exists.
    ItemExists,
    /// The attribute exists.
    Exists(&'static str),
    /// The attribute does not exist.
    NotExists(&'static str),
    /// `attribute = value`.
    Eq(&'static str, Value),
    /// `attribute <> value`.
    Ne(&'static str, Value),
    /// The attribute is missing or differs from the value.
    Differs(&'static str, Value),
    /// `attribute >= value`.
    Ge(&'static str, Value),
    /// `attribute <= value`.
    Le(&'static str, Value),
    /// Some attribute is missing or differs from its value.
    AnyDiffers(Vec<(&'static str, Value)>),
}

impl Cond {
    /// The attributes the clause reads.
    pub fn attributes(&self) -> Vec<&'static str> {
        match self {
            Cond::ItemExists => Vec::new(),
            Cond::Exists(a)
            | Cond::NotExists(a)
            | Cond::Eq(a, _)
            | Cond::Ne(a, _)
            | Cond::Differs(a, _)
            | Cond::Ge(a, _)
            | Cond::Le(a, _) => vec![a],
            Cond::AnyDiffers(pairs) => pairs.iter().map(|(a, _)| *a).collect(),
        }
    }
}

/// A change to one item: the attributes set, removed and added (numbers),
/// and the condition under which it applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The item's primary key.
    pub key: Key,
    /// `SET attribute = value`.
    pub set: Vec<(&'static str, Value)>,
    /// `REMOVE attribute`.
    pub remove: Vec<&'static str>,
    /// `ADD attribute number`.
    pub add: Vec<(&'static str, Value)>,
    /// All must hold, or nothing is written.
    pub condition: Vec<Cond>,
}

/// `updatedAt`, stamped by [`Change::of`].
pub const UPDATED_AT: &str = "updatedAt";

impl Change {
    /// A change to the item with this primary key, stamped `updatedAt = now`.
    pub fn of(key: impl Into<Key>, now: &str) -> Change {
        Change {
            key: key.into(),
            set: vec![(UPDATED_AT, Value::s(now))],
            remove: vec![],
            add: vec![],
            condition: vec![],
        }
    }

    /// A change that sets no timestamp (kept by the stream processor or a job).
    pub fn untimed(key: impl Into<Key>) -> Change {
        Change { key: key.into(), set: vec![], remove: vec![], add: vec![], condition: vec![] }
    }

    /// Also sets `attribute = value`.
    pub fn set(mut self, attribute: &'static str, value: Value) -> Change {
        self.set.push((attribute, value));
        self
    }

    /// Also removes `attribute`.
    pub fn remove(mut self, attribute: &'static str) -> Change {
        self.remove.push(attribute);
        self
    }

    /// Also adds `delta` to a number attribute.
    pub fn add(mut self, attribute: &'static str, delta: i64) -> Change {
        self.add.push((attribute, Value::n(delta)));
        self
    }

    /// Only if `cond` holds too.
    pub fn only_if(mut self, cond: Cond) -> Change {
        self.condition.push(cond);
        self
    }

    /// Every attribute the change writes or reads.
    pub fn attributes(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.set
            .iter()
            .map(|(a, _)| *a)
            .chain(self.remove.iter().copied())
            .chain(self.add.iter().map(|(a, _)| *a))
            .chain(self.condition.iter().flat_map(Cond::attributes))
    }
}
