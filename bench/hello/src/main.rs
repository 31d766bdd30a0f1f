//! The smallest lambda_runtime function: echoes its event.
use lambda_runtime::{service_fn, Error, LambdaEvent};
use serde_json::Value;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    lambda_runtime::run(service_fn(|e: LambdaEvent<Value>| async move { Ok::<_, Error>(e.payload) })).await
}
