//! X-Ray spans of an invocation's DynamoDB requests, sent the way AWS's
//! X-Ray SDKs send them: with active tracing, Lambda records the function's
//! segment and runs the X-Ray daemon; the function sends one subsegment per
//! request attempt (operation, table, index, consumed capacity, outcome) as
//! a UDP datagram to `AWS_XRAY_DAEMON_ADDRESS`, under the invocation's trace
//! header (`Root=...;Parent=...;Sampled=1`, the context's `xray_trace_id`).
//!
//! Nothing is sent without a daemon address or for an unsampled trace, so
//! tests and untraced functions pay one environment lookup per invocation.
//! The local stack runs a stand-in daemon that prints the spans it gets.

use std::net::UdpSocket;
use std::sync::OnceLock;

use serde_json::{json, Value};
use store::usage::Op;

/// Where Lambda's X-Ray daemon listens (`host:port`, or `tcp:... udp:...`).
pub const DAEMON_VAR: &str = "AWS_XRAY_DAEMON_ADDRESS";
/// The line every datagram to the daemon starts with.
pub const DAEMON_HEADER: &str = "{\"format\":\"json\",\"version\":1}\n";

/// The parts of a trace header that a subsegment needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceHeader {
    /// The trace id (`1-5759e988-bd862e3fe1be46a994272793`).
    pub root: String,
    /// The segment the subsegments belong to (the function's).
    pub parent: String,
}

/// The header's root and parent, if it has both and is sampled.
pub fn parse_header(header: &str) -> Option<TraceHeader> {
    let mut root = None;
    let mut parent = None;
    let mut sampled = false;
    for part in header.split(';') {
        match part.trim().split_once('=') {
            Some(("Root", v)) => root = Some(v.to_owned()),
            Some(("Parent", v)) => parent = Some(v.to_owned()),
            Some(("Sampled", v)) => sampled = v == "1",
            _ => {}
        }
    }
    Some(TraceHeader { root: root?, parent: parent? }).filter(|_| sampled)
}

/// The daemon's UDP address from the variable's value.
fn daemon_address(value: &str) -> Option<&str> {
    if let Some(udp) = value.split_whitespace().find_map(|p| p.strip_prefix("udp:")) {
        return Some(udp);
    }
    let value = value.trim();
    (!value.is_empty() && !value.contains(' ')).then_some(value)
}

/// A random 64-bit subsegment id in 16 hex digits.
fn new_id() -> String {
    format!("{:016x}", ulid::Ulid::generate().random() as u64)
}

/// One request attempt as an X-Ray subsegment of `trace`.
pub fn subsegment(trace: &TraceHeader, op: &Op) -> Value {
    let mut aws = json!({
        "operation": op.op,
        "consumed_capacity": { "read": op.rcu, "write": op.wcu },
        "items": op.items,
    });
    if let Some(table) = &op.table {
        aws["table_name"] = json!(table);
    }
    if let Some(index) = &op.index {
        aws["index_name"] = json!(index);
    }
    let status = op.status.unwrap_or(0);
    let mut doc = json!({
        "name": "DynamoDB",
        "namespace": "aws",
        "type": "subsegment",
        "id": new_id(),
        "trace_id": trace.root,
        "parent_id": trace.parent,
        "start_time": op.start,
        "end_time": op.end.max(op.start),
        "aws": aws,
        // No answer at all (a timeout, a refused connection) is a fault.
        "fault": status >= 500 || op.status.is_none() && op.failed,
        "error": (400..500).contains(&status),
        "throttle": status == 429,
    });
    if let Some(status) = op.status {
        doc["http"] = json!({ "response": { "status": status } });
    }
    doc
}

/// Sends each of `ops` as a subsegment of the invocation's trace, if the
/// function is traced (a daemon address, a sampled header).
pub fn send_spans(header: Option<&str>, ops: &[Op]) {
    let Some(trace) = header.and_then(parse_header) else { return };
    let Ok(value) = std::env::var(DAEMON_VAR) else { return };
    let Some(address) = daemon_address(&value) else { return };
    static SOCKET: OnceLock<Option<UdpSocket>> = OnceLock::new();
    let Some(socket) = SOCKET.get_or_init(|| UdpSocket::bind("0.0.0.0:0").ok()) else { return };
    for op in ops {
        let datagram = format!("{DAEMON_HEADER}{}", subsegment(&trace, op));
        // A lost span is not worth failing or slowing an invocation for.
        let _ = socket.send_to(datagram.as_bytes(), address);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";

    #[test]
    fn headers_are_read_and_unsampled_ones_send_nothing() {
        let t = parse_header(HEADER).unwrap();
        assert_eq!((t.root.as_str(), t.parent.as_str()), ("1-5759e988-bd862e3fe1be46a994272793", "53995c3f42cd8ad8"));
        assert_eq!(parse_header(&HEADER.replace("Sampled=1", "Sampled=0")), None);
        assert_eq!(parse_header("Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"), None);
    }

    #[test]
    fn daemon_addresses_in_both_forms() {
        assert_eq!(daemon_address("169.254.79.129:2000"), Some("169.254.79.129:2000"));
        assert_eq!(daemon_address("tcp:127.0.0.1:2000 udp:127.0.0.2:2001"), Some("127.0.0.2:2001"));
    }

    #[test]
    fn a_request_is_a_subsegment_with_its_table_index_capacity_and_outcome() {
        let trace = parse_header(HEADER).unwrap();
        let op = Op {
            op: "Query".into(),
            rcu: 0.5,
            items: 3,
            table: Some("marketplace".into()),
            index: Some("GSI2".into()),
            start: 1_700_000_000.25,
            end: 1_700_000_000.5,
            status: Some(200),
            ..Op::default()
        };
        let doc = subsegment(&trace, &op);
        assert_eq!(doc["trace_id"], trace.root);
        assert_eq!(doc["parent_id"], trace.parent);
        assert_eq!(doc["id"].as_str().map(str::len), Some(16));
        assert_eq!(doc["aws"]["operation"], "Query");
        assert_eq!(doc["aws"]["table_name"], "marketplace");
        assert_eq!(doc["aws"]["index_name"], "GSI2");
        assert_eq!(doc["aws"]["consumed_capacity"]["read"], 0.5);
        assert_eq!(
            (doc["start_time"].as_f64(), doc["end_time"].as_f64()),
            (Some(1_700_000_000.25), Some(1_700_000_000.5))
        );
        assert_eq!((doc["fault"].as_bool(), doc["error"].as_bool()), (Some(false), Some(false)));
        let failed = Op { status: Some(400), failed: true, ..op.clone() };
        assert_eq!(subsegment(&trace, &failed)["error"], true);
        let timed_out = Op { status: None, failed: true, ..op };
        assert_eq!(subsegment(&trace, &timed_out)["fault"], true);
    }

    #[test]
    fn spans_reach_the_daemon_as_datagrams() {
        let daemon = UdpSocket::bind("127.0.0.1:0").unwrap();
        daemon.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        std::env::set_var(DAEMON_VAR, daemon.local_addr().unwrap().to_string());
        let op = Op { op: "GetItem".into(), status: Some(200), ..Op::default() };
        send_spans(Some(HEADER), &[op.clone(), op]);
        let mut buffer = [0u8; 4096];
        for _ in 0..2 {
            let n = daemon.recv(&mut buffer).unwrap();
            let text = std::str::from_utf8(&buffer[..n]).unwrap();
            let doc = text.strip_prefix(DAEMON_HEADER).expect("the daemon's header line");
            let doc: Value = serde_json::from_str(doc).unwrap();
            assert_eq!(doc["aws"]["operation"], "GetItem");
        }
    }
}
