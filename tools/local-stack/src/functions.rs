//! The registry of functions the local stack serves: each one is the same
//! handler the Lambda binary runs, keyed by its logical id in
//! `template.yaml`. A new function is one entry in [`http_functions`].

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use api::aws_lambda_events::apigw::{ApiGatewayV2httpRequest, ApiGatewayV2httpResponse};
use api::lambda_runtime::{Context, LambdaEvent};
use api::Deps;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

type Handler<A> = fn(
    Arc<A>,
    LambdaEvent<ApiGatewayV2httpRequest>,
) -> BoxFuture<'static, Result<ApiGatewayV2httpResponse, Infallible>>;

/// One HTTP API function.
#[derive(Clone)]
pub struct HttpFunction {
    /// Logical id in template.yaml.
    pub logical_id: &'static str,
    /// The route keys its code serves.
    pub routes: &'static [&'static str],
    call:
        Arc<dyn Fn(LambdaEvent<ApiGatewayV2httpRequest>) -> BoxFuture<'static, ApiGatewayV2httpResponse> + Send + Sync>,
}

impl HttpFunction {
    fn new<A: Send + Sync + 'static>(
        logical_id: &'static str,
        routes: &'static [&'static str],
        app: A,
        handler: Handler<A>,
    ) -> Self {
        let app = Arc::new(app);
        let call = Arc::new(move |event| {
            let fut = handler(app.clone(), event);
            Box::pin(async move {
                match fut.await {
                    Ok(resp) => resp,
                    Err(never) => match never {},
                }
            }) as BoxFuture<'static, _>
        });
        HttpFunction { logical_id, routes, call }
    }

    /// Invokes the handler as Lambda would.
    pub fn invoke(
        &self,
        event: ApiGatewayV2httpRequest,
        request_id: &str,
    ) -> BoxFuture<'static, ApiGatewayV2httpResponse> {
        let mut context = Context::default();
        context.request_id = request_id.to_owned();
        // Sampled, as with active tracing: spans go to the stand-in daemon.
        context.xray_trace_id = Some(crate::xray::new_trace_header());
        // Lambda's runtime span: every line logged carries the request and trace ids.
        let span = api::lambda_runtime::layers::trace::request_span(&context);
        Box::pin(telemetry::tracing::Instrument::instrument((self.call)(LambdaEvent::new(event, context)), span))
    }
}

/// Every HTTP API function, built over the same dependencies.
pub fn http_functions(deps: &Deps) -> Vec<HttpFunction> {
    vec![
        HttpFunction::new("CatalogFunction", catalog::ROUTES, deps.clone(), |app, event| {
            Box::pin(async move { catalog::handler(&app, event).await })
        }),
        HttpFunction::new("UsersFunction", users::ROUTES, deps.clone(), |app, event| {
            Box::pin(async move { users::handler(&app, event).await })
        }),
        HttpFunction::new("ListingsFunction", listings::ROUTES, deps.clone(), |app, event| {
            Box::pin(async move { listings::handler(&app, event).await })
        }),
        HttpFunction::new("ReviewsFunction", reviews::ROUTES, deps.clone(), |app, event| {
            Box::pin(async move { reviews::handler(&app, event).await })
        }),
        HttpFunction::new("OrdersFunction", orders::ROUTES, orders_app(deps), |app, event| {
            Box::pin(async move { orders::handler(&app, event).await })
        }),
    ]
}

/// The orders function's dependencies: `ORDER_SHARD_COUNT` shards (default
/// 10), `ORDER_ITEMS_HELD` (default `true`).
pub fn orders_app(deps: &Deps) -> orders::App {
    let shards = domain::shard::order_shards_from_env().unwrap_or(domain::shard::DEFAULT_SHARD_COUNT);
    let hold_items = orders::hold_items_from_env().unwrap_or(true);
    orders::App { deps: deps.clone(), shards, hold_items }
}

/// Logical id of the maintenance function: in the local stack its expiry
/// sweeper runs in `serve` ([`crate::jobs::sweeper`]) and its jobs from the
/// command line ([`crate::jobs`]).
pub const MAINTENANCE_FUNCTION: &str = "MaintenanceFunction";

/// Logical id of the function on the table's stream (see [`crate::stream`]).
pub const STREAM_FUNCTION: &str = "StreamProcessorFunction";
