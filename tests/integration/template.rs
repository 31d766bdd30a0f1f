//! template.yaml agrees with the code: the table with the key schema, the
//! routes with each function's route table, every function with the local
//! stack's registry, and each policy with the indexes the function queries.

use std::collections::BTreeSet;

use keyschema::table::{Index, STREAM_VIEW, TTL};
use local_stack::template::Template;
use serde_norway::Value;

fn strs<'a>(v: &'a Value, path: &[&str]) -> Vec<&'a Value> {
    let mut node = v;
    for p in path {
        node = &node[*p];
    }
    node.as_sequence().map(|s| s.iter().collect()).unwrap_or_default()
}

fn key_schema(v: &Value) -> Vec<(String, String)> {
    v.as_sequence()
        .unwrap()
        .iter()
        .map(|e| (e["AttributeName"].as_str().unwrap().to_owned(), e["KeyType"].as_str().unwrap().to_owned()))
        .collect()
}

fn pair(index: Index) -> Vec<(String, String)> {
    vec![(index.pk().to_owned(), "HASH".to_owned()), (index.sk().to_owned(), "RANGE".to_owned())]
}

#[test]
fn table_matches_the_key_schema() {
    let t = Template::project().unwrap();
    let table = t.properties("Table").expect("a Table resource");
    let attrs: BTreeSet<(String, String)> = strs(table, &["AttributeDefinitions"])
        .iter()
        .map(|a| (a["AttributeName"].as_str().unwrap().to_owned(), a["AttributeType"].as_str().unwrap().to_owned()))
        .collect();
    let expected: BTreeSet<_> = Index::all_key_attributes().map(|a| (a.to_owned(), "S".to_owned())).collect();
    assert_eq!(attrs, expected);
    assert_eq!(key_schema(&table["KeySchema"]), pair(Index::Table));
    let gsis = strs(table, &["GlobalSecondaryIndexes"]);
    assert_eq!(gsis.len(), Index::GSIS.len());
    for (gsi, index) in gsis.iter().zip(Index::GSIS) {
        assert_eq!(gsi["IndexName"].as_str(), index.name());
        assert_eq!(key_schema(&gsi["KeySchema"]), pair(index));
        let projection = index.projection();
        assert_eq!(gsi["Projection"]["ProjectionType"].as_str(), Some(projection.kind()), "{index}");
        let attrs: Vec<&str> = gsi["Projection"]["NonKeyAttributes"]
            .as_sequence()
            .map_or(Vec::new(), |a| a.iter().filter_map(|v| v.as_str()).collect());
        assert_eq!(attrs, projection.attributes(), "{index}");
    }
    assert_eq!(table["StreamSpecification"]["StreamViewType"].as_str(), Some(STREAM_VIEW));
    assert_eq!(table["TimeToLiveSpecification"]["AttributeName"].as_str(), Some(TTL));
    assert_eq!(table["BillingMode"].as_str(), Some("PAY_PER_REQUEST"));
    assert_eq!(table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"].as_bool(), Some(true));
}

#[test]
fn routes_match_each_functions_route_table() {
    let t = Template::project().unwrap();
    let routes = t.routes();
    let deps_free: Vec<(&str, &[&str])> = vec![
        ("CatalogFunction", catalog::ROUTES),
        ("UsersFunction", users::ROUTES),
        ("ListingsFunction", listings::ROUTES),
        ("OrdersFunction", orders::ROUTES),
        ("ReviewsFunction", reviews::ROUTES),
    ];
    for (function, code_routes) in deps_free {
        let declared: BTreeSet<String> = routes.iter().filter(|r| r.function == function).map(|r| r.key()).collect();
        let served: BTreeSet<String> = code_routes.iter().map(|r| r.to_string()).collect();
        assert_eq!(declared, served, "{function}: template.yaml and the code disagree");
    }
    let mut keys: Vec<String> = routes.iter().map(|r| r.key()).collect();
    keys.sort();
    let before = keys.len();
    keys.dedup();
    assert_eq!(before, keys.len(), "a route key is declared twice");
}

/// Only these routes are open without a token; every other one has the
/// JWT authorizer.
#[test]
fn public_routes_are_exactly_the_public_reads() {
    let t = Template::project().unwrap();
    let public: BTreeSet<String> = t.routes().iter().filter(|r| !r.authorized).map(|r| r.key()).collect();
    let expected: BTreeSet<String> = [
        "GET /brands",
        "GET /categories",
        "GET /categories/{categoryId}",
        "GET /products/{productId}",
        "GET /brands/{brandId}/products",
        "GET /categories/{categoryId}/products",
        "GET /listings/{listingId}",
        "GET /listings/near",
        "GET /search/listings",
        "GET /categories/{categoryId}/listings",
        "GET /users/{userId}",
        "GET /sellers/{sellerId}/listings/active",
        "GET /users/{userId}/reviews",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(public, expected);
}

#[test]
fn every_function_is_served_by_the_local_stack() {
    let t = Template::project().unwrap();
    let registered: BTreeSet<&str> = [
        "CatalogFunction",
        "UsersFunction",
        "ListingsFunction",
        "OrdersFunction",
        "ReviewsFunction",
        local_stack::functions::STREAM_FUNCTION,
        local_stack::functions::MAINTENANCE_FUNCTION,
    ]
    .into();
    let declared: BTreeSet<String> = t.resources_of_type("AWS::Serverless::Function").into_iter().collect();
    assert_eq!(declared.iter().map(String::as_str).collect::<BTreeSet<_>>(), registered);
}

/// Least privilege: a function may Query only the indexes its access
/// patterns use, and never Scan; the maintenance function's reconcile is the
/// one Scan (of the table, never an index), and its policy says why.
#[test]
fn policies_grant_only_used_indexes_and_no_scan() {
    let t = Template::project().unwrap();
    let props = t.properties(local_stack::functions::MAINTENANCE_FUNCTION).unwrap();
    let statements = props["Policies"][0]["Statement"].as_sequence().unwrap();
    let scans: Vec<&Value> = statements
        .iter()
        .filter(|s| serde_norway::to_string(&s["Action"]).unwrap().contains("dynamodb:Scan"))
        .collect();
    assert_eq!(scans.len(), 1, "one statement allows Scan");
    assert_eq!(serde_norway::to_string(&scans[0]["Resource"]).unwrap().trim(), "!GetAtt Table.Arn");
    let text = std::fs::read_to_string(local_stack::dynamodb_local::workspace_root().join("template.yaml")).unwrap();
    assert!(text.contains("the one\n            # place this project scans"), "the policy says why it scans");
    let indexes = serde_norway::to_string(&props["Policies"]).unwrap();
    for index in Index::GSIS.iter().filter_map(|i| i.name()) {
        assert_eq!(indexes.contains(&format!("/index/{index}")), index == "GSI3", "maintenance and {index}");
    }
}

/// The API functions and the stream processor never Scan.
#[test]
fn request_paths_never_scan() {
    let t = Template::project().unwrap();
    let expected: Vec<(&str, BTreeSet<&str>)> = vec![
        ("CatalogFunction", ["GSI1", "GSI2"].into()),
        ("UsersFunction", ["GSI1"].into()),
        ("ListingsFunction", ["GSI1", "GSI2", "GSI3", "GSI5"].into()),
        ("OrdersFunction", ["GSI1", "GSI2", "GSI3"].into()),
        ("ReviewsFunction", ["GSI1"].into()),
        ("StreamProcessorFunction", [].into()),
    ];
    for (function, indexes) in expected {
        let props = t.properties(function).unwrap();
        let text = serde_norway::to_string(&props["Policies"]).unwrap();
        assert!(!text.contains("Scan"), "{function} may Scan");
        let actions =
            props["Policies"].as_sequence().into_iter().flatten().filter_map(|p| p["Statement"].as_sequence());
        for action in actions.flatten().map(|s| serde_norway::to_string(&s["Action"]).unwrap()) {
            assert!(!action.contains('*'), "{function} has a wildcard action: {action}");
        }
        assert!(!text.contains("dynamodb:Scan"), "{function} may Scan");
        for index in Index::GSIS.iter().filter_map(|i| i.name()) {
            assert_eq!(text.contains(&format!("/index/{index}")), indexes.contains(index), "{function} and {index}");
        }
    }
}

/// The stream's event source mapping reports partial failures, bisects,
/// bounds retries and record age, and has an on-failure destination; the
/// local poller uses the same batch size and retry count.
#[test]
fn stream_mapping_is_bounded_with_a_destination() {
    let t = Template::project().unwrap();
    let props = t.properties(local_stack::functions::STREAM_FUNCTION).unwrap();
    let stream = &props["Events"]["TableStream"]["Properties"];
    assert_eq!(stream["FunctionResponseTypes"][0].as_str(), Some("ReportBatchItemFailures"));
    assert_eq!(stream["BisectBatchOnFunctionError"].as_bool(), Some(true));
    assert_eq!(stream["MaximumRetryAttempts"].as_u64(), Some(u64::from(local_stack::stream::MAX_RETRIES)));
    assert_eq!(stream["BatchSize"].as_i64(), Some(i64::from(local_stack::stream::BATCH_SIZE)));
    assert!(stream["MaximumRecordAgeInSeconds"].as_u64().is_some());
    assert_eq!(stream["DestinationConfig"]["OnFailure"]["Type"].as_str(), Some("SQS"));
}

/// openapi.yaml describes exactly the routes of template.yaml, with the
/// same public/protected split, and every request body refuses unknown fields.
#[test]
fn openapi_matches_the_template() {
    let t = Template::project().unwrap();
    let path = local_stack::dynamodb_local::workspace_root().join("openapi.yaml");
    let doc: Value = serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut described = BTreeSet::new();
    let mut public = BTreeSet::new();
    for (path, item) in doc["paths"].as_mapping().unwrap() {
        for (method, op) in item.as_mapping().unwrap() {
            let key = format!("{} {}", method.as_str().unwrap().to_uppercase(), path.as_str().unwrap());
            if op["security"].as_sequence().is_some_and(|s| s.is_empty()) {
                public.insert(key.clone());
            }
            let body = &op["requestBody"]["content"]["application/json"]["schema"];
            let branches = body["oneOf"].as_sequence().cloned().unwrap_or_else(|| vec![body.clone()]);
            for schema in branches.iter().filter(|s| s["type"].as_str() == Some("object")) {
                assert_eq!(
                    schema["additionalProperties"].as_bool(),
                    Some(false),
                    "{key}: body must refuse unknown fields"
                );
            }
            described.insert(key);
        }
    }
    let routes = t.routes();
    let declared: BTreeSet<String> = routes.iter().map(|r| r.key()).collect();
    assert_eq!(described, declared, "openapi.yaml and template.yaml disagree");
    let declared_public: BTreeSet<String> = routes.iter().filter(|r| !r.authorized).map(|r| r.key()).collect();
    assert_eq!(public, declared_public, "public routes differ");
}

/// The cursor secret goes to the API functions only (it signs their cursors),
/// not to the stream processor.
#[test]
fn cursor_secret_only_where_cursors_are_signed() {
    let t = Template::project().unwrap();
    let api_functions: BTreeSet<String> = t.routes().into_iter().map(|r| r.function).collect();
    for function in t.resources_of_type("AWS::Serverless::Function") {
        let has = !t.properties(&function).unwrap()["Environment"]["Variables"]["CURSOR_SECRET"].is_null();
        assert_eq!(has, api_functions.contains(&function), "{function}");
    }
    assert!(t.doc["Globals"]["Function"]["Environment"]["Variables"]["CURSOR_SECRET"].is_null());
}

/// Every global secondary index has its write and read throttles in an
/// alarm (the index throttle alarms).
#[test]
fn every_index_throttle_is_alarmed() {
    let text = std::fs::read_to_string(local_stack::dynamodb_local::workspace_root().join("template.yaml")).unwrap();
    for index in Index::GSIS.iter().filter_map(|i| i.name()) {
        let dimension = format!("{{ Name: GlobalSecondaryIndexName, Value: {index} }}");
        assert_eq!(text.matches(&dimension).count(), 2, "{index}: its write and read throttles");
    }
}

/// The dropped near index (GSI4, docs/operations.md "Moving an index")
/// is gone from the template: no index, grant, alarm metric or variable
/// names it (comments may tell its story), nor `NEAR_INDEX`.
#[test]
fn the_dropped_index_is_named_nowhere() {
    let text = std::fs::read_to_string(local_stack::dynamodb_local::workspace_root().join("template.yaml")).unwrap();
    let dropped = Index::Gsi4.name().unwrap();
    assert!(!Index::GSIS.contains(&Index::Gsi4));
    for (n, line) in text.lines().enumerate() {
        let code = line.split(" #").next().unwrap_or_default();
        if code.trim_start().starts_with('#') {
            continue;
        }
        assert!(!code.contains(dropped) && !code.contains("NEAR_INDEX"), "template.yaml:{}: {line}", n + 1);
    }
}
