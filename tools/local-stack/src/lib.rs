//! The whole API on a laptop: DynamoDB Local (or any endpoint), the table
//! created from the key schema, demo data, and every function's routes from
//! `template.yaml` served on localhost behind dev JWTs, calling the same
//! handler code as the Lambda binaries.
//!
//! The stream processor runs beside them: [`stream::StreamPoller`] reads the
//! table's real stream (DynamoDB Local implements the Streams API) and hands
//! batches to the processor's handler, as the event source mapping would.

pub mod demo;
pub mod docs_ui;
pub mod dynamodb_local;
pub mod explore;
pub mod functions;
pub mod jobs;
pub mod jwt;
pub mod limits;
pub mod regions;
pub mod serve_args;
pub mod server;
pub mod shards;
pub mod stream;
pub mod template;
pub mod xray;

use api::{CursorKey, Deps};
use store::aws_sdk_dynamodb::Client;
use store::{Endpoint, Store, Usage};

/// Table name when `TABLE_NAME` is not set.
pub const DEFAULT_TABLE: &str = "marketplace";
/// Cursor secret when `CURSOR_SECRET` is not set (local use only).
pub const DEV_CURSOR_SECRET: &str = "local-dev-cursor-secret-not-for-production";

/// A client for `endpoint`, also recording every request into `log` if given.
pub async fn connect(endpoint: &str, log: Option<Usage>) -> Client {
    let endpoint = Endpoint::Url(endpoint.to_owned());
    Client::from_conf(store::client::config_reporting_to(&endpoint, log.into_iter().collect()).await.build())
}

/// Handler dependencies over `endpoint`, with the table created.
pub async fn deps(endpoint: &str, table: &str, log: Option<Usage>) -> Result<Deps, String> {
    let client = connect(endpoint, log).await;
    store::table::create_table(&client, table).await.map_err(|e| format!("creating table {table}: {e}"))?;
    let secret = std::env::var(api::CursorKey::SECRET_VAR_NAME).unwrap_or_else(|_| DEV_CURSOR_SECRET.to_owned());
    Ok(Deps::new(Store::new(client, table), CursorKey::new(secret)))
}
