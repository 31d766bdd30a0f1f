//! CloudWatch metrics as Embedded Metric Format documents on stdout
//! (`metrics_cloudwatch_embedded`): described once, recorded per
//! invocation, flushed with its request id.

use std::sync::OnceLock;

use metrics_cloudwatch_embedded::Collector;

use crate::Measured;

/// Environment variable naming the CloudWatch metrics namespace.
pub const NAMESPACE_VAR: &str = "METRICS_NAMESPACE";
/// The namespace when [`NAMESPACE_VAR`] is not set.
pub const DEFAULT_NAMESPACE: &str = "Marketplace";

static METRICS: OnceLock<&'static Collector> = OnceLock::new();

/// Starts the EMF collector with the `function` dimension.
pub(crate) fn init(function: &'static str) {
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
        Err(e) => lambda_runtime::tracing::error!(error = %e, "metrics disabled"),
    }
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
/// stdout, carrying the request id. A no-op without [`crate::init`].
pub fn flush(request_id: &str) {
    if let Some(collector) = METRICS.get() {
        let out = std::io::stdout();
        let mut out = out.lock();
        if let Err(e) = collector.set_property("requestId", request_id.to_owned()).flush(&mut out) {
            lambda_runtime::tracing::warn!(error = %e, "metrics not written");
        }
    }
}
