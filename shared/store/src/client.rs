//! Builds the DynamoDB client once per process: one rustls/ring HTTPS stack,
//! explicit timeouts and retries, and either AWS or a local endpoint.

use std::time::Duration;

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::config::{BehaviorVersion, Builder, Credentials, Region, SharedHttpClient};
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode, TlsContext, TrustStore};

/// The root CAs that sign DynamoDB's endpoints (Amazon Trust Services and the
/// Starfield root that cross-signs them). Trusting only these avoids reading
/// and parsing every file of the system certificate store at cold start.
pub const AMAZON_TRUST_SERVICES_PEM: &str = include_str!("../certs/amazon-trust-services.pem");

/// Environment variable naming a non-AWS endpoint, such as DynamoDB Local.
pub const ENDPOINT_VAR: &str = "DYNAMODB_ENDPOINT";
/// Set to `1` to trust the system's root store instead of the embedded roots
/// (for an HTTPS endpoint behind a private CA).
pub const NATIVE_ROOTS_VAR: &str = "DYNAMODB_TRUST_NATIVE_ROOTS";

/// Where the table lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// AWS, resolved from the region; credentials from the default chain.
    Aws,
    /// Another URL. `http://` URLs (DynamoDB Local) get static dummy
    /// credentials unless the environment provides some.
    Url(String),
}

impl Endpoint {
    /// `DYNAMODB_ENDPOINT` if set, else AWS.
    pub fn from_env() -> Self {
        match std::env::var(ENDPOINT_VAR) {
            Ok(url) if !url.trim().is_empty() => Endpoint::Url(url.trim().to_owned()),
            _ => Endpoint::Aws,
        }
    }

    fn is_plain_http(&self) -> bool {
        matches!(self, Endpoint::Url(u) if u.starts_with("http://"))
    }

    fn filter_plain_http(self) -> Self {
        if self.is_plain_http() {
            self
        } else {
            Endpoint::Aws
        }
    }
}

/// Timeouts: connecting is retried safely; an answer gets up to 5 s in all.
/// There is deliberately no per-attempt timeout: retrying a write that timed
/// out after it was applied would apply a non-idempotent update twice.
fn timeouts() -> TimeoutConfig {
    TimeoutConfig::builder().connect_timeout(Duration::from_secs(1)).operation_timeout(Duration::from_secs(5)).build()
}

/// Standard retries (throttling, transient errors), 3 attempts in all.
fn retries() -> RetryConfig {
    RetryConfig::standard().with_max_attempts(3)
}

fn http_client(endpoint: &Endpoint) -> SharedHttpClient {
    let builder = aws_smithy_http_client::Builder::new();
    if endpoint.is_plain_http() {
        return builder.build_http();
    }
    let native = std::env::var(NATIVE_ROOTS_VAR).is_ok_and(|v| v == "1");
    let trust = if native {
        TrustStore::default()
    } else {
        TrustStore::empty().with_pem_certificate(AMAZON_TRUST_SERVICES_PEM.as_bytes())
    };
    let tls = TlsContext::builder().with_trust_store(trust).build().unwrap_or_default();
    builder.tls_provider(tls::Provider::Rustls(CryptoMode::Ring)).tls_context(tls).build_https()
}

/// A client configuration for the endpoint, ready for more settings (such as
/// an interceptor in tests) before `build()`. Every request it sends is
/// recorded in the current task's [`crate::Usage`].
pub async fn config(endpoint: &Endpoint) -> Builder {
    let http = http_client(endpoint);
    if let Endpoint::Url(url) = endpoint.clone().filter_plain_http() {
        // DynamoDB Local: no credential chain, no region lookup.
        let region = std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".to_owned());
        return Builder::new()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(region))
            .credentials_provider(Credentials::new("local", "local", None, None, "dynamodb-local"))
            .endpoint_url(url)
            .http_client(http)
            .timeout_config(timeouts())
            .retry_config(retries())
            .interceptor(crate::usage::Recorder);
    }
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .http_client(http)
        .timeout_config(timeouts())
        .retry_config(retries());
    if let Endpoint::Url(url) = endpoint {
        loader = loader.endpoint_url(url);
    }
    Builder::from(&loader.load().await).interceptor(crate::usage::Recorder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_roots_are_five_certificates() {
        assert_eq!(AMAZON_TRUST_SERVICES_PEM.matches("-----BEGIN CERTIFICATE-----").count(), 5);
    }
}
