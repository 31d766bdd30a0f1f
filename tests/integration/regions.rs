//! Two regions of a global table in its default mode (MREC), simulated
//! (`local_stack::regions`): each region's own database in DynamoDB Local,
//! a stream processor per region reading its region's stream (replicated
//! records too), and the replicator between them (issue 36).
//!
//! What the harness must show first: that it sees the defects of writing
//! every item in whatever region the request reached (today's code, with no
//! homes): one listing sold in both regions, counts that do not add up.

use std::time::Duration;

use integration_tests::workload::favorite;
use integration_tests::{endpoint, listings, new_listing, orders, req, sign_up_all, users, As, TestTable};
use local_stack::regions::replicator::{Replicator, Settings};
use local_stack::regions::{second_region, RegionTable};
use local_stack::stream::StreamPoller;
use serde_json::json;

const SHARDS: u16 = 10;

/// Region A (the test table's) and region B, their handlers' dependencies,
/// a stream processor in each, and replication between them.
struct Pair {
    a: api::Deps,
    b: api::Deps,
    pollers: [StreamPoller; 2],
    replication: Replicator,
    /// Whether the stream processors run (else replication alone).
    process: bool,
    /// Region A's table, deleted with it.
    _table: TestTable,
}

impl Pair {
    /// The demo data loaded in A and replicated to B; stream processors
    /// in both regions if `process`.
    async fn with_demo_data(settings: Settings, process: bool) -> Pair {
        let t = TestTable::with_demo_data().await;
        let table = t.deps.store.table().to_owned();
        let region = |deps: &api::Deps| deps.store.client().config().region().map(|r| r.to_string()).unwrap();
        let name_a = region(&t.deps);
        let a = RegionTable::connect(endpoint(), &name_a, &table, None).await.unwrap();
        let b = RegionTable::connect(endpoint(), &second_region(&name_a), &table, None).await.unwrap();
        let (deps_a, deps_b) = (a.deps(&t.deps), b.deps(&t.deps));
        let pollers = [
            StreamPoller::new(deps_a.store.clone(), endpoint()).await.unwrap(),
            StreamPoller::new(deps_b.store.clone(), endpoint()).await.unwrap(),
        ];
        let replication = Replicator::new(a, b, settings);
        let mut pair = Pair { a: deps_a, b: deps_b, pollers, replication, process, _table: t };
        pair.settle().await;
        pair
    }

    /// Replicates and processes both streams until nothing moves.
    async fn settle(&mut self) {
        let until = std::time::Instant::now() + Duration::from_secs(60);
        let mut quiet = 0;
        while quiet < 3 {
            assert!(std::time::Instant::now() < until, "did not settle: {:?}", self.replication.stats);
            let mut moved = self.replication.step().await.unwrap();
            for p in self.pollers.iter_mut().filter(|_| self.process) {
                moved += p.poll_once().await.unwrap().records;
            }
            quiet = if moved == 0 { quiet + 1 } else { 0 };
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.replication.settle(Duration::from_secs(30)).await.unwrap();
    }

    /// Each region's items, by key.
    async fn items(&self) -> [std::collections::BTreeMap<String, String>; 2] {
        let [a, b] = &self.replication.regions;
        [a.items().await.unwrap(), b.items().await.unwrap()]
    }
}

/// The harness alone (no stream processors): writes in either region reach
/// the other; several changes of an item within the delay arrive folded
/// into one; the replicas end item for item equal; nothing is written in
/// both regions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_converge_and_changes_fold() {
    let mut pair = Pair::with_demo_data(Settings { delay: Duration::from_millis(300) }, false).await;
    let created = listings(&pair.a, new_listing("Made in A")).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let id = created.body["listingId"].as_str().unwrap().to_owned();
    for price in [13, 14, 15, 16] {
        let r = req("PATCH /listings/{listingId}").path("listingId", &id).by(As::User("alice"));
        assert_eq!(listings(&pair.a, r.json(json!({ "price": price }))).await.status, 200);
    }
    sign_up_all(&pair.b, &["dana"]).await;
    pair.settle().await;

    let seen_in_b = listings(&pair.b, req("GET /listings/{listingId}").path("listingId", &id)).await;
    assert_eq!((seen_in_b.status, seen_in_b.body["price"].as_f64()), (200, Some(16.0)), "{:?}", seen_in_b.body);
    let dana = users(&pair.a, req("GET /users/{userId}").path("userId", "dana").by(As::User("dana"))).await;
    assert_eq!(dana.status, 200, "signed up in B, read in A: {:?}", dana.body);
    let [a, b] = pair.items().await;
    let differ: Vec<&String> = a.keys().chain(b.keys()).filter(|k| a.get(*k) != b.get(*k)).collect();
    assert!(differ.is_empty(), "items that differ: {differ:?}");
    let stats = &pair.replication.stats;
    assert!(stats.folded > 0, "four price changes within the delay arrive folded: {stats:?}");
    assert!(stats.replicated[1] > 0 && stats.replicated[0] > 0, "{stats:?}");
    assert_eq!(pair.replication.written_in_both(), Vec::<String>::new());
}

/// Today's code, every write in the region the request reached: a buyer in
/// each region buys one listing and both are told it is theirs (each
/// condition passed on its own replica), and both sales stay; each region's
/// stream processor derives what the other's does (index keys on listings,
/// ratings, counters) and writes it there: the harness sees the items
/// written in both regions, where last writer wins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_homes_a_listing_sells_twice_and_derived_data_is_written_twice() {
    let mut pair = Pair::with_demo_data(Settings::default(), true).await;
    sign_up_all(&pair.a, &["fan-a1", "fan-a2"]).await;
    sign_up_all(&pair.b, &["fan-b1", "fan-b2"]).await;
    pair.settle().await;
    let listing = local_stack::demo::LISTING_IDS[1];

    let buy = |by: &'static str| {
        req("POST /orders").by(As::User(by)).header("Idempotency-Key", by).json(json!({ "listingId": listing }))
    };
    let (in_a, in_b) = tokio::join!(orders(&pair.a, SHARDS, buy("fan-a1")), orders(&pair.b, SHARDS, buy("fan-b1")));
    assert_eq!((in_a.status, in_b.status), (201, 201), "{:?} {:?}", in_a.body, in_b.body);
    for (deps, fans) in [(&pair.a, ["fan-a1", "fan-a2"]), (&pair.b, ["fan-b1", "fan-b2"])] {
        for fan in fans {
            let other = local_stack::demo::LISTING_IDS[0];
            assert_eq!(users(deps, favorite("PUT", other, fan)).await.status, 201);
        }
    }
    pair.settle().await;

    let sold: Vec<String> = [&in_a, &in_b].iter().map(|r| r.body["orderId"].as_str().unwrap().to_owned()).collect();
    for deps in [&pair.a, &pair.b] {
        for order in &sold {
            let r = orders(deps, SHARDS, req("GET /orders/{orderId}").path("orderId", order).by(As::Admin)).await;
            assert_eq!(r.status, 200, "both sales are in both regions: {:?}", r.body);
        }
    }
    let both = pair.replication.written_in_both();
    let written_twice = |part: &str| both.iter().any(|k| k.contains(part));
    assert!(written_twice(&format!("LISTING#{listing}")), "the listing sold in both regions: {both:?}");
    assert!(written_twice("CATEGORY#pottery"), "the demo review's category rating derived in both: {both:?}");
    assert!(written_twice("FAVED#"), "the favorites' markers derived in both: {both:?}");
    assert!(pair.replication.stats.superseded > 0, "{:?}", pair.replication.stats);
}
