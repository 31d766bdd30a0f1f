//! What a DynamoDB request (its JSON body) reads and writes: the
//! partitions it reads, the items it writes with their price, the index
//! partitions an update moves an item to.

use keyschema::table::Index;
use serde_json::Value;

use super::{ItemKey, Partition};

/// What one request reads and writes.
#[derive(Debug, Default)]
pub(super) struct Facts {
    pub reads: Vec<Partition>,
    /// Items written (or condition-checked).
    pub writes: Vec<Write>,
    pub transaction: bool,
    pub token: Option<String>,
}

/// One item a request writes (or condition-checks).
#[derive(Debug)]
pub(super) struct Write {
    pub key: ItemKey,
    /// Its price in WCU (twice the normal rate in a transaction).
    pub wcu: f64,
    /// The index partitions the write puts the item in (a put's index
    /// keys, those an update sets).
    pub sets: Vec<Partition>,
    /// The indexes whose sort key an update sets and not their partition
    /// key: an entry that moves within its partition, which DynamoDB
    /// writes twice (the old entry deleted, the new one put).
    pub moves: Vec<&'static str>,
}

/// A write of `kind` (`Put`, `Update`, `Delete`, `ConditionCheck`, as in a
/// transaction) described by `action`, at `rate` times the normal price.
fn write(kind: &str, action: &Value, rate: f64) -> Option<Write> {
    let write = match kind {
        "Put" => Write {
            key: key_of(&action["Item"])?,
            wcu: kb_units(&action["Item"]),
            sets: index_partitions(&action["Item"]),
            moves: Vec::new(),
        },
        "Update" => Write {
            key: key_of(&action["Key"])?,
            wcu: 1.0,
            sets: set_partitions(action),
            moves: sort_key_moves(action),
        },
        _ => Write { key: key_of(&action["Key"])?, wcu: 1.0, sets: Vec::new(), moves: Vec::new() },
    };
    Some(Write { wcu: write.wcu * rate, ..write })
}

fn s(v: &Value, name: &str) -> Option<String> {
    v.get(name)?.get("S")?.as_str().map(str::to_owned)
}

pub(super) fn key_of(item: &Value) -> Option<ItemKey> {
    Some((s(item, "pk")?, s(item, "sk")?))
}

pub(super) fn index_partitions(item: &Value) -> Vec<Partition> {
    Index::GSIS.iter().filter_map(|i| Some((i.name()?, s(item, i.pk())?))).collect()
}

fn kb_units(item: &Value) -> f64 {
    (item.to_string().len() as f64 / 1024.0).ceil().max(1.0)
}

pub(super) fn facts(op: &str, body: &Value) -> Facts {
    let mut f = Facts::default();
    let table_read = |key: &Value| s(key, "pk").map(|pk| ("table", pk));
    match op {
        "GetItem" => f.reads.extend(table_read(&body["Key"])),
        "Query" => {
            // The table's indexes, or a retired one a store still reads
            // while its successor fills (`LIST_INDEX_READS=GSI1-3`).
            let retired = Index::GSIS.iter().filter_map(|i| i.moved_from());
            let known: Vec<Index> = Index::GSIS.iter().copied().chain(retired).collect();
            let index =
                body["IndexName"].as_str().and_then(|n| known.iter().find_map(|i| i.name().filter(|x| *x == n)));
            let pk = body["ExpressionAttributeValues"][":pk"]["S"].as_str();
            f.reads.extend(pk.map(|pk| (index.unwrap_or("table"), pk.to_owned())));
        }
        "BatchGetItem" => {
            for table in body["RequestItems"].as_object().into_iter().flat_map(|o| o.values()) {
                f.reads.extend(table["Keys"].as_array().into_iter().flatten().filter_map(table_read));
            }
        }
        "PutItem" | "UpdateItem" | "DeleteItem" => f.writes.extend(write(op.trim_end_matches("Item"), body, 1.0)),
        "TransactWriteItems" => {
            f.transaction = true;
            f.token = body["ClientRequestToken"].as_str().map(str::to_owned);
            for action in body["TransactItems"].as_array().into_iter().flatten() {
                let Some((kind, a)) = action.as_object().and_then(|o| o.iter().next()) else { continue };
                f.writes.extend(write(kind, a, 2.0));
            }
        }
        "BatchWriteItem" => {
            for table in body["RequestItems"].as_object().into_iter().flat_map(|o| o.values()) {
                for w in table.as_array().into_iter().flatten() {
                    f.writes.extend(
                        write("Put", &w["PutRequest"], 1.0).or_else(|| write("Delete", &w["DeleteRequest"], 1.0)),
                    );
                }
            }
        }
        _ => {}
    }
    f
}

/// What an update's `SET` clause assigns: each attribute name with the
/// placeholder of its value (`SET #n = :v`).
fn assignments(update: &Value) -> Vec<(&str, &str)> {
    let text = update["UpdateExpression"].as_str().unwrap_or_default();
    let set = text.split(" REMOVE ").next().unwrap_or_default();
    let names = update["ExpressionAttributeNames"].as_object().into_iter().flatten();
    names
        .filter_map(|(placeholder, name)| {
            let at = set.find(&format!("{placeholder} = "))?;
            let value = set[at + placeholder.len() + 3..].split([',', ' ']).next().unwrap_or_default();
            Some((name.as_str()?, value))
        })
        .collect()
}

/// Index partitions an update's expression sets (`SET ... #n = :v` where
/// `#n` names an index's partition key attribute).
pub(super) fn set_partitions(update: &Value) -> Vec<Partition> {
    let mut out = Vec::new();
    for (name, value) in assignments(update) {
        for index in Index::GSIS.iter().filter(|i| name == i.pk()) {
            if let (Some(index), Some(pk)) = (index.name(), update["ExpressionAttributeValues"][value]["S"].as_str()) {
                out.push((index, pk.to_owned()));
            }
        }
    }
    out
}

/// The indexes whose sort key an update sets without their partition key.
pub(super) fn sort_key_moves(update: &Value) -> Vec<&'static str> {
    let names: Vec<&str> = assignments(update).into_iter().map(|(name, _)| name).collect();
    Index::GSIS
        .iter()
        .filter(|i| names.contains(&i.sk()) && !names.contains(&i.pk()))
        .filter_map(|i| i.name())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn facts_name_the_partitions_and_items_of_each_request() {
        let q = json!({"IndexName": "GSI7", "ExpressionAttributeValues": {":pk": {"S": "CATEGORY#books"}}});
        assert_eq!(facts("Query", &q).reads, vec![("GSI7", "CATEGORY#books".to_owned())]);
        let tx = json!({"ClientRequestToken": "t1", "TransactItems": [
            {"Put": {"Item": {"pk": {"S": "ORDER#1"}, "sk": {"S": "#METADATA"}}}},
            {"Update": {"Key": {"pk": {"S": "PRODUCT#9"}, "sk": {"S": "#METADATA"}}}},
            {"ConditionCheck": {"Key": {"pk": {"S": "USER#b"}, "sk": {"S": "#METADATA"}}}}]});
        let f = facts("TransactWriteItems", &tx);
        assert!(f.transaction);
        assert_eq!(f.token.as_deref(), Some("t1"));
        assert_eq!(f.writes.len(), 3);
        assert!(f.writes.iter().all(|w| w.wcu == 2.0), "twice the rate in a transaction");
    }

    #[test]
    fn an_update_setting_an_index_key_names_its_new_partition() {
        let u = json!({
            "UpdateExpression": "SET #n0 = :v0, #n1 = :v1 REMOVE #n2",
            "ExpressionAttributeNames": {"#n0": "status", "#n1": "gsi2pk", "#n2": "gsi3pk"},
            "ExpressionAttributeValues": {":v0": {"S": "active"}, ":v1": {"S": "CATEGORY#books"}}
        });
        assert_eq!(set_partitions(&u), vec![("GSI7", "CATEGORY#books".to_owned())]);
        assert!(sort_key_moves(&u).is_empty(), "a partition key set: a move between partitions");
        let price = json!({
            "UpdateExpression": "SET #n0 = :v0, #n1 = :v1",
            "ExpressionAttributeNames": {"#n0": "price", "#n1": "gsi3sk"},
            "ExpressionAttributeValues": {":v0": {"N": "5"}, ":v1": {"S": "LISTING#0000000500#L"}}
        });
        assert!(set_partitions(&price).is_empty());
        assert_eq!(sort_key_moves(&price), ["GSI8"], "a sort key alone: a move within the partition");
    }
}
