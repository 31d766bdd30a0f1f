//! What a page may read: the contract's bound per page, in DynamoDB
//! requests and 4 KB read units (0.5 RCU each, eventually consistent), for
//! the near search ([`crate::nearest`]) and the pages over shards
//! ([`crate::page_planner`]).
//!
//! Near me: a query is sent only if a request and a unit are left for it
//! (but a page's first), and asks for no more than what is left holds of
//! the largest items, so a page stops (`stopped_early`) within its bound
//! and its cursor goes on after the last key it read. Pages over shards:
//! a second round's asks share what the first left.

/// The read unit: 4 KB.
pub const UNIT_BYTES: usize = 4096;

/// The least an answer of `items` billed `units` shows its items to be on
/// average (its units are its bytes rounded up to a unit, so more than
/// `units - 1` units' bytes): 0 if it shows nothing.
pub(crate) fn least_item_bytes(units: usize, items: usize) -> usize {
    units.saturating_sub(1).saturating_mul(UNIT_BYTES) / items.max(1)
}
/// A typical item's bytes: a listing's card in the near index.
pub(crate) const TYPICAL_ITEM_BYTES: usize = 512;

/// Requests and 4 KB read units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Requests.
    pub requests: usize,
    /// 4 KB read units.
    pub units: usize,
}

impl Budget {
    /// The contract's bound of a page of `limit` (docs/capacity.md, "The
    /// worst case per route"): 24 requests and 12 RCU up to 20, 40 and 40
    /// at 100, in proportion between.
    pub fn page(limit: usize) -> Budget {
        let extra = limit.clamp(20, 100) - 20;
        Budget { requests: 24 + extra * 16 / 80, units: 24 + extra * 56 / 80 }
    }

    /// The items one query of `requests` may ask for: the units left shared
    /// between them, each item of `item_bytes` (at least one).
    pub(crate) fn holds(self, requests: usize, item_bytes: usize) -> usize {
        let share = (self.units / requests.max(1)).max(1);
        (share.saturating_mul(UNIT_BYTES) / item_bytes.max(1)).max(1)
    }

    /// What is left once `requests` and `units` are spent.
    pub fn less(self, requests: usize, units: usize) -> Budget {
        Budget { requests: self.requests.saturating_sub(requests), units: self.units.saturating_sub(units) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_s_budget_is_the_contract_s_bound() {
        assert_eq!(Budget::page(1), Budget { requests: 24, units: 24 });
        assert_eq!(Budget::page(20), Budget { requests: 24, units: 24 });
        assert_eq!(Budget::page(100), Budget { requests: 40, units: 80 });
        assert_eq!(Budget::page(60), Budget { requests: 32, units: 52 });
        assert_eq!(Budget::page(20).less(30, 2), Budget { requests: 0, units: 22 });
        // 9 units over 3 queries: 3 each, 24 items of 512 bytes.
        assert_eq!(Budget { requests: 3, units: 9 }.holds(3, 512), 24);
        assert_eq!(Budget { requests: 3, units: 0 }.holds(3, 8192), 1);
        assert_eq!(Budget { requests: 1, units: usize::MAX }.holds(1, 1), usize::MAX);
        // 32 items billed 9 units: more than 1,024 bytes each; 1 item of 3.
        assert_eq!((least_item_bytes(9, 32), least_item_bytes(3, 1), least_item_bytes(1, 5)), (1024, 8192, 0));
    }
}
