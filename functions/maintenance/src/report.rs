//! What a reconcile found and did, by kind of derived data.

use std::collections::BTreeMap;
use std::fmt;

use derived::aggregates::AggregateKind;
use keyschema::table::EntityType;
use serde::{Serialize, Serializer};

use crate::pace::Sample;

/// A kind of derived data reconcile checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// The index keys of an entity's items.
    IndexKeys(EntityType),
    /// Search postings (counted by listing).
    SearchPostings,
    /// The records of the dense cells' partitions that hold listings
    /// (counted by partition).
    NearCells,
    /// The category a buyer's review counts in (a backfill).
    ReviewCategories,
    /// Descriptions written inline in a listing or product, moved to its
    /// details item (a backfill).
    InlineDescriptions,
    /// The markers of a kind of aggregate.
    Markers(AggregateKind),
    /// A kind of aggregate against its markers.
    Aggregate(AggregateKind),
    /// Markers of a retired kind (per-review rating markers), deleted.
    Retired,
    /// Items that do not decode: left as they are, reported.
    Unreadable,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::IndexKeys(entity) => write!(f, "index keys: {}", entity.as_str()),
            Kind::SearchPostings => f.write_str("search postings"),
            Kind::NearCells => f.write_str("near cells"),
            Kind::ReviewCategories => f.write_str("review categories"),
            Kind::InlineDescriptions => f.write_str("inline descriptions"),
            Kind::Markers(kind) => write!(f, "markers: {kind}"),
            Kind::Aggregate(kind) => write!(f, "aggregate: {kind}"),
            Kind::Retired => f.write_str("retired markers"),
            Kind::Unreadable => f.write_str("unreadable items"),
        }
    }
}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Found and repaired, for one kind of derived data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Items (keys, markers, aggregates) that differed from their base data.
    pub found: u64,
    /// Of those, repaired by this run.
    pub repaired: u64,
    /// Of those, changed by someone else between the read and the repair
    /// (left to them: their own write or the stream processor is newer).
    pub moved: u64,
}

impl Tally {
    /// `n` found and left as they are (a dry run, or unreadable).
    pub const fn found(n: u64) -> Tally {
        Tally { found: n, repaired: 0, moved: 0 }
    }
    /// `n` found and repaired.
    pub const fn repaired(n: u64) -> Tally {
        Tally { found: n, repaired: n, moved: 0 }
    }
    /// `n` found and moved by another writer in between.
    pub const fn moved(n: u64) -> Tally {
        Tally { found: n, repaired: 0, moved: n }
    }

    fn add(&mut self, other: Tally) {
        self.found += other.found;
        self.repaired += other.repaired;
        self.moved += other.moved;
    }
}

/// What a run did.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Per kind of derived data.
    pub kinds: BTreeMap<Kind, Tally>,
    /// Items scanned (both passes).
    pub scanned: u64,
    /// Whether it resumed an interrupted run.
    pub resumed: bool,
    /// Whether both passes finished (else: run again to resume).
    pub complete: bool,
    /// Why it stopped, if it did not finish.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// It stopped because DynamoDB could not be reached in the time left
    /// (the invocation's time ran out: the next one resumes).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unavailable: bool,
    /// Capacity consumed and time taken.
    pub rcu: f64,
    /// See `rcu`.
    pub wcu: f64,
    /// See `rcu`.
    pub seconds: f64,
    /// What was consumed when (for the rate check).
    #[serde(skip)]
    pub samples: Vec<Sample>,
}

impl Report {
    /// Every kind's found count, summed.
    pub fn found(&self) -> u64 {
        self.kinds.values().map(|t| t.found).sum()
    }

    /// What was found of one kind (nothing: zeros).
    pub fn of(&self, kind: Kind) -> Tally {
        self.kinds.get(&kind).copied().unwrap_or_default()
    }

    /// Adds to a kind's tally.
    pub fn tally(&mut self, kind: Kind, tally: Tally) {
        self.kinds.entry(kind).or_default().add(tally);
    }
}
