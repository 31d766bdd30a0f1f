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
use std::time::{Duration, Instant};

use store::usage::{Op, Totals, Usage};

pub use lambda_runtime::tracing;
pub use metrics;

mod logs;
mod metrics_emf;
pub mod xray;

pub use logs::{filter, init_logs, init_logs_at, redacted, request, LOG_LEVEL_VAR, OWN_CRATES};
pub use metrics_emf::{capacity, flush, handled_errors, DEFAULT_NAMESPACE, NAMESPACE_VAR};

/// Logs and metrics for a Lambda function named `function` (the metrics'
/// `function` dimension). Call once, first thing in `main`.
pub fn init(function: &'static str) {
    init_logs();
    metrics_emf::init(function);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::{json_lines, level_filter};
    use lambda_runtime::tracing::subscriber::filter::LevelFilter;

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

    /// Every line an invocation logs (the request line, an error) carries
    /// the runtime's span: the request id and, when traced, the trace id.
    #[test]
    fn every_line_of_an_invocation_carries_its_request_and_trace_ids() {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = json_lines(move || writer.clone()).finish();
        let mut context = lambda_runtime::Context::default();
        context.request_id = "r-7".into();
        context.xray_trace_id =
            Some("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1".into());
        let dispatch = tracing::Dispatch::new(subscriber);
        tracing::dispatcher::with_default(&dispatch, || {
            let _span = lambda_runtime::layers::trace::request_span(&context).entered();
            tracing::error!(target: "orders", "an error");
            request("r-7", "GET /brands", 200, &Measured::default(), None);
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 2);
        for line in text.lines() {
            let line: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(line["span"]["requestId"], "r-7", "{line}");
            assert_eq!(line["span"]["xrayTraceId"], context.xray_trace_id.as_deref().unwrap(), "{line}");
        }
    }

    #[tokio::test]
    async fn measure_times_the_work_and_has_no_requests_without_a_client() {
        let ((), m) = measure(async { tokio::task::yield_now().await }).await;
        assert_eq!(m.totals.requests, 0);
        assert!(m.latency_ms() >= 0.0);
    }
}
