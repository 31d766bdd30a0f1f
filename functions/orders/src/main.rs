//! Lambda entry point of the orders function.

use lambda_runtime::{service_fn, Error};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    telemetry::init("orders");
    let app = orders::App::from_env().await?;
    lambda_runtime::run(service_fn(|event| orders::handler(&app, event))).await
}
