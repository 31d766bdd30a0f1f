//! Folded counts. Many writers of one aggregate (a viral listing's
//! favorites, a top category's reviews) would meet on its holder in their
//! transactions. So each transaction adds its counts to one of the
//! aggregate's parts (`Aggregate::add_to_part`), chosen at random,
//! and the parts are folded into the holder, which people read, by
//! [`fold`]: a plain conditional `UpdateItem`, never a transaction.
//!
//! The holder records what it has folded in (the sum of its parts' `rev`s,
//! `sum`s and `count`s at the last fold: [`keyschema::write::Folded`]), and
//! a fold adds only what the parts gained since, conditioned on that record
//! as read. So a count kept on the holder before it had parts (or repaired
//! there by reconcile) stays; a fold that lost a race reads again; folds
//! can run in any order and any number of times, and each part's change is
//! added once. The stream processor folds an aggregate when it sees its
//! parts' records: all of them carry one partition key, so they arrive in
//! one shard, whose concurrent batches (its parallelization factor, 2 by
//! default) and reconcile are all that fold it at once; a fold that lost a
//! race waits a jittered moment and reads again. The holder lags its parts
//! by one stream batch.

use keyschema::write::attr;
use keyschema::{Change, Cond, Value};
use store::{Item, Store};

use super::markers::ATTEMPTS;
use super::Aggregate;
use crate::DerivedError;

/// The sums of an aggregate's parts, or what a holder folded of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sums {
    /// The sum of the parts' `rev`s (it only grows).
    pub rev: i64,
    /// Their `sum`s (ratings).
    pub sum: i64,
    /// Their `count`s.
    pub count: i64,
}

/// What [`fold`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Folding {
    /// The holder had every part's change already.
    Unchanged,
    /// It was brought up to its parts.
    Folded,
    /// It does not exist (a listing or user gone): nothing to fold into.
    NoHolder,
}

/// A number attribute of an item (absent: `None`).
pub(crate) fn number(item: &Item, attr: &str) -> Result<Option<i64>, DerivedError> {
    match item.get(attr) {
        None => Ok(None),
        Some(store::aws_sdk_dynamodb::types::AttributeValue::N(n)) => {
            n.parse().map(Some).map_err(|_| DerivedError::malformed(format!("`{attr}` is not an integer")))
        }
        Some(_) => Err(DerivedError::malformed(format!("`{attr}` is not a number"))),
    }
}

/// The sums of an aggregate's parts, read consistently.
pub async fn parts(store: &Store, aggregate: &Aggregate) -> Result<Sums, DerivedError> {
    let query = aggregate.parts_query()?;
    let mut sums = Sums::default();
    let mut start = None;
    loop {
        let (items, next) = store.query_page_consistent(&query, start).await?;
        for item in &items {
            let add = |attr: &str| -> Result<i64, DerivedError> { Ok(number(item, attr)?.unwrap_or(0)) };
            sums.rev = sums.rev.saturating_add(add(attr::REV)?);
            sums.sum = sums.sum.saturating_add(add(attr::PART_SUM)?);
            sums.count = sums.count.saturating_add(add(attr::PART_COUNT)?);
        }
        match next {
            Some(key) => start = Some(key),
            None => return Ok(sums),
        }
    }
}

/// What a holder item has folded in (nothing yet: zeros).
pub(crate) fn folded_of(aggregate: &Aggregate, holder: &Item) -> Result<(Sums, bool), DerivedError> {
    let f = aggregate.folded;
    let rev = number(holder, f.rev)?;
    let sum = match f.sum {
        Some(a) => number(holder, a)?.unwrap_or(0),
        None => 0,
    };
    let sums = Sums { rev: rev.unwrap_or(0), sum, count: number(holder, f.count)?.unwrap_or(0) };
    Ok((sums, rev.is_some()))
}

/// The holder item of an aggregate, read consistently.
pub(crate) async fn holder(store: &Store, aggregate: &Aggregate) -> Result<Option<Item>, DerivedError> {
    Ok(store.batch_get_items(std::slice::from_ref(&aggregate.key), true).await?.pop())
}

/// Whether an aggregate that its parts create (`init`: a category's
/// rating) has parts but no holder yet (its parts' records not delivered).
pub async fn unheld(store: &Store, aggregate: &Aggregate) -> Result<bool, DerivedError> {
    Ok(holder(store, aggregate).await?.is_none() && parts(store, aggregate).await?.rev > 0)
}

/// A fold after a write that committed (a repair, a marker settled): the
/// part's own record folds it too, so a failure here is logged, not
/// returned, and what was written is still reported.
pub async fn fold_after(store: &Store, aggregate: &Aggregate) {
    if let Err(e) = fold(store, aggregate).await {
        telemetry::tracing::warn!(aggregate = aggregate.key.pk.as_str(), error = %telemetry::redacted(&e), "fold left to its parts' records");
    }
}

/// Brings an aggregate's holder up to its parts: reads the holder, then
/// the parts (both consistently), and adds what the parts gained since the
/// holder's last fold, conditioned on that fold as read (another fold in
/// between: read again). An aggregate in an item of its own (`init`) is
/// created by its first fold.
pub async fn fold(store: &Store, aggregate: &Aggregate) -> Result<Folding, DerivedError> {
    for attempt in 0..ATTEMPTS {
        let holder = holder(store, aggregate).await?;
        if holder.is_none() && aggregate.init.is_empty() {
            return Ok(Folding::NoHolder);
        }
        let (was, recorded) = match &holder {
            Some(item) => folded_of(aggregate, item)?,
            None => (Sums::default(), false),
        };
        let now = parts(store, aggregate).await?;
        // Parts moved with the numbers as they were (a count that came and
        // went): nothing to add, and the record can wait for a change.
        if now.rev == was.rev || holder.is_some() && (now.sum, now.count) == (was.sum, was.count) {
            return Ok(Folding::Unchanged);
        }
        match store.update(&fold_change(aggregate, was, recorded, now, holder.is_some())).await {
            Ok(_) => return Ok(Folding::Folded),
            Err(e) if e.is_conditional_check_failed() => {
                tokio::time::sleep(store::conflicts::pause(attempt + 1)).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(DerivedError::Contended(aggregate.key.pk.clone()))
}

/// The change that adds `now - was` to the holder and records `now` as
/// folded, if the holder's record is still `was` (`recorded`: it had one).
fn fold_change(aggregate: &Aggregate, was: Sums, recorded: bool, now: Sums, exists: bool) -> Change {
    let f = aggregate.folded;
    let mut change = Change::untimed(aggregate.key.clone())
        .add(aggregate.count, now.count - was.count)
        .set(f.rev, Value::n(now.rev))
        .set(f.count, Value::n(now.count))
        .only_if(if recorded { Cond::Eq(f.rev, Value::n(was.rev)) } else { Cond::NotExists(f.rev) });
    if let (Some(sum), Some(folded)) = (aggregate.sum, f.sum) {
        change = change.add(sum, now.sum - was.sum).set(folded, Value::n(now.sum));
    }
    if exists {
        change = change.only_if(Cond::ItemExists);
    } else {
        for (a, v) in &aggregate.init {
            change = change.set(a, v.clone());
        }
    }
    change
}
