//! Stock that scales: a product's stock shared over several items (the
//! product item and [`ProductStock`] items beside it), so that concurrent
//! orders of a product many buy at once take from different items; how
//! units are shared, and which shares an order line takes from.

use serde::{Deserialize, Serialize};

use crate::ids::ProductId;
use crate::values::Money;

/// The largest stock level a product may hold (`Product::MAX_STOCK`).
pub const MAX_STOCK: u32 = 1_000_000_000;
/// The most items a product's stock is shared over.
pub const MAX_SHARDS: u16 = 64;

/// A share of a product's stock beyond the first (which the product item
/// holds): `#STOCK#<shard>` beside the product in its partition. An order
/// takes its units from one share or a few, so a product many buy at once
/// is not one item every order holds; the product's answer sums them. The
/// price is the product's, copied, so that an order's condition on it
/// needs no check of the product item.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProductStock {
    /// The product.
    pub product_id: ProductId,
    /// Which share (1 up to the product's `stockShards`).
    pub shard: u16,
    /// Its units; never negative.
    pub stock_level: u32,
    /// The product's unit price.
    pub price: Money,
    /// RFC 3339 time the share was made (a stock change sets no time).
    pub updated_at: String,
}

/// Where an order line's units came from when its product's stock is
/// shared: where a cancel gives them back, each share within its cap.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineStock {
    /// The product's `stockShards` when the order took them.
    pub shards: u16,
    /// The units taken from each share.
    pub taken: Vec<Taken>,
}

/// Units taken from one share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taken {
    /// The share.
    pub shard: u16,
    /// Its units.
    pub qty: u32,
}

/// The most share `shard` of `shards` may hold: [`MAX_STOCK`] shared as
/// [`shares`] shares it, so the shares' caps add up to it exactly and any
/// stock up to it, shared, fits.
pub fn share_cap(shard: u16, shards: u16) -> u32 {
    let n = u32::from(shards.max(1));
    MAX_STOCK / n + u32::from(u32::from(shard) < MAX_STOCK % n)
}

/// `units` shared over `shards` as evenly as can be (the first ones a unit
/// more).
pub fn shares(units: u32, shards: u16) -> Vec<u32> {
    let n = u32::from(shards.max(1));
    (0..n).map(|i| units / n + u32::from(i < units % n)).collect()
}

/// The shares ((shard, units)) a line of `qty` units takes from: one
/// holding them all, chosen by `random` among those (so that concurrent
/// orders spread over the shares); else the fullest shares, as many as it
/// takes. `None`: fewer than `qty` units in all.
pub fn choose(shares: &[(u16, u32)], qty: u32, random: u128) -> Option<Vec<(u16, u32)>> {
    let whole: Vec<u16> = shares.iter().filter(|(_, units)| *units >= qty).map(|(shard, _)| *shard).collect();
    if !whole.is_empty() {
        let pick = usize::try_from(random % whole.len() as u128).unwrap_or(0);
        return Some(vec![(whole[pick], qty)]);
    }
    let mut fullest = shares.to_vec();
    fullest.sort_by_key(|(_, units)| std::cmp::Reverse(*units));
    let mut out = Vec::new();
    let mut wanted = qty;
    for (shard, units) in fullest {
        if wanted == 0 {
            break;
        }
        let take = wanted.min(units);
        if take > 0 {
            out.push((shard, take));
            wanted -= take;
        }
    }
    (wanted == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_shared_evenly_within_the_maximum() {
        assert_eq!(shares(23, 4), [6, 6, 6, 5]);
        assert_eq!(shares(3, 5), [1, 1, 1, 0, 0]);
        assert_eq!(shares(7, 1), [7]);
        assert_eq!(shares(7, 0), [7], "no shares is one");
        for n in 1..=MAX_SHARDS {
            let caps: Vec<u32> = (0..n).map(|k| share_cap(k, n)).collect();
            assert_eq!(caps.iter().map(|c| u64::from(*c)).sum::<u64>(), u64::from(MAX_STOCK), "{n}");
            // Any stock up to the maximum, shared, fits the caps.
            for units in [0, 1, MAX_STOCK / 2 + 7, MAX_STOCK - 1, MAX_STOCK] {
                assert!(shares(units, n).iter().zip(&caps).all(|(s, c)| s <= c), "{n} {units}");
            }
        }
    }

    #[test]
    fn a_line_takes_one_share_at_random_or_the_fullest_few() {
        let shares = [(0, 3), (1, 0), (2, 5), (3, 1)];
        // Two hold 3 units: each is chosen by some order.
        let picked: std::collections::BTreeSet<u16> =
            (0..20).filter_map(|r| choose(&shares, 3, r)).map(|c| c[0].0).collect();
        assert_eq!(picked, [0, 2].into());
        // None holds 7: the fullest first.
        assert_eq!(choose(&shares, 7, 1), Some(vec![(2, 5), (0, 2)]));
        assert_eq!(choose(&shares, 9, 1), Some(vec![(2, 5), (0, 3), (3, 1)]));
        assert_eq!(choose(&shares, 10, 1), None, "9 in all");
        assert_eq!(choose(&[(0, 0)], 1, 1), None, "sold out");
    }
}
