//! The HTTP front door: plays API Gateway. Each request is matched against
//! the template's routes, its bearer token verified (HS256 dev JWTs) on
//! routes with the authorizer, turned into the HTTP API v2 event and handed
//! to the function's handler; the handler's response goes back as HTTP.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use api::aws_lambda_events::apigw::{ApiGatewayV2httpRequest, ApiGatewayV2httpResponse};
use api::aws_lambda_events::encodings::Body as EventBody;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::TcpListener;

use crate::functions::HttpFunction;
use crate::jwt;
use crate::template::{percent_decode, Route};

/// API Gateway's payload limit.
const MAX_PAYLOAD: usize = 10 * 1024 * 1024;

/// Routes, functions and the dev JWT secret.
pub struct Gateway {
    routes: Vec<Route>,
    functions: HashMap<&'static str, HttpFunction>,
    jwt_secret: String,
    /// Print one line per request.
    pub log: bool,
    /// The limits simulation in front of DynamoDB Local, if on: its counts at `GET /_limits`.
    pub limits: Option<Arc<crate::limits::Limits>>,
}

impl Gateway {
    /// A gateway over the template's routes and the registered functions.
    /// Fails if a route names a function that is not registered.
    pub fn new(routes: Vec<Route>, functions: Vec<HttpFunction>, jwt_secret: String) -> Result<Self, String> {
        let functions: HashMap<_, _> = functions.into_iter().map(|f| (f.logical_id, f)).collect();
        if let Some(r) = routes.iter().find(|r| !functions.contains_key(r.function.as_str())) {
            return Err(format!("route {} names {}, which the local stack does not register", r.key(), r.function));
        }
        Ok(Gateway { routes, functions, jwt_secret, log: true, limits: None })
    }

    /// Accepts connections until the listener fails.
    pub async fn serve(self: Arc<Self>, listener: TcpListener) -> std::io::Result<()> {
        loop {
            let (stream, peer) = listener.accept().await?;
            let gateway = self.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let gateway = gateway.clone();
                    async move { Ok::<_, Infallible>(gateway.handle(req, peer).await) }
                });
                let _ =
                    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    }

    async fn handle(&self, req: Request<Incoming>, peer: SocketAddr) -> Response<Full<Bytes>> {
        let started = Instant::now();
        let (method, path) = (req.method().to_string(), req.uri().path().to_owned());
        let response = self.route(req, peer).await;
        if self.log {
            println!(
                "{method} {path} -> {} ({:.1} ms)",
                response.status().as_u16(),
                started.elapsed().as_secs_f64() * 1e3
            );
        }
        response
    }

    async fn route(&self, req: Request<Incoming>, peer: SocketAddr) -> Response<Full<Bytes>> {
        let (parts, body) = req.into_parts();
        // The API reference (`/docs`, `/openapi.yaml`): not API routes.
        if let Some(resp) = crate::docs_ui::answer(&parts.method, parts.uri.path()) {
            return resp;
        }
        if let (Some(limits), Some(action), &Method::POST) =
            (&self.limits, parts.uri.path().strip_prefix("/_limits/"), &parts.method)
        {
            limits.pause(action == "pause");
        }
        if let (Some(limits), true) = (&self.limits, parts.uri.path().starts_with("/_limits")) {
            let stats = serde_json::to_string(&limits.stats()).unwrap_or_default();
            let mut resp = Response::new(Full::new(Bytes::from(stats)));
            resp.headers_mut().insert("content-type", hyper::header::HeaderValue::from_static("application/json"));
            return resp;
        }
        // The most specific route wins, as in API Gateway: `/users/me`
        // before `/users/{userId}`.
        let Some((route, params)) = self
            .routes
            .iter()
            .filter_map(|r| r.matches(parts.method.as_str(), parts.uri.path()).map(|p| (r, p)))
            .min_by_key(|(_, params)| params.len())
        else {
            return message(StatusCode::NOT_FOUND, "Not Found");
        };
        let claims = if route.authorized {
            let token = parts
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")));
            match token.map(|t| jwt::verify(&self.jwt_secret, t.trim())) {
                Some(Ok(claims)) => Some(claims),
                _ => return message(StatusCode::UNAUTHORIZED, "Unauthorized"),
            }
        } else {
            None
        };
        let body = match Limited::new(body, MAX_PAYLOAD).collect().await {
            Ok(b) => b.to_bytes(),
            Err(_) => return message(StatusCode::PAYLOAD_TOO_LARGE, "Request Entity Too Large"),
        };
        let request_id = ulid::Ulid::generate().to_string();
        let event = match to_event(&parts, &body, route, params, claims, peer, &request_id) {
            Ok(e) => e,
            Err(e) => return message(StatusCode::BAD_REQUEST, &e),
        };
        let Some(function) = self.functions.get(route.function.as_str()) else {
            return message(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error");
        };
        // Run the handler in its own task, so a panic is a 500 as in Lambda.
        match tokio::spawn(function.invoke(event, &request_id)).await {
            Ok(resp) => from_event(resp),
            Err(_) => message(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error"),
        }
    }
}

fn message(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(json!({ "message": text }).to_string())));
    *resp.status_mut() = status;
    resp.headers_mut().insert("content-type", hyper::header::HeaderValue::from_static("application/json"));
    resp
}

/// The HTTP API payload v2 event for a request, as API Gateway builds it.
fn to_event(
    parts: &hyper::http::request::Parts,
    body: &Bytes,
    route: &Route,
    params: HashMap<String, String>,
    claims: Option<HashMap<String, String>>,
    peer: SocketAddr,
    request_id: &str,
) -> Result<ApiGatewayV2httpRequest, String> {
    let mut headers = serde_json::Map::new();
    for (name, value) in &parts.headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        match headers.get_mut(name.as_str()) {
            Some(Value::String(existing)) => {
                existing.push(',');
                existing.push_str(&value);
            }
            _ => {
                headers.insert(name.as_str().to_owned(), Value::String(value));
            }
        }
    }
    let raw_query = parts.uri.query().unwrap_or_default();
    let mut query = serde_json::Map::new();
    for pair in raw_query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| percent_decode(&s.replace('+', " ")).ok_or_else(|| "malformed query string".to_owned());
        let (k, v) = (decode(k)?, decode(v)?);
        match query.get_mut(&k) {
            Some(Value::String(existing)) => {
                existing.push(',');
                existing.push_str(&v);
            }
            _ => {
                query.insert(k, Value::String(v));
            }
        }
    }
    let (body, is_base64) = match std::str::from_utf8(body) {
        _ if body.is_empty() => (Value::Null, false),
        Ok(text) => (Value::String(text.to_owned()), false),
        Err(_) => (Value::String(STANDARD.encode(body)), true),
    };
    let now = domain::time::now_ms();
    let route_key = route.key();
    let mut context = json!({
        "accountId": "000000000000",
        "apiId": "local",
        "domainName": "127.0.0.1",
        "domainPrefix": "local",
        "http": {
            "method": parts.method.as_str(),
            "path": parts.uri.path(),
            "protocol": "HTTP/1.1",
            "sourceIp": peer.ip().to_string(),
            "userAgent": parts.headers.get("user-agent").and_then(|v| v.to_str().ok()).unwrap_or_default(),
        },
        "requestId": request_id,
        "routeKey": route_key,
        "stage": "$default",
        "time": domain::time::rfc3339(now),
        "timeEpoch": now,
    });
    if let Some(claims) = claims {
        context["authorizer"] = json!({ "jwt": { "claims": claims, "scopes": null } });
    }
    let event = json!({
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": parts.uri.path(),
        "rawQueryString": raw_query,
        "headers": headers,
        "queryStringParameters": if query.is_empty() { Value::Null } else { Value::Object(query) },
        "pathParameters": if params.is_empty() { Value::Null } else { json!(params) },
        "requestContext": context,
        "body": body,
        "isBase64Encoded": is_base64,
    });
    serde_json::from_value(event).map_err(|e| format!("could not build event: {e}"))
}

fn from_event(event: ApiGatewayV2httpResponse) -> Response<Full<Bytes>> {
    let body = match event.body {
        Some(EventBody::Text(t)) if event.is_base64_encoded => STANDARD.decode(t).unwrap_or_default(),
        Some(EventBody::Text(t)) => t.into_bytes(),
        Some(EventBody::Binary(b)) => b,
        _ => Vec::new(),
    };
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = StatusCode::from_u16(u16::try_from(event.status_code).unwrap_or(500))
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in &event.headers {
        resp.headers_mut().insert(name.clone(), value.clone());
    }
    resp
}
