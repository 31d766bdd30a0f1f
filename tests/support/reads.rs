//! Read accounting on the real client: an SDK interceptor that records every
//! `Query` a handler sends, with its key-condition bounds, the items it read
//! (`Count`) and the read capacity DynamoDB reports consumed. Tests use it to
//! measure what a page costs and in how many rounds its queries were sent.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::config::interceptors::{
    AfterDeserializationInterceptorContextRef, BeforeSerializationInterceptorContextMut,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::operation::query::{QueryInput, QueryOutput};
use aws_sdk_dynamodb::types::{AttributeValue, ReturnConsumedCapacity};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_types::config_bag::{Storable, StoreReplace};

use crate::TestTable;

/// One `Query` attempt that DynamoDB answered.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryRead {
    /// The `:low` bound of a `BETWEEN` key condition, if any.
    pub low: Option<String>,
    /// The `:high` bound of a `BETWEEN` key condition, if any.
    pub high: Option<String>,
    /// The `Limit` it asked for.
    pub limit: Option<i32>,
    /// Items read (the answer's `Count`).
    pub items: i32,
    /// Read capacity units consumed, as DynamoDB reports them.
    pub capacity: f64,
    /// When it was sent and answered, on one counter shared by all queries:
    /// a query sent after another was answered may depend on it.
    pub sent: u64,
    /// See `sent`.
    pub answered: u64,
}

/// What one query asked, kept in its operation's config bag until the answer.
#[derive(Clone, Debug)]
struct Asked {
    low: Option<String>,
    high: Option<String>,
    limit: Option<i32>,
    sent: u64,
}

impl Storable for Asked {
    type Storer = StoreReplace<Self>;
}

/// The queries seen so far, shared with the client it is installed on.
#[derive(Clone, Debug, Default)]
pub struct Reads {
    seen: Arc<Mutex<Vec<QueryRead>>>,
    clock: Arc<AtomicU64>,
}

impl Reads {
    /// Everything recorded so far, clearing the record.
    pub fn take(&self) -> Vec<QueryRead> {
        std::mem::take(&mut *self.seen.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

fn bound(input: &QueryInput, name: &str) -> Option<String> {
    match input.expression_attribute_values.as_ref()?.get(name)? {
        AttributeValue::S(s) => Some(s.clone()),
        _ => None,
    }
}

impl Intercept for Reads {
    fn name(&self) -> &'static str {
        "Reads"
    }

    fn modify_before_serialization(
        &self,
        ctx: &mut BeforeSerializationInterceptorContextMut<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(input) = ctx.input_mut().downcast_mut::<QueryInput>() else { return Ok(()) };
        // Measure capacity even where the store does not ask for it.
        if input.return_consumed_capacity.is_none() {
            input.return_consumed_capacity = Some(ReturnConsumedCapacity::Total);
        }
        let asked = Asked {
            low: bound(input, ":low"),
            high: bound(input, ":high"),
            limit: input.limit,
            sent: self.clock.fetch_add(1, Ordering::SeqCst),
        };
        cfg.interceptor_state().store_put(asked);
        Ok(())
    }

    fn read_after_deserialization(
        &self,
        ctx: &AfterDeserializationInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Ok(output) = ctx.output_or_error() else { return Ok(()) };
        let Some(out) = output.downcast_ref::<QueryOutput>() else { return Ok(()) };
        let Some(asked) = cfg.load::<Asked>().cloned() else { return Ok(()) };
        let read = QueryRead {
            low: asked.low,
            high: asked.high,
            limit: asked.limit,
            items: out.count,
            capacity: out.consumed_capacity.as_ref().and_then(|c| c.capacity_units).unwrap_or(0.0),
            sent: asked.sent,
            answered: self.clock.fetch_add(1, Ordering::SeqCst),
        };
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).push(read);
        Ok(())
    }
}

/// The cost of one page, from the queries it sent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PageCost {
    /// Queries sent.
    pub queries: usize,
    /// Items read.
    pub items: i64,
    /// Read capacity consumed, as DynamoDB Local reports it (nothing for
    /// a query that finds nothing).
    pub capacity: f64,
    /// Read capacity counting at least 0.5 (one eventually consistent 4 KB
    /// read unit) per query: sizes round up to 4 KB, so DynamoDB itself
    /// should never report less for a query, even one that finds nothing.
    pub billed: f64,
    /// Rounds: the first round is every query with the same upper bound as
    /// the first query sent (the page's own bound); any other query is a
    /// later round. See [`PageCost::of`] for what is checked of the order.
    pub rounds: usize,
    /// The longest chain of queries each sent after the previous one was
    /// answered. Queries held back only by the bound on queries in flight
    /// chain too, so this is at least the number of rounds.
    pub chain: usize,
}

impl PageCost {
    /// Sums the queries of one page. Panics if a later-round query was sent
    /// before every first-round query was answered (then the rounds are not
    /// what the handler claims).
    pub fn of(reads: &[QueryRead]) -> Self {
        let mut order: Vec<&QueryRead> = reads.iter().collect();
        order.sort_by_key(|r| r.sent);
        let mut depth: Vec<usize> = Vec::with_capacity(order.len());
        for (i, r) in order.iter().enumerate() {
            let before = (0..i).filter(|j| order[*j].answered < r.sent).map(|j| depth[j]).max().unwrap_or(0);
            depth.push(before + 1);
        }
        let first_high = order.first().map(|r| r.high.clone());
        let (first, later): (Vec<&QueryRead>, Vec<&QueryRead>) =
            order.iter().partition(|r| Some(r.high.clone()) == first_high);
        let last_answer = first.iter().map(|r| r.answered).max().unwrap_or(0);
        assert!(later.iter().all(|r| r.sent > last_answer), "a second-round query went out during the first round");
        PageCost {
            queries: reads.len(),
            items: reads.iter().map(|r| i64::from(r.items)).sum(),
            capacity: reads.iter().map(|r| r.capacity).sum(),
            billed: reads.iter().map(|r| r.capacity.max(0.5)).sum(),
            rounds: usize::from(!first.is_empty()) + usize::from(!later.is_empty()),
            chain: depth.into_iter().max().unwrap_or(0),
        }
    }
}

impl TestTable {
    /// A fresh, empty table whose client records every query in the returned
    /// [`Reads`] (and logs requests like any other).
    pub async fn with_reads() -> (Self, Reads) {
        let reads = Reads::default();
        let t = Self::with_interceptor(reads.clone()).await;
        reads.take();
        (t, reads)
    }
}
