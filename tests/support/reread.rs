//! The meter's second look (see [`crate::pricing`]): a read sent with a
//! filter or a projection answers less than it read, and DynamoDB bills
//! what it read. So the same read is sent again without them (same key
//! condition, start key, limit and consistency: the same items), by a
//! client that is not metered, and priced from that answer. The table must
//! not have changed in between: tests take the meter's record right after
//! the request they measure.

use std::sync::OnceLock;

use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemInput;
use aws_sdk_dynamodb::operation::get_item::GetItemInput;
use aws_sdk_dynamodb::operation::query::QueryInput;
use aws_sdk_dynamodb::types::KeysAndAttributes;
use aws_sdk_dynamodb::Client;

use crate::pricing::{price_gets, price_query, Item, Priced, Read, Reread};

/// A client of the test endpoint without the meter.
async fn plain() -> Client {
    static CLIENT: OnceLock<Client> = OnceLock::new();
    if let Some(c) = CLIENT.get() {
        return c.clone();
    }
    let client = local_stack::connect(crate::endpoint(), None).await;
    CLIENT.get_or_init(|| client).clone()
}

/// Whether `expression` names the placeholder `name` (`#pk`, `:low`) as a
/// whole token.
fn mentions(expression: &str, name: &str) -> bool {
    expression.match_indices(name).any(|(at, _)| {
        let next = expression[at + name.len()..].chars().next();
        !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Prices `priced` again from a plain read of what it read.
pub(crate) async fn settle(priced: &mut Priced, again: Reread) {
    let client = plain().await;
    let fresh = match again {
        Reread::Query(i) => query(&client, *i).await,
        Reread::Get(i) => get(&client, *i).await,
        Reread::Batch(tables) => batch(&client, tables).await,
    };
    *priced =
        Priced { op: priced.op.clone(), index: priced.index.clone(), reported: priced.reported, reread: true, ..fresh };
}

async fn query(client: &Client, i: QueryInput) -> Priced {
    let condition = i.key_condition_expression.clone().unwrap_or_default();
    let names = i.expression_attribute_names.map(|m| m.into_iter().filter(|(k, _)| mentions(&condition, k)).collect());
    let values =
        i.expression_attribute_values.map(|m| m.into_iter().filter(|(k, _)| mentions(&condition, k)).collect());
    let read = Read::of(i.consistent_read);
    let out = QueryInput::builder()
        .set_table_name(i.table_name)
        .set_index_name(i.index_name)
        .set_key_condition_expression(i.key_condition_expression)
        .set_key_conditions(i.key_conditions)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .set_exclusive_start_key(i.exclusive_start_key)
        .set_limit(i.limit)
        .set_scan_index_forward(i.scan_index_forward)
        .set_consistent_read(i.consistent_read)
        .send_with(client)
        .await
        .expect("the meter's re-read of a query");
    price_query(out.items(), read)
}

async fn get(client: &Client, i: GetItemInput) -> Priced {
    let read = Read::of(i.consistent_read);
    let out = GetItemInput::builder()
        .set_table_name(i.table_name)
        .set_key(i.key)
        .set_consistent_read(i.consistent_read)
        .send_with(client)
        .await
        .expect("the meter's re-read of an item");
    let found: Vec<Item> = out.item.into_iter().collect();
    price_gets(&found, u64::from(found.is_empty()), read)
}

async fn batch(client: &Client, tables: Vec<(String, Vec<Item>, Read)>) -> Priced {
    let mut total = Priced::default();
    for (table, keys, read) in tables {
        let mut found = Vec::new();
        for chunk in keys.chunks(100) {
            let mut pending = chunk.to_vec();
            while !pending.is_empty() {
                let asked = KeysAndAttributes::builder()
                    .set_keys(Some(pending))
                    .consistent_read(read == Read::Strong)
                    .build()
                    .expect("keys");
                let out = BatchGetItemInput::builder()
                    .request_items(&table, asked)
                    .send_with(client)
                    .await
                    .expect("the meter's re-read of a batch");
                found.extend(out.responses.and_then(|mut r| r.remove(&table)).unwrap_or_default());
                pending = out.unprocessed_keys.and_then(|mut u| u.remove(&table)).map_or_else(Vec::new, |k| k.keys);
            }
        }
        let part = price_gets(&found, (keys.len() - found.len().min(keys.len())) as u64, read);
        total.items += part.items;
        total.missing += part.missing;
        total.bytes += part.bytes;
        total.rcu += part.rcu;
    }
    total
}
