//! Lambda entry point of the maintenance jobs.

use lambda_runtime::{service_fn, Error};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    telemetry::init("maintenance");
    let store = store::Store::from_env().await?;
    let config = maintenance::Config::from_env()?;
    // Boxed: the jobs' futures nest too deep for the compiler's layout of `main`.
    lambda_runtime::run(service_fn(|event| Box::pin(maintenance::handler(&store, config, event)))).await
}
