//! The naive function: default SDK features (but the legacy HTTP client, for
//! its advisories), config from the environment,
//! one GetItem of a demo product per invocation.
use aws_sdk_dynamodb::types::AttributeValue;
use lambda_runtime::{service_fn, Error, LambdaEvent};
use serde_json::{json, Value};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let mut loader = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await.into_builder();
    if let Ok(url) = std::env::var("DYNAMODB_ENDPOINT") {
        loader.set_endpoint_url(Some(url));
    }
    let client = aws_sdk_dynamodb::Client::new(&loader.build());
    let table = std::env::var("TABLE_NAME")?;
    let client = &client;
    let table = &table;
    lambda_runtime::run(service_fn(move |_e: LambdaEvent<Value>| async move {
        let out = client
            .get_item()
            .table_name(table)
            .key("pk", AttributeValue::S("PRODUCT#01JF8Z5Q000000000000000001".into()))
            .key("sk", AttributeValue::S("#METADATA".into()))
            .send()
            .await?;
        Ok::<_, Error>(json!({ "statusCode": 200, "found": out.item.is_some() }))
    }))
    .await
}
