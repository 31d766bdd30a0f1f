//! Telemetry shared by every function: JSON log lines through `tracing`
//! (the Lambda runtime's own tracing integration, always JSON, level from
//! `AWS_LAMBDA_LOG_LEVEL`), CloudWatch Embedded Metric Format documents
//! through `metrics_cloudwatch_embedded`, and what each invocation cost in
//! DynamoDB ([`measure`], from [`store::Usage`]).
//!
//! A function calls [`init`] once in `main`; each invocation is one
//! [`measure`]d future, then one log line ([`request`] or the stream
//! processor's batch line) and one [`flush`] of its metrics. Without
//! [`init`] (tests, the local stack's in-process handlers) metrics are
//! no-ops and logs go wherever the process's subscriber sends them.

use std::future::Future;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use lambda_runtime::tracing::subscriber::filter::{EnvFilter, LevelFilter};
use metrics_cloudwatch_embedded::Collector;
use store::usage::{Op, Totals, Usage};

pub use lambda_runtime::tracing;
pub use metrics;

/// Environment variable Lambda sets from the function's `LoggingConfig`
/// (`ApplicationLogLevel`); `RUST_LOG` is read when it is absent.
pub const LOG_LEVEL_VAR: &str = "AWS_LAMBDA_LOG_LEVEL";
/// Environment variable naming the CloudWatch metrics namespace.
pub const NAMESPACE_VAR: &str = "METRICS_NAMESPACE";
/// The namespace when [`NAMESPACE_VAR`] is not set.
pub const DEFAULT_NAMESPACE: &str = "Marketplace";

static METRICS: OnceLock<&'static Collector> = OnceLock::new();

/// Logs and metrics for a Lambda function named `function` (the metrics'
/// `function` dimension). Call once, first thing in `main`.
pub fn init(function: &'static str) {
    init_logs();
    let namespace = std::env::var(NAMESPACE_VAR).unwrap_or_else(|_| DEFAULT_NAMESPACE.to_owned());
    let collector = metrics_cloudwatch_embedded::Builder::new()
        .cloudwatch_namespace(namespace)
        .with_dimension("function", function)
        .init();
    match collector {
        Ok(collector) => {
            let _ = METRICS.set(collector);
            describe_metrics();
        }
        Err(e) => tracing::error!(error = %e, "metrics disabled"),
    }
}

/// JSON log lines on stdout, one object per event with its fields at the
/// top level; the level from `AWS_LAMBDA_LOG_LEVEL` (the template's
/// `LogLevel`), INFO by default, applied as [`filter`] says. `RUST_LOG` is
/// not read: one setting decides what is logged. Does nothing if the
/// process already has a subscriber.
pub fn init_logs() {
    let level = std::env::var(LOG_LEVEL_VAR).map_or(LevelFilter::INFO, |l| level_filter(&l));
    let _ = json_lines(std::io::stdout).with_env_filter(filter(level)).try_init();
}

/// The crates of this project: the level applies to them.
pub const OWN_CRATES: &[&str] = &[
    "api",
    "catalog",
    "keyschema",
    "listings",
    "local_stack",
    "maintenance",
    "orders",
    "reviews",
    "store",
    "stream_processor",
    "telemetry",
    "users",
];

/// What a level logs: our own crates at `level`; the Lambda runtime at most
/// at INFO (at DEBUG and TRACE it logs the raw event, with the bearer token
/// and the body); every other crate (the AWS SDK, which at TRACE logs
/// requests with their security token and item bodies; hyper, rustls) at
/// most at WARN. Our crates never log a token, a credential or personal
/// data at any level.
pub fn filter(level: LevelFilter) -> EnvFilter {
    let runtime = level.min(LevelFilter::INFO);
    let others = level.min(LevelFilter::WARN);
    let mut directives = vec![others.to_string().to_lowercase(), format!("lambda_runtime={runtime}")];
    directives.extend(OWN_CRATES.iter().map(|c| format!("{c}={level}")));
    EnvFilter::builder().with_default_directive(others.into()).parse_lossy(directives.join(",").to_lowercase())
}

/// The log format: one JSON object per line, the event's fields at the top
/// level with the current span (the runtime's `requestId` and trace id).
fn json_lines<W>(
    writer: W,
) -> lambda_runtime::tracing::subscriber::fmt::SubscriberBuilder<
    lambda_runtime::tracing::subscriber::fmt::format::JsonFields,
    lambda_runtime::tracing::subscriber::fmt::format::Format<lambda_runtime::tracing::subscriber::fmt::format::Json>,
    LevelFilter,
    W,
>
where
    W: for<'a> lambda_runtime::tracing::subscriber::fmt::MakeWriter<'a> + Send + Sync + 'static,
{
    lambda_runtime::tracing::subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_current_span(true)
        .with_span_list(false)
        .with_target(false)
        .with_writer(writer)
}

/// Lambda's level names (`TRACE` .. `FATAL`) as a filter; `FATAL` is
/// `ERROR` (tracing has no higher level), anything unknown `INFO`.
fn level_filter(name: &str) -> LevelFilter {
    if name.eq_ignore_ascii_case("fatal") {
        return LevelFilter::ERROR;
    }
    name.parse().unwrap_or(LevelFilter::INFO)
}

fn describe_metrics() {
    use metrics::Unit;
    metrics::describe_histogram!("Latency", Unit::Milliseconds, "handler time");
    metrics::describe_counter!("Requests", Unit::Count, "invocations by route");
    metrics::describe_counter!("Errors", Unit::Count, "5xx answers");
    metrics::describe_counter!(
        "HandledErrors",
        Unit::Count,
        "errors handled: 5xx answers, stream records failed or skipped"
    );
    metrics::describe_counter!("ClientErrors", Unit::Count, "4xx answers");
    metrics::describe_histogram!("DynamoDBRequests", Unit::Count, "request attempts per invocation");
    metrics::describe_histogram!("ReadCapacity", Unit::Count, "read capacity units per invocation");
    metrics::describe_histogram!("WriteCapacity", Unit::Count, "write capacity units per invocation");
    metrics::describe_histogram!("Records", Unit::Count, "stream records per batch");
    metrics::describe_histogram!("Writes", Unit::Count, "writes per stream batch");
    metrics::describe_counter!("Failures", Unit::Count, "stream records reported for retry");
    metrics::describe_counter!("Malformed", Unit::Count, "stream records skipped");
}

/// What one invocation cost: its DynamoDB requests and its time.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// Every request attempt, in the order they ended.
    pub ops: Vec<Op>,
    /// Their sums.
    pub totals: Totals,
    /// Time in the handler.
    pub elapsed: Duration,
}

impl Measured {
    /// Handler time in milliseconds, to the microsecond.
    pub fn latency_ms(&self) -> f64 {
        (self.elapsed.as_secs_f64() * 1_000_000.0).round() / 1000.0
    }

    /// The requests in one short string, e.g. `Query(0.5r,3i) TransactWriteItems(4w)`.
    pub fn ops_summary(&self) -> String {
        self.ops
            .iter()
            .map(|op| {
                let mut parts = Vec::new();
                if op.rcu > 0.0 {
                    parts.push(format!("{}r", op.rcu));
                }
                if op.wcu > 0.0 {
                    parts.push(format!("{}w", op.wcu));
                }
                if op.items > 0 {
                    parts.push(format!("{}i", op.items));
                }
                if op.failed {
                    parts.push("failed".to_owned());
                }
                format!("{}({})", op.op, parts.join(","))
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Runs one invocation's work, recording every DynamoDB request it sends
/// (in its own task) and its time.
pub async fn measure<F: Future>(work: F) -> (F::Output, Measured) {
    let usage = Usage::default();
    let started = Instant::now();
    let output = usage.scope(work).await;
    let elapsed = started.elapsed();
    let ops = usage.take();
    let totals = store::usage::totals(&ops);
    (output, Measured { ops, totals, elapsed })
}

/// An error's text without the values it quotes: serde's and DynamoDB's
/// messages quote the offending value (`invalid type: string "..."`), which
/// may be a review's text or an email, and errors are logged. Everything
/// between double quotes or backticks becomes `…`.
pub fn redacted(error: &dyn std::fmt::Display) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    for c in error.to_string().chars() {
        match quote {
            Some(q) if c == q => {
                out.push('…');
                out.push(c);
                quote = None;
            }
            Some(_) => {}
            None => {
                out.push(c);
                if c == '"' || c == '`' {
                    quote = Some(c);
                }
            }
        }
    }
    out
}

/// The API request line and the route's metrics. Nothing personal: the
/// route is the template (`GET /users/{userId}`), never the path, a client
/// error logs its code, not its message, and a server error's cause is
/// [`redacted`].
pub fn request(request_id: &str, route: &str, status: u16, m: &Measured, error: Option<(&str, &str)>) {
    let t = &m.totals;
    let ops = m.ops_summary();
    // One field list for the three shapes of the line.
    macro_rules! line {
        ($level:ident, $message:literal $(, $name:ident = $value:expr)*) => {
            tracing::$level!(
                requestId = request_id,
                route,
                status,
                latencyMs = m.latency_ms(),
                requests = t.requests,
                rcu = t.rcu,
                wcu = t.wcu,
                items = t.items,
                ops
                $(, $name = $value)*,
                $message
            )
        };
    }
    match error {
        Some((code, cause)) if status >= 500 => {
            line!(error, "request failed", code = code, error = redacted(&cause).as_str())
        }
        Some((code, _)) => line!(info, "request", code = code),
        None => line!(info, "request"),
    }
    let route = route.to_owned();
    metrics::counter!("Requests", "route" => route.clone()).increment(1);
    handled_errors(u64::from(status >= 500));
    if status >= 500 {
        metrics::counter!("Errors", "route" => route.clone()).increment(1);
    } else if status >= 400 {
        metrics::counter!("ClientErrors", "route" => route.clone()).increment(1);
    }
    metrics::histogram!("Latency", "route" => route.clone()).record(m.latency_ms());
    capacity(m, Some(route));
}

/// Records errors a function handled (a 5xx answer, stream records
/// reported for retry or skipped), under the `function` dimension alone, for
/// the function's error alarm (template.yaml). Recorded on every invocation,
/// zero included.
pub fn handled_errors(count: u64) {
    metrics::counter!("HandledErrors").increment(count);
}

/// Records an invocation's DynamoDB requests and capacity (labelled by
/// route for the API, unlabelled for the stream processor).
pub fn capacity(m: &Measured, route: Option<String>) {
    let labels: Vec<(&'static str, String)> = route.into_iter().map(|r| ("route", r)).collect();
    metrics::histogram!("DynamoDBRequests", &labels).record(m.totals.requests as f64);
    metrics::histogram!("ReadCapacity", &labels).record(m.totals.rcu);
    metrics::histogram!("WriteCapacity", &labels).record(m.totals.wcu);
}

/// Writes the metrics recorded since the last flush as EMF documents on
/// stdout, carrying the request id. A no-op without [`init`].
pub fn flush(request_id: &str) {
    if let Some(collector) = METRICS.get() {
        let out = std::io::stdout();
        let mut out = out.lock();
        if let Err(e) = collector.set_property("requestId", request_id.to_owned()).flush(&mut out) {
            tracing::warn!(error = %e, "metrics not written");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_summary_names_each_request() {
        let op =
            |name: &str, rcu, wcu, items, failed| Op { op: name.to_owned(), rcu, wcu, items, failed, ..Op::default() };
        let m = Measured {
            ops: vec![
                op("Query", 0.5, 0.0, 3, false),
                op("TransactWriteItems", 0.0, 4.0, 0, false),
                op("GetItem", 0.0, 0.0, 0, true),
            ],
            ..Measured::default()
        };
        assert_eq!(m.ops_summary(), "Query(0.5r,3i) TransactWriteItems(4w) GetItem(failed)");
    }

    /// Lines that `filter(level)` lets through, of events at TRACE, DEBUG
    /// and INFO from three targets.
    fn let_through(level: LevelFilter) -> Vec<String> {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = json_lines(move || writer.clone()).with_env_filter(filter(level)).finish();
        let dispatch = tracing::Dispatch::new(subscriber);
        tracing::dispatcher::with_default(&dispatch, || {
            tracing::trace!(target: "lambda_runtime::layers::api_response", body = "Bearer x", "raw JSON event");
            tracing::debug!(target: "lambda_runtime::runtime", "runtime debug");
            tracing::info!(target: "lambda_runtime::layers::trace", "runtime info");
            tracing::trace!(target: "aws_smithy_runtime::client::orchestrator", "x-amz-security-token: t");
            tracing::debug!(target: "hyper_util::client", "connection");
            tracing::warn!(target: "aws_config", "sdk warning");
            tracing::trace!(target: "store::usage", "own trace");
            tracing::debug!(target: "orders::place", "own debug");
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["message"].to_string()).collect()
    }

    #[test]
    fn no_level_lets_the_runtime_or_the_sdk_log_requests() {
        let trace = let_through(LevelFilter::TRACE);
        assert_eq!(trace, ["\"runtime info\"", "\"sdk warning\"", "\"own trace\"", "\"own debug\""]);
        assert_eq!(let_through(LevelFilter::DEBUG), ["\"runtime info\"", "\"sdk warning\"", "\"own debug\""]);
        assert_eq!(let_through(LevelFilter::INFO), ["\"runtime info\"", "\"sdk warning\""]);
        assert_eq!(let_through(LevelFilter::WARN), ["\"sdk warning\""]);
        assert!(let_through(LevelFilter::ERROR).is_empty());
    }

    #[test]
    fn lambda_log_levels_map_to_filters() {
        assert_eq!(level_filter("DEBUG"), LevelFilter::DEBUG);
        assert_eq!(level_filter("WARN"), LevelFilter::WARN);
        assert_eq!(level_filter("FATAL"), LevelFilter::ERROR);
        assert_eq!(level_filter("loud"), LevelFilter::INFO);
    }

    use std::sync::{Arc, Mutex};

    /// A log sink for tests.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Captures what [`request`] logs, in the functions' format.
    fn logged(status: u16, error: Option<(&str, &str)>) -> serde_json::Value {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = json_lines(move || writer.clone()).finish();
        let m = Measured {
            ops: vec![Op { op: "GetItem".into(), rcu: 0.5, wcu: 0.0, items: 1, ..Op::default() }],
            totals: Totals { requests: 1, rcu: 0.5, wcu: 0.0, items: 1 },
            elapsed: Duration::from_micros(1500),
        };
        let dispatch = tracing::Dispatch::new(subscriber);
        tracing::dispatcher::with_default(&dispatch, || request("r-1", "GET /users/{userId}", status, &m, error));
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "one line: {text}");
        serde_json::from_str(text.trim()).unwrap()
    }

    #[test]
    fn a_request_is_one_json_line_with_its_cost() {
        let line = logged(200, None);
        assert_eq!(line["level"], "INFO");
        assert_eq!(line["message"], "request");
        assert_eq!(line["requestId"], "r-1");
        assert_eq!(line["route"], "GET /users/{userId}");
        assert_eq!(line["status"], 200);
        assert_eq!(line["latencyMs"], 1.5);
        assert_eq!((line["requests"].as_u64(), line["rcu"].as_f64()), (Some(1), Some(0.5)));
        assert_eq!(line["ops"], "GetItem(0.5r,1i)");
        assert!(line.get("code").is_none() && line.get("error").is_none());
    }

    #[test]
    fn a_server_error_logs_its_cause_and_a_client_error_only_its_code() {
        let line = logged(503, Some(("unavailable", "DynamoDB unavailable: timeout")));
        assert_eq!((line["level"].as_str(), line["message"].as_str()), (Some("ERROR"), Some("request failed")));
        assert_eq!(line["error"], "DynamoDB unavailable: timeout");
        let line = logged(400, Some(("bad_request", "email: bob@example.com is taken")));
        assert_eq!((line["level"].as_str(), line["code"].as_str()), (Some("INFO"), Some("bad_request")));
        assert!(!line.to_string().contains("bob@example.com"), "a client error's message is not logged");
    }

    #[test]
    fn a_server_error_logs_its_cause_without_the_values_it_quotes() {
        let cause = "stored item does not decode: invalid type: string \"bob@example.com\", expected u8";
        let line = logged(500, Some(("internal", cause)));
        assert_eq!(line["error"], "stored item does not decode: invalid type: string \"…\", expected u8");
        assert!(!line.to_string().contains("bob@example.com"));
    }

    #[test]
    fn decoding_errors_are_logged_without_the_values_they_quote() {
        assert_eq!(
            redacted(&"invalid type: string \"bob@example.com\", expected u8 at `body`"),
            "invalid type: string \"…\", expected u8 at `…`"
        );
        assert_eq!(redacted(&"missing field listingId"), "missing field listingId");
    }

    #[tokio::test]
    async fn measure_times_the_work_and_has_no_requests_without_a_client() {
        let ((), m) = measure(async { tokio::task::yield_now().await }).await;
        assert_eq!(m.totals.requests, 0);
        assert!(m.latency_ms() >= 0.0);
    }
}
