//! `./dev explore`: a table explorer on the key schema. Runs any access
//! pattern of `keyschema::patterns::PATTERNS` by name with its parameters and
//! prints the items as a single-table view (pk, sk, the index keys they
//! carry, entity, main fields), one page at a time with the cursor; or
//! shows the whole table grouped by partition.
//!
//! ```text
//! explore patterns                              every pattern and the parameters it takes
//! explore "<pattern>" name=value ... [--limit N] [--cursor JSON]
//! explore table                                 the whole table, grouped by partition
//! ```
//!
//! Where: `DYNAMODB_ENDPOINT` (for instance the one `./dev up` prints) and
//! `TABLE_NAME` (default `marketplace`); `--aws` for the table in AWS (the
//! default credential chain); neither: a fresh DynamoDB Local with the demo
//! data. A pattern's parameters are the placeholders of its documented key
//! condition (`<brandId>`, `<status>`, `<shard>`, ...); a fan-out pattern
//! runs on the one shard given.

use std::collections::{BTreeMap, BTreeSet};

use keyschema::patterns::{samples, Pattern, Request, PATTERNS};
use keyschema::table::{Index, ENTITY_TYPE};
use keyschema::{Key, KeyQuery, SortKey};
use serde_json::Value;
use store::{item, Endpoint, StartKey, Store};

/// An item as the explorer shows it.
type Row = serde_json::Map<String, Value>;

use crate::dynamodb_local::DynamoDbLocal;

/// Widest a column gets before it is cut with `…`.
const WIDTH: usize = 64;

/// Runs the explorer with the arguments after `explore`.
pub async fn run(args: &[String]) -> Result<(), String> {
    let mut args: Vec<String> = args.to_vec();
    let aws = take_flag(&mut args, "--aws");
    let limit: u16 = match take_option(&mut args, "--limit")? {
        Some(n) => n.parse().ok().filter(|n| (1..=100).contains(n)).ok_or("--limit takes 1-100")?,
        None => 20,
    };
    let cursor = take_option(&mut args, "--cursor")?;
    match args.first().map(String::as_str) {
        None | Some("patterns") => {
            list_patterns();
            Ok(())
        }
        Some("table") => {
            let (store, _local) = connect(aws).await?;
            show_table(&store).await
        }
        Some(name) => {
            let pattern = PATTERNS
                .iter()
                .find(|p| p.id.eq_ignore_ascii_case(name))
                .ok_or_else(|| format!("no pattern `{name}`; `explore patterns` lists them"))?;
            let params = parse_params(&args[1..])?;
            let request = fill(pattern, &params)?;
            let (store, _local) = connect(aws).await?;
            run_pattern(&store, pattern, &request, limit, cursor).await
        }
    }
}

fn take_flag(args: &mut Vec<String>, flag: &str) -> bool {
    let before = args.len();
    args.retain(|a| a != flag);
    args.len() != before
}

fn take_option(args: &mut Vec<String>, name: &str) -> Result<Option<String>, String> {
    let Some(i) = args.iter().position(|a| a == name) else { return Ok(None) };
    if i + 1 >= args.len() {
        return Err(format!("{name} needs a value"));
    }
    let value = args.remove(i + 1);
    args.remove(i);
    Ok(Some(value))
}

fn parse_params(args: &[String]) -> Result<BTreeMap<String, String>, String> {
    args.iter()
        .map(|a| {
            a.split_once('=')
                .map(|(k, v)| (k.trim_start_matches('<').trim_end_matches('>').to_owned(), v.to_owned()))
                .ok_or_else(|| format!("`{a}`: parameters are name=value"))
        })
        .collect()
}

/// The `<name>` placeholders of a text, in order.
fn placeholders(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        let Some(len) = rest[start..].find('>') else { break };
        let name = rest[start + 1..start + len].to_owned();
        if !names.contains(&name) {
            names.push(name);
        }
        rest = &rest[start + len + 1..];
    }
    names
}

/// A pattern's parameters: the placeholders of its documented condition.
pub fn parameters(pattern: &Pattern) -> Vec<String> {
    placeholders(&pattern.condition().unwrap_or_default())
}

fn list_patterns() {
    println!("{:<34} {:<30} parameters", "pattern", "what");
    for p in PATTERNS {
        let params: Vec<String> = parameters(p).iter().map(|n| format!("{n}=")).collect();
        println!("{:<34} {:<30} {}", p.id, cut(p.what, 30), params.join(" "));
    }
    println!("\nexample: ./dev explore \"catalog AP6\" brandId=acme --limit 2");
}

/// The pattern's request with the given parameters in place of its samples.
fn fill(pattern: &Pattern, params: &BTreeMap<String, String>) -> Result<Request, String> {
    let wanted = parameters(pattern);
    let missing: Vec<&String> = wanted.iter().filter(|n| !params.contains_key(*n)).collect();
    if !missing.is_empty() {
        let all: Vec<String> = wanted.iter().map(|n| format!("{n}=...")).collect();
        return Err(format!("`{}` needs {}", pattern.id, all.join(" ")));
    }
    if let Some(extra) = params.keys().find(|k| !wanted.contains(k)) {
        return Err(format!("`{}` takes no `{extra}` (it takes: {})", pattern.id, wanted.join(", ")));
    }
    let text = |s: &str| -> String {
        samples::PLACEHOLDERS.iter().fold(s.to_owned(), |t, (sample, placeholder)| {
            if !t.contains(sample) {
                return t;
            }
            let value = placeholders(placeholder)
                .iter()
                .fold((*placeholder).to_owned(), |v, name| v.replace(&format!("<{name}>"), &params[name]));
            t.replace(sample, &value)
        })
    };
    Ok(match (pattern.request)().map_err(|e| e.to_string())? {
        Request::Get(key) => Request::Get(Key { pk: text(&key.pk), sk: text(&key.sk) }),
        Request::Query(q) => Request::Query(KeyQuery {
            pk: text(&q.pk),
            sk: match &q.sk {
                SortKey::BeginsWith(p) => SortKey::BeginsWith(text(p)),
                SortKey::Between(l, h) => SortKey::Between(text(l), text(h)),
            },
            ..q
        }),
    })
}

/// Where to explore, and the DynamoDB Local kept alive while we do.
async fn connect(aws: bool) -> Result<(Store, Option<DynamoDbLocal>), String> {
    let table = std::env::var(store::TABLE_VAR).unwrap_or_else(|_| crate::DEFAULT_TABLE.to_owned());
    // As the functions read (`LIST_INDEX_READS`, while GSI1-3 move to GSI6-8).
    let reads = store::IndexReads::from_env()?;
    if aws {
        let client = store::aws_sdk_dynamodb::Client::from_conf(store::client::config(&Endpoint::Aws).await.build());
        return Ok((Store::new(client, table).reading(reads), None));
    }
    if let Endpoint::Url(url) = Endpoint::from_env() {
        return Ok((Store::new(crate::connect(&url, None).await, table).reading(reads), None));
    }
    eprintln!("(no DYNAMODB_ENDPOINT: a fresh DynamoDB Local with the demo data)");
    let local = tokio::task::spawn_blocking(DynamoDbLocal::start)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("DynamoDB Local: {e}"))?;
    let deps = crate::deps(&local.endpoint, &table, None).await?;
    crate::demo::load(&deps.store).await.map_err(|e| format!("demo data: {e}"))?;
    Ok((deps.store, Some(local)))
}

async fn run_pattern(
    store: &Store,
    pattern: &Pattern,
    request: &Request,
    limit: u16,
    cursor: Option<String>,
) -> Result<(), String> {
    let condition = request.condition();
    let usage = store::Usage::default();
    let (items, next) = match request {
        Request::Get(key) => {
            // Any entity's key: read as an item, shown as it is.
            let found = usage.scope(store.batch_get_items(std::slice::from_ref(key), false));
            let found = found.await.map_err(|e| e.to_string())?;
            let rows = found.into_iter().map(store::item::from_item::<Row>).collect::<Result<Vec<_>, _>>();
            (rows.map_err(|e| e.to_string())?, None)
        }
        Request::Query(q) => {
            let start = cursor
                .map(|c| serde_json::from_str::<StartKey>(&c).map_err(|e| format!("--cursor: {e}")))
                .transpose()?;
            let page = usage.scope(store.query_any::<Row>(q, limit, start)).await.map_err(|e| e.to_string())?;
            (page.items, page.next)
        }
    };
    let t = usage.totals();
    println!("{}: {}", pattern.id, pattern.what);
    println!("{} on {}: {condition}", pattern.operation, index_name(request.index()));
    println!("{} item(s); {} request(s), {} RCU\n", items.len(), t.requests, t.rcu);
    print_items(&items, true);
    match next {
        Some(next) => {
            let json = serde_json::to_string(&next).map_err(|e| e.to_string())?;
            println!("\nnext page: --cursor '{json}'");
        }
        None => println!("\n(last page)"),
    }
    Ok(())
}

fn index_name(index: Index) -> &'static str {
    index.name().unwrap_or("the table")
}

/// Every item, grouped by partition (a Scan: a developer's view of a local
/// table, never a request path).
async fn show_table(store: &Store) -> Result<(), String> {
    let mut partitions: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    let mut start = None;
    loop {
        let out = store
            .client()
            .scan()
            .table_name(store.table())
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| format!("scan: {e}"))?;
        for raw in out.items.unwrap_or_default() {
            let item: Row = item::from_item(raw).map_err(|e| e.to_string())?;
            partitions.entry(string(&item, "pk")).or_default().push(item);
        }
        start = out.last_evaluated_key;
        if start.is_none() {
            break;
        }
    }
    let count: usize = partitions.values().map(Vec::len).sum();
    println!("table {}: {count} items in {} partitions\n", store.table(), partitions.len());
    for (pk, mut items) in partitions {
        items.sort_by_key(|i| string(i, "sk"));
        println!("{pk}  ({} item{})", items.len(), if items.len() == 1 { "" } else { "s" });
        print_items(&items, false);
        println!();
    }
    Ok(())
}

fn string(item: &Row, name: &str) -> String {
    match item.get(name) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// Rows of pk (if asked), sk, the index keys any item carries, entity and
/// the other attributes.
fn print_items(items: &[Row], with_pk: bool) {
    let keys: Vec<&str> = Index::all_key_attributes().filter(|k| with_pk || *k != "pk").collect();
    let present: BTreeSet<&str> = keys.iter().copied().filter(|k| items.iter().any(|i| i.contains_key(*k))).collect();
    let columns: Vec<&str> = keys.into_iter().filter(|k| present.contains(k)).chain([ENTITY_TYPE]).collect();
    let mut rows: Vec<Vec<String>> = vec![columns.iter().map(|c| (*c).to_owned()).collect()];
    for item in items {
        let mut row: Vec<String> = columns.iter().map(|c| cut(&string(item, c), WIDTH)).collect();
        row.push(fields(item, &columns));
        rows.push(row);
    }
    if let Some(header) = rows.first_mut() {
        header.push("fields".to_owned());
    }
    let widths: Vec<usize> =
        (0..columns.len()).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| match widths.get(i) {
                Some(w) => format!("{cell:<w$}"),
                None => cell.clone(),
            })
            .collect();
        println!("  {}", cells.join("  ").trim_end());
    }
}

/// The item's other attributes as `name=value`, shortened (the partition
/// key is a column or the heading).
fn fields(item: &Row, shown: &[&str]) -> String {
    let mut parts: Vec<String> = item
        .iter()
        .filter(|(k, _)| !shown.contains(&k.as_str()) && k.as_str() != "pk")
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={}", cut(s, 24)),
            other => format!("{k}={}", cut(&other.to_string(), 24)),
        })
        .collect();
    // The entity's own fields first, alphabetically; timestamps last.
    parts.sort_by_key(|p| (p.starts_with("createdAt=") || p.starts_with("updatedAt="), p.clone()));
    cut(&parts.join(" "), 100)
}

fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_owned()
    } else {
        let kept: String = text.chars().take(width.saturating_sub(1)).collect();
        format!("{kept}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_runs_with_its_parameters() {
        for p in PATTERNS {
            let params: BTreeMap<String, String> =
                parameters(p).into_iter().map(|n| (n.clone(), format!("x{}", n.len()))).collect();
            let request = fill(p, &params).unwrap_or_else(|e| panic!("{}: {e}", p.id));
            let text = request.condition();
            assert!(!text.contains("sample"), "{}: {text}", p.id);
            assert!(fill(p, &BTreeMap::new()).is_err() || params.is_empty(), "{}", p.id);
        }
    }

    #[test]
    fn a_brand_fills_its_pattern() {
        let p = PATTERNS.iter().find(|p| p.id == "catalog AP6").unwrap();
        let params = BTreeMap::from([("brandId".to_owned(), "acme".to_owned())]);
        assert_eq!(fill(p, &params).unwrap().condition(), "gsi1pk = BRAND#acme, begins_with(gsi1sk, CATEGORY#)");
        let p = PATTERNS.iter().find(|p| p.id == "e-commerce AP3").unwrap();
        let params =
            BTreeMap::from([("status".to_owned(), "shipped".to_owned()), ("shard".to_owned(), "3".to_owned())]);
        assert!(fill(p, &params).unwrap().condition().starts_with("gsi3pk = STATUS#shipped#3,"));
    }
}
