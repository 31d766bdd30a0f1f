//! What a page may read: the contract's bound per page, in DynamoDB
//! requests and 4 KB read units (0.5 RCU each, eventually consistent), for
//! the near search ([`crate::nearest`]) and the pages over shards
//! ([`crate::page_planner`]).
//!
//! Near me: once a page has looked at an item, each round's asks are sized so that
//! what they read fits what is left, every item counted at the most the
//! answers so far show items to be on average (a typical item's size
//! before); a page stops (`stopped_early`) when the next cell to read does
//! not fit (its cursor goes on after that item). Before it has looked at an
//! item it reads on as if it had no budget where its cursor could not move
//! on (a crowd beside the point must be read whole before any of it comes
//! out); but the rest of a crowded place (a full-length cell) it reads only
//! as far as what is left holds, and stops there if its cursor reads that
//! crowd on, and while it has found nothing beyond its cursor (every cell
//! at a pole is as near as the others) it reads only the cells that fit,
//! and stops where its cursor can skip them (whole cells, or parts of what
//! was left of the first it left in part). So a page can pass its bound
//! where it has not looked at an item yet, and by part of a round where its
//! items are larger than those read before (docs/capacity.md, "The worst
//! case per route", says by how much). A page that stops leaves unread for the next what it
//! read beyond its last item, so a walk of short pages reads more in all
//! than one of full pages.

/// The read unit: 4 KB.
pub(crate) const UNIT_BYTES: usize = 4096;

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

    /// How many of a round's asks (each sending the queries given, nearest
    /// first) fit what is left, a request and a unit per query, and the
    /// requests they send.
    pub(crate) fn fit(self, queries: impl Iterator<Item = usize>) -> (usize, usize) {
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
        // Asks of 1, 2 and 1 queries in 3 requests and 9 units: two fit.
        assert_eq!(Budget { requests: 3, units: 9 }.fit([1, 2, 1].into_iter()), (2, 3));
        assert_eq!(Budget { requests: 9, units: 2 }.fit([1, 2].into_iter()), (1, 1));
        // 9 units over 3 queries: 3 each, 24 items of 512 bytes.
        assert_eq!(Budget { requests: 3, units: 9 }.holds(3, 512), 24);
        assert_eq!(Budget { requests: 3, units: 0 }.holds(3, 8192), 1);
        assert_eq!(Budget { requests: 1, units: usize::MAX }.holds(1, 1), usize::MAX);
        // 32 items billed 9 units: more than 1,024 bytes each; 1 item of 3.
        assert_eq!((least_item_bytes(9, 32), least_item_bytes(3, 1), least_item_bytes(1, 5)), (1024, 8192, 0));
    }
}
