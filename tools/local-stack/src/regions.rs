//! Two regions on one laptop (issue 36's harness): one DynamoDB Local keeps
//! a database per region a client signs with, so two regions are two
//! clients; the table is created in each (as a global table's replicas),
//! and [`replicator::Replicator`] plays the replication between them.

mod homes_check;
pub mod replicator;

use std::collections::{BTreeMap, HashMap};

use api::Deps;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodbstreams::Client as StreamsClient;
use store::aws_sdk_dynamodb::Client;

/// The second region's name: the first's (`AWS_REGION`, `us-east-1` when
/// unset) with `-b` after it.
pub fn second_region(first: &str) -> String {
    format!("{first}-b")
}

/// The second region beside the first (whose handlers' dependencies are
/// `a`, at DynamoDB Local's `endpoint`): its replica of the table, its
/// stream processor, and replication both ways (a change waiting `delay`),
/// polling in the background. Returns its name and both regions'
/// dependencies, each writing every item at its home ([`routed`]).
pub async fn start_second(
    endpoint: &str,
    a: &Deps,
    delay: std::time::Duration,
) -> Result<(String, Deps, Deps), String> {
    let first = a.store.region().to_owned();
    let name = second_region(&first);
    let region_a = RegionTable::connect(endpoint, &first, a.store.table(), None).await?;
    let region_b = RegionTable::connect(endpoint, &name, a.store.table(), None).await?;
    let (deps_a, deps_b) = routed(&region_a, &region_b, a);
    let poller = crate::stream::StreamPoller::new(deps_b.store.clone(), endpoint).await?;
    let interval = std::time::Duration::from_millis(100);
    tokio::spawn(poller.with_failures_file(crate::stream::failures_file()).run(interval));
    let settings = replicator::Settings { delay };
    tokio::spawn(replicator::Replicator::new(region_a, region_b, settings).run(interval));
    Ok((name, deps_a, deps_b))
}

/// Both regions' handlers' dependencies (like `like`'s otherwise), each
/// with a client for the other: every item written at its home, `a` the
/// primary (docs/regions.md). [`RegionTable::deps`] is the same without
/// routing: every write in the region the request reached.
pub fn routed(a: &RegionTable, b: &RegionTable, like: &Deps) -> (Deps, Deps) {
    let peer = |r: &RegionTable| {
        let config = store::client::for_another_region(r.client.config().to_builder(), &r.name);
        BTreeMap::from([(r.name.clone(), Client::from_conf(config.build()))])
    };
    let in_a = store::Regions::global(&a.name, &a.name, peer(b));
    let in_b = store::Regions::global(&b.name, &a.name, peer(a));
    let (mut deps_a, mut deps_b) = (a.deps(like), b.deps(like));
    deps_a.store = deps_a.store.with_regions(in_a);
    deps_b.store = deps_b.store.with_regions(in_b);
    (deps_a, deps_b)
}

/// One region's replica of the table.
#[derive(Clone)]
pub struct RegionTable {
    /// The region.
    pub name: String,
    /// A DynamoDB client signing with it.
    pub client: Client,
    /// A Streams client signing with it.
    pub streams: StreamsClient,
    /// The table.
    pub table: String,
    /// Its stream.
    pub stream_arn: String,
}

impl RegionTable {
    /// `table` in `region` at DynamoDB Local's `endpoint`, created if absent;
    /// its clients record their requests into `log` if given.
    pub async fn connect(
        endpoint: &str,
        region: &str,
        table: &str,
        log: Option<store::Usage>,
    ) -> Result<RegionTable, String> {
        let url = store::Endpoint::Url(endpoint.to_owned());
        let config = store::client::config_reporting_to(&url, log.into_iter().collect()).await;
        let client = Client::from_conf(config.region(aws_sdk_dynamodb::config::Region::new(region.to_owned())).build());
        store::table::create_table(&client, table).await.map_err(|e| format!("creating {table} in {region}: {e}"))?;
        let described = client.describe_table().table_name(table).send().await.map_err(|e| e.to_string())?;
        let stream_arn = described
            .table
            .and_then(|t| t.latest_stream_arn)
            .ok_or_else(|| format!("table {table} in {region} has no stream"))?;
        let streams = maintenance::redrive::local_streams_client(endpoint, region);
        Ok(RegionTable { name: region.to_owned(), client, streams, table: table.to_owned(), stream_arn })
    }

    /// The handlers' dependencies in this region, as if it were the only
    /// one (cursors signed with the same key as `like`'s: the same secret
    /// in both regions).
    pub fn deps(&self, like: &Deps) -> Deps {
        Deps { store: store::Store::new(self.client.clone(), self.table.clone()), ..like.clone() }
    }

    /// Every item of the table, by key (a test's comparison of replicas:
    /// a Scan, never on a request path).
    pub async fn items(&self) -> Result<BTreeMap<String, String>, String> {
        let mut out = BTreeMap::new();
        let mut pages =
            self.client.scan().table_name(&self.table).consistent_read(true).into_paginator().items().send();
        while let Some(item) = pages.next().await {
            let item = item.map_err(|e| format!("Scan in {}: {e}", self.name))?;
            let keys: HashMap<String, AttributeValue> = item
                .iter()
                .filter(|(k, _)| *k == keyschema::table::PK || *k == keyschema::table::SK)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            out.insert(canonical(&keys), canonical(&item));
        }
        Ok(out)
    }
}

/// An item (or its key) as one string, the same for equal items whatever
/// the order of their maps' and sets' members.
pub fn canonical(item: &HashMap<String, AttributeValue>) -> String {
    let sorted: BTreeMap<&String, String> = item.iter().map(|(k, v)| (k, value(v))).collect();
    format!("{sorted:?}")
}

fn value(v: &AttributeValue) -> String {
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    match v {
        AttributeValue::S(s) => format!("S{s:?}"),
        AttributeValue::N(n) => format!("N{}", number(n)),
        AttributeValue::Bool(b) => format!("B{b}"),
        AttributeValue::Null(_) => "NULL".to_owned(),
        AttributeValue::B(b) => format!("Y{:?}", b.as_ref()),
        AttributeValue::M(m) => format!("M{}", canonical(m)),
        AttributeValue::L(l) => format!("L{:?}", l.iter().map(value).collect::<Vec<_>>()),
        AttributeValue::Ss(s) => format!("SS{:?}", sorted(s.clone())),
        AttributeValue::Ns(s) => format!("NS{:?}", sorted(s.iter().map(|n| number(n)).collect())),
        AttributeValue::Bs(s) => format!("BS{:?}", sorted(s.iter().map(|b| format!("{:?}", b.as_ref())).collect())),
        other => format!("{other:?}"),
    }
}

/// A number as DynamoDB stores it (`16.00` is read back as `16`): no
/// leading zeros, no trailing zeros after the point, no `-0`.
fn number(n: &str) -> String {
    if n.contains(['e', 'E']) {
        return n.to_owned();
    }
    let (sign, digits) = n.strip_prefix('-').map_or(("", n), |d| ("-", d));
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let whole = whole.trim_start_matches('0');
    let fraction = fraction.trim_end_matches('0');
    let whole = if whole.is_empty() { "0" } else { whole };
    match (whole, fraction) {
        ("0", "") => "0".to_owned(),
        (w, "") => format!("{sign}{w}"),
        (w, f) => format!("{sign}{w}.{f}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_as_dynamodb_stores_them() {
        for (written, stored) in [("16.00", "16"), ("007", "7"), ("-0.0", "0"), ("0.50", "0.5"), ("-12.340", "-12.34")]
        {
            assert_eq!(number(written), stored);
        }
        let item = |n: &str| HashMap::from([("n".to_owned(), AttributeValue::N(n.to_owned()))]);
        assert_eq!(canonical(&item("16.00")), canonical(&item("16")));
        assert_ne!(canonical(&item("16.01")), canonical(&item("16")));
    }
}
