//! The local stack over real HTTP: routes from template.yaml, dev JWTs
//! verified on protected routes, API Gateway's own 401/404 answers.

use std::sync::Arc;

use integration_tests::TestTable;
use local_stack::server::Gateway;
use local_stack::template::Template;
use local_stack::{functions, jwt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn http(port: u16, method: &str, path: &str, token: Option<&str>, body: &str) -> (u16, Value) {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).await.unwrap();
    let status = raw[9..12].parse().unwrap();
    let body = raw.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// The local stack's gateway over `t`, verifying tokens signed with
/// `secret`: its port.
async fn gateway(t: &TestTable, secret: &str) -> u16 {
    let mut gateway =
        Gateway::new(Template::project().unwrap().routes(), functions::http_functions(&t.deps), secret.into()).unwrap();
    gateway.log = false;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(Arc::new(gateway).serve(listener));
    port
}

#[tokio::test]
async fn serves_template_routes_with_dev_jwts() {
    let t = TestTable::with_demo_data().await;
    let secret = "test-secret";
    let port = gateway(&t, secret).await;

    let (status, body) = http(port, "GET", "/brands?limit=2", None, "").await;
    assert_eq!(status, 200);
    assert_eq!(body["items"].as_array().unwrap().len(), 2);
    assert!(body["nextCursor"].is_string());

    let (status, body) = http(port, "GET", "/products/01JF8Z5Q000000000000000003", None, "").await;
    assert_eq!((status, body["name"].as_str()), (200, Some("Noise-cancelling headphones")));

    let (status, _) = http(port, "GET", "/nowhere", None, "").await;
    assert_eq!(status, 404);

    let admin = jwt::mint(secret, "ops", true, 60);
    let user = jwt::mint(secret, "alice", false, 60);
    let forged = jwt::mint("wrong-secret", "ops", true, 60);
    let expired = jwt::mint(secret, "ops", true, 0);
    let new_brand = r#"{"name":"Hooli","id":"hooli"}"#;
    for bad in [None, Some(forged.as_str()), Some(expired.as_str()), Some("garbage")] {
        let (status, body) = http(port, "POST", "/brands", bad, new_brand).await;
        assert_eq!((status, body["message"].as_str()), (401, Some("Unauthorized")));
    }
    let (status, body) = http(port, "POST", "/brands", Some(&user), new_brand).await;
    assert_eq!((status, body["error"]["code"].as_str()), (403, Some("forbidden")));
    let (status, body) = http(port, "POST", "/brands", Some(&admin), new_brand).await;
    assert_eq!((status, body["brandId"].as_str()), (201, Some("hooli")));
}

/// Third round, defect 6: the groups of a token reach a function as API
/// Gateway's JWT authorizer flattens an array claim, `[a b]`. A Cognito
/// group named `"ops","admin"` or `"admin"` (quotes and commas are legal in
/// a group name) arrives as `["ops","admin"]` or `["admin"]`, text that
/// also reads as a JSON array naming `admin`: it must grant nothing. The
/// `admin` group itself, alone or among others, is an admin.
#[tokio::test]
async fn only_the_admin_group_itself_is_admin_through_the_flattening() {
    let t = TestTable::with_demo_data().await;
    let secret = "test-secret";
    let port = gateway(&t, secret).await;
    let token = |groups: Value| {
        let claims = json!({ "sub": "ops-1", "cognito:groups": groups });
        jwt::mint_claims(secret, claims.as_object().cloned().unwrap_or_default(), 60)
    };
    let find = |token: String| async move { http(port, "GET", "/users?email=bob@example.com", Some(&token), "").await };
    for groups in [json!(["admin"]), json!(["ops", "admin"]), json!(["admin", "ops"])] {
        let (status, body) = find(token(groups.clone())).await;
        assert_eq!((status, body["items"][0]["userId"].as_str()), (200, Some("bob")), "{groups}: {body}");
    }
    for groups in [
        json!(["\"admin\""]),
        json!(["\"ops\",\"admin\""]),
        json!(["\"ops\", \"admin\""]),
        json!(["[\"admin\"]"]),
        json!(["admin\""]),
        json!(["administrators"]),
        json!([["admin"]]),
        json!("ops"),
        json!([]),
    ] {
        let (status, body) = find(token(groups.clone())).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (403, Some("forbidden")),
            "{groups} must not be admin: {body}"
        );
    }
}
