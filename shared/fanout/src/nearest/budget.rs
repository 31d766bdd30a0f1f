//! What a near page may read: the contract's bound per page, in DynamoDB
//! requests and 4 KB read units (0.5 RCU each, eventually consistent).
//!
//! Each round's asks are sized so that what they read fits what is left,
//! every item counted at the largest size the page has read (a typical
//! item's before it has read any); a page stops (`stopped_early`) when the
//! next cell to read does not fit, once it has looked at an item (so that
//! its cursor moves on). Before that it reads on as if it had no budget: a
//! crowd beside the point must be read whole before any of it comes out,
//! and every cell at a pole is as near as the others. So a page can pass
//! its bound there, and where its items are larger than any it read
//! before (docs/capacity.md, "The worst case per route", says by how much).

/// The read unit: 4 KB.
pub(super) const UNIT_BYTES: usize = 4096;
/// Items an answer must hold for its units to tell their size (each
/// answer's units are rounded up: by at most a unit over this many).
pub(super) const SIZED_BY: usize = 8;
/// A typical item's bytes: a listing's card in the near index.
pub(super) const TYPICAL_ITEM_BYTES: usize = 512;

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

    /// How many of a round's asks (each sending the queries given, nearest
    /// first) fit what is left, a request and a unit per query, and the
    /// requests they send.
    pub(super) fn fit(self, queries: impl Iterator<Item = usize>) -> (usize, usize) {
        let (mut fit, mut requests) = (0, 0);
        for q in queries {
            if requests + q > self.requests.min(self.units) {
                break;
            }
            (fit, requests) = (fit + 1, requests + q);
        }
        (fit, requests)
    }

    /// The items one query of `requests` may ask for: the units left shared
    /// between them, each item of `item_bytes` (at least one).
    pub(super) fn holds(self, requests: usize, item_bytes: usize) -> usize {
        let share = (self.units / requests.max(1)).max(1);
        (share * UNIT_BYTES / item_bytes.max(1)).max(1)
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
        // Asks of 1, 2 and 1 queries in 3 requests and 9 units: two fit.
        assert_eq!(Budget { requests: 3, units: 9 }.fit([1, 2, 1].into_iter()), (2, 3));
        assert_eq!(Budget { requests: 9, units: 2 }.fit([1, 2].into_iter()), (1, 1));
        // 9 units over 3 queries: 3 each, 24 items of 512 bytes.
        assert_eq!(Budget { requests: 3, units: 9 }.holds(3, 512), 24);
        assert_eq!(Budget { requests: 3, units: 0 }.holds(3, 8192), 1);
    }
}
