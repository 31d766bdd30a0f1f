//! What the mix costs in DynamoDB at its documented on-demand prices
//! (us-east-1, since November 2024): $0.625 per million write request
//! units and $0.125 per million read request units. The model's read units
//! are read request units (an eventually consistent 4 KB read is half of
//! one), its write units write request units (a transaction's write counts
//! twice, each index copy once), so the price is their sum at those rates,
//! per million requests of the mix; and the same for each kind alone.

use std::collections::BTreeMap;

use crate::kinds::Kind;
use crate::{evaluate, Load, Mix};

/// Dollars per million write request units.
pub const WRU_USD: f64 = 0.625;
/// Dollars per million read request units.
pub const RRU_USD: f64 = 0.125;

/// Units per request and their price.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    /// Read request units per request.
    pub rru: f64,
    /// Write request units per request.
    pub wru: f64,
}

impl Price {
    /// Dollars per million requests.
    pub fn usd_per_million(&self) -> f64 {
        self.rru * RRU_USD + self.wru * WRU_USD
    }
}

/// The units per request of a load of `requests` per second. A coalesced
/// aggregate write happens at most once per stream batch.
pub fn of(load: &Load, requests: f64, batches_per_second: f64) -> Price {
    let rru = load.rcu.values().fold(0.0, |a, b| a + b);
    let wru = load.wcu.values().fold(0.0, |a, b| a + b) + coalesced(load, &load.coalesced_wcu, batches_per_second);
    Price { rru: per(rru, requests), wru: per(wru, requests) }
}

/// Units written by coalesced writes, by partition: each partition's at
/// most once per stream batch.
fn coalesced(load: &Load, written: &BTreeMap<(String, String), f64>, batches_per_second: f64) -> f64 {
    let mut units = 0.0;
    for (key, w) in written {
        let rate = load.coalesced_rate.get(key).copied().unwrap_or(0.0);
        units += if rate > 0.0 { w * (batches_per_second / rate).min(1.0) } else { 0.0 };
    }
    units
}

/// Units per request of a load of `requests` per second.
fn per(units: f64, requests: f64) -> f64 {
    if requests > 0.0 {
        units / requests
    } else {
        0.0
    }
}

/// The floor of a load of `requests` per second: what it would cost if each
/// request paid only for the bytes it reads and the items and index keys
/// it writes, so we know how far from the limit the design is.
pub fn floor(load: &Load, requests: f64, batches_per_second: f64) -> Price {
    let wru = load.floor_wru + coalesced(load, &load.floor_coalesced, batches_per_second);
    Price { rru: per(load.floor_rru, requests), wru: per(wru, requests) }
}

/// The write units per request that transactions add to a load of
/// `requests` per second (the second unit of each item they write):
/// without them, the mix would pay one unit per item and index key.
pub fn premium(load: &Load, requests: f64, batches_per_second: f64) -> f64 {
    per(load.premium_wcu + coalesced(load, &load.premium_coalesced, batches_per_second), requests)
}

/// Each kind of the mix alone, at its own rate.
pub fn by_kind(mix: &Mix, batches_per_second: f64) -> Result<BTreeMap<Kind, Price>, String> {
    let mut out = BTreeMap::new();
    for (kind, rate) in &mix.requests_per_second {
        let requests_per_second = BTreeMap::from([(*kind, *rate)]);
        let alone = Mix { requests_per_second, sales_accepted: Some(mix.accepted_share()), ..mix.clone() };
        out.insert(*kind, of(&evaluate(&alone)?, *rate, batches_per_second));
    }
    Ok(out)
}

/// Prints the price table and says whether the mix is within its ceiling.
pub fn report(mix: &Mix, load: &Load, batches_per_second: f64) -> Result<bool, String> {
    let total: f64 = mix.requests_per_second.values().sum();
    let price = of(load, total, batches_per_second);
    println!("{:<24} {:>9} {:>9} {:>14}", "price per request kind", "RRU/req", "WRU/req", "$ per million");
    for (kind, p) in by_kind(mix, batches_per_second)? {
        println!("{:<24} {:>9.2} {:>9.2} {:>14.2}", kind.name().to_owned(), p.rru, p.wru, p.usd_per_million());
    }
    let usd = price.usd_per_million();
    let low = floor(load, total, batches_per_second);
    println!(
        "the floor: {:.2} RRU and {:.2} WRU per request, ${:.2} per million (each request paying only for its bytes)",
        low.rru,
        low.wru,
        low.usd_per_million()
    );
    let plain = Price { rru: price.rru, wru: price.wru - premium(load, total, batches_per_second) };
    println!(
        "without transactions: {:.2} WRU per request, ${:.2} per million (each item and index key written at one unit)",
        plain.wru,
        plain.usd_per_million()
    );
    println!(
        "the mix: {:.2} RRU and {:.2} WRU per request, ${usd:.2} per million requests (ceiling ${:.2})",
        price.rru, price.wru, mix.price_ceiling
    );
    // A global table charges each write in every region it reaches
    // (replicated write units, at the write price); reads stay local.
    let global = Price { rru: price.rru, wru: price.wru * 2.0 };
    println!(
        "in a global table of 2 regions: ${:.2} per million requests (every write charged in both; docs/regions.md)",
        global.usd_per_million()
    );
    if usd > mix.price_ceiling {
        println!("FAIL: the mix costs ${usd:.2} per million requests, above its ceiling of ${:.2}", mix.price_ceiling);
        return Ok(false);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_million_requests_of_one_unit_each_cost_the_documented_prices() {
        let read = Price { rru: 1.0, wru: 0.0 };
        let write = Price { rru: 0.0, wru: 1.0 };
        assert_eq!((read.usd_per_million(), write.usd_per_million()), (0.125, 0.625));
        let mut load = Load::default();
        load.rcu.insert(("table".into(), "A".into()), 3.0);
        load.wcu.insert(("table".into(), "A".into()), 2.0);
        load.coalesced_wcu.insert(("table".into(), "B".into()), 4.0);
        // Written 8 times a second, coalesced into 2 batches a second.
        load.coalesced_rate.insert(("table".into(), "B".into()), 8.0);
        assert_eq!(of(&load, 2.0, 2.0), Price { rru: 1.5, wru: (2.0 + 1.0) / 2.0 });
        // The floor counts bytes, not units, and coalesces as the price does.
        load.floor_rru = 0.3;
        load.floor_wru = 0.6;
        load.floor_coalesced.insert(("table".into(), "B".into()), 0.8);
        assert_eq!(floor(&load, 2.0, 2.0), Price { rru: 0.15, wru: (0.6 + 0.2) / 2.0 });
        // The premium: a transaction's second unit per item, coalesced alike.
        load.premium_wcu = 1.0;
        load.premium_coalesced.insert(("table".into(), "B".into()), 2.0);
        assert_eq!(premium(&load, 2.0, 2.0), (1.0 + 0.5) / 2.0);
    }
}
