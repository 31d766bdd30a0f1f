//! JSON log lines through `tracing` (the Lambda runtime's own tracing
//! integration), the level from `AWS_LAMBDA_LOG_LEVEL` scoped to this
//! project's crates, the API request line, and errors redacted of the
//! values they quote.

use lambda_runtime::tracing;
use lambda_runtime::tracing::subscriber::filter::{EnvFilter, LevelFilter};

use crate::metrics_emf::{capacity, handled_errors};
use crate::Measured;

/// Environment variable Lambda sets from the function's `LoggingConfig`
/// (`ApplicationLogLevel`); `RUST_LOG` is read when it is absent.
pub const LOG_LEVEL_VAR: &str = "AWS_LAMBDA_LOG_LEVEL";
/// JSON log lines on stdout, one object per event with its fields at the
/// top level; the level from `AWS_LAMBDA_LOG_LEVEL` (the template's
/// `LogLevel`), INFO by default, applied as [`filter`] says. `RUST_LOG` is
/// not read: one setting decides what is logged. Does nothing if the
/// process already has a subscriber.
pub fn init_logs() {
    init_logs_at(std::env::var(LOG_LEVEL_VAR).map_or(LevelFilter::INFO, |l| level_filter(&l)));
}

/// [`init_logs`] at `level` (the integration tests log warnings and errors,
/// which the test runner shows when a test fails).
pub fn init_logs_at(level: LevelFilter) {
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
pub(crate) fn json_lines<W>(
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
pub(crate) fn level_filter(name: &str) -> LevelFilter {
    if name.eq_ignore_ascii_case("fatal") {
        return LevelFilter::ERROR;
    }
    name.parse().unwrap_or(LevelFilter::INFO)
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
