//! A marker and how one count moves it. Two kinds:
//!
//! - [`Marker::One`]: one instance (a review's retired marker), or
//!   successive instances of one thing with versions (a user's favorite of
//!   a listing, added and removed again and again): whether it is counted,
//!   the weight it counted and the latest version seen.
//!   - a change of an older version than the marker's changes nothing;
//!   - an insert of a newer version (or of an instance with no marker)
//!     counts it with its weight, unless the marker already counts;
//!   - a removal of the marker's version (or of a newer one) uncounts it,
//!     taking away the weight the marker counted, not the record's;
//!   - an insert of a version whose removal was seen first counts nothing.
//! - [`Marker::Slot`]: the instances of one slot, of which the first counts
//!   (an author's reviews of one user in one ISO week,
//!   [`keyschema::records::Slot`]): an insert adds the review unless its
//!   removal was seen, a removal takes it out for good. Sets, so any order
//!   of any number of deliveries ends the same.

use std::collections::BTreeMap;

use domain::ids::ReviewId;
use keyschema::records::{MarkerState, Slot};
use keyschema::Key;
use serde::Deserialize;
use ulid::Ulid;

use super::Count;
use crate::DerivedError;

/// A marker as stored (or as it will be).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Marker {
    /// One instance, or successive versions of one.
    One {
        /// Counted or removed.
        state: MarkerState,
        /// The weight it counted (or would).
        weight: u32,
        /// The latest version seen, for markers that have one.
        version: Option<Ulid>,
    },
    /// A slot's instances; the first counts.
    Slot(Slot),
}

impl Marker {
    /// What it contributes to the aggregate: (sum, count).
    pub fn counted(&self) -> (i64, i64) {
        match self {
            Marker::One { state: MarkerState::Counted, weight, .. } => (i64::from(*weight), 1),
            Marker::One { state: MarkerState::Removed, .. } => (0, 0),
            Marker::Slot(slot) => slot.counted().map_or((0, 0), |(_, w)| (i64::from(w), 1)),
        }
    }

    /// The marker no longer counting `member` (a slot's), or at all (what
    /// it counted kept, to take it away).
    pub fn removed(&self, member: Option<ReviewId>) -> Marker {
        match (self, member) {
            (Marker::Slot(slot), Some(id)) => {
                let mut slot = slot.clone();
                slot.reviews.remove(&id);
                slot.gone.insert(id);
                Marker::Slot(slot)
            }
            (Marker::One { weight, version, .. }, _) => {
                Marker::One { state: MarkerState::Removed, weight: *weight, version: *version }
            }
            (slot, None) => slot.clone(),
        }
    }
}

/// A marker item as stored: a one-instance marker's state, weight (markers
/// written before markers recorded it count with the record's) and
/// version, or a slot's reviews.
#[derive(Deserialize)]
pub(crate) struct Stored {
    pub(crate) pk: String,
    pub(crate) sk: String,
    state: Option<MarkerState>,
    weight: Option<u32>,
    version: Option<String>,
    reviews: Option<BTreeMap<ReviewId, u32>>,
    #[serde(default)]
    gone: std::collections::BTreeSet<ReviewId>,
    rev: Option<u64>,
}

impl Stored {
    /// The marker, `weight_of` its key where it recorded none.
    pub(crate) fn marker(self, weight_of: impl Fn(&Key) -> u32) -> Result<Marker, DerivedError> {
        if self.rev.is_some() || self.reviews.is_some() {
            let (reviews, gone, rev) = (self.reviews.unwrap_or_default(), self.gone, self.rev.unwrap_or_default());
            return Ok(Marker::Slot(Slot { reviews, gone, rev }));
        }
        let state = self.state.ok_or_else(|| DerivedError::malformed(format!("marker {} has no state", self.sk)))?;
        let version = match &self.version {
            Some(v) => Some(v.parse::<Ulid>().map_err(|_| {
                DerivedError::malformed(format!("marker {} has a version that is not a ULID", self.sk))
            })?),
            None => None,
        };
        let key = Key { pk: self.pk.clone(), sk: self.sk.clone() };
        Ok(Marker::One { state, weight: self.weight.unwrap_or_else(|| weight_of(&key)), version })
    }
}

/// The marker after `count`, from the marker before it (`None`: none yet);
/// `None` if the count changes nothing.
pub fn next(before: Option<&Marker>, count: &Count) -> Option<Marker> {
    if let Some(id) = count.member {
        let mut slot = match before {
            Some(Marker::Slot(slot)) => slot.clone(),
            _ => Slot::default(),
        };
        let changed = if count.inserted {
            !slot.gone.contains(&id) && slot.reviews.insert(id, count.weight).is_none()
        } else {
            let taken = slot.reviews.remove(&id).is_some();
            slot.gone.insert(id) || taken
        };
        return changed.then_some(Marker::Slot(slot));
    }
    let state = if count.inserted { MarkerState::Counted } else { MarkerState::Removed };
    let fresh = Marker::One { state, weight: count.weight, version: count.version };
    let Some(Marker::One { state: was, weight, version }) = before else { return Some(fresh) };
    match (version, count.version) {
        (Some(seen), Some(v)) if v < *seen => None,
        (Some(seen), Some(v)) if v > *seen => (before != Some(&fresh)).then_some(if *was == state {
            // Counted before and after: the same contribution, a newer version.
            Marker::One { state, weight: *weight, version: count.version }
        } else {
            fresh
        }),
        // The same instance: an insert after its insert or its removal
        // changes nothing; a removal uncounts what was counted.
        _ if count.inserted => None,
        _ => (*was == MarkerState::Counted).then(|| before.map(|m| m.removed(None))).flatten(),
    }
}

#[cfg(test)]
mod tests;
