//! Every sample event in events/ is a real HTTP API v2 payload that the
//! function it is routed to (by template.yaml) answers successfully against
//! DynamoDB Local with the demo data.

use std::path::PathBuf;

use api::aws_lambda_events::apigw::ApiGatewayV2httpRequest;
use integration_tests::{lambda_event, Reply, TestTable};
use local_stack::template::Template;

fn event_files(dir: &str) -> Vec<PathBuf> {
    let root = local_stack::dynamodb_local::workspace_root().join("events").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn catalog_events_run_against_demo_data() {
    let template = Template::project().unwrap();
    let routes = template.routes();
    let files = event_files("catalog");
    assert!(files.len() >= catalog::ROUTES.len(), "one event per route at least");
    let mut covered = std::collections::BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let event: ApiGatewayV2httpRequest =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not a v2 event: {e}", file.display()));
        let key = event.route_key.clone().unwrap_or_default();
        let route =
            routes.iter().find(|r| r.key() == key).unwrap_or_else(|| panic!("{}: no route {key}", file.display()));
        assert_eq!(route.function, "CatalogFunction", "{}", file.display());
        assert_eq!(
            route.authorized,
            event.request_context.authorizer.is_some(),
            "{}: claims present exactly on routes with the authorizer",
            file.display()
        );
        let t = TestTable::with_demo_data().await;
        let reply = Reply::from_event(catalog::handler(&t.deps, lambda_event(event)).await.unwrap());
        assert!((200..300).contains(&reply.status), "{}: {} {:?}", file.display(), reply.status, reply.body);
        covered.insert(key);
    }
    let all: std::collections::BTreeSet<String> = catalog::ROUTES.iter().map(|r| r.to_string()).collect();
    assert_eq!(covered, all, "every catalog route has a sample event");
}
