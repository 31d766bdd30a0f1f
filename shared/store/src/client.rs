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

pub use crate::budget::OPERATION_TIMEOUT_MS;

/// Timeouts: connecting is retried safely; an answer gets up to 5 s in all.
/// There is deliberately no per-attempt timeout: retrying a write that timed
/// out after it was applied would apply a non-idempotent update twice.
fn timeouts() -> TimeoutConfig {
    TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(1))
        .operation_timeout(Duration::from_millis(OPERATION_TIMEOUT_MS))
        .build()
}

/// `builder` (a client's settings) for writing in another region of a
/// global table (docs/regions.md): an answer within a second or
/// `Unavailable`, so that the writes homed in a lost region answer 503 at
/// once, not after a local client's timeouts and retries (a write there
/// normally takes one cross-region round trip, 100-200 ms).
pub fn for_another_region(builder: Builder, region: &str) -> Builder {
    let timeouts = TimeoutConfig::builder()
        .connect_timeout(Duration::from_millis(300))
        .operation_timeout(Duration::from_millis(900))
        .build();
    let retries = RetryConfig::standard().with_max_attempts(2).with_initial_backoff(Duration::from_millis(50));
    builder.region(Region::new(region.to_owned())).timeout_config(timeouts).retry_config(retries)
}

/// Standard retries (throttling, transient errors), 3 attempts in all.
fn retries() -> RetryConfig {
    RetryConfig::standard().with_max_attempts(3)
}

/// The HTTP(S) client, with its one connector built here, once (also for
/// the other AWS clients of the maintenance tools).
///
/// The SDK's own client builds a connector (for HTTPS: a rustls config, whose
/// trust store decodes the PEM roots) when the DynamoDB client is built, to
/// validate it, throws it away, and builds it again for the first request.
/// Here it is built once (at the same point as the SDK's validation) and
/// handed to every request whose connector settings are `timeouts()`'s, so the
/// first request no longer rebuilds it; other settings (a test that changes
/// the timeouts) get the SDK's own client, as before.
pub fn http_client(endpoint: &Endpoint) -> SharedHttpClient {
    use aws_smithy_runtime_api::client::connector_metadata::ConnectorMetadata;
    use aws_smithy_runtime_api::client::http::{HttpClient, HttpConnectorSettings, SharedHttpConnector};
    use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;

    /// One prebuilt connector for the configured settings; the SDK's client otherwise.
    #[derive(Debug)]
    struct Prebuilt {
        settings: HttpConnectorSettings,
        connector: SharedHttpConnector,
        sdk: SharedHttpClient,
    }

    impl HttpClient for Prebuilt {
        fn http_connector(
            &self,
            settings: &HttpConnectorSettings,
            components: &RuntimeComponents,
        ) -> SharedHttpConnector {
            if settings.connect_timeout() == self.settings.connect_timeout()
                && settings.read_timeout() == self.settings.read_timeout()
            {
                self.connector.clone()
            } else {
                self.sdk.http_connector(settings, components)
            }
        }

        fn connector_metadata(&self) -> Option<ConnectorMetadata> {
            self.sdk.connector_metadata()
        }
    }

    let timeouts = timeouts();
    let mut settings = HttpConnectorSettings::builder();
    settings.set_connect_timeout(timeouts.connect_timeout());
    settings.set_read_timeout(timeouts.read_timeout());
    let settings = settings.build();
    let connector = aws_smithy_http_client::Connector::builder().connector_settings(settings.clone());
    let builder = aws_smithy_http_client::Builder::new();
    let (connector, sdk) = if endpoint.is_plain_http() {
        (connector.build_http(), builder.build_http())
    } else {
        let native = std::env::var(NATIVE_ROOTS_VAR).is_ok_and(|v| v == "1");
        let trust = if native {
            TrustStore::default()
        } else {
            TrustStore::empty().with_pem_certificate(AMAZON_TRUST_SERVICES_PEM.as_bytes())
        };
        let tls = TlsContext::builder().with_trust_store(trust).build().unwrap_or_default();
        let provider = tls::Provider::Rustls(CryptoMode::Ring);
        (
            connector.tls_provider(provider.clone()).tls_context(tls.clone()).build(),
            builder.tls_provider(provider).tls_context(tls).build_https(),
        )
    };
    SharedHttpClient::new(Prebuilt { settings, connector: SharedHttpConnector::new(connector), sdk })
}

/// A client configuration for the endpoint, ready for more settings (such as
/// an interceptor in tests) before `build()`. Every request it sends is
/// recorded in the current task's [`crate::Usage`].
pub async fn config(endpoint: &Endpoint) -> Builder {
    config_reporting_to(endpoint, Vec::new()).await
}

/// [`config`] whose client also records every request into `usages`.
pub async fn config_reporting_to(endpoint: &Endpoint, usages: Vec<crate::Usage>) -> Builder {
    let observer = crate::usage::Observer::reporting_to(usages);
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
            .interceptor(observer);
    }
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .http_client(http)
        .timeout_config(timeouts())
        .retry_config(retries());
    // On Lambda the credentials and the region are environment variables.
    // The default chains try the environment first, so when it has them
    // they give exactly these; but building the credential chain builds
    // every link (profile, web identity with its own STS client, container,
    // IMDS clients): 40% of a function's init instructions, for providers
    // that are never asked. Elsewhere (no such variables) the chains are built.
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    if set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY") {
        loader = loader.credentials_provider(aws_config::environment::EnvironmentVariableCredentialsProvider::new());
    }
    if set("AWS_REGION") || set("AWS_DEFAULT_REGION") {
        loader = loader.region(aws_config::environment::EnvironmentVariableRegionProvider::new());
    }
    if let Endpoint::Url(url) = endpoint {
        loader = loader.endpoint_url(url);
    }
    Builder::from(&loader.load().await).interceptor(observer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_roots_are_five_certificates() {
        assert_eq!(AMAZON_TRUST_SERVICES_PEM.matches("-----BEGIN CERTIFICATE-----").count(), 5);
    }
}
