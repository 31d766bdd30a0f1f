//! The NoSQL Workbench data model of the table (`docs/nosql-workbench.json`),
//! generated from the key design: one facet per entity declared in
//! `keyschema::entities::ALL` (its key templates as the key aliases), the
//! GSIs of `Index::GSIS`, and the demo data as sample rows, in the format
//! NoSQL Workbench imports (`DataModel`, `TableFacets`,
//! `GlobalSecondaryIndexes`, `TableData`). A test regenerates it from a
//! table holding the demo data and fails when the file is stale.

use std::collections::{BTreeMap, BTreeSet};

use keyschema::entities::ALL;
use keyschema::table::{Index, Projection, ENTITY_TYPE};
use serde_json::{json, Map, Value};
use store::aws_sdk_dynamodb::types::AttributeValue;
use store::Item;

/// Where the model is kept, from the workspace root.
pub const PATH: &str = "docs/nosql-workbench.json";

/// Attributes whose values depend on when the demo data was loaded; the
/// model shows them with this fixed sample instead, so it is reproducible.
const TIMESTAMPS: &[&str] = &["createdAt", "updatedAt"];
const SAMPLE_TIME: &str = "2026-01-01T00:00:00.000Z";

/// DynamoDB JSON of one attribute value (`{"S": ...}`, `{"N": ...}`, ...).
fn attribute(value: &AttributeValue) -> Value {
    match value {
        AttributeValue::S(s) => json!({ "S": s }),
        AttributeValue::N(n) => json!({ "N": n }),
        AttributeValue::Bool(b) => json!({ "BOOL": b }),
        AttributeValue::Null(_) => json!({ "NULL": true }),
        AttributeValue::Ss(v) => json!({ "SS": v }),
        AttributeValue::Ns(v) => json!({ "NS": v }),
        AttributeValue::L(v) => json!({ "L": v.iter().map(attribute).collect::<Vec<_>>() }),
        AttributeValue::M(m) => {
            json!({ "M": m.iter().map(|(k, v)| (k.clone(), attribute(v))).collect::<BTreeMap<_, _>>() })
        }
        other => json!({ "S": format!("{other:?}") }),
    }
}

fn type_letter(value: &AttributeValue) -> &'static str {
    match value {
        AttributeValue::N(_) => "N",
        AttributeValue::Bool(_) => "BOOL",
        AttributeValue::Null(_) => "NULL",
        AttributeValue::L(_) => "L",
        AttributeValue::M(_) => "M",
        AttributeValue::Ss(_) => "SS",
        AttributeValue::Ns(_) => "NS",
        _ => "S",
    }
}

/// A row as the model shows it: DynamoDB JSON, timestamps fixed, TTLs left out.
fn row(item: &Item) -> Map<String, Value> {
    item.iter()
        .filter(|(name, _)| name.as_str() != keyschema::table::TTL)
        .map(|(name, value)| {
            let value = match value {
                AttributeValue::S(_) if TIMESTAMPS.contains(&name.as_str()) => json!({ "S": SAMPLE_TIME }),
                other => attribute(other),
            };
            (name.clone(), value)
        })
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .collect()
}

fn key(name: &str) -> Value {
    json!({ "AttributeName": name, "AttributeType": "S" })
}

fn entity_of(item: &Item) -> Option<&str> {
    match item.get(ENTITY_TYPE) {
        Some(AttributeValue::S(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// The data model of `table` with `items` (the demo data) as sample rows.
pub fn model(table: &str, items: &[Item]) -> Value {
    let mut items: Vec<&Item> = items.iter().collect();
    let sort_key = |i: &Item| {
        let s = |n: &str| match i.get(n) {
            Some(AttributeValue::S(s)) => s.clone(),
            _ => String::new(),
        };
        (s("pk"), s("sk"))
    };
    items.sort_by_key(|i| sort_key(i));
    let key_names: BTreeSet<&str> = Index::all_key_attributes().collect();
    let mut non_key: BTreeMap<String, &'static str> =
        Index::GSIS.iter().flat_map(|i| [i.pk(), i.sk()]).map(|n| (n.to_owned(), "S")).collect();
    for item in &items {
        for (name, value) in item.iter() {
            if !key_names.contains(name.as_str()) && name.as_str() != keyschema::table::TTL {
                non_key.entry(name.clone()).or_insert(type_letter(value));
            }
        }
    }
    let facets: Vec<Value> = ALL
        .iter()
        .map(|decl| {
            let keys = decl.key;
            let name = decl.entity.as_str();
            let rows: Vec<&&Item> = items.iter().filter(|i| entity_of(i) == Some(name)).collect();
            let mut attributes: BTreeSet<String> = Index::GSIS
                .iter()
                .filter(|i| decl.indexes.iter().any(|d| d.key.index == **i))
                .flat_map(|i| [i.pk().to_owned(), i.sk().to_owned()])
                .collect();
            attributes.insert(ENTITY_TYPE.to_owned());
            for r in &rows {
                attributes.extend(r.keys().filter(|k| !key_names.contains(k.as_str())).cloned());
            }
            attributes.remove(keyschema::table::TTL);
            json!({
                "FacetName": name,
                "KeyAttributeAlias": { "PartitionKeyAlias": keys.pk, "SortKeyAlias": keys.sk },
                "TableData": rows.iter().map(|r| Value::Object(row(r))).collect::<Vec<_>>(),
                "NonKeyAttributes": attributes.into_iter().collect::<Vec<_>>(),
                "DataAccess": { "MySql": {} },
            })
        })
        .collect();
    let indexes: Vec<Value> = Index::GSIS
        .iter()
        .map(|i| {
            json!({
                "IndexName": i.name().unwrap_or_default(),
                "KeyAttributes": { "PartitionKey": key(i.pk()), "SortKey": key(i.sk()) },
                "Projection": projection(i.projection()),
            })
        })
        .collect();
    json!({
        "ModelName": "Marketplace single table",
        "ModelMetadata": {
            "Author": "generated by tools/docs/src/workbench.rs",
            "DateCreated": "Nov 23, 2026, 12:00 PM",
            "DateLastModified": "Nov 23, 2026, 12:00 PM",
            "Description": "One table and its GSIs: every entity as a facet with its key templates, the demo data as sample rows. Generated from shared/keyschema; a test fails when it is stale.",
            "AWSService": "Amazon DynamoDB",
            "Version": "3.0",
        },
        "DataModel": [{
            "TableName": table,
            "KeyAttributes": { "PartitionKey": key(Index::Table.pk()), "SortKey": key(Index::Table.sk()) },
            "NonKeyAttributes": non_key
                .into_iter()
                .map(|(name, kind)| json!({ "AttributeName": name, "AttributeType": kind }))
                .collect::<Vec<_>>(),
            "TableFacets": facets,
            "GlobalSecondaryIndexes": indexes,
            "TableData": items.iter().map(|i| Value::Object(row(i))).collect::<Vec<_>>(),
            "DataAccess": { "MySql": {} },
            "BillingMode": "PAY_PER_REQUEST",
        }],
    })
}

/// An index's projection as the model file writes it.
fn projection(p: Projection) -> Value {
    match p {
        Projection::All => json!({ "ProjectionType": p.kind() }),
        Projection::Include(attrs) => json!({ "ProjectionType": p.kind(), "NonKeyAttributes": attrs }),
    }
}
