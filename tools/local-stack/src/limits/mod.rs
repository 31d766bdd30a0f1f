//! A local simulation of DynamoDB's limits: a proxy in front of DynamoDB
//! Local (`./dev up --limits F`, `TestTable::with_limits`) that enforces
//! what the emulator hides.
//!
//! - **Partition throughput**: every partition key, of the table and of
//!   each GSI, gets 3,000 RCU/s and 1,000 WCU/s times the factor `F` (at
//!   `F = 0.001`, 1 WCU/s: 10 requests/s here stand for 10,000). A request
//!   on a partition whose bucket is empty is refused with
//!   `ProvisionedThroughputExceededException`, which the SDK retries.
//!   Reads are charged what DynamoDB Local reports consumed; writes are
//!   priced as DynamoDB documents them (1 WCU per KB, twice that in a
//!   transaction, condition checks included) on the item's partition and
//!   on the partition of every index copy the write might rewrite: the
//!   index keys the item had before (the last seen in a request or an
//!   answer through the proxy) and after (a write that changes nothing
//!   an index holds is charged a copy there too: stricter than DynamoDB).
//!   Buckets hold one second of budget; burst capacity (300 s of unused
//!   budget) and adaptive capacity are left out, so this is stricter than
//!   DynamoDB.
//! - **Transaction conflicts**: a request takes `latency` in flight, during
//!   which it holds the items it writes. A transaction with an item held by
//!   another request in flight is cancelled (`TransactionCanceledException`,
//!   `TransactionConflict` for that item), and so is a single write on an
//!   item an in-flight transaction holds (`TransactionConflictException`).
//!   A transaction retried with the `ClientRequestToken` of one that
//!   committed is passed through (DynamoDB Local answers it from the token).
//!
//! What it counted is [`Stats`] (`GET /_limits` on the local stack). It can
//! be paused (`POST /_limits/pause`, `/_limits/resume`): a load run's setup
//! writes with it paused, as a table filled before the traffic would be.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

mod proxy;
mod request;

use request::{index_partitions, key_of, set_partitions, Facts, Write};

/// Partition limits (per second).
const MAX_RCU: f64 = 3000.0;
const MAX_WCU: f64 = 1000.0;
/// How long a transaction's token is remembered.
const TOKEN_WINDOW: Duration = Duration::from_secs(600);

/// What the simulation enforces.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Limits are scaled by this (a real rate `r` stands for `r / factor`).
    pub factor: f64,
    /// How long each request is in flight (holding its items) before it
    /// reaches DynamoDB Local: DynamoDB's round trip, which the emulator has not.
    pub latency: Duration,
    /// How much longer than `latency` a transaction holds its items. What
    /// decides a conflict is the share of each second an item is held (its
    /// transactions a second x their duration), so the few transactions a
    /// second this machine drives, held 250 ms instead of a real 25 ms, hold
    /// a hot item as ten times as many would (issue 34: `./dev up --limits F
    /// --hold MS`).
    pub hold: Duration,
}

/// What the simulation refused, by partition and by item.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Stats {
    /// Requests proxied.
    pub requests: u64,
    /// Requests refused for throughput, by partition (`GSI7 CATEGORY#books`).
    pub throttled: BTreeMap<String, u64>,
    /// Requests cancelled by a conflict, by item (`pk / sk`).
    pub conflicts: BTreeMap<String, u64>,
    /// Transactions passed through as retries of committed ones.
    pub token_replays: u64,
}

/// A bucket of one second of budget, refilled continuously; it may go
/// below zero (a write larger than what is left), which refuses the next
/// requests until it refills.
#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

type Partition = (&'static str, String);
type ItemKey = (String, String);

#[derive(Default)]
struct State {
    read: HashMap<Partition, Bucket>,
    write: HashMap<Partition, Bucket>,
    /// Items held by requests in flight: (holder, is a transaction).
    held: HashMap<ItemKey, Vec<(u64, bool)>>,
    /// Index partitions of each item, as last seen.
    shadow: HashMap<ItemKey, Vec<Partition>>,
    tokens: HashMap<String, Instant>,
    next: u64,
    stats: Stats,
}

/// The proxy's shared state.
pub struct Limits {
    upstream: String,
    settings: Settings,
    state: Mutex<State>,
    paused: std::sync::atomic::AtomicBool,
}

fn refill(bucket: &mut Bucket, rate: f64, now: Instant) {
    bucket.tokens = (bucket.tokens + rate * now.duration_since(bucket.at).as_secs_f64()).min(rate);
    bucket.at = now;
}

fn partition_name((index, pk): &Partition) -> String {
    format!("{index} {pk}")
}

enum Verdict {
    Pass { holder: u64 },
    Replay,
    Conflict(Vec<bool>),
    Throttled,
}

impl Limits {
    /// Pauses (everything passes, nothing counted) or resumes the simulation.
    pub fn pause(&self, paused: bool) {
        self.paused.store(paused, std::sync::atomic::Ordering::Relaxed);
    }

    /// What was refused so far.
    pub fn stats(&self) -> Stats {
        self.state.lock().map(|s| s.stats.clone()).unwrap_or_default()
    }

    fn decide(&self, facts: &Facts) -> Verdict {
        self.decide_at(facts, Instant::now())
    }

    /// [`Self::decide`] at `now` (tests hold the clock still: buckets refill
    /// with time).
    fn decide_at(&self, facts: &Facts, now: Instant) -> Verdict {
        let Ok(mut state) = self.state.lock() else { return Verdict::Throttled };
        state.stats.requests += 1;
        state.tokens.retain(|_, at| now.duration_since(*at) < TOKEN_WINDOW);
        if let Some(token) = &facts.token {
            if state.tokens.contains_key(token) {
                state.stats.token_replays += 1;
                return Verdict::Replay;
            }
        }
        // Conflicts: a transaction with any held item; a write with an item
        // a transaction holds.
        let conflicting: Vec<bool> = facts
            .writes
            .iter()
            .map(|w| state.held.get(&w.key).is_some_and(|h| h.iter().any(|(_, tx)| facts.transaction || *tx)))
            .collect();
        if conflicting.iter().any(|c| *c) {
            for (Write { key: k, .. }, _) in facts.writes.iter().zip(&conflicting).filter(|(_, c)| **c) {
                *state.stats.conflicts.entry(format!("{} / {}", k.0, k.1)).or_default() += 1;
            }
            return Verdict::Conflict(conflicting);
        }
        // Throughput: every partition read or written (with its index copies).
        let mut written: Vec<(Partition, f64)> = Vec::new();
        for w in &facts.writes {
            written.push((("table", w.key.0.clone()), w.wcu));
            // The copies of every index the item is in, before and after.
            let mut copies = state.shadow.get(&w.key).cloned().unwrap_or_default();
            copies.extend(w.sets.iter().cloned());
            copies.sort();
            copies.dedup();
            // An entry moved within its partition is deleted and put again.
            let moved = copies.iter().filter(|(index, _)| w.moves.contains(index)).cloned().collect::<Vec<_>>();
            written.extend(copies.into_iter().chain(moved).map(|p| (p, 1.0)));
        }
        let (rcu, wcu) = (MAX_RCU * self.settings.factor, MAX_WCU * self.settings.factor);
        let empty = |buckets: &mut HashMap<Partition, Bucket>, p: &Partition, rate: f64| {
            let bucket = buckets.entry(p.clone()).or_insert(Bucket { tokens: rate, at: now });
            refill(bucket, rate, now);
            // Empty: less than a thousandth of a second's budget left.
            bucket.tokens < rate / 1000.0
        };
        let state = &mut *state;
        let throttled = facts
            .reads
            .iter()
            .find(|p| empty(&mut state.read, p, rcu))
            .cloned()
            .or_else(|| written.iter().map(|(p, _)| p).find(|p| empty(&mut state.write, p, wcu)).cloned());
        if let Some(p) = throttled {
            *state.stats.throttled.entry(partition_name(&p)).or_default() += 1;
            return Verdict::Throttled;
        }
        for (p, units) in written {
            if let Some(b) = state.write.get_mut(&p) {
                b.tokens -= units;
            }
        }
        state.next += 1;
        let holder = state.next;
        for w in &facts.writes {
            state.held.entry(w.key.clone()).or_default().push((holder, facts.transaction));
        }
        Verdict::Pass { holder }
    }

    /// After the answer: the holds released, reads charged, the index keys
    /// of the items seen remembered, a committed transaction's token kept.
    fn settle(&self, op: &str, facts: &Facts, holder: u64, request: &Value, answer: Option<&Value>) {
        let Ok(mut state) = self.state.lock() else { return };
        for w in &facts.writes {
            if let Some(h) = state.held.get_mut(&w.key) {
                h.retain(|(id, _)| *id != holder);
                if h.is_empty() {
                    state.held.remove(&w.key);
                }
            }
        }
        let Some(answer) = answer else { return };
        let consumed = |c: &Value| c["ReadCapacityUnits"].as_f64().or_else(|| c["CapacityUnits"].as_f64());
        if let (Some(first), Some(units)) = (facts.reads.first(), consumed(&answer["ConsumedCapacity"])) {
            if op != "BatchGetItem" {
                if let Some(b) = state.read.get_mut(first) {
                    b.tokens -= units;
                }
            }
        }
        if op == "BatchGetItem" {
            for p in &facts.reads {
                if let Some(b) = state.read.get_mut(p) {
                    b.tokens -= 0.5;
                }
            }
        }
        let mut seen: Vec<&Value> = Vec::new();
        seen.extend(answer.get("Item"));
        seen.extend(answer.get("Attributes"));
        seen.extend(answer["Items"].as_array().into_iter().flatten());
        for items in answer["Responses"].as_object().into_iter().flat_map(|o| o.values()) {
            seen.extend(items.as_array().into_iter().flatten());
        }
        if op == "PutItem" {
            seen.push(&request["Item"]);
        }
        let mut learned: Vec<(ItemKey, Vec<Partition>)> =
            seen.into_iter().filter_map(|i| Some((key_of(i)?, index_partitions(i)))).collect();
        if op == "TransactWriteItems" {
            for action in request["TransactItems"].as_array().into_iter().flatten() {
                if let Some(item) = action.get("Put").map(|p| &p["Item"]) {
                    learned.extend(key_of(item).map(|k| (k, index_partitions(item))));
                } else if let Some(update) = action.get("Update") {
                    // The partitions it had and those it sets (a REMOVE is
                    // not followed: kept until the item is next seen).
                    if let Some(k) = key_of(&update["Key"]) {
                        let mut parts = state.shadow.get(&k).cloned().unwrap_or_default();
                        parts.extend(set_partitions(update));
                        learned.push((k, parts));
                    }
                } else if let Some(k) = action.get("Delete").and_then(|d| key_of(&d["Key"])) {
                    state.shadow.remove(&k);
                }
            }
            if let Some(token) = &facts.token {
                state.tokens.insert(token.clone(), Instant::now());
            }
        }
        if op == "DeleteItem" {
            if let Some(k) = key_of(&request["Key"]) {
                state.shadow.remove(&k);
            }
        }
        for (k, parts) in learned {
            state.shadow.insert(k, parts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use request::facts;
    use serde_json::json;

    fn limits(factor: f64) -> Limits {
        Limits {
            upstream: String::new(),
            settings: Settings { factor, latency: Duration::ZERO, hold: Duration::ZERO },
            state: Mutex::default(),
            paused: false.into(),
        }
    }

    fn put(pk: &str) -> Value {
        json!({"Item": {"pk": {"S": pk}, "sk": {"S": "#METADATA"}, "gsi2pk": {"S": "CATEGORY#books"}}})
    }

    #[test]
    fn a_partition_past_its_budget_is_throttled_and_refills() {
        // 1 WCU/s per partition: the first put spends the second's budget
        // on the table and GSI7 partitions; the next one on GSI7 is refused.
        let l = limits(0.001);
        let first = put("LISTING#1");
        assert!(matches!(l.decide(&facts("PutItem", &first)), Verdict::Pass { .. }));
        let second = put("LISTING#2");
        assert!(matches!(l.decide(&facts("PutItem", &second)), Verdict::Throttled));
        assert_eq!(l.stats().throttled["GSI7 CATEGORY#books"], 1);
        assert!(limits(1.0).decide(&facts("PutItem", &second)).passes());
    }

    #[test]
    fn a_transaction_pays_for_the_index_copies_its_puts_and_updates_write() {
        // 10 WCU/s: a put in a transaction (2 WCU) with its GSI7 copy, then
        // updates setting GSI7 keys into the same partition, until refused.
        // At one instant: with the clock running, a loaded machine's pause
        // refilled a unit and let a tenth write through.
        let (l, now) = (limits(0.01), Instant::now());
        let tx = |pk: &str| json!({"TransactItems": [{"Put": put(pk)}]});
        let first = tx("LISTING#1");
        assert!(l.decide_at(&facts("TransactWriteItems", &first), now).passes());
        let moves = (2..20).map(|n| {
            json!({"TransactItems": [{"Update": {
                "Key": {"pk": {"S": format!("LISTING#{n}")}, "sk": {"S": "#METADATA"}},
                "UpdateExpression": "SET #n0 = :v0",
                "ExpressionAttributeNames": {"#n0": "gsi2pk"},
                "ExpressionAttributeValues": {":v0": {"S": "CATEGORY#books"}}}}]})
        });
        let passed = moves.take_while(|m| l.decide_at(&facts("TransactWriteItems", m), now).passes()).count();
        assert_eq!(passed, 9, "one copy per write into a bucket of 10");
        assert_eq!(l.stats().throttled["GSI7 CATEGORY#books"], 1);
    }

    #[test]
    fn a_sort_key_moved_within_its_partition_is_two_writes_there() {
        // 10 WCU/s: items known to be in one GSI7 partition, each update
        // setting its sort key alone (a price's move): 2 units each.
        let (l, now) = (limits(0.01), Instant::now());
        let key = |n: u32| (format!("LISTING#{n}"), "#METADATA".to_owned());
        for n in 0..10 {
            l.state.lock().unwrap().shadow.insert(key(n), vec![("GSI7", "CATEGORY#books".to_owned())]);
        }
        let moves = (0..10).map(|n| {
            json!({"Key": {"pk": {"S": key(n).0}, "sk": {"S": "#METADATA"}},
                "UpdateExpression": "SET #n0 = :v0",
                "ExpressionAttributeNames": {"#n0": "gsi2sk"},
                "ExpressionAttributeValues": {":v0": {"S": format!("LISTING#{n}")}}})
        });
        let passed = moves.take_while(|m| l.decide_at(&facts("UpdateItem", m), now).passes()).count();
        assert_eq!(passed, 5, "two units per move into a bucket of 10");
    }

    #[test]
    fn transactions_on_a_held_item_conflict_until_it_is_released() {
        let l = limits(1.0);
        let tx =
            |pk: &str| json!({"TransactItems": [{"Update": {"Key": {"pk": {"S": pk}, "sk": {"S": "#METADATA"}}}}]});
        let a = tx("PRODUCT#hot");
        let Verdict::Pass { holder } = l.decide(&facts("TransactWriteItems", &a)) else { panic!("the first passes") };
        assert!(matches!(l.decide(&facts("TransactWriteItems", &a)), Verdict::Conflict(_)));
        let single = json!({"Key": {"pk": {"S": "PRODUCT#hot"}, "sk": {"S": "#METADATA"}}});
        assert!(matches!(l.decide(&facts("UpdateItem", &single)), Verdict::Conflict(_)));
        let other = tx("PRODUCT#cold");
        assert!(l.decide(&facts("TransactWriteItems", &other)).passes());
        l.settle("TransactWriteItems", &facts("TransactWriteItems", &a), holder, &a, None);
        assert!(l.decide(&facts("TransactWriteItems", &a)).passes());
        assert_eq!(l.stats().conflicts["PRODUCT#hot / #METADATA"], 2);
    }

    impl Verdict {
        fn passes(&self) -> bool {
            matches!(self, Verdict::Pass { .. })
        }
    }
}
