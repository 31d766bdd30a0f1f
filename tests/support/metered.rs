//! Measured walks of a read route against the cost bounds of issue 33
//! (shared/SPEC.md section 2, "Bounded cost"): each page's requests, items
//! read, bytes and RCU by DynamoDB's documented pricing ([`crate::pricing`]),
//! printed one line per page (`BOUND ...`, shown with `--nocapture`) and
//! checked against its bound.

use serde_json::Value;

use crate::pricing::{Cost, Meter};
use crate::{Reply, Req, TestTable};

/// The function a route belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Function {
    /// `functions/listings`.
    Listings,
    /// `functions/catalog`.
    Catalog,
    /// `functions/users`.
    Users,
    /// `functions/orders`, with the template's order shards.
    Orders,
    /// `functions/reviews`.
    Reviews,
}

/// Calls the route's handler in-process.
pub async fn call(t: &TestTable, f: Function, r: Req) -> Reply {
    match f {
        Function::Listings => crate::listings(&t.deps, r).await,
        Function::Catalog => crate::catalog(&t.deps, r).await,
        Function::Users => crate::users(&t.deps, r).await,
        Function::Orders => crate::hostile::order_route(t, r).await,
        Function::Reviews => crate::reviews(&t.deps, r).await,
    }
}

/// The most a request may cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    /// DynamoDB requests.
    pub requests: usize,
    /// RCU by the documented pricing.
    pub rcu: f64,
}

impl Bound {
    /// A page of `limit` listings, products, orders, favorites, brands or
    /// categories: 24 requests and 12 RCU at 20; 40 and 40 at 100.
    pub fn page(limit: u16) -> Bound {
        match limit {
            20 => Bound { requests: 24, rcu: 12.0 },
            100 => Bound { requests: 40, rcu: 40.0 },
            other => panic!("the contract bounds pages of 20 and 100, not {other}"),
        }
    }

    /// One listing (or one product, category, order or user): 5 RCU; at
    /// 0.5 RCU at least per request, so at most 10 requests.
    pub const ONE: Bound = Bound { requests: 10, rcu: 5.0 };

    /// A page of `limit` items each at most `item_bytes`, the page's own
    /// request a query of at most `limit + 1` items (the look-ahead that
    /// tells the last page) and `more` requests of at most 4 KB each (such
    /// as the order a message list checks): RCU at most
    /// `0.5 * ceil((limit + 1) * item_bytes / 4096) + 0.5 * more`.
    pub fn bodies(limit: u16, item_bytes: u64, more: usize) -> Bound {
        let units = ((u64::from(limit) + 1) * item_bytes).div_ceil(crate::pricing::READ_UNIT_BYTES);
        Bound { requests: 1 + more, rcu: 0.5 * units as f64 + 0.5 * more as f64 }
    }

    /// A view fanned out over `partitions` partitions in at most two rounds
    /// of one query per partition, each query at most `limit + 1` items of
    /// at most `item_bytes`: `2 * partitions` requests, each at most
    /// `0.5 * ceil((limit + 1) * item_bytes / 4096)` RCU.
    pub fn fan_out(partitions: usize, limit: u16, item_bytes: u64) -> Bound {
        let per_query = Bound::bodies(limit, item_bytes, 0).rcu;
        Bound { requests: 2 * partitions, rcu: (2 * partitions) as f64 * per_query }
    }
}

/// Whether a page shorter than its limit may have a next page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fullness {
    /// Only the last page of a walk is short.
    Full,
    /// Also one that says `stoppedEarly: true` (the contract's filtered
    /// near and search pages).
    StoppedEarlyAllowed,
    /// Pages of at most this many whatever the limit (the contract's
    /// search), short only at the end of the walk otherwise.
    AtMost(usize),
    /// Pages of at most this many, short also where they say
    /// `stoppedEarly: true` (the contract's search: a page answers what its
    /// posting reads leave of its bound).
    AtMostOrStoppedEarly(usize),
}

impl Fullness {
    /// The most a page may answer.
    fn most(self) -> usize {
        match self {
            Fullness::AtMost(n) | Fullness::AtMostOrStoppedEarly(n) => n,
            _ => usize::MAX,
        }
    }

    /// Whether a short page that says `stoppedEarly` is allowed.
    fn may_stop_early(self) -> bool {
        matches!(self, Fullness::StoppedEarlyAllowed | Fullness::AtMostOrStoppedEarly(_))
    }
}

/// One page measured.
#[derive(Debug)]
pub struct Page {
    /// The answer.
    pub reply: Reply,
    /// What it cost.
    pub cost: Cost,
}

/// Which bound a route's pages keep to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bounded {
    /// [`Bound::page`].
    Page,
    /// [`Bound::bodies`] of items of at most this many bytes, with this
    /// many requests more.
    Bodies(u64, usize),
    /// [`Bound::fan_out`] over this many partitions of items of at most
    /// this many bytes.
    FanOut(usize, u64),
}

impl Bounded {
    /// The bound of a page of `limit`.
    pub fn at(self, limit: u16) -> Bound {
        match self {
            Bounded::Page => Bound::page(limit),
            Bounded::Bodies(bytes, more) => Bound::bodies(limit, bytes, more),
            Bounded::FanOut(partitions, bytes) => Bound::fan_out(partitions, limit, bytes),
        }
    }
}

/// A route measured: its name in the report, its function, its request
/// (without `limit` and `cursor`), how many items its walk has at least
/// (so that a page answering less than it should is seen), how full its
/// pages must be and the bound they keep to.
#[derive(Clone, Debug)]
pub struct Route {
    /// How the report names it.
    pub name: String,
    /// Its function.
    pub function: Function,
    /// The request.
    pub req: Req,
    /// Items the data holds for it, at least.
    pub holds: usize,
    /// How full its pages must be ([`Fullness::Full`] unless said).
    pub fullness: Fullness,
    /// The bound of its pages ([`Bounded::Page`] unless said).
    pub bound: Bounded,
}

impl Route {
    /// A route of `function` named `name`, whose walk holds at least
    /// `holds` items.
    pub fn new(name: &str, function: Function, req: Req, holds: usize) -> Self {
        Route { name: name.to_owned(), function, req, holds, fullness: Fullness::Full, bound: Bounded::Page }
    }

    /// The same route with pages as full as `fullness` says.
    pub fn full(self, fullness: Fullness) -> Self {
        Route { fullness, ..self }
    }

    /// The same route with pages bounded by `bound`.
    pub fn bounded(self, bound: Bounded) -> Self {
        Route { bound, ..self }
    }
}

/// Calls `r` once, measured.
pub async fn once(t: &TestTable, meter: &Meter, f: Function, r: Req) -> Page {
    meter.take().await;
    let reply = call(t, f, r).await;
    let cost = Cost::of(&meter.take().await);
    Page { reply, cost }
}

/// Walks `route` at `limit` for at most `pages` pages (the first page
/// alone when `pages` is 1), each measured.
pub async fn walk(t: &TestTable, meter: &Meter, route: &Route, limit: u16, pages: usize) -> Vec<Page> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..pages {
        let mut r = route.req.clone().query("limit", limit);
        if let Some(c) = &cursor {
            r = r.query("cursor", c);
        }
        let page = once(t, meter, route.function, r).await;
        cursor = page.reply.next_cursor();
        out.push(page);
        if cursor.is_none() {
            break;
        }
    }
    out
}

fn answered(reply: &Reply) -> usize {
    match &reply.body["items"] {
        Value::Array(items) => items.len(),
        Value::Null => usize::from(reply.status == 200),
        _ => 0,
    }
}

/// Prints each page's figures and returns what broke the bound (or the
/// page's fullness, or was not a 200).
pub fn check(name: &str, limit: Option<u16>, pages: &[Page], bound: Bound, fullness: Fullness) -> Vec<String> {
    let mut broken = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let c = page.cost;
        let over = c.requests > bound.requests || c.rcu > bound.rcu;
        let shown = limit.map_or_else(|| "-".to_owned(), |l| l.to_string());
        println!(
            "BOUND | {name} | limit {shown} | page {} | answered {} | requests {} | items read {} | bytes {} | RCU {} | bound {} requests, {} RCU | {}",
            i + 1,
            answered(&page.reply),
            c.requests,
            c.items,
            c.bytes,
            c.rcu,
            bound.requests,
            bound.rcu,
            if over { "OVER" } else { "ok" }
        );
        let at = format!("{name} limit {shown} page {}", i + 1);
        if page.reply.status != 200 {
            broken.push(format!("{at}: status {} {:?}", page.reply.status, page.reply.body));
        }
        if over {
            broken.push(format!("{at}: {c} (bound {} requests, {} RCU)", bound.requests, bound.rcu));
        }
        let stopped = page.reply.body["stoppedEarly"] == Value::Bool(true);
        let most = fullness.most();
        if answered(&page.reply) > most {
            broken.push(format!("{at}: {} items, more than {most}", answered(&page.reply)));
        }
        let short = limit.is_some_and(|l| answered(&page.reply) < usize::from(l).min(most));
        if short && page.reply.next_cursor().is_some() && !(stopped && fullness.may_stop_early()) {
            broken.push(format!("{at}: {} items and a next page (stoppedEarly: {stopped})", answered(&page.reply)));
        }
    }
    broken
}

/// Walks `route` at 20 (five pages) and at 100 (three pages) and checks
/// each page against its bound and fullness; what broke.
pub async fn pages_within(t: &TestTable, meter: &Meter, route: &Route) -> Vec<String> {
    let fullness = route.fullness;
    let mut broken = Vec::new();
    for (limit, pages) in [(20, 5), (100, 3)] {
        let walked = walk(t, meter, route, limit, pages).await;
        broken.extend(check(&route.name, Some(limit), &walked, route.bound.at(limit), fullness));
        let most = u16::try_from(fullness.most()).unwrap_or(u16::MAX);
        let stopped = walked.first().is_some_and(|p| p.reply.body["stoppedEarly"] == Value::Bool(true));
        if !(stopped && fullness.may_stop_early()) {
            broken.extend(holds(route, limit.min(most), &walked));
        }
    }
    broken
}

/// Walks each route ([`pages_within`]) and asserts that none broke its
/// bound, naming all that did.
pub async fn assert_pages_within(t: &TestTable, meter: &Meter, routes: impl IntoIterator<Item = Route>) {
    let mut broken = Vec::new();
    for route in routes {
        broken.extend(pages_within(t, meter, &route).await);
    }
    assert_within(&broken);
}

/// Whether the first page answered as many items as the data holds for
/// it, up to its limit.
pub fn holds(route: &Route, limit: u16, walked: &[Page]) -> Option<String> {
    let want = route.holds.min(usize::from(limit));
    let got = walked.first().map_or(0, |p| answered(&p.reply));
    (got < want).then(|| format!("{} limit {limit}: the first page answered {got} of {want}", route.name))
}

/// Asserts nothing broke, naming all that did.
pub fn assert_within(broken: &[String]) {
    assert!(broken.is_empty(), "{} over the bound:\n{}", broken.len(), broken.join("\n"));
}
