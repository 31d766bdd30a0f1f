//! The sharded status index (`GET /orders?status=&from=&to=`): random walks
//! come back exact (every order once, newest first, full pages), and what a
//! page costs: items read per item returned, queries, rounds and capacity,
//! measured on the real client by [`integration_tests::reads`].

use std::fmt::Write as _;

use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
use domain::ids::{OrderId, UserId};
use domain::model::{Money, Order, OrderLine, OrderStatus};
use integration_tests::reads::{PageCost, Reads};
use integration_tests::{orders, req, As, TestTable};
use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use ulid::Ulid;

/// 2026-01-01T00:00:00Z.
const T0: u64 = 1_767_225_600_000;

/// A deterministic generator: the cases are the same on every run, and a
/// failing case names its seed.
fn rng(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// One of `from`, at random.
fn pick<T: Copy>(rng: &mut TestRng, from: &[T]) -> T {
    from[rng.random_range(0..from.len())]
}

/// 80 random bits, for a ULID.
fn random80(rng: &mut TestRng) -> u128 {
    rng.random::<u128>() & ((1u128 << 80) - 1)
}

/// An order as the handlers write it (the read path is under test).
fn order(id: OrderId, status: OrderStatus, shards: u16) -> Order {
    Order {
        home: None,
        order_id: id,
        buyer_id: "bulk".parse::<UserId>().unwrap(),
        seller_id: None,
        listing_id: None,
        category_id: None,
        status,
        total: Money::from_cents(100),
        lines: vec![OrderLine::new("01JF8Z5Q000000000000000004", 1)],
        shard: domain::shard::order_shard(&id, shards),
        buyer_review_id: None,
        seller_review_id: None,
        held_items: Vec::new(),
        created_at: domain::time::rfc3339(id.timestamp_ms()),
        updated_at: domain::time::rfc3339(id.timestamp_ms()),
    }
}

/// An order id at `ms` whose shard (of `shards`) is `shard`.
fn id_in_shard(rng: &mut TestRng, ms: u64, shards: u16, shard: u16) -> OrderId {
    let random = random80(rng);
    let random = random - random % u128::from(shards) + u128::from(shard);
    let random = if random >= 1u128 << 80 { random - u128::from(shards) } else { random };
    let id = OrderId::from_ulid(Ulid::from_parts(ms, random));
    assert_eq!(domain::shard::order_shard(&id, shards), shard);
    id
}

/// Writes the orders' items (with every key from `keyschema`) in batches.
async fn put_orders(t: &TestTable, all: &[Order]) {
    let mut batches = tokio::task::JoinSet::new();
    for chunk in all.chunks(25) {
        let requests: Vec<WriteRequest> = chunk
            .iter()
            .map(|o| {
                let put = PutRequest::builder().set_item(Some(store::item::to_item(o).unwrap())).build().unwrap();
                WriteRequest::builder().put_request(put).build()
            })
            .collect();
        let (client, table) = (t.deps.store.client().clone(), t.deps.store.table().to_owned());
        batches.spawn(async move {
            // Seeding only: a loaded machine can time a batch out (it is an
            // idempotent put of the same items), so try it again.
            let (mut pending, mut failures) = (requests, 0);
            while !pending.is_empty() {
                match client.batch_write_item().request_items(&table, pending.clone()).send().await {
                    Ok(out) => pending = out.unprocessed_items.and_then(|mut u| u.remove(&table)).unwrap_or_default(),
                    Err(e) if failures < 5 => {
                        failures += 1;
                        eprintln!("seeding batch failed ({e}); again");
                    }
                    Err(e) => panic!("seeding failed 6 times: {e}"),
                }
            }
        });
        if batches.len() >= 8 {
            batches.join_next().await.unwrap().unwrap();
        }
    }
    while let Some(done) = batches.join_next().await {
        done.unwrap();
    }
    t.requests();
}

/// One walk through `GET /orders` to the end.
struct Walk {
    ids: Vec<OrderId>,
    /// Items on each page, and what the page cost.
    pages: Vec<(usize, PageCost)>,
    /// The longest cursor given, in bytes.
    longest_cursor: usize,
}

#[derive(Clone, Debug)]
struct Query {
    status: Option<OrderStatus>,
    from: Option<u64>,
    to: Option<u64>,
    limit: u16,
}

async fn walk(t: &TestTable, reads: &Reads, shards: u16, q: &Query) -> Walk {
    let (mut ids, mut pages, mut cursor) = (Vec::new(), Vec::new(), None::<String>);
    let mut longest_cursor = 0;
    reads.take();
    loop {
        let mut r = req("GET /orders").query("limit", q.limit).by(As::Admin);
        if let Some(s) = q.status {
            r = r.query("status", s.as_str());
        }
        if let Some(from) = q.from {
            r = r.query("from", domain::time::rfc3339(from));
        }
        if let Some(to) = q.to {
            r = r.query("to", domain::time::rfc3339(to));
        }
        if let Some(c) = &cursor {
            r = r.query("cursor", c);
        }
        let page = orders(&t.deps, shards, r).await;
        assert_eq!(page.status, 200, "{q:?}: {:?}", page.body);
        let sent = t.requests();
        assert!(sent.iter().all(|op| op == "Query"), "{sent:?}");
        let cost = PageCost::of(&reads.take());
        assert_eq!(cost.queries, sent.len(), "every query was seen");
        let page_ids: Vec<OrderId> = page.item_field("orderId").iter().map(|s| s.parse().unwrap()).collect();
        pages.push((page_ids.len(), cost));
        ids.extend(page_ids);
        cursor = page.next_cursor();
        match &cursor {
            None => return Walk { ids, pages, longest_cursor },
            Some(c) => {
                assert!(c.len() < 1024, "{q:?}: a cursor of {} bytes", c.len());
                longest_cursor = longest_cursor.max(c.len());
            }
        }
        assert!(pages.len() <= 10_000, "the walk ends");
    }
}

/// Every order of the query exactly once, newest first, in full pages: each
/// page but the last holds `limit` orders, the last at least one (no empty
/// page behind a cursor), unless there is nothing at all.
fn assert_exact(walk: &Walk, all: &[Order], q: &Query, case: &str) {
    let mut want: Vec<OrderId> = all
        .iter()
        .filter(|o| q.status.is_none_or(|s| s == o.status))
        .filter(|o| q.from.is_none_or(|f| o.order_id.timestamp_ms() >= f))
        .filter(|o| q.to.is_none_or(|to| o.order_id.timestamp_ms() < to))
        .map(|o| o.order_id)
        .collect();
    want.sort_by(|a, b| b.cmp(a));
    assert_eq!(walk.ids.len(), want.len(), "{case}: as many orders as the query holds");
    assert_eq!(walk.ids, want, "{case}: every order exactly once, newest first");
    let sizes: Vec<usize> = walk.pages.iter().map(|(n, _)| *n).collect();
    let (last, full) = sizes.split_last().unwrap();
    assert!(full.iter().all(|n| *n == usize::from(q.limit)), "{case}: full pages {sizes:?}");
    assert!(*last >= usize::from(!want.is_empty()) && *last <= usize::from(q.limit), "{case}: last page {sizes:?}");
    for (i, (_, cost)) in walk.pages.iter().enumerate() {
        assert!(cost.rounds <= 2, "{case}: page {i} took {} rounds", cost.rounds);
    }
}

/// Random tables (shards, how orders fall on them, statuses, bursts within
/// one millisecond) walked with random limits, filters and date ranges.
#[tokio::test]
async fn random_walks_are_exact() {
    // The planner's exactness is proven on 3,000 walks in memory (orders'
    // page_planner tests); these walk the real reader end to end.
    for seed in [1u64, 4, 6, 11] {
        let mut rng = rng(seed);
        let shards = pick(&mut rng, &[1u16, 2, 3, 7, 10, 30]);
        let n = rng.random_range(0..301) as usize;
        // How orders fall on shards: uniform, mostly one, only some, or one.
        let spread = rng.random_range(0..4);
        let some: Vec<u16> = (0..shards).filter(|_| rng.random_range(0..3) == 0).collect();
        let statuses: Vec<OrderStatus> =
            if rng.random_range(0..3) == 0 { vec![OrderStatus::Pending] } else { OrderStatus::ALL.to_vec() };
        let mut all = Vec::with_capacity(n);
        let mut ms = T0;
        for _ in 0..n {
            // Up to an hour apart, and a quarter in the same millisecond as the last.
            if rng.random_range(0..4) != 0 {
                ms += 1 + rng.random_range(0..3_600_000);
            }
            let shard = match spread {
                0 => rng.random_range(0..u64::from(shards)) as u16,
                1 if rng.random_range(0..10) < 7 => 0,
                1 => rng.random_range(0..u64::from(shards)) as u16,
                2 if !some.is_empty() => pick(&mut rng, &some),
                _ => shards - 1,
            };
            let status = if rng.random_range(0..2) == 0 { statuses[0] } else { pick(&mut rng, &statuses) };
            all.push(order(id_in_shard(&mut rng, ms, shards, shard), status, shards));
        }
        let (t, reads) = TestTable::with_reads().await;
        put_orders(&t, &all).await;
        for walk_no in 0..3 {
            let status = if rng.random_range(0..3) == 0 { None } else { Some(pick(&mut rng, &statuses)) };
            let partitions = u64::from(shards) * if status.is_some() { 1 } else { 5 };
            let end = ms + 1;
            let time = |rng: &mut TestRng| T0 + rng.random_range(0..end - T0 + 1);
            let (from, to) = match rng.random_range(0..4) {
                0 => (None, None),
                1 => (Some(time(&mut rng)), None),
                2 => (None, Some(time(&mut rng))),
                _ => {
                    let (a, b) = (time(&mut rng), time(&mut rng));
                    (Some(a.min(b)), Some(a.max(b).max(a.min(b) + 1)))
                }
            };
            // Small limits too, but not so many pages that the walk is slow:
            // at most about 400 queries (seed 6's last walk: 31 pages of 7
            // orders on 10 shards).
            let most = if rng.random_range(0..2) == 0 { 10 } else { 100 };
            let mut limit = 1 + rng.random_range(0..most);
            while (n as u64 / limit + 1) * partitions > 400 {
                limit += 1 + limit / 2;
            }
            let q = Query { status, from, to, limit: limit.min(100) as u16 };
            let case = format!("seed {seed} walk {walk_no}: {n} orders on {shards} shards (spread {spread}), {q:?}");
            let w = walk(&t, &reads, shards, &q).await;
            assert_exact(&w, &all, &q, &case);
        }
    }
}

/// When orders arrive, for measuring what pages cost: the reads of a page
/// depend on how many orders each partition holds in its range, so the
/// walks are measured over several patterns, not only the regular one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arrivals {
    /// One an hour exactly.
    Hourly,
    /// Independently at random, one an hour on average (exponential gaps).
    Poisson,
}

impl Arrivals {
    /// `n` order times from `T0` on.
    fn times(self, rng: &mut TestRng, n: usize) -> Vec<u64> {
        const HOUR: f64 = 3_600_000.0;
        let exp = |rng: &mut TestRng, mean: f64| {
            let u = (rng.random::<u64>() >> 11) as f64 / (1u64 << 53) as f64;
            -(1.0 - u).ln() * mean
        };
        let mut t = T0 as f64;
        (0..n)
            .map(|i| {
                t += match self {
                    Arrivals::Hourly => {
                        if i == 0 {
                            0.0
                        } else {
                            HOUR
                        }
                    }
                    Arrivals::Poisson => exp(rng, HOUR),
                };
                t as u64
            })
            .collect()
    }
}

/// Seeds `n` orders arriving as `arrivals` says at uniformly random shards,
/// with statuses from `statuses`.
fn seeded(rng: &mut TestRng, arrivals: Arrivals, n: usize, shards: u16, statuses: &[OrderStatus]) -> Vec<Order> {
    arrivals
        .times(rng, n)
        .into_iter()
        .map(|ms| {
            let id = OrderId::from_ulid(Ulid::from_parts(ms, random80(rng)));
            order(id, pick(rng, statuses), shards)
        })
        .collect()
}

/// What a walk cost, per item returned and per page.
struct Costs {
    returned: usize,
    read: i64,
    pages: usize,
    queries_mean: f64,
    queries_max: usize,
    rounds_mean: f64,
    rounds_max: usize,
    capacity_mean: f64,
    billed_mean: f64,
    longest_cursor: usize,
}

impl Costs {
    fn of(w: &Walk) -> Self {
        let pages = w.pages.len();
        let mean = |f: &dyn Fn(&PageCost) -> f64| w.pages.iter().map(|(_, c)| f(c)).sum::<f64>() / pages as f64;
        Costs {
            returned: w.ids.len(),
            read: w.pages.iter().map(|(_, c)| c.items).sum(),
            pages,
            queries_mean: mean(&|c| c.queries as f64),
            queries_max: w.pages.iter().map(|(_, c)| c.queries).max().unwrap_or(0),
            rounds_mean: mean(&|c| c.rounds as f64),
            rounds_max: w.pages.iter().map(|(_, c)| c.rounds).max().unwrap_or(0),
            capacity_mean: mean(&|c| c.capacity),
            billed_mean: mean(&|c| c.billed),
            longest_cursor: w.longest_cursor,
        }
    }

    fn ratio(&self) -> f64 {
        self.read as f64 / self.returned.max(1) as f64
    }
}

const HEADER: &str = "| arrivals | shards | statuses | limit | pages | items read / returned | queries/page mean (max) | rounds/page mean (max) | RCU/page (DynamoDB Local) | RCU/page (min 0.5/query) | longest cursor (bytes) |\n|---|---|---|---|---|---|---|---|---|---|---|\n";

/// Seeds 1,000 orders of one status and 1,000 of all five (two tables) at
/// `shards`, arriving as `arrivals` says, walks each at every limit, checks
/// the walks are exact, and returns the table rows and the costs.
async fn measure(
    arrivals: Arrivals,
    shards: u16,
    limits: &[u16],
    statuses: &[bool],
) -> (String, Vec<(bool, u16, Costs)>) {
    let mut rng = rng(u64::from(shards));
    let (mut rows, mut costs) = (String::new(), Vec::new());
    for &one in statuses {
        let all = if one {
            seeded(&mut rng, arrivals, 1_000, shards, &[OrderStatus::Pending])
        } else {
            seeded(&mut rng, arrivals, 1_000, shards, OrderStatus::ALL)
        };
        let (t, reads) = TestTable::with_reads().await;
        put_orders(&t, &all).await;
        for &limit in limits {
            let q = Query { status: one.then_some(OrderStatus::Pending), from: None, to: None, limit };
            let w = walk(&t, &reads, shards, &q).await;
            assert_exact(&w, &all, &q, &format!("{shards} shards, {q:?}"));
            let c = Costs::of(&w);
            writeln!(
                rows,
                "| {arrivals:?} | {shards} | {} | {limit} | {} | {:.2} ({} / {}) | {:.1} ({}) | {:.2} ({}) | {:.1} | {:.1} | {} |",
                if one { "1 (status=)" } else { "5 (no status)" },
                c.pages,
                c.ratio(),
                c.read,
                c.returned,
                c.queries_mean,
                c.queries_max,
                c.rounds_mean,
                c.rounds_max,
                c.capacity_mean,
                c.billed_mean,
                c.longest_cursor,
            )
            .unwrap();
            costs.push((one, limit, c));
        }
    }
    (rows, costs)
}

/// The reader on DynamoDB reads, page by page, exactly what the page
/// planner plans over the same orders held in memory (the model its
/// reads-per-order figures are measured on: orders' page_planner tests),
/// and the walk is exact.
#[tokio::test]
async fn the_reader_reads_what_the_planner_plans() {
    let shards = 10u16;
    let mut rng = rng(3);
    let all = seeded(&mut rng, Arrivals::Poisson, 300, shards, &[OrderStatus::Pending]);
    let (t, reads) = TestTable::with_reads().await;
    put_orders(&t, &all).await;
    let q = Query { status: Some(OrderStatus::Pending), from: None, to: None, limit: 20 };
    let w = walk(&t, &reads, shards, &q).await;
    assert_exact(&w, &all, &q, "300 orders on 10 shards, limit 20");
    let on_dynamodb: Vec<i64> = w.pages.iter().map(|(_, c)| c.items).collect();
    let mut parts: Vec<Vec<Ulid>> = vec![Vec::new(); usize::from(shards)];
    for o in &all {
        parts[usize::from(o.shard)].push(o.order_id.ulid());
    }
    for p in &mut parts {
        p.sort_unstable_by(|a, b| b.cmp(a));
    }
    assert_eq!(on_dynamodb, in_memory(&parts, 20).await, "items read per page");
}

/// Items read on each page of a walk of `parts` (each newest first) by the
/// page planner, answering as DynamoDB does (more to give whenever a query
/// stops at its limit).
async fn in_memory(parts: &[Vec<Ulid>], limit: usize) -> Vec<i64> {
    use fanout::page_planner::{page, Answer, Ask, Asker, Keyed, Position, Walk};
    #[derive(Debug)]
    struct It(Ulid);
    impl Keyed for It {
        type Key = Ulid;
        fn key(&self) -> Ulid {
            self.0
        }
    }
    struct Memory<'a>(&'a [Vec<Ulid>], Vec<usize>, std::cell::Cell<i64>);
    impl Asker<It> for Memory<'_> {
        type Error = std::convert::Infallible;
        async fn ask(&self, asks: Vec<Ask<Ulid>>) -> Result<Vec<(Ask<Ulid>, Answer<It>)>, Self::Error> {
            Ok(asks
                .into_iter()
                .map(|a| {
                    let items: Vec<It> = self.0[self.1[a.part]]
                        .iter()
                        .filter(|u| a.low <= **u && **u <= a.high)
                        .take(a.limit)
                        .map(|u| It(*u))
                        .collect();
                    self.2.set(self.2.get() + items.len() as i64);
                    let more = items.len() == a.limit;
                    (a, Answer { items, more, units: 1 })
                })
                .collect())
        }
    }
    let (mut reads, mut at) = (Vec::new(), None::<Position<Ulid>>);
    loop {
        let live = (0..parts.len()).filter(|i| at.as_ref().is_none_or(|p| !p.done[*i])).collect();
        let memory = Memory(parts, live, std::cell::Cell::new(0));
        let (_, next) =
            page(Walk { partitions: parts.len(), low: Ulid(0), high: Ulid(u128::MAX), limit }, at.as_ref(), &memory)
                .await
                .unwrap();
        reads.push(memory.2.get());
        match next {
            Some(p) => at = Some(p),
            None => return reads,
        }
    }
}

/// The whole table: 1,000 orders at 3, 10 and 100 shards, one status and
/// all five, limits 20 and 50, orders an hour apart and at random (about
/// eight minutes against DynamoDB Local: `cargo test -p integration-tests
/// --test integration what_a_page_costs -- --ignored --nocapture`).
#[tokio::test]
#[ignore = "slow: prints the cost table of docs/performance.md"]
async fn what_a_page_costs() {
    let mut table = String::from(HEADER);
    for arrivals in [Arrivals::Hourly, Arrivals::Poisson] {
        for shards in [3u16, 10, 100] {
            let (rows, costs) = measure(arrivals, shards, &[20, 50], &[true, false]).await;
            table.push_str(&rows);
            for (_, limit, c) in costs {
                assert!(c.rounds_max <= 2, "{shards} shards, limit {limit}: {} rounds", c.rounds_max);
            }
        }
    }
    println!("{table}");
}

/// The hint a cursor carries goes stale when orders change status between
/// pages: orders below the cursor leave the status (the hint counted them),
/// others join it below the cursor, returned ones leave. The walk still
/// returns exactly the orders of the status as each page found them, newest
/// first, once each, in full pages; a stale hint costs reads, not orders.
#[tokio::test]
async fn a_stale_hint_costs_reads_not_orders() {
    use base64::Engine as _;
    let shards = 10;
    let mut rng = rng(7);
    let times = Arrivals::Poisson.times(&mut rng, 220);
    let mut all: Vec<Order> = times
        .iter()
        .map(|ms| order(OrderId::from_ulid(Ulid::from_parts(*ms, random80(&mut rng))), OrderStatus::Pending, shards))
        .collect();
    // 20 orders kept back: they join the status later, below the cursor.
    let mut joiners: Vec<Order> = all.split_off(200);
    for o in &mut joiners {
        o.status = OrderStatus::Confirmed;
    }
    let (t, reads) = TestTable::with_reads().await;
    put_orders(&t, &all).await;
    put_orders(&t, &joiners).await;
    let mut expected: Vec<OrderId> = all.iter().map(|o| o.order_id).collect();
    let (mut ids, mut sizes, mut cursor, mut hinted) = (Vec::<OrderId>::new(), Vec::new(), None::<String>, 0);
    loop {
        let mut r = req("GET /orders").query("limit", 20).query("status", "pending").by(As::Admin);
        if let Some(c) = &cursor {
            r = r.query("cursor", c);
        }
        let page = orders(&t.deps, shards, r).await;
        assert_eq!(page.status, 200, "{:?}", page.body);
        assert!(PageCost::of(&reads.take()).rounds <= 2);
        let page_ids: Vec<OrderId> = page.item_field("orderId").iter().map(|s| s.parse().unwrap()).collect();
        sizes.push(page_ids.len());
        ids.extend(page_ids);
        cursor = page.next_cursor();
        let Some(c) = &cursor else { break };
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(c.split('.').next().unwrap()).unwrap();
        let payload: serde_json::Value = serde_json::from_slice(&payload).unwrap();
        hinted += usize::from(payload.get("h").is_some());
        let below = *ids.last().unwrap();
        // Between pages: the two newest orders not yet returned (those the
        // hint most likely counted as read) and two older ones leave the
        // status, one kept-back order older than the cursor joins it, and
        // one returned order leaves.
        let waiting: Vec<&mut Order> =
            all.iter_mut().filter(|o| o.status == OrderStatus::Pending && o.order_id < below).collect();
        let mut changed = Vec::new();
        let n = waiting.len();
        for (i, o) in waiting.into_iter().enumerate() {
            if i == 0 || i == n / 2 || i + 2 >= n {
                o.status = OrderStatus::Cancelled;
                changed.push(o.clone());
            }
        }
        if let Some(j) = joiners.iter_mut().find(|o| o.status == OrderStatus::Confirmed && o.order_id < below) {
            j.status = OrderStatus::Pending;
            changed.push(j.clone());
            expected.push(j.order_id);
        }
        if let Some(o) = all.iter_mut().find(|o| o.order_id == ids[ids.len() / 2]) {
            o.status = OrderStatus::Shipped;
            changed.push(o.clone());
        }
        expected.retain(|id| !changed.iter().any(|o| o.order_id == *id && o.status == OrderStatus::Cancelled));
        put_orders(&t, &changed).await;
        reads.take();
    }
    assert!(hinted >= 5, "the cursors carried hints: {hinted}");
    expected.sort_by(|a, b| b.cmp(a));
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first, each once");
    assert_eq!(ids, expected, "the orders of the status as each page found them");
    let (last, full) = sizes.split_last().unwrap();
    assert!(full.iter().all(|n| *n == 20) && *last >= 1, "full pages: {sizes:?}");
}
