//! A request meter: every DynamoDB request of a test table's client, with
//! the read capacity it costs by DynamoDB's documented pricing, computed
//! from the items the request read. Not from the `ConsumedCapacity`
//! DynamoDB Local reports: it reports none for `BatchGetItem` and 0 for a
//! query that finds nothing (kept beside, in [`Priced::reported`]).
//!
//! The rules (Amazon DynamoDB Developer Guide, "DynamoDB item sizes and
//! formats" and "DynamoDB read and write operations"; the API reference of
//! `Query`, as the SDK's documentation carries it):
//! - An item's size is the sum over its attributes of the UTF-8 bytes of the
//!   name and the size of the value: a string its UTF-8 bytes; a number
//!   about 1 byte per two significant digits (leading and trailing zeros
//!   trimmed) plus 1; a binary its raw bytes; a boolean or null 1; a list or
//!   map 3 bytes whatever it holds, plus 1 byte and the size of each element
//!   (a map element's name counted as an attribute's). Sets: the sum of
//!   their elements (the guide names no overhead for them).
//! - A read is billed in 4 KB (4,096-byte) units: 0.5 RCU each eventually
//!   consistent, 1 strongly consistent, 2 transactional.
//! - `GetItem`: the item's size rounded up to the next 4 KB; an item that
//!   does not exist still costs one unit ("If you perform a read operation
//!   on an item that doesn't exist, DynamoDB will still consume read
//!   throughput").
//! - `BatchGetItem`: each item as a `GetItem` (rounded up one by one), a
//!   key not found as one unit; keys left unprocessed cost nothing.
//! - `Query` (and `Scan`): the sizes of all the items read summed, then
//!   rounded up to the next 4 KB; at least one unit ("Queries that do not
//!   return results consume the minimum number of read capacity units").
//!   A filter or a projection changes nothing ("DynamoDB calculates the
//!   number of read capacity units consumed based on item size, not on the
//!   amount of data that is returned"): a request with one is priced from a
//!   re-read of the same items without it ([`Meter::take`]), so a handler
//!   cannot look cheaper by asking for less of what it reads. A query of an
//!   index reads the index's items (the attributes it projects).
//! - Writes (and their `ReturnValues`) consume no read capacity: counted as
//!   requests at 0 RCU.
//!
//! Each request attempt that got an answer is one [`Priced`] (a failed one
//! at 0 RCU): the same count as the store's `Usage`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::config::interceptors::{
    BeforeSerializationInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::operation::batch_get_item::{BatchGetItemInput, BatchGetItemOutput};
use aws_sdk_dynamodb::operation::get_item::{GetItemInput, GetItemOutput};
use aws_sdk_dynamodb::operation::query::{QueryInput, QueryOutput};
use aws_sdk_dynamodb::operation::scan::{ScanInput, ScanOutput};
use aws_sdk_dynamodb::types::{AttributeValue, ConsumedCapacity};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::Output;
use aws_smithy_types::config_bag::{Storable, StoreReplace};

/// An item as the SDK holds it.
pub type Item = HashMap<String, AttributeValue>;

/// The unit reads are billed in: 4 KB.
pub const READ_UNIT_BYTES: u64 = 4096;

/// How a read is made, which sets the price of a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// 0.5 RCU per 4 KB (the default; the only kind a GSI serves).
    Eventual,
    /// 1 RCU per 4 KB (`ConsistentRead`).
    Strong,
}

impl Read {
    pub(crate) fn of(consistent: Option<bool>) -> Self {
        if consistent == Some(true) {
            Read::Strong
        } else {
            Read::Eventual
        }
    }

    /// RCU for a read of `bytes`: rounded up to whole 4 KB units, at least one.
    pub fn rcu(self, bytes: u64) -> f64 {
        let units = bytes.div_ceil(READ_UNIT_BYTES).max(1);
        let per_unit = if self == Read::Strong { 1.0 } else { 0.5 };
        units as f64 * per_unit
    }
}

/// An item's size by the documented rules.
pub fn item_size(item: &Item) -> u64 {
    item.iter().map(|(name, value)| name.len() as u64 + value_size(value)).sum()
}

/// An attribute value's size (without its name).
pub fn value_size(value: &AttributeValue) -> u64 {
    let len = |n: usize| n as u64;
    match value {
        AttributeValue::S(s) => len(s.len()),
        AttributeValue::N(n) => number_size(n),
        AttributeValue::B(b) => len(b.as_ref().len()),
        AttributeValue::Bool(_) | AttributeValue::Null(_) => 1,
        AttributeValue::Ss(all) => all.iter().map(|s| len(s.len())).sum(),
        AttributeValue::Ns(all) => all.iter().map(|n| number_size(n)).sum(),
        AttributeValue::Bs(all) => all.iter().map(|b| len(b.as_ref().len())).sum(),
        AttributeValue::L(all) => 3 + all.iter().map(|v| 1 + value_size(v)).sum::<u64>(),
        AttributeValue::M(all) => 3 + all.iter().map(|(k, v)| 1 + len(k.len()) + value_size(v)).sum::<u64>(),
        other => panic!("the meter cannot size {other:?}"),
    }
}

/// A number's size: 1 byte per two significant digits, rounded up, plus 1.
pub fn number_size(number: &str) -> u64 {
    let mantissa = number.split(['e', 'E']).next().unwrap_or_default();
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let significant = digits.trim_start_matches('0').trim_end_matches('0').len().max(1);
    (significant as u64).div_ceil(2) + 1
}

/// One request attempt, priced.
#[derive(Clone, Debug, Default)]
pub struct Priced {
    /// The operation, such as `Query`.
    pub op: String,
    /// The index a `Query` read, if not the table.
    pub index: Option<String>,
    /// Items read (a query's before any filter; a batch's found ones).
    pub items: u64,
    /// Keys read and not found (`GetItem`, `BatchGetItem`).
    pub missing: u64,
    /// Bytes of the items read, by [`item_size`].
    pub bytes: u64,
    /// Read capacity by the documented rules.
    pub rcu: f64,
    /// What DynamoDB Local reported consumed, if it reported anything.
    pub reported: Option<f64>,
    /// The attempt failed (no answer to price; 0 RCU).
    pub failed: bool,
    /// Priced from a re-read without the request's filter or projection.
    pub reread: bool,
    pub(crate) pending: Option<Reread>,
}

/// What a request asked, kept from before it was sent to its answer.
#[derive(Clone, Debug)]
struct Asked(Arc<Input>);

impl Storable for Asked {
    type Storer = StoreReplace<Self>;
}

#[derive(Debug)]
enum Input {
    Query(QueryInput),
    Scan(ScanInput),
    Get(GetItemInput),
    Batch(BatchGetItemInput),
    Other,
}

/// A read whose answer does not show all it read: done again, plainly.
#[derive(Clone, Debug)]
pub(crate) enum Reread {
    Query(Box<QueryInput>),
    Get(Box<GetItemInput>),
    Batch(Vec<(String, Vec<Item>, Read)>),
}

/// Records every request attempt of the client it is installed on, priced.
/// Cheap to clone: clones share the record.
#[derive(Clone, Debug, Default)]
pub struct Meter(Arc<Mutex<Vec<Priced>>>);

impl Meter {
    /// Every request recorded since the last call, clearing the record;
    /// requests with a filter or a projection are read again (by a client
    /// of their own, not metered) and priced from what that reads.
    pub async fn take(&self) -> Vec<Priced> {
        let mut all = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        for priced in &mut all {
            if let Some(pending) = priced.pending.take() {
                crate::reread::settle(priced, pending).await;
            }
        }
        all
    }

    /// Forgets what was recorded (the setting up of a test).
    pub fn clear(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    fn push(&self, priced: Priced) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(priced);
    }
}

impl Intercept for Meter {
    fn name(&self) -> &'static str {
        "Meter"
    }

    fn read_before_execution(
        &self,
        ctx: &BeforeSerializationInterceptorContextRef<'_>,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let input = ctx.input();
        let asked = if let Some(i) = input.downcast_ref::<QueryInput>() {
            Input::Query(i.clone())
        } else if let Some(i) = input.downcast_ref::<ScanInput>() {
            Input::Scan(i.clone())
        } else if let Some(i) = input.downcast_ref::<GetItemInput>() {
            Input::Get(i.clone())
        } else if let Some(i) = input.downcast_ref::<BatchGetItemInput>() {
            Input::Batch(i.clone())
        } else {
            Input::Other
        };
        cfg.interceptor_state().store_put(Asked(Arc::new(asked)));
        Ok(())
    }

    fn read_after_attempt(
        &self,
        ctx: &FinalizerInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let op = store::operation_name(cfg);
        let priced = match (ctx.output_or_error(), cfg.load::<Asked>()) {
            (Some(Ok(output)), Some(asked)) => price(&op, &asked.0, output),
            _ => Priced { failed: true, ..Priced::default() },
        };
        self.push(Priced { op, ..priced });
        Ok(())
    }
}

fn reported<'a>(capacities: impl IntoIterator<Item = &'a ConsumedCapacity>) -> Option<f64> {
    capacities.into_iter().filter_map(ConsumedCapacity::capacity_units).reduce(|a, b| a + b)
}

/// A query's (or scan's) items: all read, one rounding for them together.
pub fn price_query(items: &[Item], read: Read) -> Priced {
    let bytes = items.iter().map(item_size).sum();
    Priced { items: items.len() as u64, bytes, rcu: read.rcu(bytes), ..Priced::default() }
}

/// Items read one by one (`GetItem`, a batch's), and keys not found.
pub fn price_gets(found: &[Item], missing: u64, read: Read) -> Priced {
    let sizes: Vec<u64> = found.iter().map(item_size).collect();
    let rcu = sizes.iter().map(|s| read.rcu(*s)).sum::<f64>() + missing as f64 * read.rcu(0);
    Priced { items: found.len() as u64, missing, bytes: sizes.iter().sum(), rcu, ..Priced::default() }
}

/// Whether a query or scan input reads part of what it meets (a filter, a
/// projection or a `Select`): its items do not show what it read.
macro_rules! reads_part {
    ($i:expr, $filter:ident) => {
        $i.filter_expression.is_some()
            || $i.$filter.is_some()
            || $i.projection_expression.is_some()
            || $i.attributes_to_get.is_some()
            || $i.select.is_some()
    };
}

fn price(op: &str, asked: &Input, output: &Output) -> Priced {
    match asked {
        Input::Query(i) => {
            let Some(o) = output.downcast_ref::<QueryOutput>() else { return unexpected(op) };
            let partial = reads_part!(i, query_filter);
            let mut priced = price_query(o.items(), Read::of(i.consistent_read));
            if partial {
                priced.pending = Some(Reread::Query(Box::new(i.clone())));
            }
            Priced { index: i.index_name.clone(), reported: reported(o.consumed_capacity()), ..priced }
        }
        Input::Scan(i) => {
            let Some(o) = output.downcast_ref::<ScanOutput>() else { return unexpected(op) };
            let partial = reads_part!(i, scan_filter);
            assert!(!partial, "the meter prices no Scan with a filter or projection");
            let priced = price_query(o.items(), Read::of(i.consistent_read));
            Priced { index: i.index_name.clone(), reported: reported(o.consumed_capacity()), ..priced }
        }
        Input::Get(i) => {
            let Some(o) = output.downcast_ref::<GetItemOutput>() else { return unexpected(op) };
            let found: Vec<Item> = o.item().into_iter().cloned().collect();
            let mut priced = price_gets(&found, u64::from(found.is_empty()), Read::of(i.consistent_read));
            if i.projection_expression.is_some() || i.attributes_to_get.is_some() {
                priced.pending = Some(Reread::Get(Box::new(i.clone())));
            }
            Priced { reported: reported(o.consumed_capacity()), ..priced }
        }
        Input::Batch(i) => {
            let Some(o) = output.downcast_ref::<BatchGetItemOutput>() else { return unexpected(op) };
            price_batch(i, o)
        }
        Input::Other => Priced::default(),
    }
}

fn unexpected(op: &str) -> Priced {
    panic!("the meter found an answer of another kind than its {op} asked");
}

/// Per table: the items found priced one by one, every key processed and
/// not found as one unit; keys left unprocessed are not read.
fn price_batch(input: &BatchGetItemInput, output: &BatchGetItemOutput) -> Priced {
    let mut total = Priced::default();
    let mut rereads = Vec::new();
    for (table, asked) in input.request_items().into_iter().flatten() {
        let read = Read::of(asked.consistent_read);
        let unprocessed = output.unprocessed_keys().and_then(|u| u.get(table)).map_or(&[][..], |k| k.keys());
        let processed: Vec<Item> = asked.keys().iter().filter(|k| !unprocessed.contains(k)).cloned().collect();
        let found = output.responses().and_then(|r| r.get(table)).map_or(&[][..], Vec::as_slice);
        let missing = (processed.len() - found.len().min(processed.len())) as u64;
        let part = price_gets(found, missing, read);
        total.items += part.items;
        total.missing += part.missing;
        total.bytes += part.bytes;
        total.rcu += part.rcu;
        if asked.projection_expression.is_some() || asked.attributes_to_get.is_some() {
            rereads.push((table.clone(), processed, read));
        }
    }
    total.reported = reported(output.consumed_capacity());
    total.pending = (!rereads.is_empty()).then_some(Reread::Batch(rereads));
    total
}

/// Sums over priced requests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    /// Requests sent (attempts, failed ones too).
    pub requests: usize,
    /// Items read.
    pub items: u64,
    /// Bytes of the items read.
    pub bytes: u64,
    /// RCU by the documented rules.
    pub rcu: f64,
}

impl Cost {
    /// The sums of `ops`.
    pub fn of(ops: &[Priced]) -> Self {
        ops.iter().fold(Cost::default(), |c, op| Cost {
            requests: c.requests + 1,
            items: c.items + op.items,
            bytes: c.bytes + op.bytes,
            rcu: c.rcu + op.rcu,
        })
    }

    /// The larger of each figure (the dearest page of a walk).
    pub fn max(self, other: Cost) -> Cost {
        Cost {
            requests: self.requests.max(other.requests),
            items: self.items.max(other.items),
            bytes: self.bytes.max(other.bytes),
            rcu: self.rcu.max(other.rcu),
        }
    }
}

impl std::fmt::Display for Cost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} requests, {} items, {} bytes, {} RCU", self.requests, self.items, self.bytes, self.rcu)
    }
}

impl crate::TestTable {
    /// A fresh, empty table whose client is metered by the returned
    /// [`Meter`] (and logs requests like any other).
    pub async fn with_meter() -> (Self, Meter) {
        let meter = Meter::default();
        let shared = aws_sdk_dynamodb::config::SharedInterceptor::new(meter.clone());
        let t = Self::with_client(Vec::new(), Some(shared)).await;
        meter.clear();
        (t, meter)
    }
}
