//! Test support: one DynamoDB Local per test process (or the endpoint in
//! `DYNAMODB_ENDPOINT`), a fresh table per test, a request log on the
//! client, and a builder for API Gateway v2 events.

pub mod derived;
pub mod faults;
pub mod hostile;
pub mod metered;
pub mod pricing;
pub mod proxy;
mod raw;
pub mod reads;
mod reread;
pub mod workload;

use std::collections::HashMap;
use std::sync::OnceLock;

use api::aws_lambda_events::apigw::{ApiGatewayV2httpRequest, ApiGatewayV2httpResponse};
use api::aws_lambda_events::encodings::Body;
use api::lambda_runtime::{Context, LambdaEvent};
use api::Deps;
use aws_sdk_dynamodb::config::SharedInterceptor;
use local_stack::dynamodb_local::DynamoDbLocal;
use serde_json::{json, Value};
use store::Usage;

/// The emulator this test process uses: one of `./dev test`'s pool, else
/// `DYNAMODB_ENDPOINT`, else one started on first use. Every client of the
/// tests gets its endpoint here, so this is also where the process takes a
/// database of its own (see `own_database`).
pub fn endpoint() -> &'static str {
    static DYNAMO: OnceLock<DynamoDbLocal> = OnceLock::new();
    static POOLED: OnceLock<Option<String>> = OnceLock::new();
    own_database();
    if let Some(url) = POOLED.get_or_init(pooled) {
        return url;
    }
    &DYNAMO.get_or_init(|| DynamoDbLocal::start().expect("DynamoDB Local starts")).endpoint
}

/// Gives this test process a database of its own in an emulator started
/// without `-sharedDb` (`./dev test`'s pool): DynamoDB Local keeps one
/// database per access key and region, and the local clients sign with the
/// region `AWS_REGION` names. It matters for time: the emulator keeps the
/// stream records of every table a database ever held, deleted or not, and
/// every write slows as they pile up (a PutItem took 0.8 ms of the
/// emulator's CPU when fresh, 6 to 8 ms after a run of the whole suite in one
/// database). Set once, before this process builds its first client, and
/// only where the process runs one test (nextest's process per test): under
/// `cargo test` other tests' threads could be reading the environment.
fn own_database() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var("NEXTEST_EXECUTION_MODE").is_ok_and(|m| m == "process-per-test") {
            std::env::set_var("AWS_REGION", format!("test-{}", std::process::id()));
        }
    });
}

/// One of `DYNAMODB_ENDPOINTS` (comma-separated, set by `./dev test`), by
/// this process's id: nextest runs each test in a process of its own, so
/// the tests spread over the emulators (one slows as the stream records of
/// every table it ever had pile up).
fn pooled() -> Option<String> {
    let all = std::env::var("DYNAMODB_ENDPOINTS").ok()?;
    let all: Vec<&str> = all.split(',').filter(|e| !e.is_empty()).collect();
    let at = usize::try_from(std::process::id()).ok()? % all.len().max(1);
    all.get(at).map(|e| (*e).to_owned())
}

/// A fresh table with the handlers' dependencies over it, deleted when the
/// test is done with it (its stream records stay in the emulator: see
/// `own_database`).
pub struct TestTable {
    /// What handlers get.
    pub deps: Deps,
    /// Every request the client sent.
    pub log: Usage,
}

/// Warnings and errors of the code under test (a stream record that failed
/// says why) as JSON lines on stdout: shown with a failing test.
fn logs() {
    telemetry::init_logs_at(telemetry::tracing::subscriber::filter::LevelFilter::WARN);
}

impl TestTable {
    /// Creates a uniquely named table.
    pub async fn new() -> Self {
        logs();
        let log = Usage::default();
        let name = format!("test-{}", ulid::Ulid::generate());
        let deps = local_stack::deps(endpoint(), &name, Some(log.clone())).await.expect("table created");
        log.take();
        TestTable { deps, log }
    }

    /// A fresh table with only `gsis`, as an earlier release left it (for
    /// the index moves of docs/operations.md).
    pub async fn with_gsis(gsis: &[keyschema::Index]) -> Self {
        let full = Self::new().await;
        let name = format!("test-{}", ulid::Ulid::generate());
        let client = full.deps.store.client().clone();
        store::table::create_table_with(&client, &name, gsis).await.expect("table created");
        full.log.take();
        TestTable { deps: Deps { store: store::Store::new(client, name), ..full.deps.clone() }, log: full.log.clone() }
    }

    /// Waits until the table's indexes are `want` (by name), all ACTIVE:
    /// an index change of docs/operations.md's moves has settled.
    pub async fn settle_indexes(&self, want: &[keyschema::Index]) {
        let mut want: Vec<&str> = want.iter().filter_map(|i| i.name()).collect();
        want.sort_unstable();
        let (client, table) = (self.deps.store.client(), self.deps.store.table());
        for _ in 0..300 {
            let now = store::table::index_status(client, table).await.expect("the table's indexes");
            let mut names: Vec<&str> = now.iter().filter(|(_, s)| s == "ACTIVE").map(|(n, _)| n.as_str()).collect();
            names.sort_unstable();
            if names == want && now.len() == want.len() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("indexes never became {want:?}");
    }

    /// A fresh, empty table whose client also reports every request to
    /// `usages` (beside the request log) and carries `extra` (a fault
    /// injector, a meter) if given.
    pub(crate) async fn with_client(usages: Vec<Usage>, extra: Option<SharedInterceptor>) -> Self {
        Self::at(endpoint(), usages, extra).await
    }

    async fn at(endpoint: &str, usages: Vec<Usage>, extra: Option<SharedInterceptor>) -> Self {
        logs();
        let log = Usage::default();
        let name = format!("test-{}", ulid::Ulid::generate());
        let mut all = vec![log.clone()];
        all.extend(usages);
        let mut config = store::client::config_reporting_to(&store::Endpoint::Url(endpoint.to_owned()), all).await;
        if let Some(extra) = extra {
            config = config.interceptor(extra);
        }
        let client = aws_sdk_dynamodb::Client::from_conf(config.build());
        store::table::create_table(&client, &name).await.expect("table created");
        let cursors = api::CursorKey::new(local_stack::DEV_CURSOR_SECRET);
        let deps = Deps::new(store::Store::new(client, name), cursors);
        log.take();
        TestTable { deps, log }
    }

    /// A fresh table whose client meets the faults planned in the returned
    /// [`faults::Faults`] (and logs requests like any other).
    pub async fn with_faults() -> (Self, faults::Faults) {
        let faults = faults::Faults::default();
        let t = Self::with_client(Vec::new(), Some(SharedInterceptor::new(faults.clone()))).await;
        local_stack::demo::load(&t.deps.store).await.expect("demo data loads");
        t.log.take();
        (t, faults)
    }

    /// A fresh table with the demo data, reached through the simulation of
    /// DynamoDB's limits (`local_stack::limits`) in front of DynamoDB Local.
    pub async fn with_limits(
        settings: local_stack::limits::Settings,
    ) -> (Self, std::sync::Arc<local_stack::limits::Limits>) {
        let (url, limits) = local_stack::limits::Limits::start(endpoint(), settings).await.expect("the proxy starts");
        let t = Self::at(&url, Vec::new(), None).await;
        limits.pause(true);
        local_stack::demo::load(&t.deps.store).await.expect("demo data loads");
        limits.pause(false);
        t.log.take();
        (t, limits)
    }

    /// [`Self::with_limits`] simulating DynamoDB's conflict rule (a
    /// transaction on an item another request holds in flight is
    /// cancelled) at its real rate, every request 25 ms in flight.
    pub async fn with_conflicts() -> (Self, std::sync::Arc<local_stack::limits::Limits>) {
        let settings = local_stack::limits::Settings {
            factor: 1.0,
            latency: std::time::Duration::from_millis(25),
            hold: std::time::Duration::ZERO,
        };
        Self::with_limits(settings).await
    }

    /// A fresh table holding the demo data.
    pub async fn with_demo_data() -> Self {
        let t = Self::new().await;
        local_stack::demo::load(&t.deps.store).await.expect("demo data loads");
        t.log.take();
        t
    }

    /// The operations sent since the last call.
    pub fn requests(&self) -> Vec<String> {
        self.log.take_names()
    }
}

impl Drop for TestTable {
    fn drop(&mut self) {
        // On a thread of its own with a client of its own: the test's
        // runtime (and its client's connections) may be the one dropping us.
        let table = self.deps.store.table().to_owned();
        let done = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            runtime.block_on(async {
                let client = local_stack::connect(endpoint(), None).await;
                client.delete_table().table_name(table).send().await.ok()
            })
        });
        let _ = done.join();
    }
}

/// Who makes a request.
#[derive(Clone, Debug)]
pub enum As {
    /// No token (public routes).
    Anonymous,
    /// A user without groups.
    User(&'static str),
    /// A member of the admin group.
    Admin,
    /// A user whose `cognito:groups` claim is exactly this text.
    Groups(&'static str, &'static str),
}

/// Builds an HTTP API v2 event as API Gateway would send it.
#[derive(Clone, Debug)]
pub struct Req {
    route: String,
    path: HashMap<String, String>,
    query: Vec<(String, String)>,
    body: Option<String>,
    caller: As,
    headers: Vec<(String, String)>,
}

/// `by` moves order `order` to `status` (`PATCH /orders/{orderId}`).
pub fn move_order(order: &str, by: As, status: &str) -> Req {
    req("PATCH /orders/{orderId}").path("orderId", order).by(by).json(json!({ "status": status }))
}

/// `POST /listings` by the demo seller alice: `title` at 12 in books.
pub fn new_listing(title: &str) -> Req {
    req("POST /listings").by(As::User("alice")).json(json!({ "title": title, "price": 12, "categoryId": "books" }))
}

/// Signs `sub` up (`POST /users`, email `<sub>@example.com`); 201 or 409 if
/// already signed up.
pub async fn sign_up(deps: &Deps, sub: &'static str) -> u16 {
    let body = json!({ "name": sub, "email": format!("{sub}@example.com") });
    users(deps, req("POST /users").by(As::User(sub)).json(body)).await.status
}

/// Signs up each of `subs`.
pub async fn sign_up_all(deps: &Deps, subs: &[&'static str]) {
    for sub in subs {
        let status = sign_up(deps, sub).await;
        assert!(status == 201 || status == 409, "sign-up of {sub}: {status}");
    }
}

/// Starts a request for a route key such as `GET /products/{productId}`.
/// Every page of a list route: `send` answers `request` with the page's
/// cursor (none for the first), until a page has no `nextCursor`; `each`
/// sees each page and the requests it sent.
pub async fn walk_pages<F: std::future::Future<Output = Reply>>(
    t: &TestTable,
    request: impl Fn() -> Req,
    send: impl Fn(Req) -> F,
    mut each: impl FnMut(&Reply, Vec<String>),
) {
    let mut cursor = None::<String>;
    t.requests();
    loop {
        let mut r = request();
        if let Some(c) = &cursor {
            r = r.query("cursor", c);
        }
        let page = send(r).await;
        assert_eq!(page.status, 200, "{:?}", page.body);
        each(&page, t.requests());
        cursor = page.next_cursor();
        if cursor.is_none() {
            return;
        }
    }
}

pub fn req(route: &str) -> Req {
    Req {
        route: route.to_owned(),
        path: HashMap::new(),
        query: Vec::new(),
        body: None,
        caller: As::Anonymous,
        headers: Vec::new(),
    }
}

impl Req {
    /// Sets a path parameter.
    pub fn path(mut self, name: &str, value: impl ToString) -> Self {
        self.path.insert(name.to_owned(), value.to_string());
        self
    }
    /// Adds a query-string parameter.
    pub fn query(mut self, name: &str, value: impl ToString) -> Self {
        self.query.push((name.to_owned(), value.to_string()));
        self
    }
    /// Sets a JSON body.
    pub fn json(mut self, body: Value) -> Self {
        self.body = Some(body.to_string());
        self
    }
    /// Sets a raw body.
    pub fn raw(mut self, body: &str) -> Self {
        self.body = Some(body.to_owned());
        self
    }
    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_ascii_lowercase(), value.to_owned()));
        self
    }
    /// Sets the caller.
    pub fn by(mut self, caller: As) -> Self {
        self.caller = caller;
        self
    }

    /// The event.
    pub fn event(&self) -> ApiGatewayV2httpRequest {
        let (method, path) = self.route.split_once(' ').expect("route key is `METHOD /path`");
        let mut raw_path = path.to_owned();
        for (k, v) in &self.path {
            raw_path = raw_path.replace(&format!("{{{k}}}"), v);
        }
        let mut context = json!({
            "routeKey": self.route, "requestId": "test", "stage": "$default",
            "http": { "method": method, "path": raw_path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1", "userAgent": "test" },
        });
        let claims = match self.caller {
            As::Anonymous => None,
            As::User(sub) => Some(json!({ "sub": sub })),
            As::Admin => Some(json!({ "sub": "admin-1", "cognito:groups": "[admin]" })),
            As::Groups(sub, groups) => Some(json!({ "sub": sub, "cognito:groups": groups })),
        };
        if let Some(claims) = claims {
            context["authorizer"] = json!({ "jwt": { "claims": claims, "scopes": null } });
        }
        let mut headers = json!({ "content-type": "application/json" });
        for (k, v) in &self.headers {
            headers[k] = Value::String(v.clone());
        }
        let query: serde_json::Map<String, Value> =
            self.query.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        let raw_query: Vec<String> = self.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        serde_json::from_value(json!({
            "version": "2.0",
            "routeKey": self.route,
            "rawPath": raw_path,
            "rawQueryString": raw_query.join("&"),
            "headers": headers,
            "queryStringParameters": if query.is_empty() { Value::Null } else { Value::Object(query) },
            "pathParameters": if self.path.is_empty() { Value::Null } else { json!(self.path) },
            "requestContext": context,
            "body": self.body,
            "isBase64Encoded": false,
        }))
        .expect("a valid v2 event")
    }
}

/// A response: status and parsed JSON body.
#[derive(Clone, Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// The body (`Null` if empty).
    pub body: Value,
    /// Marked as a replayed answer (`idempotency-replayed: true`).
    pub replayed: bool,
}

impl Reply {
    /// From the handler's response event.
    pub fn from_event(resp: ApiGatewayV2httpResponse) -> Self {
        let body = match resp.body {
            Some(Body::Text(t)) => serde_json::from_str(&t).expect("JSON body"),
            _ => Value::Null,
        };
        let replayed = resp.headers.get(api::REPLAYED_HEADER).is_some_and(|v| v == "true");
        Reply { status: u16::try_from(resp.status_code).expect("status"), body, replayed }
    }

    /// The `items` of a list answer.
    pub fn items(&self) -> &Vec<Value> {
        self.body["items"].as_array().expect("a list answer")
    }

    /// One field of each item.
    pub fn item_field(&self, field: &str) -> Vec<String> {
        self.items().iter().map(|i| i[field].as_str().unwrap_or_default().to_owned()).collect()
    }

    /// Each item's `listingId` and `price`.
    pub fn ids_and_prices(&self) -> impl Iterator<Item = (String, f64)> + '_ {
        self.items()
            .iter()
            .map(|l| (l["listingId"].as_str().expect("listingId").to_owned(), l["price"].as_f64().expect("price")))
    }

    /// The `nextCursor`.
    pub fn next_cursor(&self) -> Option<String> {
        self.body["nextCursor"].as_str().map(str::to_owned)
    }

    /// The error code of an error answer.
    pub fn error_code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or_default()
    }
}

/// Wraps an event as Lambda delivers it.
pub fn lambda_event(event: ApiGatewayV2httpRequest) -> LambdaEvent<ApiGatewayV2httpRequest> {
    LambdaEvent::new(event, Context::default())
}

/// Calls the catalog function's Lambda handler.
pub async fn catalog(deps: &Deps, r: Req) -> Reply {
    Reply::from_event(catalog::handler(deps, lambda_event(r.event())).await.expect("infallible"))
}

/// A product's stock level, as the catalog answers it.
pub async fn stock_level(t: &TestTable, product: &str) -> i64 {
    let r = catalog(&t.deps, req("GET /products/{productId}").path("productId", product)).await;
    r.body["stockLevel"].as_i64().expect("a stock level")
}

/// Calls the users function's Lambda handler.
pub async fn users(deps: &Deps, r: Req) -> Reply {
    Reply::from_event(users::handler(deps, lambda_event(r.event())).await.expect("infallible"))
}

/// Calls the orders function's Lambda handler with `shards` status shards.
pub async fn orders(deps: &Deps, shards: u16, r: Req) -> Reply {
    orders_of(&orders::App { deps: deps.clone(), shards, hold_items: true }, r).await
}

/// Calls the orders function's Lambda handler of `app`.
pub async fn orders_of(app: &orders::App, r: Req) -> Reply {
    Reply::from_event(orders::handler(app, lambda_event(r.event())).await.expect("infallible"))
}

/// Calls the listings function's Lambda handler.
pub async fn listings(deps: &Deps, r: Req) -> Reply {
    Reply::from_event(listings::handler(deps, lambda_event(r.event())).await.expect("infallible"))
}

/// Sends `requests` to the listings function all at once (each on a task
/// of its own); their replies, in the order they came.
pub async fn listings_at_once(deps: &Deps, requests: Vec<Req>) -> Vec<Reply> {
    let mut tasks = tokio::task::JoinSet::new();
    for r in requests {
        let deps = deps.clone();
        tasks.spawn(async move { listings(&deps, r).await });
    }
    tasks.join_all().await
}

/// Calls the reviews function's Lambda handler.
pub async fn reviews(deps: &Deps, r: Req) -> Reply {
    Reply::from_event(reviews::handler(deps, lambda_event(r.event())).await.expect("infallible"))
}

/// `GET /sellers/{seller}/listings?status=` by the seller.
pub async fn seller_listings(deps: &Deps, seller: &'static str, status: &str) -> Reply {
    let r = req("GET /sellers/{sellerId}/listings").path("sellerId", seller).query("status", status);
    listings(deps, r.by(As::User(seller))).await
}

/// Every record in the test table's stream so far, as Lambda would deliver them.
pub async fn stream_records(t: &TestTable) -> Vec<aws_lambda_events::dynamodb::EventRecord> {
    let table = t.deps.store.client().describe_table().table_name(t.deps.store.table()).send().await.unwrap();
    let arn = table.table.unwrap().latest_stream_arn.unwrap();
    let streams = maintenance::redrive::streams_client(&store::Endpoint::Url(endpoint().to_owned())).await;
    let shards =
        streams.describe_stream().stream_arn(&arn).send().await.unwrap().stream_description.unwrap().shards.unwrap();
    let mut out = Vec::new();
    for shard in shards {
        let mut iterator = streams
            .get_shard_iterator()
            .stream_arn(&arn)
            .shard_id(shard.shard_id.unwrap())
            .shard_iterator_type(aws_sdk_dynamodbstreams::types::ShardIteratorType::TrimHorizon)
            .send()
            .await
            .unwrap()
            .shard_iterator;
        while let Some(it) = iterator {
            let page = streams.get_records().shard_iterator(it).send().await.unwrap();
            let records = page.records.unwrap_or_default();
            if records.is_empty() {
                break;
            }
            out.extend(records.into_iter().map(|r| local_stack::stream::to_event_record(r, &arn)));
            iterator = page.next_shard_iterator;
        }
    }
    out
}

/// Runs the stream processor's handler on `records` as Lambda delivers a
/// shard's records: while some fail, again from the first that failed (at
/// most [`REDELIVERIES`] times); returns the sequence numbers that failed
/// in the last delivery.
///
/// Then, as the stream delivers the records that processing wrote, it
/// delivers the records of the aggregate parts it wrote (not among
/// `records`), so that their holders are folded (docs/stream-processor.md).
pub async fn process_stream(t: &TestTable, records: Vec<aws_lambda_events::dynamodb::EventRecord>) -> Vec<String> {
    let seen: std::collections::HashSet<String> =
        records.iter().filter_map(|r| r.change.sequence_number.clone()).collect();
    let failed = deliver(t, records).await;
    if !failed.is_empty() {
        return failed;
    }
    deliver_parts_but(t, &seen).await
}

/// Delivers the records of every aggregate part in the stream (as
/// [`process_stream`] does after its records), so that their holders are
/// folded: for tests that deliver records their own way.
pub async fn deliver_parts(t: &TestTable) -> Vec<String> {
    deliver_parts_but(t, &Default::default()).await
}

/// Whether a record is an aggregate part's.
pub fn is_part_record(r: &aws_lambda_events::dynamodb::EventRecord) -> bool {
    matches!(r.change.new_image.get("entityType"),
        Some(serde_dynamo::AttributeValue::S(e)) if e == keyschema::table::EntityType::AggregatePart.as_str())
}

async fn deliver_parts_but(t: &TestTable, seen: &std::collections::HashSet<String>) -> Vec<String> {
    let parts: Vec<_> = stream_records(t)
        .await
        .into_iter()
        .filter(|r| is_part_record(r) && r.change.sequence_number.as_ref().is_some_and(|s| !seen.contains(s)))
        .collect();
    if parts.is_empty() {
        return Vec::new();
    }
    deliver(t, parts).await
}

/// [`process_stream`] without the parts' records.
async fn deliver(t: &TestTable, records: Vec<aws_lambda_events::dynamodb::EventRecord>) -> Vec<String> {
    let mut pending = records;
    for attempt in 0.. {
        let failed = process_stream_once(t, pending.clone()).await;
        let first = pending.iter().position(|r| r.change.sequence_number.as_ref().is_some_and(|s| failed.contains(s)));
        match first {
            Some(first) if attempt < REDELIVERIES => {
                // The code's own log (shown with a failing test) says why.
                eprintln!("process_stream: {} records failed; delivered again from the first", failed.len());
                pending = pending.split_off(first);
            }
            _ => return failed,
        }
    }
    Vec::new()
}

/// Times a failed batch is delivered again by [`process_stream`]: a loaded
/// emulator can take longer than the client's 5 s to answer a write, as
/// DynamoDB can be unreachable for a moment; Lambda retries such a batch.
pub const REDELIVERIES: usize = 2;

/// One delivery of the records as one batch, as [`process_stream`] without
/// the redeliveries: the records that failed (for tests of failures).
pub async fn process_stream_once(t: &TestTable, records: Vec<aws_lambda_events::dynamodb::EventRecord>) -> Vec<String> {
    let mut event = aws_lambda_events::dynamodb::Event::default();
    event.records = records;
    let response = stream_processor::handler(&t.deps.store, LambdaEvent::new(event, Context::default())).await.unwrap();
    response.batch_item_failures.into_iter().filter_map(|f| f.item_identifier).collect()
}

/// A TCP proxy in front of the test DynamoDB Local that passes each request
/// on `delay` after it arrives (answers come back at once): a network round
/// trip, or a slow endpoint. Test plumbing on its own tasks: the requests of
/// the code under test stay in the test's task.
pub async fn delaying_proxy(delay: std::time::Duration) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    let upstream = endpoint().trim_start_matches("http://").to_owned();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else { continue };
            tokio::spawn(async move {
                let (mut from_client, mut to_client) = client.into_split();
                let (mut from_server, mut to_server) = server.into_split();
                let up = async {
                    let mut buf = vec![0; 64 * 1024];
                    while let Ok(n @ 1..) = from_client.read(&mut buf).await {
                        // What arrived together (headers and body) goes on together.
                        let mut len = n;
                        while len < buf.len() {
                            match from_client.try_read(&mut buf[len..]) {
                                Ok(m @ 1..) => len += m,
                                _ => break,
                            }
                        }
                        tokio::time::sleep(delay).await;
                        if to_server.write_all(&buf[..len]).await.is_err() {
                            break;
                        }
                    }
                    let _ = to_server.shutdown().await;
                };
                let down = async {
                    let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
                    let _ = to_client.shutdown().await;
                };
                tokio::join!(up, down);
            });
        }
    });
    format!("http://{addr}")
}

/// The same table as `t`, reached through `endpoint` (a proxy).
pub async fn through(t: &TestTable, endpoint: &str) -> Deps {
    let client = local_stack::connect(endpoint, None).await;
    Deps { store: store::Store::new(client, t.deps.store.table().to_owned()), ..t.deps.clone() }
}

/// Wraps an event as Lambda delivers it, with a deadline `ms` from now.
pub fn lambda_event_due_in<T>(payload: T, ms: u64) -> LambdaEvent<T> {
    let mut context = Context::default();
    context.deadline = domain::time::now_ms() + ms;
    LambdaEvent::new(payload, context)
}

/// `n` signed-up users `rated-00`.. with no reviews yet, written straight
/// to the table (for the rating aggregate tests).
pub async fn put_users(t: &TestTable, n: usize) -> Vec<domain::ids::UserId> {
    let mut ids = Vec::new();
    for i in 0..n {
        let id: domain::ids::UserId = format!("rated-{i:02}").parse().unwrap();
        let user = domain::model::User {
            home: None,
            user_id: id.clone(),
            name: format!("Rated {i}"),
            email: format!("rated{i}@example.com").parse().unwrap(),
            role: domain::model::UserRole::Both,
            rating_sum: 0,
            review_count: 0,
            created_at: "2026-11-22T00:00:00.000Z".into(),
            updated_at: "2026-11-22T00:00:00.000Z".into(),
        };
        t.deps.store.put_new(&user).await.unwrap();
        ids.push(id);
    }
    ids
}
