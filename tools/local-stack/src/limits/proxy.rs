//! The proxy itself: an HTTP/1 server on a loopback port that decides each
//! request ([`Limits::decide`](super::Limits)), forwards what passes to
//! DynamoDB Local after the simulated latency, and answers what does not
//! as DynamoDB would.

use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};

use super::request::{facts, Facts};
use super::{Limits, Settings, Verdict};

impl Limits {
    /// Starts the proxy on a loopback port in front of `upstream`; returns
    /// its endpoint URL and its state.
    pub async fn start(upstream: &str, settings: Settings) -> Result<(String, Arc<Limits>), String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let limits = Arc::new(Limits {
            upstream: upstream.trim_end_matches('/').to_owned(),
            settings,
            state: Mutex::default(),
            paused: false.into(),
        });
        let serving = limits.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let limits = serving.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let limits = limits.clone();
                        async move { Ok::<_, std::convert::Infallible>(limits.handle(req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok((format!("http://{addr}"), limits))
    }

    async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<Full<Bytes>> {
        let (parts, body) = req.into_parts();
        let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
            return error(400, "SerializationException", vec![]);
        };
        let target = parts.headers.get("x-amz-target").and_then(|v| v.to_str().ok()).unwrap_or_default();
        let op = target.rsplit('.').next().unwrap_or_default().to_owned();
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let facts = if self.paused.load(std::sync::atomic::Ordering::Relaxed) {
            Facts::default()
        } else {
            facts(&op, &request)
        };
        let holder = match self.decide(&facts) {
            Verdict::Throttled => return error(400, "ProvisionedThroughputExceededException", vec![]),
            Verdict::Conflict(reasons) if facts.transaction => {
                return error(400, "TransactionCanceledException", reasons);
            }
            Verdict::Conflict(_) => return error(400, "TransactionConflictException", vec![]),
            Verdict::Replay => None,
            Verdict::Pass { holder } => Some(holder),
        };
        let hold = if facts.transaction { self.settings.hold } else { std::time::Duration::ZERO };
        tokio::time::sleep(self.settings.latency + hold).await;
        let answer = forward(&self.upstream, parts, body).await;
        if let Some(holder) = holder {
            let parsed = answer
                .as_ref()
                .ok()
                .filter(|(status, _, _)| *status == 200)
                .and_then(|(_, _, b)| serde_json::from_slice::<Value>(b).ok());
            self.settle(&op, &facts, holder, &request, parsed.as_ref());
        }
        match answer {
            Ok((status, headers, body)) => {
                let mut response = Response::new(Full::new(body));
                *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::BAD_GATEWAY);
                for (name, value) in headers.iter().filter(|(n, _)| *n != "content-length" && *n != "transfer-encoding")
                {
                    response.headers_mut().insert(name, value.clone());
                }
                response
            }
            Err(e) => error(500, "InternalServerError", vec![]).map(|_| Full::new(Bytes::from(e))),
        }
    }
}

/// DynamoDB's error answer: `reasons` are a cancelled transaction's
/// actions, `true` for those in conflict.
fn error(status: u16, code: &str, reasons: Vec<bool>) -> Response<Full<Bytes>> {
    let message = match code {
        "TransactionCanceledException" => format!(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
            reasons.iter().map(|c| if *c { "TransactionConflict" } else { "None" }).collect::<Vec<_>>().join(", ")
        ),
        "TransactionConflictException" => "Transaction is ongoing for the item".to_owned(),
        _ => "The level of configured provisioned throughput for the table was exceeded (simulated partition limit)"
            .to_owned(),
    };
    let mut body = json!({ "__type": format!("com.amazonaws.dynamodb.v20120810#{code}"), "message": message });
    if !reasons.is_empty() {
        body["CancellationReasons"] = reasons
            .iter()
            .map(|c| {
                if *c {
                    json!({"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"})
                } else {
                    json!({"Code": "None"})
                }
            })
            .collect();
    }
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::BAD_REQUEST);
    response
        .headers_mut()
        .insert("content-type", hyper::header::HeaderValue::from_static("application/x-amz-json-1.0"));
    response
}

type Answer = (u16, hyper::HeaderMap, Bytes);

async fn forward(upstream: &str, parts: hyper::http::request::Parts, body: Bytes) -> Result<Answer, String> {
    let authority = upstream.trim_start_matches("http://");
    let stream = tokio::net::TcpStream::connect(authority).await.map_err(|e| e.to_string())?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let mut req = Request::from_parts(parts, Full::new(body));
    *req.uri_mut() = "/".parse().map_err(|e: hyper::http::uri::InvalidUri| e.to_string())?;
    let answer = sender.send_request(req).await.map_err(|e| e.to_string())?;
    let (parts, body) = answer.into_parts();
    let body = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
    Ok((parts.status.as_u16(), parts.headers, body))
}
