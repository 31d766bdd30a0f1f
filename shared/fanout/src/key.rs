//! The sort keys a walk can follow. The planner walks from the greatest key
//! down (newest first for ULIDs); a cheapest-first walk orders its keys in
//! reverse, so the cheapest is the greatest.

use std::cmp::Ordering;

use ulid::Ulid;

/// A key the planner can walk: ordered, with its neighbours (for bounds
/// that exclude a key) and a position along the walk for the hints.
pub trait PageKey: Copy + Ord + std::fmt::Debug {
    /// The greatest key below this one (`None` at the bottom).
    fn pred(self) -> Option<Self>;
    /// The least key above this one (`None` at the top).
    fn succ(self) -> Option<Self>;
    /// Where the key lies, in the hints' unit (milliseconds for ULIDs):
    /// never rising along a walk.
    fn position(self) -> u64;
}

impl PageKey for Ulid {
    fn pred(self) -> Option<Self> {
        self.0.checked_sub(1).map(Ulid)
    }
    fn succ(self) -> Option<Self> {
        self.0.checked_add(1).map(Ulid)
    }
    fn position(self) -> u64 {
        self.timestamp_ms()
    }
}

/// A price index's key, `(cents, id)`, walked cheapest first (ties by id,
/// oldest first): ordered in reverse, so the planner's "greatest first" is
/// cheapest first. Cents are those of the `cents10` key format (at most ten
/// digits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cheapest {
    /// The price in cents.
    pub cents: u64,
    /// The item's ULID.
    pub id: Ulid,
}

impl Cheapest {
    /// The most cents a `cents10` key holds.
    pub const MAX_CENTS: u64 = 9_999_999_999;

    /// The first key of a walk from `cents` up (the greatest at that price).
    pub fn from_cents(cents: u64) -> Self {
        Cheapest { cents, id: Ulid(0) }
    }

    /// The last key of a walk up to `cents` (the least at that price).
    pub fn to_cents(cents: u64) -> Self {
        Cheapest { cents, id: Ulid(u128::MAX) }
    }

    /// `cents.ULID`, as a cursor carries it.
    pub fn encode(&self) -> String {
        format!("{}.{}", self.cents, self.id)
    }

    /// The key `encode` wrote; `None` for anything else.
    pub fn decode(text: &str) -> Option<Self> {
        let (cents, id) = text.split_once('.')?;
        let cents: u64 = cents.parse().ok().filter(|c| *c <= Self::MAX_CENTS)?;
        Some(Cheapest { cents, id: Ulid::from_string(id).ok()? })
    }
}

impl Ord for Cheapest {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.cents, other.id).cmp(&(self.cents, self.id))
    }
}

impl PartialOrd for Cheapest {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PageKey for Cheapest {
    /// The next dearer key.
    fn pred(self) -> Option<Self> {
        match self.id.0.checked_add(1) {
            Some(id) => Some(Cheapest { cents: self.cents, id: Ulid(id) }),
            None if self.cents < Self::MAX_CENTS => Some(Cheapest::from_cents(self.cents + 1)),
            None => None,
        }
    }
    /// The next cheaper key.
    fn succ(self) -> Option<Self> {
        match self.id.0.checked_sub(1) {
            Some(id) => Some(Cheapest { cents: self.cents, id: Ulid(id) }),
            None => self.cents.checked_sub(1).map(Cheapest::to_cents),
        }
    }
    fn position(self) -> u64 {
        Self::MAX_CENTS.saturating_sub(self.cents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cheapest_orders_by_price_then_id_in_reverse_and_its_neighbours_are_adjacent() {
        let a = Cheapest { cents: 100, id: Ulid(5) };
        let b = Cheapest { cents: 100, id: Ulid(6) };
        let c = Cheapest { cents: 101, id: Ulid(0) };
        assert!(a > b && b > c, "cheaper (then older) is greater");
        assert_eq!(a.pred(), Some(b));
        assert_eq!(b.succ(), Some(a));
        assert_eq!(Cheapest::to_cents(100).pred(), Some(Cheapest::from_cents(101)));
        assert_eq!(Cheapest::from_cents(101).succ(), Some(Cheapest::to_cents(100)));
        assert_eq!(Cheapest::from_cents(0).succ(), None);
        assert_eq!(Cheapest::to_cents(Cheapest::MAX_CENTS).pred(), None);
        assert!(a.position() >= c.position());
        for k in [a, c, Cheapest::to_cents(Cheapest::MAX_CENTS)] {
            assert_eq!(Cheapest::decode(&k.encode()), Some(k));
        }
        for bad in ["", "1", "x.01ARZ3NDEKTSV4RRFFQ69G5FAV", "10000000000.01ARZ3NDEKTSV4RRFFQ69G5FAV", "1.zz"] {
            assert_eq!(Cheapest::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn ulid_neighbours() {
        assert_eq!(Ulid(0).pred(), None);
        assert_eq!(Ulid(u128::MAX).succ(), None);
        assert_eq!(Ulid(7).pred(), Some(Ulid(6)));
    }
}
