//! HTTP plumbing shared by every API function: API Gateway HTTP API
//! (payload v2) events routed by route key to plain async handlers, the
//! caller's verified claims, validated bodies and parameters, JSON errors,
//! and signed pagination cursors.
//!
//! A function declares its routes once with [`routes!`]; that gives it the
//! Lambda handler and the list of route keys (checked against
//! `template.yaml` and served by the local stack).

mod body;
pub mod cache;
mod claims;
mod cursor;
mod error;
pub mod idempotency;
mod request;
mod response;
pub mod validate;

use keyschema::{Entity, EntityQuery, ReadAs};
use serde::Serialize;
use store::{StartKey, Store};

pub use aws_lambda_events;
pub use body::MAX_BODY_BYTES;
pub use claims::{groups, groups_contain, Caller, ADMIN_GROUP, GROUPS_CLAIM, SUB_CLAIM};
pub use cursor::CursorKey;
pub use error::ApiError;
pub use lambda_runtime;
pub use request::{PageParams, Request};
pub use response::{to_event, ListBody, Response, REPLAYED_HEADER};
pub use store;
pub use telemetry;

/// What every handler needs: the table, the cursor key and the dense cells
/// "listings near me" still reads in two partitions. Built once per process
/// in `main`; cheap to clone.
#[derive(Clone, Debug)]
pub struct Deps {
    /// The table.
    pub store: Store,
    /// Signs and checks pagination cursors.
    pub cursors: CursorKey,
    /// Dense cells whose listings may still be keyed in the partition that
    /// held them before they were declared dense (`NEAR_SPLITTING`, until a
    /// repair has moved them: docs/operations.md, "A dense cell"): near me
    /// reads both.
    pub near_splitting: Vec<String>,
}

impl Deps {
    /// The name of the variable naming the dense cells still splitting.
    pub const NEAR_SPLITTING_VAR_NAME: &'static str = "NEAR_SPLITTING";

    /// From `TABLE_NAME`, `DYNAMODB_ENDPOINT`, `CURSOR_SECRET` and
    /// `NEAR_SPLITTING` (dense cells, comma-separated; none if unset or
    /// empty).
    pub async fn from_env() -> Result<Self, String> {
        let near_splitting = splitting(&std::env::var(Self::NEAR_SPLITTING_VAR_NAME).unwrap_or_default())?;
        let (store, cursors) = (Store::from_env().await?, CursorKey::from_env()?);
        Ok(Deps { store, cursors, near_splitting })
    }

    /// Over `store`, signing cursors with `cursors`, no dense cell splitting.
    pub fn new(store: Store, cursors: CursorKey) -> Self {
        Deps { store, cursors, near_splitting: Vec::new() }
    }

    /// The store that writes listing `id` and its sale (its home's:
    /// docs/regions.md). In a global table its home is read from this
    /// region's replica (a listing's home never changes), or from the
    /// others' when it has not replicated here yet (none has it: this
    /// store, where its condition finds nothing); in one region, this
    /// store, without a read.
    pub async fn listing_home(&self, id: &domain::ids::ListingId) -> Result<Store, ApiError> {
        if !self.store.is_global() {
            return Ok(self.store.clone());
        }
        let found =
            self.homed::<domain::model::Listing, _>(&keyschema::keys::listing(id)?, |l| l.home.clone(), false).await?;
        Ok(found.map_or_else(|| self.store.clone(), |(_, home)| home))
    }

    /// Order `id` as its home has it, with the store of its home (docs/
    /// regions.md): read here, then, in a global table, again at its home
    /// when that is another region (strongly consistent: the home's state
    /// decides), or in the other regions when it has not replicated here
    /// yet. `None`: no such order.
    pub async fn order_at_home(
        &self,
        id: &domain::ids::OrderId,
    ) -> Result<Option<(domain::model::Order, Store)>, ApiError> {
        let key = keyschema::keys::order(id)?;
        self.homed::<domain::model::Order, _>(&key, |o| o.home.clone(), true).await
    }

    /// An item (read here, else in the other regions) and the store of the
    /// home it names; `again`: read again there if it was read elsewhere.
    async fn homed<T: ReadAs<E>, E: Entity>(
        &self,
        key: &keyschema::EntityKey<E>,
        home_of: impl Fn(&T) -> Option<String>,
        again: bool,
    ) -> Result<Option<(T, Store)>, ApiError> {
        let mut read = self.store.get::<T, E>(key).await?.map(|t| (t, self.store.clone()));
        if read.is_none() {
            for there in self.store.elsewhere() {
                if let Some(t) = there.get_consistent::<T, E>(key).await? {
                    read = Some((t, there));
                    break;
                }
            }
        }
        let Some((item, read_at)) = read else { return Ok(None) };
        let home = self.store.at(home_of(&item).as_deref())?;
        if !again || home.region() == read_at.region() || home.region() == self.store.region() {
            return Ok(Some((item, home)));
        }
        Ok(home.get_consistent::<T, E>(key).await?.map(|t| (t, home)))
    }

    /// The store of user `id`'s home (where what they sell lives, and their
    /// idempotency keys: docs/regions.md): in a global table their `home`,
    /// read from this replica (else at the primary; none: the primary); in
    /// one region this store, without a read.
    pub async fn caller_home(&self, id: &domain::ids::UserId) -> Result<Store, ApiError> {
        if !self.store.is_global() {
            return Ok(self.store.clone());
        }
        let home = self.signed_up(id).await?.and_then(|u| u.home);
        Ok(self.store.at(home.as_deref())?)
    }

    /// Whether user `id` has signed up (`Some`: their user item), read here,
    /// and in a global table read again at the primary (their home) if
    /// this replica has not got it yet: a sign-up in one region is followed
    /// at once by a listing or an order in another (docs/regions.md).
    pub async fn signed_up(&self, id: &domain::ids::UserId) -> Result<Option<domain::model::User>, ApiError> {
        let key = keyschema::keys::user(id)?;
        match self.store.get::<domain::model::User, _>(&key).await? {
            Some(user) => Ok(Some(user)),
            None if self.store.is_global() && !self.store.is_home(None) => {
                Ok(self.store.at_primary()?.get_consistent(&key).await?)
            }
            None => Ok(None),
        }
    }

    /// `GetItem` of an entity that must exist: 404 `<what> does not exist` otherwise.
    pub async fn get_or_404<T: keyschema::ReadAs<E>, E: keyschema::Entity>(
        &self,
        key: &keyschema::EntityKey<E>,
        what: impl FnOnce() -> String,
    ) -> Result<T, ApiError> {
        match self.store.get::<T, E>(key).await? {
            Some(found) => Ok(found),
            None => Err(ApiError::not_found(format!("{} does not exist", what()))),
        }
    }

    /// One page of a query and the cursor of the next. The cursor is bound
    /// to the query, so it cannot page through another one.
    pub async fn page<T: ReadAs<E>, E: Entity>(
        &self,
        query: &EntityQuery<E>,
        page: &PageParams,
    ) -> Result<(Vec<T>, Option<String>), ApiError> {
        let scope = query.fingerprint();
        let start = page.cursor.as_deref().map(|c| self.cursors.open::<StartKey>(&scope, c)).transpose()?;
        let result = self.store.query::<T, E>(query, page.limit, start).await?;
        Ok((result.items, result.next.map(|k| self.cursors.seal(&scope, &k))))
    }

    /// Answers one page of a query as `{"items", "nextCursor"}`.
    pub async fn list<T: ReadAs<E> + Serialize, E: Entity>(
        &self,
        query: &EntityQuery<E>,
        page: &PageParams,
    ) -> Result<Response, ApiError> {
        let (items, next_cursor) = self.page::<T, E>(query, page).await?;
        Response::ok(&ListBody { items, next_cursor })
    }

    /// [`Deps::list`] of items read as `T` and answered as `A` (an entity
    /// without its storage bookkeeping).
    pub async fn list_as<T: ReadAs<E>, E: Entity, A: From<T> + Serialize>(
        &self,
        query: &EntityQuery<E>,
        page: &PageParams,
    ) -> Result<Response, ApiError> {
        let (items, next_cursor) = self.page::<T, E>(query, page).await?;
        Response::ok(&ListBody { items: items.into_iter().map(A::from).collect::<Vec<A>>(), next_cursor })
    }
}

/// Logs the request line (request id, route, status, latency, DynamoDB
/// requests and capacity; a 5xx with its internal cause) and records the
/// route's metrics, then flushes them as one EMF document.
pub fn log_request(
    context: &lambda_runtime::Context,
    route: &str,
    outcome: &Result<Response, ApiError>,
    measured: &telemetry::Measured,
) {
    let (status, error) = match outcome {
        Ok(response) => (response.status, None),
        Err(e) => (e.status, Some((e.code, e.internal.as_deref().unwrap_or(&e.message)))),
    };
    telemetry::request(&context.request_id, route, status, measured, error);
    telemetry::xray::send_spans(context.xray_trace_id.as_deref(), &measured.ops);
    telemetry::flush(&context.request_id);
}

/// Declares a function's routes: generates `ROUTES` (the route keys) and an
/// async `handler` for `lambda_runtime::service_fn` that dispatches on the
/// event's route key.
///
/// ```ignore
/// api::routes! {
///     app: Deps;
///     "GET /brands" => list_brands,
/// }
/// ```
#[macro_export]
macro_rules! routes {
    ($app:ident : $App:ty; $($route:literal => $handler:path),+ $(,)?) => {
        /// The route keys this function serves, as declared in template.yaml.
        pub const ROUTES: &[&str] = &[$($route),+];

        /// Dispatches a request to its route's handler.
        pub async fn dispatch($app: &$App, req: $crate::Request) -> Result<$crate::Response, $crate::ApiError> {
            match req.route_key() {
                $($route => $handler($app, req).await,)+
                other => Err($crate::ApiError::not_found(format!("no route `{other}`"))),
            }
        }

        /// The Lambda handler: an API Gateway HTTP API (v2) event in, a response out.
        pub async fn handler(
            $app: &$App,
            event: $crate::lambda_runtime::LambdaEvent<$crate::aws_lambda_events::apigw::ApiGatewayV2httpRequest>,
        ) -> Result<$crate::aws_lambda_events::apigw::ApiGatewayV2httpResponse, std::convert::Infallible> {
            let req = $crate::Request::from(event.payload);
            // The route key as logged and as a metric dimension: one of
            // ours, never whatever a direct invocation made up.
            let route = if ROUTES.contains(&req.route_key()) { req.route_key() } else { "unmatched" }.to_owned();
            let work = $crate::store::budget::within(event.context.deadline, dispatch($app, req));
            let (outcome, measured) = $crate::telemetry::measure(Box::pin(work)).await;
            $crate::log_request(&event.context, &route, &outcome, &measured);
            Ok($crate::to_event(outcome))
        }
    };
}

/// `NEAR_SPLITTING`: dense cells (`domain::geo::partition::DENSE`),
/// comma-separated.
fn splitting(list: &str) -> Result<Vec<String>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|cell| !cell.is_empty())
        .map(|cell| match domain::geo::partition::DENSE.contains(&cell) {
            true => Ok(cell.to_owned()),
            false => Err(format!("NEAR_SPLITTING: `{cell}` is not a dense cell (domain::geo::partition::DENSE)")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn near_splitting_takes_dense_cells_only() {
        assert_eq!(super::splitting(""), Ok(vec![]));
        assert_eq!(super::splitting(" u09w , u09t"), Ok(vec!["u09w".to_owned(), "u09t".to_owned()]));
        assert!(super::splitting("u09t,u4pr").is_err_and(|e| e.contains("u4pr")));
    }
}
