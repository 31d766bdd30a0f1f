//! Lambda entry point of the stream processor.

use lambda_runtime::{service_fn, Error};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    telemetry::init("stream-processor");
    let store = store::Store::from_env().await?;
    lambda_runtime::run(service_fn(|event| stream_processor::handler(&store, event))).await
}
