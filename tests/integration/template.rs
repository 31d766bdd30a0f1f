//! template.yaml agrees with the code: the table with the key schema, the
//! routes with each function's route table, every function with the local
//! stack's registry, and each policy with the indexes the function queries.

use std::collections::BTreeSet;

use keyschema::table::{card_move, Index, STREAM_VIEW, TTL};
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

/// The table's GSIs and those moving to GSI6-8 (`card_move`).
const ALL_GSIS: [Index; 7] =
    [Index::Gsi1, Index::Gsi2, Index::Gsi3, Index::Gsi5, Index::Gsi6, Index::Gsi7, Index::Gsi8];

fn pair(index: Index) -> Vec<(String, String)> {
    vec![(index.pk().to_owned(), "HASH".to_owned()), (index.sk().to_owned(), "RANGE".to_owned())]
}

/// A value's CloudFormation function (`If`, `Equals`, ...: its tag) and
/// arguments, if it is one.
fn tagged(v: &Value) -> Option<(String, &Value)> {
    match v {
        Value::Tagged(t) => Some((t.tag.to_string().trim_start_matches('!').to_owned(), &t.value)),
        _ => None,
    }
}

/// A condition of the template's `Conditions`, evaluated with the
/// parameter `CardIndexMove` at `step` (the functions the move's use).
fn holds(t: &Template, condition: &Value, step: u8) -> bool {
    let args = |v: &Value| v.as_sequence().cloned().unwrap_or_default();
    match tagged(condition).as_ref().map(|(f, v)| (f.as_str(), *v)) {
        Some(("Condition", name)) => holds(t, &t.doc["Conditions"][name.as_str().unwrap()], step),
        Some(("Not", v)) => !holds(t, &args(v)[0], step),
        Some(("Or", v)) => args(v).iter().any(|c| holds(t, c, step)),
        Some(("And", v)) => args(v).iter().all(|c| holds(t, c, step)),
        Some(("Equals", v)) => {
            let side = |x: &Value| match tagged(x).as_ref().map(|(f, v)| (f.as_str(), *v)) {
                Some(("Ref", p)) if p.as_str() == Some("CardIndexMove") => step.to_string(),
                _ => x.as_str().map(str::to_owned).unwrap_or_else(|| serde_norway::to_string(x).unwrap()),
            };
            let v = args(v);
            side(&v[0]) == side(&v[1])
        }
        other => panic!("a condition the move does not use: {other:?}"),
    }
}

/// An `!If [condition, value, !Ref AWS::NoValue]` resolved at `step`.
fn resolved<'a>(t: &Template, v: &'a Value, step: u8) -> Option<&'a Value> {
    match tagged(v).as_ref().map(|(f, v)| (f.as_str(), *v)) {
        Some(("If", args)) => {
            let args = args.as_sequence().unwrap();
            let chosen =
                if holds(t, &t.doc["Conditions"][args[0].as_str().unwrap()], step) { &args[1] } else { &args[2] };
            match tagged(chosen).as_ref().map(|(f, v)| (f.as_str(), *v)) {
                Some(("Ref", r)) if r.as_str() == Some("AWS::NoValue") => None,
                _ => Some(chosen),
            }
        }
        _ => Some(v),
    }
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
    assert_eq!(table["StreamSpecification"]["StreamViewType"].as_str(), Some(STREAM_VIEW));
    assert_eq!(table["TimeToLiveSpecification"]["AttributeName"].as_str(), Some(TTL));
    assert_eq!(table["BillingMode"].as_str(), Some("PAY_PER_REQUEST"));
    assert_eq!(table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"].as_bool(), Some(true));
}

/// The GSIs of each step of the move of GSI1-3 to GSI6-8 (the template's
/// `CardIndexMove`) are `card_move::indexes_at` that step, each as its
/// declaration (keys, projection); one step changes one index or the
/// reads (`LIST_INDEX_READS`), and the default is the last, whose indexes
/// are the table's (`Index::GSIS`). At most 5 GSIs once moved.
#[test]
fn every_step_of_the_index_move_is_one_change() {
    let t = Template::project().unwrap();
    let table = t.properties("Table").expect("a Table resource");
    let reads = &t.doc["Globals"]["Function"]["Environment"]["Variables"]["LIST_INDEX_READS"];
    let by_name = |name: &str| {
        Index::ALL.into_iter().chain([Index::Gsi1, Index::Gsi2, Index::Gsi3]).find(|i| i.name() == Some(name))
    };
    let mut before: Option<(Vec<Index>, bool)> = None;
    for step in 0..=card_move::LAST {
        let gsis: Vec<&Value> =
            strs(table, &["GlobalSecondaryIndexes"]).into_iter().filter_map(|g| resolved(&t, g, step)).collect();
        let mut indexes = Vec::new();
        for gsi in gsis {
            let name = gsi["IndexName"].as_str().unwrap();
            let index = by_name(name).unwrap_or_else(|| panic!("{name}: not declared"));
            assert_eq!(key_schema(&gsi["KeySchema"]), pair(index), "{name}");
            let projection = index.projection();
            assert_eq!(gsi["Projection"]["ProjectionType"].as_str(), Some(projection.kind()), "{index}");
            let attrs: Vec<&str> = gsi["Projection"]["NonKeyAttributes"]
                .as_sequence()
                .map_or(Vec::new(), |a| a.iter().filter_map(|v| v.as_str()).collect());
            assert_eq!(attrs, projection.attributes(), "{index}");
            indexes.push(index);
        }
        indexes.sort();
        assert_eq!(indexes, card_move::indexes_at(step), "step {step}");
        let cards = resolved(&t, reads, step).and_then(Value::as_str) == Some("GSI6-8");
        assert_eq!(cards, card_move::reads_cards(step), "step {step}: LIST_INDEX_READS");
        if let Some((was, read_cards)) = &before {
            let changed = was.iter().filter(|i| !indexes.contains(i)).count()
                + indexes.iter().filter(|i| !was.contains(i)).count();
            assert_eq!(changed + usize::from(*read_cards != cards), 1, "step {step}: one change");
            // Reads never go to an index that does not exist at that step.
            for card in [Index::Gsi6, Index::Gsi7, Index::Gsi8] {
                let read = if cards { card } else { card.moved_from().unwrap() };
                assert!(indexes.contains(&read), "step {step}: lists read {read}, not there");
            }
        }
        before = Some((indexes, cards));
    }
    let last: Vec<Index> = {
        let mut g = Index::GSIS.to_vec();
        g.sort();
        g
    };
    assert_eq!(card_move::indexes_at(card_move::LAST), last);
    assert!(last.len() <= 5);
    let default = t.doc["Parameters"]["CardIndexMove"]["Default"].as_str();
    assert_eq!(default, Some(card_move::LAST.to_string().as_str()));
}

/// Every route of the template is an operation of the registry
/// (`keyschema::patterns`), and every operation's route is one of them.
#[test]
fn every_route_is_an_operation_of_the_registry() {
    let t = Template::project().unwrap();
    let declared: BTreeSet<String> = t.routes().iter().map(|r| r.key()).collect();
    let route = |r: &str| r.split('?').next().unwrap_or_default().to_owned();
    let registered: BTreeSet<String> = keyschema::patterns::Op::ALL.iter().map(|op| route(op.route())).collect();
    assert_eq!(declared, registered, "template.yaml and the registry disagree");
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
    for index in ALL_GSIS.iter().filter_map(|i| i.name()) {
        let wanted = index == "GSI8" || index == "GSI3";
        assert_eq!(indexes.contains(&format!("/index/{index}")), wanted, "maintenance and {index}");
    }
}

/// The API functions and the stream processor never Scan.
#[test]
fn request_paths_never_scan() {
    let t = Template::project().unwrap();
    let expected: Vec<(&str, BTreeSet<&str>)> = vec![
        // Each of GSI6-8 with the retired index beside it (CardIndexMove).
        ("CatalogFunction", ["GSI6", "GSI7", "GSI1", "GSI2"].into()),
        ("UsersFunction", ["GSI6", "GSI1"].into()),
        ("ListingsFunction", ["GSI6", "GSI7", "GSI8", "GSI1", "GSI2", "GSI3", "GSI5"].into()),
        ("OrdersFunction", ["GSI6", "GSI7", "GSI8", "GSI1", "GSI2", "GSI3"].into()),
        ("ReviewsFunction", ["GSI6", "GSI1"].into()),
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
        for index in ALL_GSIS.iter().filter_map(|i| i.name()) {
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
    for index in ALL_GSIS.iter().filter_map(|i| i.name()) {
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
