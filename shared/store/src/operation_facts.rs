//! What an operation's input and answer say, for the usage observer: the
//! table and index it names, the capacity DynamoDB reports it consumed and
//! the items it read. A Scan's input and answer are read here too: the
//! maintenance job's (`functions/maintenance/src/scan.rs`, the only place
//! that sends one) paces itself by what it consumed; the store sends none.

use aws_sdk_dynamodb::operation::{
    batch_get_item::BatchGetItemInput, batch_get_item::BatchGetItemOutput, batch_write_item::BatchWriteItemInput,
    delete_item::DeleteItemInput, delete_item::DeleteItemOutput, get_item::GetItemInput, get_item::GetItemOutput,
    put_item::PutItemInput, put_item::PutItemOutput, query::QueryInput, query::QueryOutput, scan::ScanInput,
    scan::ScanOutput, transact_write_items::TransactWriteItemsInput, transact_write_items::TransactWriteItemsOutput,
    update_item::UpdateItemInput, update_item::UpdateItemOutput,
};
use aws_sdk_dynamodb::types::ConsumedCapacity;
use aws_smithy_runtime_api::client::interceptors::context::{Input, Output};

/// The table an operation names (the first of a batch or transaction) and
/// the index it reads.
pub(crate) fn target(input: &Input) -> (Option<String>, Option<String>) {
    if let Some(i) = input.downcast_ref::<QueryInput>() {
        (i.table_name.clone(), i.index_name.clone())
    } else if let Some(i) = input.downcast_ref::<ScanInput>() {
        (i.table_name.clone(), i.index_name.clone())
    } else if let Some(i) = input.downcast_ref::<GetItemInput>() {
        (i.table_name.clone(), None)
    } else if let Some(i) = input.downcast_ref::<PutItemInput>() {
        (i.table_name.clone(), None)
    } else if let Some(i) = input.downcast_ref::<UpdateItemInput>() {
        (i.table_name.clone(), None)
    } else if let Some(i) = input.downcast_ref::<DeleteItemInput>() {
        (i.table_name.clone(), None)
    } else if let Some(i) = input.downcast_ref::<BatchGetItemInput>() {
        (i.request_items.as_ref().and_then(|m| m.keys().min().cloned()), None)
    } else if let Some(i) = input.downcast_ref::<BatchWriteItemInput>() {
        (i.request_items.as_ref().and_then(|m| m.keys().min().cloned()), None)
    } else if let Some(i) = input.downcast_ref::<TransactWriteItemsInput>() {
        let table = i.transact_items.iter().flatten().find_map(|t| {
            let named = [
                t.put.as_ref().map(|x| x.table_name.as_str()),
                t.update.as_ref().map(|x| x.table_name.as_str()),
                t.delete.as_ref().map(|x| x.table_name.as_str()),
                t.condition_check.as_ref().map(|x| x.table_name.as_str()),
            ];
            named.into_iter().flatten().next().map(str::to_owned)
        });
        (table, None)
    } else {
        (None, None)
    }
}

/// Reads and writes split out of one `ConsumedCapacity`: DynamoDB gives
/// `ReadCapacityUnits`/`WriteCapacityUnits` on some answers and only
/// `CapacityUnits` on others, which then count as the operation's kind.
fn split(capacity: &ConsumedCapacity, write: bool) -> (f64, f64) {
    match (capacity.read_capacity_units(), capacity.write_capacity_units()) {
        (None, None) => {
            let units = capacity.capacity_units().unwrap_or(0.0);
            if write {
                (0.0, units)
            } else {
                (units, 0.0)
            }
        }
        (read, written) => (read.unwrap_or(0.0), written.unwrap_or(0.0)),
    }
}

fn sum<'a>(capacities: impl IntoIterator<Item = &'a ConsumedCapacity>, write: bool) -> (f64, f64) {
    capacities.into_iter().map(|c| split(c, write)).fold((0.0, 0.0), |(r, w), (cr, cw)| (r + cr, w + cw))
}

fn item_count(n: i32) -> u32 {
    u32::try_from(n).unwrap_or(0)
}

/// Capacity (read, write) and items read of an operation's output.
pub(crate) fn measure(output: &Output) -> ((f64, f64), u32) {
    if let Some(o) = output.downcast_ref::<QueryOutput>() {
        (sum(o.consumed_capacity(), false), item_count(o.count()))
    } else if let Some(o) = output.downcast_ref::<ScanOutput>() {
        (sum(o.consumed_capacity(), false), item_count(o.count()))
    } else if let Some(o) = output.downcast_ref::<GetItemOutput>() {
        (sum(o.consumed_capacity(), false), u32::from(o.item().is_some()))
    } else if let Some(o) = output.downcast_ref::<BatchGetItemOutput>() {
        let items = o.responses().map_or(0, |r| r.values().map(Vec::len).sum::<usize>());
        (sum(o.consumed_capacity(), false), u32::try_from(items).unwrap_or(u32::MAX))
    } else if let Some(o) = output.downcast_ref::<PutItemOutput>() {
        (sum(o.consumed_capacity(), true), 0)
    } else if let Some(o) = output.downcast_ref::<UpdateItemOutput>() {
        (sum(o.consumed_capacity(), true), 0)
    } else if let Some(o) = output.downcast_ref::<DeleteItemOutput>() {
        (sum(o.consumed_capacity(), true), 0)
    } else if let Some(o) = output.downcast_ref::<TransactWriteItemsOutput>() {
        (sum(o.consumed_capacity(), true), 0)
    } else {
        ((0.0, 0.0), 0)
    }
}
