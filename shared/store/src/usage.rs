//! What a unit of work cost in DynamoDB: every request attempt it sent, by
//! operation, with the capacity DynamoDB reports consumed.
//!
//! Every request the store sends asks for `ReturnConsumedCapacity: TOTAL`;
//! the one [`Observer`] interceptor (installed on every client by
//! [`crate::client::config`]) refuses an operation the time budget cannot
//! hold ([`crate::budget`]), reads each answer and adds one [`Op`] to the
//! [`Usage`] of the current task, if the task runs inside [`Usage::scope`],
//! and to the usages the client was built to report to (tests count a
//! pattern's requests and a page's queries with them).
//! A function scopes each invocation, so its request line and metrics carry
//! exactly that invocation's requests (concurrent requests in the local
//! stack each have their own). Scopes nest: a request is recorded in every
//! enclosing scope (a test can measure a handler that measures itself).
//! Work spawned onto another task is outside the scope: keep an
//! invocation's requests in its own task.

use std::future::Future;
use std::sync::{Arc, Mutex};

use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_dynamodb::config::interceptors::{
    BeforeSerializationInterceptorContextMut, BeforeSerializationInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::operation::query::QueryInput;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_types::config_bag::{Storable, StoreReplace};

tokio::task_local! {
    /// The usages the current task records into, innermost last.
    static CURRENT: Arc<[Usage]>;
}

/// One request attempt sent to DynamoDB.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Op {
    /// The operation, such as `Query` or `TransactWriteItems`.
    pub op: String,
    /// Read capacity units consumed, as DynamoDB reports them.
    pub rcu: f64,
    /// Write capacity units consumed, as DynamoDB reports them.
    pub wcu: f64,
    /// Items a `Query` or `GetItem`/`BatchGetItem` read (0 for writes).
    pub items: u32,
    /// Whether the attempt failed (throttled, condition failed, timed out...).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
    /// For a `Query`: what it asked.
    #[serde(skip)]
    pub query: Option<Asked>,
    /// When its operation was sent and this attempt answered, on one
    /// counter for the process: an operation sent after another was
    /// answered may depend on it.
    #[serde(skip)]
    pub sent: u64,
    /// See `sent`.
    #[serde(skip)]
    pub answered: u64,
    /// The table it named (the first, for a batch or transaction), and the
    /// index a `Query` or `Scan` read.
    #[serde(skip)]
    pub table: Option<String>,
    /// See `table`.
    #[serde(skip)]
    pub index: Option<String>,
    /// When the attempt started and ended, in seconds since the epoch (the
    /// X-Ray span's times).
    #[serde(skip)]
    pub start: f64,
    /// See `start`.
    #[serde(skip)]
    pub end: f64,
    /// The HTTP status of its answer, if one came.
    #[serde(skip)]
    pub status: Option<u16>,
}

/// What a `Query` asked: the bounds of a `BETWEEN` key condition and its limit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Asked {
    /// The `:low` bound, if any.
    pub low: Option<String>,
    /// The `:high` bound, if any.
    pub high: Option<String>,
    /// The `Limit`.
    pub limit: Option<i32>,
}

/// The requests of one unit of work (an invocation). Cheap to clone: clones
/// share the same list.
#[derive(Clone, Debug, Default)]
pub struct Usage(Arc<Mutex<Vec<Op>>>);

/// Sums over a [`Usage`].
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Request attempts sent.
    pub requests: usize,
    /// Read capacity units consumed.
    pub rcu: f64,
    /// Write capacity units consumed.
    pub wcu: f64,
    /// Items read.
    pub items: u32,
}

impl Usage {
    /// Runs `work` with this usage as the current task's: every request it
    /// sends is recorded here.
    pub async fn scope<F: Future>(&self, work: F) -> F::Output {
        let mut chain = CURRENT.try_with(|c| c.to_vec()).unwrap_or_default();
        chain.push(self.clone());
        CURRENT.scope(chain.into(), work).await
    }

    /// The innermost usage of the current task, if it runs inside [`Usage::scope`].
    pub fn current() -> Option<Usage> {
        CURRENT.try_with(|c| c.last().cloned()).ok().flatten()
    }

    /// Every request recorded so far, in the order they ended.
    pub fn ops(&self) -> Vec<Op> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Everything recorded so far, clearing the record.
    pub fn take(&self) -> Vec<Op> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The operation names recorded so far, clearing the record.
    pub fn take_names(&self) -> Vec<String> {
        self.take().into_iter().map(|op| op.op).collect()
    }

    /// Requests, capacity and items so far.
    pub fn totals(&self) -> Totals {
        totals(&self.ops())
    }

    fn push(&self, op: Op) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(op);
    }
}

/// Sums a list of requests.
pub fn totals(ops: &[Op]) -> Totals {
    ops.iter().fold(Totals::default(), |t, op| Totals {
        requests: t.requests + 1,
        rcu: t.rcu + op.rcu,
        wcu: t.wcu + op.wcu,
        items: t.items.saturating_add(op.items),
    })
}

/// The name of the operation an interceptor sees (`Query`, `GetItem`, ...),
/// or `?` where the SDK gave none.
pub fn operation_name(cfg: &ConfigBag) -> String {
    cfg.load::<Metadata>().map_or_else(|| "?".to_owned(), |m| m.name().to_owned())
}

/// The one interceptor of every client: the time budget, and each attempt
/// recorded into the current task's [`Usage`] and into `also`.
#[derive(Clone, Debug, Default)]
pub struct Observer {
    also: Vec<Usage>,
}

impl Observer {
    /// An observer that also records every attempt of its client into
    /// `usages` (whatever task sent it).
    pub fn reporting_to(usages: Vec<Usage>) -> Self {
        Observer { also: usages }
    }
}

/// One counter for the process: the order operations are sent and answered in.
static CLOCK: AtomicU64 = AtomicU64::new(0);

/// What the observer keeps of an operation until its answers.
#[derive(Clone, Debug, Default)]
struct Sent {
    at: u64,
    query: Option<Asked>,
    table: Option<String>,
    index: Option<String>,
}

impl Storable for Sent {
    type Storer = StoreReplace<Self>;
}

/// When the current attempt started (seconds since the epoch).
#[derive(Clone, Copy, Debug)]
struct AttemptStart(f64);

impl Storable for AttemptStart {
    type Storer = StoreReplace<Self>;
}

fn epoch_seconds() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

fn bound(input: &QueryInput, name: &str) -> Option<String> {
    match input.expression_attribute_values.as_ref()?.get(name)? {
        AttributeValue::S(s) => Some(s.clone()),
        _ => None,
    }
}

impl Intercept for Observer {
    fn name(&self) -> &'static str {
        "Observer"
    }

    /// Refuses to start an operation the time budget cannot hold (see
    /// [`crate::budget`]).
    fn read_before_execution(
        &self,
        _ctx: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        crate::budget::check().map_err(BoxError::from)
    }

    fn modify_before_serialization(
        &self,
        ctx: &mut BeforeSerializationInterceptorContextMut<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let query = ctx.input_mut().downcast_mut::<QueryInput>().map(|input| Asked {
            low: bound(input, ":low"),
            high: bound(input, ":high"),
            limit: input.limit,
        });
        let (table, index) = crate::operation_facts::target(ctx.input());
        cfg.interceptor_state().store_put(Sent { at: CLOCK.fetch_add(1, Ordering::SeqCst), query, table, index });
        Ok(())
    }

    fn read_before_attempt(
        &self,
        _ctx: &aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        cfg.interceptor_state().store_put(AttemptStart(epoch_seconds()));
        Ok(())
    }

    fn read_after_attempt(
        &self,
        ctx: &FinalizerInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let chain = CURRENT.try_with(Arc::clone).ok();
        if chain.is_none() && self.also.is_empty() {
            return Ok(());
        }
        let (((rcu, wcu), items), failed) = match ctx.output_or_error() {
            Some(Ok(output)) => (crate::operation_facts::measure(output), false),
            _ => (((0.0, 0.0), 0), true),
        };
        let sent = cfg.load::<Sent>().cloned().unwrap_or_default();
        let end = epoch_seconds();
        let op = Op {
            op: operation_name(cfg),
            rcu,
            wcu,
            items,
            failed,
            query: sent.query,
            sent: sent.at,
            answered: CLOCK.fetch_add(1, Ordering::SeqCst),
            table: sent.table,
            index: sent.index,
            start: cfg.load::<AttemptStart>().map_or(end, |s| s.0),
            end,
            status: ctx.response().map(|r| r.status().as_u16()),
        };
        for usage in chain.iter().flat_map(|c| c.iter()).chain(&self.also) {
            usage.push(op.clone());
        }
        Ok(())
    }
}

/// The 4 KB units an eventually consistent read consumed (0.5 RCU each),
/// at least one (DynamoDB bills a read that finds nothing one unit).
pub fn read_units(capacity: Option<&aws_sdk_dynamodb::types::ConsumedCapacity>) -> usize {
    let rcu = capacity.and_then(|c| c.capacity_units).unwrap_or(0.0);
    // Halves sum exactly in a float; the cast is of a small positive whole.
    if rcu.is_finite() && rcu > 0.5 {
        (rcu * 2.0).ceil() as usize
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn scopes_nest_and_each_sees_its_own() {
        let (outer, inner) = (Usage::default(), Usage::default());
        assert!(Usage::current().is_none());
        outer
            .scope(async {
                let op = Op { op: "A".into(), rcu: 1.0, wcu: 0.0, items: 1, ..Op::default() };
                Usage::current().unwrap().push(op);
                inner.scope(async { assert_eq!(CURRENT.with(|c| c.len()), 2) }).await;
            })
            .await;
        assert_eq!(outer.ops().len(), 1);
        assert!(inner.ops().is_empty());
        assert_eq!(outer.totals(), Totals { requests: 1, rcu: 1.0, wcu: 0.0, items: 1 });
    }

    #[test]
    fn read_units_are_halves_of_the_consumed_rcu_at_least_one() {
        let of = |rcu: Option<f64>| {
            let c = aws_sdk_dynamodb::types::ConsumedCapacity::builder().set_capacity_units(rcu).build();
            read_units(Some(&c))
        };
        assert_eq!((read_units(None), of(None), of(Some(0.0)), of(Some(0.5))), (1, 1, 1, 1));
        assert_eq!((of(Some(1.5)), of(Some(12.0)), of(Some(f64::NAN))), (3, 24, 1));
    }
}
