//! Entity <-> item conversion: the entity's fields (camelCase), its key
//! attributes and its `entityType`.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use keyschema::table::{ENTITY_TYPE, PK, SK};
use keyschema::{Attrs, Entity, ItemKeys, Key, Value};
use serde::de::DeserializeOwned;

use crate::StoreError;

/// A DynamoDB item.
pub type Item = HashMap<String, AttributeValue>;

/// The item a write of an entity puts: its fields, the keys its
/// declaration says a write puts, and its type.
pub fn to_item<E: Entity>(entity: &E) -> Result<Item, StoreError> {
    with_keys(entity, &entity.item_keys()?)
}

/// An entity's fields with `keys` and its type.
pub fn with_keys<E: Entity>(entity: &E, keys: &ItemKeys) -> Result<Item, StoreError> {
    let mut item: Item = serde_dynamo::to_item(entity)?;
    for (attr, value) in keys.attributes() {
        item.insert(attr.to_owned(), AttributeValue::S(value.to_owned()));
    }
    item.insert(ENTITY_TYPE.to_owned(), AttributeValue::S(E::DECL.entity.as_str().to_owned()));
    Ok(item)
}

/// An item's scalar attributes, as the key design reads them (lists and
/// maps left out).
pub fn attrs(item: &Item) -> Attrs {
    item.iter()
        .filter_map(|(k, v)| match v {
            AttributeValue::S(s) => Some((k.clone(), Value::S(s.clone()))),
            AttributeValue::N(n) => Some((k.clone(), Value::N(n.clone()))),
            _ => None,
        })
        .collect()
}

/// An entity from its item (key attributes and type are ignored).
pub fn from_item<T: DeserializeOwned>(item: Item) -> Result<T, StoreError> {
    Ok(serde_dynamo::from_item(item)?)
}

/// The `entityType` of an item, if it has one.
pub fn entity_type(item: &Item) -> Option<&str> {
    match item.get(ENTITY_TYPE) {
        Some(AttributeValue::S(t)) => Some(t.as_str()),
        _ => None,
    }
}

/// An item's primary key (`None` if it lacks one).
pub fn key_of(item: &Item) -> Option<Key> {
    let s = |n: &str| match item.get(n) {
        Some(AttributeValue::S(s)) => Some(s.clone()),
        _ => None,
    };
    Some(Key::new(s(PK)?, s(SK)?))
}

/// The `pk`/`sk` map of a primary key, for `GetItem`, `UpdateItem`, `DeleteItem`.
pub fn key_item(key: &Key) -> Item {
    HashMap::from([(PK.to_owned(), s(&key.pk)), (SK.to_owned(), s(&key.sk))])
}

/// The bytes of a write unit: a write of an item within them costs one
/// WCU (two in a transaction), of a larger one a WCU per 1 KB begun.
pub const WRITE_UNIT_BYTES: usize = 1024;

/// An item's size by DynamoDB's documented rules: each attribute's name
/// and value in UTF-8 bytes, a number a byte per two significant digits
/// and one more, a list or map 3 bytes and a byte per element more.
pub fn size(item: &Item) -> usize {
    item.iter().map(|(name, value)| name.len() + value_size(value)).sum()
}

fn value_size(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(s) => s.len(),
        AttributeValue::N(n) => number_size(n),
        AttributeValue::B(b) => b.as_ref().len(),
        AttributeValue::Ss(all) => all.iter().map(String::len).sum(),
        AttributeValue::Ns(all) => all.iter().map(|n| number_size(n)).sum(),
        AttributeValue::Bs(all) => all.iter().map(|b| b.as_ref().len()).sum(),
        AttributeValue::L(all) => 3 + all.iter().map(|v| 1 + value_size(v)).sum::<usize>(),
        AttributeValue::M(all) => 3 + all.iter().map(|(k, v)| 1 + k.len() + value_size(v)).sum::<usize>(),
        // Bool, Null (and any kind added later: a byte, as those).
        _ => 1,
    }
}

fn number_size(number: &str) -> usize {
    let mantissa = number.split(['e', 'E']).next().unwrap_or_default();
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    digits.trim_start_matches('0').trim_end_matches('0').len().max(1).div_ceil(2) + 1
}

/// Whether `entity`'s item, with every index key its declaration gives it
/// (those the stream processor adds later included) and `later` bytes to
/// spare (what later writes add: a fold's record, a counter's digits), is
/// within one write unit ([`WRITE_UNIT_BYTES`]).
pub fn within_write_unit<E: Entity>(entity: &E, later: usize) -> Result<bool, StoreError> {
    Ok(size(&keyed(&to_item(entity)?, entity)?).saturating_add(later) <= WRITE_UNIT_BYTES)
}

/// `item` as it will be once it has every index key `entity`'s
/// declaration gives it (those the stream processor adds included), the
/// rest of what it holds kept.
pub fn keyed<E: Entity>(item: &Item, entity: &E) -> Result<Item, StoreError> {
    let mut out = item.clone();
    for (attr, value) in E::DECL.item_keys(&entity.attrs()?)?.attributes() {
        out.insert(attr.to_owned(), AttributeValue::S(value.to_owned()));
    }
    Ok(out)
}

/// A string attribute value.
pub fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

/// A number attribute value.
pub fn n(value: impl std::fmt::Display) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::ids::ProductId;
    use domain::model::{Money, Product};

    /// Pins the exact stored shape of a product.
    #[test]
    fn product_item_shape() {
        let id: ProductId = "01JD0000000000000000000000".parse().unwrap();
        let product = Product {
            product_id: id,
            name: "Model 3".into(),
            brand_id: "tesla".parse().unwrap(),
            category_id: "cars".parse().unwrap(),
            price: Money::from_cents(3_999_000),
            stock_level: 70,
            stock_shards: 1,
            description: None,
            created_at: "2026-11-22T00:00:00.000Z".into(),
            updated_at: "2026-11-22T00:00:00.000Z".into(),
        };
        let item = to_item(&product).unwrap();
        let mut shape: Vec<String> = item
            .iter()
            .map(|(k, v)| match v {
                AttributeValue::S(s) => format!("{k}=S:{s}"),
                AttributeValue::N(n) => format!("{k}=N:{n}"),
                other => format!("{k}={other:?}"),
            })
            .collect();
        shape.sort();
        assert_eq!(
            shape,
            [
                "brandId=S:tesla",
                "categoryId=S:cars",
                "createdAt=S:2026-11-22T00:00:00.000Z",
                "entityType=S:Product",
                "gsi1pk=S:BRAND#tesla",
                "gsi1sk=S:CATEGORY#cars#PRODUCT#01JD0000000000000000000000",
                "gsi2pk=S:CATEGORY#cars",
                "gsi2sk=S:BRAND#tesla#PRODUCT#01JD0000000000000000000000",
                "name=S:Model 3",
                "pk=S:PRODUCT#01JD0000000000000000000000",
                "price=N:39990",
                "productId=S:01JD0000000000000000000000",
                "sk=S:#METADATA",
                "stockLevel=N:70",
                "updatedAt=S:2026-11-22T00:00:00.000Z",
            ]
        );
        assert_eq!(from_item::<Product>(item).unwrap(), product);
    }

    /// Sizes by the rules of the DynamoDB developer guide's "Item sizes
    /// and formats" (numbers: as tests/support/pricing.rs reads them).
    #[test]
    fn item_sizes() {
        let item = |pairs: Vec<(&str, AttributeValue)>| -> Item {
            pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
        };
        // Names and strings in UTF-8 bytes: "é" is 2.
        assert_eq!(size(&item(vec![("pk", s("ab")), ("té", s("é"))])), 2 + 2 + 3 + 2);
        // Numbers: a byte per two significant digits, plus one.
        assert_eq!(number_size("1"), 2);
        assert_eq!(number_size("12345"), 4);
        assert_eq!(number_size("1000"), 2);
        assert_eq!(number_size("0.0012"), 2);
        assert_eq!(size(&item(vec![("b", AttributeValue::Bool(true))])), 2);
        let list = AttributeValue::L(vec![s("ab"), n(7)]);
        assert_eq!(size(&item(vec![("l", list)])), 1 + 3 + (1 + 2) + (1 + 2));
    }
}
