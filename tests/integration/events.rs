//! Every sample event in events/ runs against DynamoDB Local with the demo
//! data: HTTP API events through the function template.yaml routes them to
//! (via the local stack's registry, the same handlers as the binaries), and
//! stream batches through the stream processor.

use std::collections::BTreeSet;
use std::path::PathBuf;

use api::aws_lambda_events::apigw::ApiGatewayV2httpRequest;
use aws_lambda_events::dynamodb::Event;
use integration_tests::{Reply, TestTable};
use lambda_runtime::{Context, LambdaEvent};
use local_stack::functions::http_functions;
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

async fn run_http_events(dir: &str, function: &str, routes_in_code: &[&str]) {
    let template = Template::project().unwrap();
    let routes = template.routes();
    let mut covered = BTreeSet::new();
    for file in event_files(dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        let event: ApiGatewayV2httpRequest =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not a v2 event: {e}", file.display()));
        let key = event.route_key.clone().unwrap_or_default();
        let route =
            routes.iter().find(|r| r.key() == key).unwrap_or_else(|| panic!("{}: no route {key}", file.display()));
        assert_eq!(route.function, function, "{}", file.display());
        assert_eq!(
            route.authorized,
            event.request_context.authorizer.is_some(),
            "{}: claims present exactly on routes with the authorizer",
            file.display()
        );
        let t = TestTable::with_demo_data().await;
        let registry = http_functions(&t.deps);
        let target = registry.iter().find(|f| f.logical_id == function).expect("registered");
        let reply = Reply::from_event(target.invoke(event, "test").await);
        assert!((200..300).contains(&reply.status), "{}: {} {:?}", file.display(), reply.status, reply.body);
        covered.insert(key);
    }
    let all: BTreeSet<String> = routes_in_code.iter().map(|r| r.to_string()).collect();
    assert_eq!(covered, all, "every {function} route has a sample event");
}

/// A test per HTTP function: its sample events run, and cover its routes.
macro_rules! http_events {
    ($($test:ident: $dir:literal, $function:literal, $routes:expr;)*) => {$(
        #[tokio::test]
        async fn $test() {
            run_http_events($dir, $function, $routes).await;
        }
    )*};
}

http_events! {
    catalog_events_run_against_demo_data: "catalog", "CatalogFunction", catalog::ROUTES;
    users_events_run_against_demo_data: "users", "UsersFunction", users::ROUTES;
    listings_events_run_against_demo_data: "listings", "ListingsFunction", listings::ROUTES;
    reviews_events_run_against_demo_data: "reviews", "ReviewsFunction", reviews::ROUTES;
    orders_events_run_against_demo_data: "orders", "OrdersFunction", orders::ROUTES;
}

/// Stream batches: every record is processed and none is reported failed;
/// in files named `*malformed*` the malformed record is skipped (logged,
/// never retried, so it cannot hold up its shard) and the rest processed.
#[tokio::test]
async fn stream_events_run_against_demo_data() {
    let files = event_files("stream-processor");
    assert!(files.len() >= 3);
    for file in files {
        let event: Event = serde_json::from_str(&std::fs::read_to_string(&file).unwrap())
            .unwrap_or_else(|e| panic!("{}: not a DynamoDB stream event: {e}", file.display()));
        let t = TestTable::with_demo_data().await;
        let response =
            stream_processor::handler(&t.deps.store, LambdaEvent::new(event, Context::default())).await.unwrap();
        let failed: Vec<_> = response.batch_item_failures.iter().filter_map(|f| f.item_identifier.clone()).collect();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(failed.is_empty(), "{name}: {failed:?}");
    }
}

/// Maintenance jobs: the expiry sweep and a dry-run reconcile answer their
/// reports (a reconcile that completed).
#[tokio::test]
async fn maintenance_events_run_against_demo_data() {
    let files = event_files("maintenance");
    assert!(files.len() >= 2);
    let config = maintenance::Config { shards: 10, timeout: maintenance::expire::DEFAULT_TIMEOUT };
    for file in files {
        let job: maintenance::Job = serde_json::from_str(&std::fs::read_to_string(&file).unwrap())
            .unwrap_or_else(|e| panic!("{}: not a maintenance job: {e}", file.display()));
        let t = TestTable::with_demo_data().await;
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let answer = integration_tests::lambda_event_due_in(job, 60_000);
        let report = maintenance::handler(&t.deps.store, config, answer).await.unwrap();
        assert!(report.get("examined").is_some() || report["complete"] == true, "{name}: {report}");
    }
}
