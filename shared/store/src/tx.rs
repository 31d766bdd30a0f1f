//! Building blocks of `TransactWriteItems` requests.

use aws_sdk_dynamodb::types::{ConditionCheck, Put, TransactWriteItem};
use keyschema::schema::PK;
use keyschema::Key;

use crate::item::{key_item, Item};
use crate::StoreError;

fn invalid(e: impl std::fmt::Display) -> StoreError {
    StoreError::Service { code: "InvalidRequest".into(), message: e.to_string() }
}

/// Puts `item` only if no item has its primary key.
pub fn put_new(table: &str, item: Item) -> Result<TransactWriteItem, StoreError> {
    let put = Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .condition_expression("attribute_not_exists(#pk)")
        .expression_attribute_names("#pk", PK)
        .build()
        .map_err(invalid)?;
    Ok(TransactWriteItem::builder().put(put).build())
}

/// Requires that an item with `key` exists (the transaction fails otherwise).
pub fn must_exist(table: &str, key: &Key) -> Result<TransactWriteItem, StoreError> {
    let check = ConditionCheck::builder()
        .table_name(table)
        .set_key(Some(key_item(key)))
        .condition_expression("attribute_exists(#pk)")
        .expression_attribute_names("#pk", PK)
        .build()
        .map_err(invalid)?;
    Ok(TransactWriteItem::builder().condition_check(check).build())
}
