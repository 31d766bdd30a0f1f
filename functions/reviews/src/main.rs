//! Lambda entry point of the reviews function.

use lambda_runtime::{service_fn, Error};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    telemetry::init("reviews");
    let app = api::Deps::from_env().await?;
    lambda_runtime::run(service_fn(|event| reviews::handler(&app, event))).await
}
