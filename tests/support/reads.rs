//! Read accounting on the real client: every `Query` a handler sends, with
//! its key-condition bounds, the items it read and the read capacity
//! DynamoDB reports consumed, as the store's observer records it. Tests use
//! it to measure what a page costs and in how many rounds its queries were
//! sent.

use store::usage::Op;
use store::Usage;

use crate::TestTable;

/// The queries a client sent, recorded by its observer.
#[derive(Clone, Debug, Default)]
pub struct Reads(Usage);

impl Reads {
    /// The queries answered so far, clearing the record.
    pub fn take(&self) -> Vec<Op> {
        self.0.take().into_iter().filter(|op| op.op == "Query" && !op.failed).collect()
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
    pub fn of(reads: &[Op]) -> Self {
        let mut order: Vec<&Op> = reads.iter().collect();
        order.sort_by_key(|r| r.sent);
        let mut depth: Vec<usize> = Vec::with_capacity(order.len());
        for (i, r) in order.iter().enumerate() {
            let before = (0..i).filter(|j| order[*j].answered < r.sent).map(|j| depth[j]).max().unwrap_or(0);
            depth.push(before + 1);
        }
        let high = |r: &Op| r.query.as_ref().and_then(|q| q.high.clone());
        let first_high = order.first().map(|r| high(r));
        let (first, later): (Vec<&Op>, Vec<&Op>) = order.iter().partition(|r| Some(high(r)) == first_high);
        let last_answer = first.iter().map(|r| r.answered).max().unwrap_or(0);
        assert!(later.iter().all(|r| r.sent > last_answer), "a second-round query went out during the first round");
        PageCost {
            queries: reads.len(),
            items: reads.iter().map(|r| i64::from(r.items)).sum(),
            capacity: reads.iter().map(|r| r.rcu).sum(),
            billed: reads.iter().map(|r| r.rcu.max(0.5)).sum(),
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
        let t = Self::with_client(vec![reads.0.clone()], None).await;
        reads.take();
        (t, reads)
    }
}
