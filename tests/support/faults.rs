//! Fault injection on the real client: an SDK interceptor that, for planned
//! requests, either lets DynamoDB apply the request and loses its answer
//! (so the SDK retries a write that already committed), or keeps the
//! request from being applied and answers as a throttling or failing
//! DynamoDB would. Nothing is faked beyond the one answer it replaces.

use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::config::interceptors::{
    BeforeDeserializationInterceptorContextMut, BeforeTransmitInterceptorContextMut,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::config_bag::{Storable, StoreReplace};

/// What goes wrong with one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Applied by DynamoDB, but the answer is lost (a 500 arrives instead).
    AnswerLost,
    /// Not applied: `ThrottlingException` (400).
    Throttled,
    /// Not applied: `InternalServerError` (500).
    ServerError,
    /// Not applied: the connection is refused (nothing listens there).
    Unreachable,
    /// Not applied: the connection is accepted and never answered, so the
    /// client's operation timeout (5 s) ends the call.
    TimedOut,
    /// Applied, but the connection is cut while the answer is read (the
    /// body arrives truncated).
    CutAfterApply,
    /// Not applied: `AccessDeniedException` (400), which the SDK does not
    /// retry: a function whose role lost a permission in a deploy.
    AccessDenied,
    /// Not applied: a transaction cancelled because another one held one
    /// of its items (`TransactionCanceledException`, every reason
    /// `TransactionConflict`), as DynamoDB answers two transactions on one
    /// item in flight together (DynamoDB Local serializes them instead).
    Conflict,
    /// Applied as sent, after a pause: sent through the delaying proxy
    /// given to [`Faults::delay_through`] (`crate::delaying_proxy`), so that
    /// another task's writes land between this request and the one before.
    Delayed,
}

/// The pause to give the delaying proxy of [`Fault::Delayed`].
pub const DELAY: std::time::Duration = std::time::Duration::from_millis(800);

impl Fault {
    /// Every fault.
    pub const ALL: [Fault; 6] = [
        Fault::Throttled,
        Fault::ServerError,
        Fault::Unreachable,
        Fault::TimedOut,
        Fault::AnswerLost,
        Fault::CutAfterApply,
    ];

    /// Whether DynamoDB applied the request.
    pub fn applied(self) -> bool {
        matches!(self, Fault::AnswerLost | Fault::CutAfterApply | Fault::Delayed)
    }

    fn answer(self) -> Option<(u16, &'static str)> {
        match self {
            Fault::Throttled => Some((400, "ThrottlingException")),
            Fault::AnswerLost | Fault::ServerError => Some((500, "InternalServerError")),
            Fault::AccessDenied => Some((400, "AccessDeniedException")),
            Fault::Conflict => Some((400, "TransactionCanceledException")),
            Fault::Unreachable | Fault::TimedOut | Fault::CutAfterApply | Fault::Delayed => None,
        }
    }
}

#[derive(Debug)]
struct Planned {
    operation: String,
    fault: Fault,
    times: u32,
}

/// The fault chosen for the current attempt (kept in the operation's config bag).
#[derive(Clone, Copy, Debug)]
struct ThisAttempt(Option<Fault>);

impl Storable for ThisAttempt {
    type Storer = StoreReplace<Self>;
}

/// A loopback listener that accepts connections and never answers (each
/// connection is held open), started once per test process.
fn black_hole() -> std::net::SocketAddr {
    static ADDR: std::sync::OnceLock<std::net::SocketAddr> = std::sync::OnceLock::new();
    *ADDR.get_or_init(|| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for conn in listener.incoming().flatten() {
                held.push(conn);
            }
        });
        addr
    })
}

/// Planned faults, shared with the client it is installed on.
#[derive(Clone, Debug, Default)]
pub struct Faults(Arc<Mutex<Vec<Planned>>>, Arc<Mutex<Option<String>>>);

impl Faults {
    /// The next `times` attempts of `operation` (such as `TransactWriteItems`) meet `fault`.
    pub fn inject(&self, operation: &str, fault: Fault, times: u32) {
        self.0.lock().unwrap().push(Planned { operation: operation.to_owned(), fault, times });
    }

    /// Where [`Fault::Delayed`] requests go: a delaying proxy's URL.
    pub fn delay_through(&self, url: &str) {
        *self.1.lock().unwrap() = Some(url.to_owned());
    }

    /// Faults planned but not yet met.
    pub fn pending(&self) -> u32 {
        self.0.lock().unwrap().iter().map(|p| p.times).sum()
    }

    /// Drops every planned fault.
    pub fn clear(&self) {
        self.0.lock().unwrap().clear();
    }

    fn take(&self, operation: &str) -> Option<Fault> {
        let mut plan = self.0.lock().unwrap();
        let planned = plan.iter_mut().find(|p| p.operation == operation && p.times > 0)?;
        planned.times -= 1;
        Some(planned.fault)
    }
}

impl Intercept for Faults {
    fn name(&self) -> &'static str {
        "Faults"
    }

    fn modify_before_transmit(
        &self,
        ctx: &mut BeforeTransmitInterceptorContextMut<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let operation = store::operation_name(cfg);
        let fault = self.take(&operation);
        if fault == Some(Fault::Delayed) {
            let via = self.1.lock().unwrap().clone().ok_or("Fault::Delayed needs Faults::delay_through")?;
            ctx.request_mut().set_uri(format!("{via}/"))?;
            cfg.interceptor_state().store_put(ThisAttempt(None));
            return Ok(());
        }
        cfg.interceptor_state().store_put(ThisAttempt(fault));
        let request = ctx.request_mut();
        match fault {
            Some(Fault::Throttled | Fault::ServerError | Fault::AccessDenied | Fault::Conflict) => {
                // Not applied: DynamoDB gets a harmless read instead (of
                // one table name: a shared DynamoDB Local holds many).
                request.headers_mut().insert("x-amz-target", "DynamoDB_20120810.ListTables");
                request.headers_mut().insert("content-length", "11");
                *request.body_mut() = SdkBody::from(r#"{"Limit":1}"#);
            }
            // Port 1 on loopback: connection refused.
            Some(Fault::Unreachable) => request.set_uri("http://127.0.0.1:1/")?,
            Some(Fault::TimedOut) => request.set_uri(format!("http://{}/", black_hole()))?,
            _ => {}
        }
        Ok(())
    }

    fn modify_before_deserialization(
        &self,
        ctx: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(ThisAttempt(Some(fault))) = cfg.load::<ThisAttempt>().copied() else { return Ok(()) };
        let response = ctx.response_mut();
        response.headers_mut().remove("content-length");
        response.headers_mut().remove("x-amz-crc32");
        let body = match fault.answer() {
            Some((status, code)) if fault == Fault::Conflict => {
                *response.status_mut() = status.try_into()?;
                let reasons = (0..10).map(|_| r#"{"Code":"TransactionConflict"}"#).collect::<Vec<_>>().join(",");
                format!(
                    r#"{{"__type":"com.amazonaws.dynamodb.v20120810#{code}","message":"injected: conflict","CancellationReasons":[{reasons}]}}"#
                )
            }
            Some((status, code)) => {
                *response.status_mut() = status.try_into()?;
                format!(r#"{{"__type":"com.amazonaws.dynamodb.v20120810#{code}","message":"injected: {fault:?}"}}"#)
            }
            // The answer breaks off after its first bytes.
            None => r#"{"Attri"#.to_owned(),
        };
        *response.body_mut() = SdkBody::from(body);
        Ok(())
    }
}
