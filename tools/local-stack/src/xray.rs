//! A stand-in for Lambda's X-Ray daemon: the local stack gives each
//! invocation a sampled trace header, as Lambda does with active tracing,
//! and listens where `AWS_XRAY_DAEMON_ADDRESS` points; each subsegment the
//! functions send (one per DynamoDB request, see `telemetry::xray`) is
//! printed as one `span` log line with its trace id, so a developer sees one
//! request's DynamoDB calls beside its request line.

use std::net::SocketAddr;

use serde_json::Value;
use telemetry::xray::{DAEMON_HEADER, DAEMON_VAR};
use tokio::net::UdpSocket;

/// A fresh sampled trace header for one invocation (the format Lambda
/// passes in `Lambda-Runtime-Trace-Id`): `Root=1-<epoch hex>-<96 random
/// bits>;Parent=<64 random bits>;Sampled=1`.
pub fn new_trace_header() -> String {
    let random = ulid::Ulid::generate().random() ^ (ulid::Ulid::generate().random() << 48);
    let seconds = domain::time::now_ms() / 1000;
    let root = format!("1-{seconds:08x}-{:024x}", random & ((1u128 << 96) - 1));
    let parent = format!("{:016x}", ulid::Ulid::generate().random() as u64);
    format!("Root={root};Parent={parent};Sampled=1")
}

/// Binds the stand-in daemon on a loopback port and points
/// `AWS_XRAY_DAEMON_ADDRESS` at it (call before serving: it sets the
/// process environment); prints what arrives until the process ends.
pub async fn start() -> Result<SocketAddr, String> {
    let socket = UdpSocket::bind("127.0.0.1:0").await.map_err(|e| format!("X-Ray stand-in: {e}"))?;
    let address = socket.local_addr().map_err(|e| e.to_string())?;
    std::env::set_var(DAEMON_VAR, address.to_string());
    tokio::spawn(async move {
        let mut buffer = vec![0u8; 65_536];
        while let Ok(n) = socket.recv(&mut buffer).await {
            if let Some(span) = parse(&buffer[..n]) {
                print(&span);
            }
        }
    });
    Ok(address)
}

/// The subsegment of one datagram.
fn parse(datagram: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(datagram).ok()?;
    serde_json::from_str(text.strip_prefix(DAEMON_HEADER)?).ok()
}

fn print(span: &Value) {
    let aws = &span["aws"];
    let ms = (span["end_time"].as_f64().unwrap_or(0.0) - span["start_time"].as_f64().unwrap_or(0.0)) * 1000.0;
    telemetry::tracing::info!(
        traceId = span["trace_id"].as_str().unwrap_or_default(),
        operation = aws["operation"].as_str().unwrap_or_default(),
        table = aws["table_name"].as_str().unwrap_or_default(),
        index = aws["index_name"].as_str().unwrap_or_default(),
        rcu = aws["consumed_capacity"]["read"].as_f64().unwrap_or(0.0),
        wcu = aws["consumed_capacity"]["write"].as_f64().unwrap_or(0.0),
        status = span["http"]["response"]["status"].as_u64().unwrap_or(0),
        fault = span["fault"].as_bool().unwrap_or(false),
        durationMs = (ms * 1000.0).round() / 1000.0,
        "span"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_sampled_and_well_formed() {
        let header = new_trace_header();
        let trace = telemetry::xray::parse_header(&header).expect("sampled, with a root and a parent");
        let parts: Vec<&str> = trace.root.split('-').collect();
        assert_eq!((parts.len(), parts[0], parts[1].len(), parts[2].len()), (3, "1", 8, 24));
        assert_eq!(trace.parent.len(), 16);
        assert_ne!(new_trace_header(), header);
    }
}
