//! The traffic mix the model prices and loads (tools/capacity/mix.json):
//! requests per second by kind, the skew, item sizes, the stream's
//! settings and the known exceptions (docs/capacity.md explains each).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::kinds;
use crate::requests::Sizes;

/// tools/capacity/mix.json.
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Mix {
    pub(crate) requests_per_second: BTreeMap<kinds::Kind, f64>,
    pub(crate) hot_share: BTreeMap<String, f64>,
    /// The `listingShards` the hot category is created with (others: 1).
    pub(crate) hot_category_shards: u16,
    /// The `stockShards` the hot product is created with (others: 1).
    #[serde(default = "one")]
    pub(crate) hot_product_stock_shards: u16,
    pub(crate) item_kb: Sizes,
    pub(crate) page_items: f64,
    pub(crate) transaction_seconds: f64,
    pub(crate) request_seconds: f64,
    pub(crate) stream: Stream,
    /// Partitions ("INDEX PARTITION") known to cross a limit below 1000x,
    /// each with the multiple it must still reach (docs/capacity.md says why).
    #[serde(default)]
    pub(crate) known_hot: BTreeMap<String, f64>,
    /// The most the mix may cost, in dollars per million requests
    /// ([`crate::price`]); none if not given.
    #[serde(default = "no_ceiling")]
    pub(crate) price_ceiling: f64,
    /// Items (`pk / sk`) or partitions (`pk`) known to be held more than
    /// a fifth of each second below 1000x, each with the multiple it must
    /// still reach ([`crate::held`]; docs/capacity.md says why).
    #[serde(default)]
    pub(crate) known_contended: BTreeMap<String, f64>,
    /// The share of listing sales that are accepted, kept when a kind is
    /// priced alone ([`Mix::accepted_share`]).
    #[serde(skip)]
    pub(crate) sales_accepted: Option<f64>,
}

impl Mix {
    /// The share of listing sales that are accepted (confirmed): those of
    /// the mix's listing orders its cancels do not undo (every cancel is
    /// of a pending listing order in the model).
    pub(crate) fn accepted_share(&self) -> f64 {
        let rate = |kind| self.requests_per_second.get(&kind).copied().unwrap_or(0.0);
        let sold = rate(kinds::Kind::PlaceListingOrder);
        self.sales_accepted.unwrap_or(if sold > 0.0 {
            (1.0 - rate(kinds::Kind::CancelOrder) / sold).clamp(0.0, 1.0)
        } else {
            1.0
        })
    }
}

fn no_ceiling() -> f64 {
    f64::INFINITY
}

fn one() -> u16 {
    1
}

/// The stream processor's settings.
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Stream {
    /// Shards at 1x (more as the table's partitions grow).
    pub(crate) shards: f64,
    /// How long one batch takes.
    pub(crate) batch_seconds: f64,
    /// Records one invocation processes per second.
    pub(crate) records_per_invocation_second: f64,
}
