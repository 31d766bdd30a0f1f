//! An interceptor that records every request sent to DynamoDB (each attempt,
//! by operation name). Tests use it to prove an access pattern is exactly one
//! request and never a Scan; it costs one mutex push per request.

use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::orchestrator::Metadata;

/// The name of the operation an interceptor sees (`Query`, `GetItem`, ...),
/// or `?` where the SDK gave none.
pub fn operation_name(cfg: &ConfigBag) -> String {
    cfg.load::<Metadata>().map_or_else(|| "?".to_owned(), |m| m.name().to_owned())
}

/// Shared log of operation names, in the order they were sent.
#[derive(Clone, Debug, Default)]
pub struct RequestLog(Arc<Mutex<Vec<String>>>);

impl RequestLog {
    /// Everything logged so far, clearing the log.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Intercept for RequestLog {
    fn name(&self) -> &'static str {
        "RequestLog"
    }

    fn read_before_transmit(
        &self,
        _ctx: &BeforeTransmitInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(operation_name(cfg));
        Ok(())
    }
}
