//! `docs/nosql-workbench.json` is the NoSQL Workbench model generated from
//! the key schema and the demo data: this test regenerates it and fails
//! when the committed file is stale (`UPDATE_DOCS=1` rewrites it).

use integration_tests::TestTable;
use schema_docs::workbench;
use serde_json::Value;

#[tokio::test]
async fn nosql_workbench_model_is_current() {
    let t = TestTable::with_demo_data().await;
    // A Scan of a test table: the demo data as sample rows.
    let out = t.deps.store.client().scan().table_name(t.deps.store.table()).send().await.unwrap();
    assert!(out.last_evaluated_key.is_none(), "the demo data fits one page");
    let model = workbench::model(local_stack::DEFAULT_TABLE, &out.items.unwrap_or_default());

    // Every entity of the key schema is a facet; every GSI is declared.
    let table = &model["DataModel"][0];
    let facets: Vec<&str> =
        table["TableFacets"].as_array().unwrap().iter().map(|f| f["FacetName"].as_str().unwrap()).collect();
    for decl in keyschema::entities::ALL {
        assert!(facets.contains(&decl.entity.as_str()), "no facet for {:?}", decl.entity);
    }
    assert_eq!(table["GlobalSecondaryIndexes"].as_array().unwrap().len(), keyschema::table::Index::GSIS.len());

    let text = format!("{}\n", serde_json::to_string_pretty(&model).unwrap());
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(workbench::PATH);
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != text {
        if std::env::var("UPDATE_DOCS").is_ok_and(|v| v == "1") {
            std::fs::write(&path, &text).unwrap();
        } else {
            let parsed: Result<Value, _> = serde_json::from_str(&current);
            panic!("{} is stale (valid JSON: {}); run with UPDATE_DOCS=1", workbench::PATH, parsed.is_ok());
        }
    }
}
