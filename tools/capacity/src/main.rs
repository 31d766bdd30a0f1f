//! `./dev capacity [--mix FILE]`: the capacity model. A traffic mix (the
//! checked-in `tools/capacity/mix.json` by default) is evaluated request by
//! request over many draws of its skew (the hot category, seller, listing,
//! product and brand with their shares; fresh buyers, orders and new
//! listings), each request's item actions derived from the key design
//! (`requests.rs`), priced by DynamoDB's documented rules:
//!
//! - reads: 4 KB units, 0.5 RCU eventually consistent, 1 RCU strongly; a
//!   Query sums the sizes of the items it reads before rounding;
//! - writes: 1 KB units, 1 WCU, 2 WCU in a transaction (condition checks
//!   included, priced as the write they guard); each index copy a write
//!   rewrites is 1 WCU per KB on that index's partition (a change rewrites
//!   the copy when it moves the item's key there or changes an attribute
//!   the index holds: any, but in GSI5, which holds the cards);
//! - a partition (table or index) serves at most 3,000 RCU/s and 1,000
//!   WCU/s; two transactions on one item in flight together cancel.
//!
//! It prints the hottest partitions with their load at 1x and the multiple
//! at which each crosses a limit, the hot items written by transactions
//! with the share of each second they are held ([`held`]), the stream processor's
//! records per second against what the template's settings allow, and the
//! mix's price per million requests ([`price`]). Exits 1 when a partition
//! crosses a limit below 1000x (but those named with `--allow "INDEX
//! PARTITION"`, and those of the mix's `knownHot` while they reach their
//! floor), when a hot item is held more than a fifth of each second below
//! 1000x (but `knownContended` above its floor), or the price passes the
//! mix's `priceCeiling`. `--all` prints every partition.

mod examples;
mod explain;
mod fanout_reads;
mod held;
mod kinds;
mod mix;
mod price;
mod requests;

use std::collections::BTreeMap;

use domain::ids::{BrandId, CategoryId, ListingId, OrderId, ProductId, ReviewId, UserId};
use examples::Ids;
use keyschema::table::Index;
use mix::Mix;
use requests::Action;

/// Draws of the skew per request kind.
const DRAWS: usize = 200;
/// Partition limits.
const MAX_RCU: f64 = 3000.0;
const MAX_WCU: f64 = 1000.0;
const MULTIPLES: [f64; 4] = [1.0, 10.0, 100.0, 1000.0];

/// Load at 1x: per partition, per item in transactions, and coalesced
/// writes (one per stream batch and aggregate, capped by the batches).
#[derive(Default)]
struct Load {
    rcu: BTreeMap<(String, String), f64>,
    wcu: BTreeMap<(String, String), f64>,
    coalesced_wcu: BTreeMap<(String, String), f64>,
    coalesced_rate: BTreeMap<(String, String), f64>,
    tx_per_item: BTreeMap<String, f64>,
    records: f64,
    /// The floor ([`price`]): read and write units if each request paid
    /// only for the bytes it reads and the items and index keys it writes
    /// (no rounding up per item or request, no transaction premium, no
    /// condition checks); coalesced writes by partition.
    floor_rru: f64,
    floor_wru: f64,
    floor_coalesced: BTreeMap<(String, String), f64>,
    /// What transactions add: the second unit of each item a transaction
    /// writes (`price::premium`); coalesced writes by partition.
    premium_wcu: f64,
    premium_coalesced: BTreeMap<(String, String), f64>,
}

fn index_name(index: Index) -> String {
    format!("{index:?}").to_uppercase().replace("TABLE", "table")
}

fn units(kb: f64, unit: f64) -> f64 {
    (kb / unit).ceil().max(1.0)
}

/// The items (`pk / sk`) or partitions (`pk`, every item in it) of the
/// skew's hot entities (those [`ids_of`] draws in each dimension's share),
/// and of nothing else: a category and a brand share their partitions.
fn hot_partitions() -> Result<Vec<String>, String> {
    let item = |k: &keyschema::Key| format!("{} / {}", k.pk, k.sk);
    let e = |e: keyschema::SchemaError| e.to_string();
    // As `ids_of` makes the hot listing and product (its draw `DRAWS`).
    let with = |tag: u128| ulid::Ulid::from_parts(1_790_000_000_000, (tag << 64) | DRAWS as u128);
    let p = |s: &str| s.parse::<CategoryId>().map_err(|e| e.to_string());
    Ok(vec![
        keyschema::keys::listing(&ListingId::from_ulid(with(1))).map_err(e)?.pk.clone(),
        keyschema::keys::product(&ProductId::from_ulid(with(2))).map_err(e)?.pk.clone(),
        keyschema::keys::category_rating(&p("books")?).map_err(e)?.pk.clone(),
        item(&keyschema::keys::category(&p("books")?).map_err(e)?.into_key()),
        keyschema::keys::user(&"mega-seller".parse::<UserId>().map_err(|e| e.to_string())?).map_err(e)?.pk.clone(),
        item(&keyschema::keys::brand(&"acme".parse::<BrandId>().map_err(|e| e.to_string())?).map_err(e)?.into_key()),
    ])
}

/// The entities of draw `j`: each dimension's hot entity in its share of
/// the draws (spread evenly), a cold one of its own otherwise.
fn ids_of(j: usize, mix: &Mix) -> Result<Ids, String> {
    let place = |lat, lon| domain::geo::Location::new(lat, lon).ok_or(format!("no place at {lat}, {lon}"));
    let hot = |dimension: &str, offset: usize| {
        let share = mix.hot_share.get(dimension).copied().unwrap_or(0.0);
        (((j + offset * 37) % DRAWS) as f64) < share * DRAWS as f64
    };
    let ulid = |tag: u128, n: usize| ulid::Ulid::from_parts(1_790_000_000_000, (tag << 64) | n as u128);
    let p = |s: String| s.parse::<CategoryId>().map_err(|e| format!("{s}: {e}"));
    let hot_term = domain::words::Term::prefix("s", 1);
    Ok(Ids {
        category: if hot("category", 0) { p("books".into())? } else { p(format!("cat-{j}"))? },
        category_shards: if hot("category", 0) { mix.hot_category_shards } else { 1 },
        brand: (if hot("brand", 1) { "acme".to_owned() } else { format!("brand-{j}") })
            .parse::<BrandId>()
            .map_err(|e| e.to_string())?,
        seller: (if hot("seller", 2) { "mega-seller".to_owned() } else { format!("seller-{j}") })
            .parse::<UserId>()
            .map_err(|e| e.to_string())?,
        listing: ListingId::from_ulid(ulid(1, if hot("listing", 3) { DRAWS } else { j })),
        product: ProductId::from_ulid(ulid(2, if hot("product", 4) { DRAWS } else { j })),
        product_shards: if hot("product", 4) { mix.hot_product_stock_shards } else { 1 },
        // Orders spread over the shares at random: draws in turn here.
        stock_shard: if hot("product", 4) { (j % usize::from(mix.hot_product_stock_shards.max(1))) as u16 } else { 0 },
        buyer: format!("buyer-{j}").parse::<UserId>().map_err(|e| e.to_string())?,
        new_listing: ListingId::from_ulid(ulid(3, j)),
        sold_listing: ListingId::from_ulid(ulid(6, j)),
        order: OrderId::from_ulid(ulid(4, j)),
        review: ReviewId::from_ulid(ulid(5, j)),
        // The hottest term, `s`, is split over four lists by listing.
        term: if hot("term", 5) { hot_term.key_for(ulid(3, j)) } else { format!("w{j}") },
        searched: if hot("term", 5) {
            hot_term.list_keys()
        } else {
            vec![format!("w{j}"), format!("w{}", ListingId::from_ulid(ulid(3, j)))]
        },
        place: if hot("city", 6) {
            // The city's draws are those whose turn is below its share.
            let share = mix.hot_share.get("city").copied().unwrap_or(0.0);
            crate::fanout_reads::city_spot((j + 6 * 37) % DRAWS, (share * DRAWS as f64).ceil() as usize)
        } else {
            place(-60.0 + (j % 120) as f64, (j * 7 % 360) as f64 - 180.0)?
        },
        in_city: hot("city", 6),
        sale_accepted: (((j + 7 * 37) % DRAWS) as f64) < mix.accepted_share() * DRAWS as f64,
    })
}

fn evaluate(mix: &Mix) -> Result<Load, String> {
    let mut load = Load::default();
    let total: f64 = mix.requests_per_second.values().sum();
    for (kind, rate) in &mix.requests_per_second {
        let weight = rate / DRAWS as f64;
        for j in 0..DRAWS {
            let ids = ids_of(j, mix)?;
            let actions = kinds::actions(*kind, &ids, mix.item_kb, mix.page_items)
                .map_err(|e| format!("{}: {e}", kind.name()))?;
            for action in actions {
                match action {
                    Action::Read { index, pk, items, kb, consistent, ttl, times } => {
                        let rcu = units(items * kb, 4.0) * if consistent { 1.0 } else { 0.5 };
                        // Cached: each function instance reads once per TTL;
                        // instances ~ all requests/s x their duration.
                        let fresh = ttl.map_or(1.0, |ttl| (total * mix.request_seconds / (ttl * rate)).min(1.0));
                        *load.rcu.entry((index_name(index), pk)).or_default() += weight * rcu * fresh * times;
                        let bytes = items * kb / 4.0 * if consistent { 1.0 } else { 0.5 };
                        load.floor_rru += weight * bytes * fresh * times;
                    }
                    Action::Write { key, kb, tx, check, copies, stream, coalesced, spread } => {
                        let wcu = units(kb, 1.0) * if tx { 2.0 } else { 1.0 };
                        if !check {
                            let keys = (1 + copies.len()) as f64;
                            if coalesced {
                                let partition = ("table".to_owned(), key.pk.clone());
                                *load.floor_coalesced.entry(partition).or_default() += weight * kb * keys;
                            } else {
                                load.floor_wru += weight * kb * keys;
                            }
                        }
                        let mut written = vec![(("table".to_owned(), key.pk.clone()), wcu)];
                        written.extend(copies.into_iter().map(|(index, pk)| ((index_name(index), pk), units(kb, 1.0))));
                        for (partition, wcu) in written {
                            if coalesced {
                                *load.coalesced_rate.entry(partition.clone()).or_default() += weight;
                                *load.coalesced_wcu.entry(partition).or_default() += weight * wcu;
                            } else {
                                *load.wcu.entry(partition).or_default() += weight * wcu;
                            }
                        }
                        if tx {
                            let extra = weight * units(kb, 1.0);
                            if coalesced {
                                *load.premium_coalesced.entry(("table".to_owned(), key.pk.clone())).or_default() +=
                                    extra;
                            } else {
                                load.premium_wcu += extra;
                            }
                            let item = match spread {
                                1 => format!("{} / {}", key.pk, key.sk),
                                n => format!("{} / <one of {n}>", key.pk),
                            };
                            *load.tx_per_item.entry(item).or_default() += weight / f64::from(spread.max(1));
                        }
                        if stream && !check {
                            load.records += weight;
                        }
                    }
                }
            }
        }
    }
    Ok(load)
}

/// The stream processor's reserved concurrency and parallelization factor
/// as template.yaml deploys them by default.
fn template_stream_settings() -> Result<(f64, f64), String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../template.yaml");
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let default_of = |parameter: &str| -> Option<f64> {
        let at = text.find(&format!("\n  {parameter}:"))?;
        let rest = &text[at..];
        let line = rest.lines().find(|l| l.trim_start().starts_with("Default:"))?;
        line.trim_start().trim_start_matches("Default:").trim().parse().ok()
    };
    let reserved =
        default_of("StreamProcessorReservedConcurrency").ok_or("template.yaml: StreamProcessorReservedConcurrency")?;
    let parallelization = default_of("StreamProcessorParallelizationFactor").unwrap_or(1.0);
    Ok((reserved, parallelization))
}

/// The lowest multiple at which `per_x(m)` passes `limit` (bisection over 1..10^6), if any.
fn crossing(per_x: impl Fn(f64) -> f64, limit: f64) -> Option<f64> {
    if per_x(1_000_000.0) <= limit {
        return None;
    }
    let (mut lo, mut hi) = (0.0f64, 1_000_000.0f64);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if per_x(mid) > limit {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = match args.iter().position(|a| a == "--mix") {
        Some(i) => args.get(i + 1).cloned().unwrap_or_default(),
        None => concat!(env!("CARGO_MANIFEST_DIR"), "/mix.json").to_owned(),
    };
    // `--allow "GSI7 CATEGORY#books"`: a partition known to cross (the
    // work left in issue 20); any other crossing still fails.
    let allowed: Vec<String> = args.windows(2).filter(|w| w[0] == "--allow").map(|w| w[1].clone()).collect();
    let all = args.iter().any(|a| a == "--all");
    // `--explain ["KIND" ...]`: every action of those kinds (all if none).
    if let Some(i) = args.iter().position(|a| a == "--explain") {
        let kinds: Result<Vec<kinds::Kind>, String> =
            args[i + 1..].iter().take_while(|a| !a.starts_with("--")).map(|a| a.parse::<kinds::Kind>()).collect();
        let shown = kinds.and_then(|kinds| {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
            let mix: Mix = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
            explain::report(&mix, &kinds)
        });
        if let Err(e) = shown {
            eprintln!("capacity: {e}");
            std::process::exit(2);
        }
        return;
    }
    match run(&path, &allowed, all) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("capacity: {e}");
            std::process::exit(2);
        }
    }
}

fn run(path: &str, allowed: &[String], all: bool) -> Result<bool, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mix: Mix = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    let load = evaluate(&mix)?;
    let total: f64 = mix.requests_per_second.values().sum();
    let batches_per_second = mix.stream.shards / mix.stream.batch_seconds;
    println!("capacity model: {path}, {total} requests/s at 1x, {DRAWS} draws of the skew per request kind");
    println!("limits per partition: {MAX_RCU} RCU/s, {MAX_WCU} WCU/s; coalesced aggregate writes capped at {batches_per_second:.0} batches/s");
    println!();
    println!("{:<6} {:<58} {:>9} {:>9} {:>10}", "index", "partition", "RCU/s 1x", "WCU/s 1x", "limit at");
    let mut rows = Vec::new();
    let keys: std::collections::BTreeSet<_> =
        load.rcu.keys().chain(load.wcu.keys()).chain(load.coalesced_wcu.keys()).cloned().collect();
    for key in keys {
        let r = load.rcu.get(&key).copied().unwrap_or(0.0);
        let w = load.wcu.get(&key).copied().unwrap_or(0.0);
        let c = load.coalesced_wcu.get(&key).copied().unwrap_or(0.0);
        // One write per batch and aggregate at most, whatever the rate.
        let c_rate = load.coalesced_rate.get(&key).copied().unwrap_or(0.0);
        let wcu_at = |m: f64| w * m + if c_rate > 0.0 { c * m.min(batches_per_second / c_rate) } else { 0.0 };
        let at = [crossing(|m| r * m, MAX_RCU), crossing(wcu_at, MAX_WCU)]
            .into_iter()
            .flatten()
            .fold(f64::INFINITY, f64::min);
        rows.push((at, key, r, w + c));
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.2.total_cmp(&a.2)));
    let mut ok = true;
    for (at, (index, pk), r, w) in rows.iter().take(if all { usize::MAX } else { 14 }) {
        let flag = if *at < 1000.0 { "  <- below 1000x" } else { "" };
        let at = if at.is_finite() { format!("{at:.0}x") } else { "never".into() };
        println!("{index:<6} {pk:<58} {r:>9.2} {w:>9.2} {at:>10}{flag}");
    }
    let over: Vec<(String, f64)> =
        rows.iter().filter(|r| r.0 < 1000.0).map(|r| (format!("{} {}", r.1 .0, r.1 .1), r.0)).collect();
    // Allowed: named with --allow, or known hot in the mix and still at its floor.
    let known: Vec<&String> = over
        .iter()
        .filter(|(k, at)| allowed.contains(k) || mix.known_hot.get(k).is_some_and(|floor| at >= floor))
        .map(|(k, _)| k)
        .collect();
    if known.len() < over.len() {
        ok = false;
    }
    if !known.is_empty() {
        println!("known to cross below 1000x (mix.json knownHot, or --allow): {known:?}");
    }
    for (k, floor) in &mix.known_hot {
        if let Some((_, at)) = over.iter().find(|(o, at)| o == k && at < floor) {
            println!("FAIL: {k} crosses at {at:.0}x, below its known floor of {floor:.0}x");
        }
    }
    println!();
    let held = held::report(&load.tx_per_item, mix.transaction_seconds, &mix.known_contended, &hot_partitions()?);
    println!();
    // The stream has about a shard per table partition: one per 1,000 WCU/s
    // of table writes (at least the mix's starting count).
    let (reserved, parallelization) = template_stream_settings()?;
    let table_wcu: f64 =
        load.wcu.iter().chain(&load.coalesced_wcu).filter(|((i, _), _)| i == "table").map(|(_, w)| w).sum();
    // Reserved concurrency 0: none, the invocations follow the shards.
    let cap = if reserved > 0.0 { reserved } else { f64::INFINITY };
    let capacity_at = |m: f64| {
        let shards = (m * table_wcu / MAX_WCU).ceil().max(mix.stream.shards);
        cap.min(shards * parallelization) * mix.stream.records_per_invocation_second
    };
    let enough_up_to = crossing(|m| m * load.records - capacity_at(m), 0.0).unwrap_or(f64::INFINITY);
    let needed = (1000.0 * load.records / mix.stream.records_per_invocation_second).ceil();
    let shards_1000x = (1000.0 * table_wcu / MAX_WCU).ceil().max(mix.stream.shards);
    println!(
        "stream processor: {:.1} records/s at 1x; template: reserved concurrency {}, parallelization {parallelization}, \
         {:.0} records/s per invocation: enough up to {}; 1000x needs {needed} concurrent invocations \
         ({shards_1000x} shards x {parallelization} give {})",
        load.records,
        if reserved > 0.0 { reserved.to_string() } else { "none".to_owned() },
        mix.stream.records_per_invocation_second,
        if enough_up_to.is_finite() { format!("{enough_up_to:.0}x") } else { "any multiple".to_owned() },
        cap.min(shards_1000x * parallelization),
    );
    let stream_ok = enough_up_to >= 1000.0;
    if !stream_ok {
        println!("FAIL: the stream processor falls behind below 1000x (template defaults above)");
    }
    println!();
    let priced = price::report(&mix, &load, batches_per_second)?;
    println!();
    for m in MULTIPLES {
        let n = rows.iter().filter(|r| r.0 <= m).count();
        println!("at {m:>6}x: {n} partitions over a limit");
    }
    println!(
        "{}",
        if ok && over.is_empty() {
            "no key over a limit below 1000x"
        } else if ok {
            "no key over a limit below 1000x but the allowed ones"
        } else {
            "FAIL: keys over a limit below 1000x (above)"
        }
    );
    Ok(ok && stream_ok && priced && held)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
