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
//!   on the partition of every index copy the write rewrites (every index
//!   projects all attributes): the index keys the item had before (the
//!   last seen in a request or an answer through the proxy) and after.
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
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use keyschema::table::Index;
use serde_json::{json, Value};

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
}

/// What the simulation refused, by partition and by item.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Stats {
    /// Requests proxied.
    pub requests: u64,
    /// Requests refused for throughput, by partition (`GSI2 CATEGORY#books`).
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

/// What one request reads and writes.
#[derive(Debug, Default)]
struct Facts {
    reads: Vec<Partition>,
    /// Items written (or condition-checked) with their WCU.
    writes: Vec<(ItemKey, f64)>,
    transaction: bool,
    token: Option<String>,
}

fn s(v: &Value, name: &str) -> Option<String> {
    v.get(name)?.get("S")?.as_str().map(str::to_owned)
}

fn key_of(item: &Value) -> Option<ItemKey> {
    Some((s(item, "pk")?, s(item, "sk")?))
}

fn index_partitions(item: &Value) -> Vec<Partition> {
    Index::GSIS.iter().filter_map(|i| Some((i.name()?, s(item, i.pk())?))).collect()
}

fn kb_units(item: &Value) -> f64 {
    (item.to_string().len() as f64 / 1024.0).ceil().max(1.0)
}

fn facts(op: &str, body: &Value) -> Facts {
    let mut f = Facts::default();
    let table_read = |key: &Value| s(key, "pk").map(|pk| ("table", pk));
    match op {
        "GetItem" => f.reads.extend(table_read(&body["Key"])),
        "Query" => {
            let index =
                body["IndexName"].as_str().and_then(|n| Index::GSIS.iter().find_map(|i| i.name().filter(|x| *x == n)));
            let pk = body["ExpressionAttributeValues"][":pk"]["S"].as_str();
            f.reads.extend(pk.map(|pk| (index.unwrap_or("table"), pk.to_owned())));
        }
        "BatchGetItem" => {
            for table in body["RequestItems"].as_object().into_iter().flat_map(|o| o.values()) {
                f.reads.extend(table["Keys"].as_array().into_iter().flatten().filter_map(table_read));
            }
        }
        "PutItem" => f.writes.extend(key_of(&body["Item"]).map(|k| (k, kb_units(&body["Item"])))),
        "UpdateItem" | "DeleteItem" => f.writes.extend(key_of(&body["Key"]).map(|k| (k, 1.0))),
        "TransactWriteItems" => {
            f.transaction = true;
            f.token = body["ClientRequestToken"].as_str().map(str::to_owned);
            for action in body["TransactItems"].as_array().into_iter().flatten() {
                let Some((kind, a)) = action.as_object().and_then(|o| o.iter().next()) else { continue };
                let key = if kind == "Put" { key_of(&a["Item"]) } else { key_of(&a["Key"]) };
                let units = if kind == "Put" { kb_units(&a["Item"]) } else { 1.0 };
                f.writes.extend(key.map(|k| (k, 2.0 * units)));
            }
        }
        "BatchWriteItem" => {
            for table in body["RequestItems"].as_object().into_iter().flat_map(|o| o.values()) {
                for w in table.as_array().into_iter().flatten() {
                    let item = &w["PutRequest"]["Item"];
                    let key = key_of(item).or_else(|| key_of(&w["DeleteRequest"]["Key"]));
                    f.writes.extend(key.map(|k| (k, if item.is_null() { 1.0 } else { kb_units(item) })));
                }
            }
        }
        _ => {}
    }
    f
}

/// Index partitions an update's expression sets (`SET ... #n = :v` where
/// `#n` names an index's partition key attribute).
fn set_partitions(update: &Value) -> Vec<Partition> {
    let text = update["UpdateExpression"].as_str().unwrap_or_default();
    let set = text.split(" REMOVE ").next().unwrap_or_default();
    let mut out = Vec::new();
    for (placeholder, name) in update["ExpressionAttributeNames"].as_object().into_iter().flatten() {
        let Some(index) = Index::GSIS.iter().find(|i| name.as_str() == Some(i.pk())) else { continue };
        let Some(at) = set.find(&format!("{placeholder} = ")) else { continue };
        let value = set[at + placeholder.len() + 3..].split([',', ' ']).next().unwrap_or_default();
        if let (Some(index), Some(pk)) = (index.name(), update["ExpressionAttributeValues"][value]["S"].as_str()) {
            out.push((index, pk.to_owned()));
        }
    }
    out
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
    /// Starts the proxy on a loopback port in front of `upstream`; returns
    /// its endpoint URL and its state.
    pub async fn start(upstream: &str, settings: Settings) -> Result<(String, Arc<Limits>), String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let limits = Arc::new(Limits {
            upstream: upstream.trim_end_matches('/').to_owned(),
            settings,
            state: Mutex::default(),
            paused: false.into(),
        });
        let serving = limits.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let limits = serving.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let limits = limits.clone();
                        async move { Ok::<_, std::convert::Infallible>(limits.handle(req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok((format!("http://{addr}"), limits))
    }

    /// Pauses (everything passes, nothing counted) or resumes the simulation.
    pub fn pause(&self, paused: bool) {
        self.paused.store(paused, std::sync::atomic::Ordering::Relaxed);
    }

    /// What was refused so far.
    pub fn stats(&self) -> Stats {
        self.state.lock().map(|s| s.stats.clone()).unwrap_or_default()
    }

    fn decide(&self, op: &str, facts: &Facts, body: &Value) -> Verdict {
        let Ok(mut state) = self.state.lock() else { return Verdict::Throttled };
        let now = Instant::now();
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
            .map(|(k, _)| state.held.get(k).is_some_and(|h| h.iter().any(|(_, tx)| facts.transaction || *tx)))
            .collect();
        if conflicting.iter().any(|c| *c) {
            for ((k, _), _) in facts.writes.iter().zip(&conflicting).filter(|(_, c)| **c) {
                *state.stats.conflicts.entry(format!("{} / {}", k.0, k.1)).or_default() += 1;
            }
            return Verdict::Conflict(conflicting);
        }
        // Throughput: every partition read or written (with its index copies).
        let mut written: Vec<(Partition, f64)> = Vec::new();
        for ((pk, sk), wcu) in &facts.writes {
            written.push((("table", pk.clone()), *wcu));
            let mut copies = state.shadow.get(&(pk.clone(), sk.clone())).cloned().unwrap_or_default();
            copies.extend(index_partitions(&body["Item"]).into_iter().filter(|_| op == "PutItem"));
            copies.extend(set_partitions(body).into_iter().filter(|_| op == "UpdateItem"));
            copies.dedup();
            written.extend(copies.into_iter().map(|p| (p, 1.0)));
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
        for (k, _) in &facts.writes {
            state.held.entry(k.clone()).or_default().push((holder, facts.transaction));
        }
        Verdict::Pass { holder }
    }

    /// After the answer: the holds released, reads charged, the index keys
    /// of the items seen remembered, a committed transaction's token kept.
    fn settle(&self, op: &str, facts: &Facts, holder: u64, request: &Value, answer: Option<&Value>) {
        let Ok(mut state) = self.state.lock() else { return };
        for (k, _) in &facts.writes {
            if let Some(h) = state.held.get_mut(k) {
                h.retain(|(id, _)| *id != holder);
                if h.is_empty() {
                    state.held.remove(k);
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
                    // Unknown afterwards (a REMOVE, a SET): forget, learn on the next read.
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

    async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<Full<Bytes>> {
        let (parts, body) = req.into_parts();
        let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
            return error(400, "SerializationException", vec![]);
        };
        let target = parts.headers.get("x-amz-target").and_then(|v| v.to_str().ok()).unwrap_or_default();
        let op = target.rsplit('.').next().unwrap_or_default().to_owned();
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let facts = if self.paused.load(std::sync::atomic::Ordering::Relaxed) {
            Facts::default()
        } else {
            facts(&op, &request)
        };
        let holder = match self.decide(&op, &facts, &request) {
            Verdict::Throttled => return error(400, "ProvisionedThroughputExceededException", vec![]),
            Verdict::Conflict(reasons) if facts.transaction => {
                return error(400, "TransactionCanceledException", reasons);
            }
            Verdict::Conflict(_) => return error(400, "TransactionConflictException", vec![]),
            Verdict::Replay => None,
            Verdict::Pass { holder } => Some(holder),
        };
        tokio::time::sleep(self.settings.latency).await;
        let answer = forward(&self.upstream, parts, body).await;
        if let Some(holder) = holder {
            let parsed = answer
                .as_ref()
                .ok()
                .filter(|(status, _, _)| *status == 200)
                .and_then(|(_, _, b)| serde_json::from_slice::<Value>(b).ok());
            self.settle(&op, &facts, holder, &request, parsed.as_ref());
        }
        match answer {
            Ok((status, headers, body)) => {
                let mut response = Response::new(Full::new(body));
                *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::BAD_GATEWAY);
                for (name, value) in headers.iter().filter(|(n, _)| *n != "content-length" && *n != "transfer-encoding")
                {
                    response.headers_mut().insert(name, value.clone());
                }
                response
            }
            Err(e) => error(500, "InternalServerError", vec![]).map(|_| Full::new(Bytes::from(e))),
        }
    }
}

/// DynamoDB's error answer: `reasons` are a cancelled transaction's
/// actions, `true` for those in conflict.
fn error(status: u16, code: &str, reasons: Vec<bool>) -> Response<Full<Bytes>> {
    let message = match code {
        "TransactionCanceledException" => format!(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
            reasons.iter().map(|c| if *c { "TransactionConflict" } else { "None" }).collect::<Vec<_>>().join(", ")
        ),
        "TransactionConflictException" => "Transaction is ongoing for the item".to_owned(),
        _ => "The level of configured provisioned throughput for the table was exceeded (simulated partition limit)"
            .to_owned(),
    };
    let mut body = json!({ "__type": format!("com.amazonaws.dynamodb.v20120810#{code}"), "message": message });
    if !reasons.is_empty() {
        body["CancellationReasons"] = reasons
            .iter()
            .map(|c| {
                if *c {
                    json!({"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"})
                } else {
                    json!({"Code": "None"})
                }
            })
            .collect();
    }
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::BAD_REQUEST);
    response
        .headers_mut()
        .insert("content-type", hyper::header::HeaderValue::from_static("application/x-amz-json-1.0"));
    response
}

type Answer = (u16, hyper::HeaderMap, Bytes);

async fn forward(upstream: &str, parts: hyper::http::request::Parts, body: Bytes) -> Result<Answer, String> {
    let authority = upstream.trim_start_matches("http://");
    let stream = tokio::net::TcpStream::connect(authority).await.map_err(|e| e.to_string())?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let mut req = Request::from_parts(parts, Full::new(body));
    *req.uri_mut() = "/".parse().map_err(|e: hyper::http::uri::InvalidUri| e.to_string())?;
    let answer = sender.send_request(req).await.map_err(|e| e.to_string())?;
    let (parts, body) = answer.into_parts();
    let body = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
    Ok((parts.status.as_u16(), parts.headers, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_name_the_partitions_and_items_of_each_request() {
        let q = json!({"IndexName": "GSI2", "ExpressionAttributeValues": {":pk": {"S": "CATEGORY#books"}}});
        assert_eq!(facts("Query", &q).reads, vec![("GSI2", "CATEGORY#books".to_owned())]);
        let tx = json!({"ClientRequestToken": "t1", "TransactItems": [
            {"Put": {"Item": {"pk": {"S": "ORDER#1"}, "sk": {"S": "#METADATA"}}}},
            {"Update": {"Key": {"pk": {"S": "PRODUCT#9"}, "sk": {"S": "#METADATA"}}}},
            {"ConditionCheck": {"Key": {"pk": {"S": "USER#b"}, "sk": {"S": "#METADATA"}}}}]});
        let f = facts("TransactWriteItems", &tx);
        assert!(f.transaction);
        assert_eq!(f.token.as_deref(), Some("t1"));
        assert_eq!(f.writes.len(), 3);
        assert!(f.writes.iter().all(|(_, wcu)| *wcu == 2.0), "twice the rate in a transaction");
    }

    #[test]
    fn an_update_setting_an_index_key_names_its_new_partition() {
        let u = json!({
            "UpdateExpression": "SET #n0 = :v0, #n1 = :v1 REMOVE #n2",
            "ExpressionAttributeNames": {"#n0": "status", "#n1": "gsi2pk", "#n2": "gsi3pk"},
            "ExpressionAttributeValues": {":v0": {"S": "active"}, ":v1": {"S": "CATEGORY#books"}}
        });
        assert_eq!(set_partitions(&u), vec![("GSI2", "CATEGORY#books".to_owned())]);
    }

    fn limits(factor: f64) -> Limits {
        Limits {
            upstream: String::new(),
            settings: Settings { factor, latency: Duration::ZERO },
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
        // on the table and GSI2 partitions; the next one on GSI2 is refused.
        let l = limits(0.001);
        let first = put("LISTING#1");
        assert!(matches!(l.decide("PutItem", &facts("PutItem", &first), &first), Verdict::Pass { .. }));
        let second = put("LISTING#2");
        assert!(matches!(l.decide("PutItem", &facts("PutItem", &second), &second), Verdict::Throttled));
        assert_eq!(l.stats().throttled["GSI2 CATEGORY#books"], 1);
        assert!(limits(1.0).decide("PutItem", &facts("PutItem", &second), &second).passes());
    }

    #[test]
    fn transactions_on_a_held_item_conflict_until_it_is_released() {
        let l = limits(1.0);
        let tx =
            |pk: &str| json!({"TransactItems": [{"Update": {"Key": {"pk": {"S": pk}, "sk": {"S": "#METADATA"}}}}]});
        let a = tx("PRODUCT#hot");
        let Verdict::Pass { holder } = l.decide("TransactWriteItems", &facts("TransactWriteItems", &a), &a) else {
            panic!("the first passes")
        };
        assert!(matches!(l.decide("TransactWriteItems", &facts("TransactWriteItems", &a), &a), Verdict::Conflict(_)));
        let single = json!({"Key": {"pk": {"S": "PRODUCT#hot"}, "sk": {"S": "#METADATA"}}});
        assert!(matches!(l.decide("UpdateItem", &facts("UpdateItem", &single), &single), Verdict::Conflict(_)));
        let other = tx("PRODUCT#cold");
        assert!(l.decide("TransactWriteItems", &facts("TransactWriteItems", &other), &other).passes());
        l.settle("TransactWriteItems", &facts("TransactWriteItems", &a), holder, &a, None);
        assert!(l.decide("TransactWriteItems", &facts("TransactWriteItems", &a), &a).passes());
        assert_eq!(l.stats().conflicts["PRODUCT#hot / #METADATA"], 2);
    }

    impl Verdict {
        fn passes(&self) -> bool {
            matches!(self, Verdict::Pass { .. })
        }
    }
}
