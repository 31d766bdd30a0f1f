//! Start keys of pages: what resumes a query after an item, and the check
//! that a caller's cursor names a key of the query it came from.

use aws_sdk_dynamodb::types::AttributeValue;
use keyschema::table::Index;
use keyschema::{Key, KeyQuery};

use crate::{Item, StartKey, StoreError};

/// The start key that resumes a query on `index` right after `item`.
pub(crate) fn start_key_of(index: Index, item: &Item) -> StartKey {
    let names = [Index::Table.pk(), Index::Table.sk(), index.pk(), index.sk()];
    string_attributes(item.iter().filter(|(k, _)| names.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())))
}

pub(crate) fn string_attributes(attrs: impl Iterator<Item = (String, AttributeValue)>) -> StartKey {
    attrs.filter_map(|(k, v)| if let AttributeValue::S(s) = v { Some((k, s)) } else { None }).collect()
}

/// A start key may only name key attributes of the table, must carry the
/// query index's keys, and must lie inside the query's partition and range.
pub(crate) fn check_start_key(query: &KeyQuery, start: StartKey) -> Result<Item, StoreError> {
    let mut allowed = vec![Index::Table.pk(), Index::Table.sk()];
    if query.index != Index::Table {
        allowed.extend([query.index.pk(), query.index.sk()]);
    }
    if start.keys().any(|k| !allowed.contains(&k.as_str())) || start.len() != allowed.len() {
        return Err(StoreError::ForeignStartKey);
    }
    let (Some(pk), Some(sk)) = (start.get(query.index.pk()), start.get(query.index.sk())) else {
        return Err(StoreError::ForeignStartKey);
    };
    if !query.contains(&Key { pk: pk.clone(), sk: sk.clone() }) {
        return Err(StoreError::ForeignStartKey);
    }
    Ok(start.into_iter().map(|(k, v)| (k, AttributeValue::S(v))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(pairs: &[(&str, &str)]) -> StartKey {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn start_keys_must_belong_to_the_query() {
        let q = keyschema::access::products_by_brand(&"acme".parse().unwrap()).unwrap();
        let good = key(&[
            ("pk", "PRODUCT#1"),
            ("sk", "#METADATA"),
            ("gsi1pk", "BRAND#acme"),
            ("gsi1sk", "CATEGORY#x#PRODUCT#1"),
        ]);
        assert!(check_start_key(&q, good.clone()).is_ok());
        let mut other_brand = good.clone();
        other_brand.insert("gsi1pk".into(), "BRAND#evil".into());
        assert!(check_start_key(&q, other_brand).is_err());
        let mut extra = good.clone();
        extra.insert("password".into(), "x".into());
        assert!(check_start_key(&q, extra).is_err());
        let table_q = keyschema::access::brands().unwrap();
        assert!(check_start_key(&table_q, key(&[("pk", "BRANDS"), ("sk", "BRAND#a")])).is_ok());
        assert!(check_start_key(&table_q, key(&[("pk", "CATEGORIES"), ("sk", "CATEGORY#a")])).is_err());
        assert!(check_start_key(&table_q, key(&[("pk", "BRANDS")])).is_err());
    }
}
