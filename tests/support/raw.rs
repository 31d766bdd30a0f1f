//! Writes behind the API's back, as a lost write, a drift or an operator
//! would leave the table: what reconcile and the checks must then find.

use aws_sdk_dynamodb::types::AttributeValue;

use crate::TestTable;

impl TestTable {
    /// Updates the item at `key` with `expression`, its `#names` and
    /// `:values`, unconditionally.
    pub async fn raw_update(
        &self,
        key: impl Into<keyschema::Key>,
        expression: &str,
        names: &[(&str, &str)],
        values: &[(&str, AttributeValue)],
    ) {
        let store = &self.deps.store;
        let mut update = store
            .client()
            .update_item()
            .table_name(store.table())
            .set_key(Some(store::item::key_item(&key.into())))
            .update_expression(expression);
        for (name, attribute) in names {
            update = update.expression_attribute_names(*name, *attribute);
        }
        for (name, value) in values {
            update = update.expression_attribute_values(*name, value.clone());
        }
        update.send().await.expect("a raw update");
    }

    /// Deletes the item at `key`, unconditionally.
    pub async fn raw_delete(&self, key: impl Into<keyschema::Key>) {
        let store = &self.deps.store;
        let delete = store.client().delete_item().table_name(store.table());
        delete.set_key(Some(store::item::key_item(&key.into()))).send().await.expect("a raw delete");
    }
}
