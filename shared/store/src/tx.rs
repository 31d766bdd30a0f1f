//! Writes: a [`keyschema::Change`] rendered into an `UpdateItem` or
//! one action of a transaction, and [`Transaction`], whose actions carry
//! names. A cancelled transaction reports its failed conditions by name
//! (DynamoDB's positional cancellation reasons are mapped here, once), and
//! every transaction carries a `ClientRequestToken`, so the SDK's retry of
//! one that already committed succeeds instead of failing its conditions.

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, Put, ReturnValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem,
    Update,
};
use aws_sdk_dynamodb::Client;
use keyschema::table::PK;
use keyschema::{Change, Cond, Value};
use keyschema::{Entity, Key};

use crate::error::Cancellation;
use crate::item::{key_item, to_item, Item};
use crate::{Store, StoreError};

fn invalid(e: impl std::fmt::Display) -> StoreError {
    StoreError::Service { code: "InvalidRequest".into(), message: e.to_string() }
}

/// A scalar value of a change as an attribute value.
pub fn attribute(value: &Value) -> AttributeValue {
    match value {
        Value::S(s) => AttributeValue::S(s.clone()),
        Value::N(n) => AttributeValue::N(n.clone()),
    }
}

/// A change as expression text with its placeholders.
#[derive(Debug, Default)]
struct Expression {
    update: String,
    condition: Option<String>,
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Expression {
    fn name(&mut self, attribute: &str) -> String {
        let next = format!("#a{}", self.names.len());
        let found = self.names.iter().find(|(_, a)| a.as_str() == attribute).map(|(p, _)| p.clone());
        found.unwrap_or_else(|| {
            self.names.insert(next.clone(), attribute.to_owned());
            next
        })
    }

    fn value(&mut self, value: &Value) -> String {
        let placeholder = format!(":v{}", self.values.len());
        self.values.insert(placeholder.clone(), attribute(value));
        placeholder
    }

    fn condition(mut self, clauses: &[Cond]) -> Self {
        let mut parts = Vec::new();
        for clause in clauses {
            parts.push(match clause {
                Cond::ItemExists => format!("attribute_exists({})", self.name(PK)),
                Cond::Exists(a) => format!("attribute_exists({})", self.name(a)),
                Cond::NotExists(a) => format!("attribute_not_exists({})", self.name(a)),
                Cond::Eq(a, v) => format!("{} = {}", self.name(a), self.value(v)),
                Cond::Ne(a, v) => format!("{} <> {}", self.name(a), self.value(v)),
                Cond::Differs(a, v) => {
                    let (a, v) = (self.name(a), self.value(v));
                    format!("(attribute_not_exists({a}) OR {a} <> {v})")
                }
                Cond::Ge(a, v) => format!("{} >= {}", self.name(a), self.value(v)),
                Cond::Le(a, v) => format!("{} <= {}", self.name(a), self.value(v)),
                Cond::AnyDiffers(pairs) => {
                    let any: Vec<String> = pairs
                        .iter()
                        .map(|(a, v)| {
                            let (a, v) = (self.name(a), self.value(v));
                            format!("attribute_not_exists({a}) OR {a} <> {v}")
                        })
                        .collect();
                    format!("({})", any.join(" OR "))
                }
            });
        }
        self.condition = (!parts.is_empty()).then(|| parts.join(" AND "));
        self
    }

    fn of(change: &Change) -> Self {
        let mut e = Expression::default();
        let mut clauses = Vec::new();
        let set: Vec<String> = change.set.iter().map(|(a, v)| format!("{} = {}", e.name(a), e.value(v))).collect();
        if !set.is_empty() {
            clauses.push(format!("SET {}", set.join(", ")));
        }
        let remove: Vec<String> = change.remove.iter().map(|a| e.name(a)).collect();
        if !remove.is_empty() {
            clauses.push(format!("REMOVE {}", remove.join(", ")));
        }
        let add: Vec<String> = change.add.iter().map(|(a, v)| format!("{} {}", e.name(a), e.value(v))).collect();
        if !add.is_empty() {
            clauses.push(format!("ADD {}", add.join(", ")));
        }
        e.update = clauses.join(" ");
        e.condition(&change.condition)
    }

    fn names(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }

    fn values(&self) -> Option<HashMap<String, AttributeValue>> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }
}

/// What every action's builder shares: the table, the condition and its
/// placeholders, and the item as it was when the condition fails.
macro_rules! conditioned {
    ($builder:expr, $table:expr, $e:expr) => {
        $builder
            .table_name($table)
            .set_condition_expression($e.condition.clone())
            .set_expression_attribute_names($e.names())
            .set_expression_attribute_values($e.values())
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
    };
}

/// An action on the item with `key` under `condition` (a check, a delete).
macro_rules! keyed {
    ($builder:expr, $table:expr, $key:expr, $condition:expr) => {{
        let e = Expression::default().condition($condition);
        conditioned!($builder, $table, e).set_key(Some(key_item($key.as_ref()))).build().map_err(invalid)
    }};
}

impl Store {
    /// One `UpdateItem`: the item as it is afterwards. A failed condition is
    /// `ConditionFailed` with the item as it was (`None` if it does not exist).
    pub async fn update(&self, change: &Change) -> Result<Item, StoreError> {
        let e = Expression::of(change);
        let req = conditioned!(self.client.update_item(), self.table(), e)
            .set_key(Some(key_item(&change.key)))
            .update_expression(&e.update)
            .return_values(ReturnValue::AllNew)
            .return_consumed_capacity(crate::TOTAL);
        let out =
            crate::conflicts::retrying(|| async { req.clone().send().await.map_err(StoreError::from_update) }).await?;
        Ok(out.attributes.unwrap_or_default())
    }

    /// A transaction on this table with a fresh `ClientRequestToken`.
    pub fn transaction(&self) -> Transaction {
        Transaction {
            client: self.client.clone(),
            table: self.table().to_owned(),
            token: ulid::Ulid::generate().to_string(),
            names: Vec::new(),
            actions: Vec::new(),
        }
    }
}

pub use crate::error::ActionName;

/// A `TransactWriteItems` request whose actions carry names.
#[derive(Debug)]
pub struct Transaction {
    client: Client,
    table: String,
    token: String,
    names: Vec<ActionName>,
    actions: Vec<TransactWriteItem>,
}

impl Transaction {
    /// Uses `token` as the `ClientRequestToken` (at most 36 characters; the
    /// same token with the same actions within 10 minutes is applied once).
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = token.into();
        self
    }

    fn push(&mut self, name: impl Into<ActionName>, action: TransactWriteItem) {
        self.names.push(name.into());
        self.actions.push(action);
    }

    /// Puts `entity` only if no item has its primary key.
    pub fn put_new<E: Entity>(&mut self, name: impl Into<ActionName>, entity: &E) -> Result<&mut Self, StoreError> {
        self.put_item_new(name, to_item(entity)?)
    }

    /// Puts a raw `item` only if no item has its primary key.
    pub fn put_item_new(&mut self, name: impl Into<ActionName>, item: Item) -> Result<&mut Self, StoreError> {
        self.put_item_if(name, item, &[Cond::NotExists(PK)])
    }

    /// Puts a raw `item` (replacing the one with its key) if `condition` holds.
    pub fn put_item_if(
        &mut self,
        name: impl Into<ActionName>,
        item: Item,
        condition: &[Cond],
    ) -> Result<&mut Self, StoreError> {
        let e = Expression::default().condition(condition);
        let put = conditioned!(Put::builder(), &self.table, e).set_item(Some(item)).build().map_err(invalid)?;
        self.push(name, TransactWriteItem::builder().put(put).build());
        Ok(self)
    }

    /// Requires that an item with `key` exists.
    pub fn must_exist(&mut self, name: impl Into<ActionName>, key: &impl AsRef<Key>) -> Result<&mut Self, StoreError> {
        self.check(name, key, &[Cond::ItemExists])
    }

    /// Requires that the item with `key` meets `condition` (writes nothing to it).
    pub fn check(
        &mut self,
        name: impl Into<ActionName>,
        key: &impl AsRef<Key>,
        condition: &[Cond],
    ) -> Result<&mut Self, StoreError> {
        let check = keyed!(ConditionCheck::builder(), &self.table, key, condition)?;
        self.push(name, TransactWriteItem::builder().condition_check(check).build());
        Ok(self)
    }

    /// Applies `change` (its condition included).
    pub fn update(&mut self, name: impl Into<ActionName>, change: &Change) -> Result<&mut Self, StoreError> {
        let e = Expression::of(change);
        let update = conditioned!(Update::builder(), &self.table, e)
            .set_key(Some(key_item(&change.key)))
            .update_expression(&e.update)
            .build()
            .map_err(invalid)?;
        self.push(name, TransactWriteItem::builder().update(update).build());
        Ok(self)
    }

    /// Deletes the item with `key` if `condition` holds.
    pub fn delete(
        &mut self,
        name: impl Into<ActionName>,
        key: &impl AsRef<Key>,
        condition: &[Cond],
    ) -> Result<&mut Self, StoreError> {
        let delete = keyed!(Delete::builder(), &self.table, key, condition)?;
        self.push(name, TransactWriteItem::builder().delete(delete).build());
        Ok(self)
    }

    /// Number of actions so far.
    pub fn len(&self) -> usize {
        self.actions.len()
    }

    /// Whether there are no actions.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    /// Sends the transaction, again (with its token) while only conflicts
    /// cancel it ([`crate::conflicts`]). A cancellation names each action
    /// with its reason (see [`StoreError::failed`]).
    pub async fn send(self) -> Result<(), StoreError> {
        let req = self
            .client
            .transact_write_items()
            .set_transact_items(Some(self.actions.clone()))
            .client_request_token(&self.token)
            .return_consumed_capacity(crate::TOTAL);
        crate::conflicts::retrying(|| async { Self::answer(&self.names, req.clone().send().await) }).await
    }

    fn answer<R>(
        names: &[ActionName],
        result: Result<
            R,
            aws_sdk_dynamodb::error::SdkError<TransactWriteItemsError, aws_sdk_dynamodb::config::http::HttpResponse>,
        >,
    ) -> Result<(), StoreError> {
        match result {
            Ok(_) => Ok(()),
            Err(err) => {
                if let aws_sdk_dynamodb::error::SdkError::ServiceError(ctx) = &err {
                    if let TransactWriteItemsError::TransactionCanceledException(e) = ctx.err() {
                        let reasons = names.iter().zip(e.cancellation_reasons()).map(|(action, r)| Cancellation {
                            action: action.clone(),
                            code: r.code().filter(|c| *c != "None").map(str::to_owned),
                            item: r.item().cloned(),
                        });
                        return Err(StoreError::TransactionCanceled(reasons.collect()));
                    }
                }
                Err(err.into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::ids::ListingId;
    use domain::model::ListingStatus;
    use keyschema::write;

    /// Pins the exact expression a listing sale renders to.
    #[test]
    fn a_sale_renders_one_update_that_moves_its_keys() {
        let id: ListingId = "01JF8Z6A000000000000000001".parse().unwrap();
        let seller = "alice".parse().unwrap();
        let change = write::listing::sell(&id, &seller, domain::model::Money::from_cents(2800), "T").unwrap();
        let e = Expression::of(&change);
        let spell = |text: &str| {
            let mut out = text.to_owned();
            // Longest placeholders first (`#a10` before `#a1`).
            let mut names: Vec<_> = e.names.iter().collect();
            names.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
            for (p, a) in names {
                out = out.replace(p.as_str(), a);
            }
            let mut values: Vec<_> = e.values.iter().collect();
            values.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
            for (p, v) in values {
                let v = match v {
                    AttributeValue::S(s) => s.clone(),
                    AttributeValue::N(n) => n.clone(),
                    _ => unreachable!(),
                };
                out = out.replace(p.as_str(), &v);
            }
            out
        };
        assert_eq!(
            spell(&e.update),
            format!(
                "SET updatedAt = T, status = {}, gsi1pk = SELLER#alice, gsi1sk = LISTING#sold#{id} REMOVE gsi2pk, gsi2sk, gsi3pk, gsi3sk, gsi4pk, gsi4sk",
                ListingStatus::Sold
            )
        );
        assert_eq!(spell(e.condition.as_deref().unwrap()), "status = active AND price = 28.00");
    }
}
