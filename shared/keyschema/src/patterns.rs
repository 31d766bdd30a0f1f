//! The registry of the API's operations (`registry`): every access
//! pattern of the seeds (a read, [`PATTERNS`]) and every write
//! ([`WRITES`]), each declared once with a typed name ([`Op`]), its id in
//! the seeds, its short name, what it answers or does, its route and the
//! requests it sends; a read also with the request it sends, built by the
//! pattern's own function ([`crate::access`]) from sample ids that the docs
//! show as placeholders ([`samples`]). What lists the operations derives
//! from it: docs/key-schema.md, the explorer, the key tests, the capacity
//! tests (tests/integration/capacity.rs: a budget per `Op`, an exhaustive
//! `match`) and the capacity model's request kinds (tools/capacity: the
//! mix names operations by [`Op::name`], and prices each by an exhaustive
//! `match`). Tests fail on a duplicate id or name, a route the contract
//! does not have, or a sample left in a rendering.

use crate::decl::SchemaError;
use crate::key::Key;
use crate::query::KeyQuery;
use crate::table::{EntityType, Index};

/// One request of an access pattern, as the docs show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// `GetItem` (or a single-item write) on a primary key.
    Get(Key),
    /// `Query`.
    Query(KeyQuery),
}

impl Request {
    /// The index it reads.
    pub fn index(&self) -> Index {
        match self {
            Request::Get(_) => Index::Table,
            Request::Query(q) => q.index,
        }
    }

    /// The key condition, such as
    /// `gsi1pk = BRAND#acme, begins_with(gsi1sk, CATEGORY#), descending`.
    pub fn condition(&self) -> String {
        match self {
            Request::Get(k) => format!("{} = {}, {} = {}", Index::Table.pk(), k.pk, Index::Table.sk(), k.sk),
            Request::Query(q) => q.condition(),
        }
    }
}

mod registry;
pub mod samples;

pub use registry::{Op, PATTERNS, WRITES};

/// One access pattern (a read) as documented.
#[derive(Clone, Copy, Debug)]
pub struct Pattern {
    /// Its typed name.
    pub op: Op,
    /// Which design and number, for example `catalog AP6`.
    pub id: &'static str,
    /// Its short name, for example `products by brand` (the capacity mix's).
    pub name: &'static str,
    /// What it answers.
    pub what: &'static str,
    /// The requests it sends, as the docs show them: `GetItem`, `Query`,
    /// `Query x shards` (a fan-out), or several joined by ` + `.
    pub operation: &'static str,
    /// The entity it returns.
    pub entity: EntityType,
    /// The request, built with [`samples`] by the pattern's own function.
    pub request: fn() -> Result<Request, SchemaError>,
    /// The HTTP route serving it.
    pub route: &'static str,
}

impl Pattern {
    /// The index it reads.
    pub fn index(&self) -> Result<Index, SchemaError> {
        Ok((self.request)()?.index())
    }

    /// The key condition with placeholders, rendered from the request.
    pub fn condition(&self) -> Result<String, SchemaError> {
        Ok(samples::placeholders(&(self.request)()?.condition()))
    }
}

/// One write as documented.
#[derive(Clone, Copy, Debug)]
pub struct Write {
    /// Its typed name.
    pub op: Op,
    /// Its name, for example `create listing` (the capacity mix's).
    pub name: &'static str,
    /// What it does.
    pub what: &'static str,
    /// The requests it sends, as the docs show them.
    pub operation: &'static str,
    /// The entity it writes.
    pub entity: EntityType,
    /// The HTTP route serving it.
    pub route: &'static str,
}

/// What [`Op`] names: a read or a write.
enum Entry {
    Read(&'static Pattern),
    Write(&'static Write),
}

impl Op {
    fn entry(self) -> Option<Entry> {
        PATTERNS
            .iter()
            .find(|p| p.op == self)
            .map(Entry::Read)
            .or_else(|| WRITES.iter().find(|w| w.op == self).map(Entry::Write))
    }

    /// Its short name (a write's name): what the capacity mix calls it.
    pub fn name(self) -> &'static str {
        match self.entry() {
            Some(Entry::Read(p)) => p.name,
            Some(Entry::Write(w)) => w.name,
            None => "",
        }
    }

    /// Its id in the seeds, or a write's name.
    pub fn id(self) -> &'static str {
        match self.entry() {
            Some(Entry::Read(p)) => p.id,
            _ => self.name(),
        }
    }

    /// The HTTP route serving it.
    pub fn route(self) -> &'static str {
        match self.entry() {
            Some(Entry::Read(p)) => p.route,
            Some(Entry::Write(w)) => w.route,
            None => "",
        }
    }

    /// The read it is, if it is one.
    pub fn pattern(self) -> Option<&'static Pattern> {
        match self.entry() {
            Some(Entry::Read(p)) => Some(p),
            _ => None,
        }
    }

    /// The operation of this short name or id.
    pub fn named(name: &str) -> Option<Op> {
        Op::ALL.iter().copied().find(|op| op.name() == name || op.id() == name)
    }
}

impl std::str::FromStr for Op {
    type Err = String;

    fn from_str(s: &str) -> Result<Op, String> {
        Op::named(s).ok_or_else(|| format!("`{s}` names no operation of the registry (keyschema::patterns)"))
    }
}

impl<'de> serde::Deserialize<'de> for Op {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Op, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// Declares the registry: the operations' enum, [`Op::ALL`], and the
/// reads' and writes' entries, from one list.
macro_rules! declare_registry {
    (
        reads {
            $($(#[$rdoc:meta])* $r:ident => (
                $rid:expr, $rname:expr, $rwhat:expr, $rop:expr, $rent:expr, $rreq:expr, $rroute:expr $(,)?
            ),)+
        }
        writes {
            $($(#[$wdoc:meta])* $w:ident => ($wname:expr, $wwhat:expr, $wop:expr, $went:expr, $wroute:expr $(,)?),)+
        }
    ) => {
        /// Every operation of the API, by a typed name: each access pattern
        /// (a read) and each write. A new one does not compile until every
        /// exhaustive `match` on it (the capacity tests' budget, the
        /// capacity model's actions) says what it is.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Op {
            $($(#[$rdoc])* $r,)+
            $($(#[$wdoc])* $w,)+
        }

        impl Op {
            /// Every operation, reads first, in the docs' order.
            pub const ALL: &'static [Op] = &[$(Op::$r,)+ $(Op::$w,)+];
        }

        /// Every access pattern, for the generated docs.
        pub const PATTERNS: &[Pattern] = &[$(Pattern {
            op: Op::$r,
            id: $rid,
            name: $rname,
            what: $rwhat,
            operation: $rop,
            entity: $rent,
            request: $rreq,
            route: $rroute,
        },)+];

        /// Every write.
        pub const WRITES: &[Write] = &[$(Write {
            op: Op::$w,
            name: $wname,
            what: $wwhat,
            operation: $wop,
            entity: $went,
            route: $wroute,
        },)+];
    };
}
use declare_registry;
