//! `local-stack`: run the whole API locally, or mint a dev token.
//!
//! ```text
//! local-stack                      serve on 127.0.0.1:3000 (PORT to change)
//! local-stack serve [--limits F [--hold MS] | --regions 2]
//!                                  the same, with DynamoDB's partition limits x F and its
//!                                  transaction conflicts simulated (`limits`; transactions
//!                                  holding their items MS longer), counts at GET /_limits;
//!                                  or two regions of a global table (`regions`), B on PORT+1
//! local-stack token <sub> [--admin] [--ttl SECONDS]
//! local-stack explore [patterns | table | "<pattern>" name=value ... [--limit N] [--cursor JSON]] [--aws]
//! local-stack seed                 create TABLE_NAME at DYNAMODB_ENDPOINT with the demo data
//! local-stack reconcile [--dry-run | --check] [--fresh] [--segments N] [--rcu N] [--wcu N]
//! local-stack redrive [FILE]        re-deliver what the stream poller (or Lambda) gave up on
//! local-stack expire                cancel the orders pending longer than the timeout
//! ```
//!
//! The jobs work on `TABLE_NAME` at `DYNAMODB_ENDPOINT` (AWS when unset).

use std::sync::Arc;

use local_stack::dynamodb_local::DynamoDbLocal;
use local_stack::server::Gateway;
use local_stack::{demo, functions, jwt, template::Template};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        None => serve(&[]).await,
        Some("serve") => serve(&args[1..]).await,
        Some("token") => token(&args[1..]),
        Some("explore") => local_stack::explore::run(&args[1..]).await,
        Some("seed") => seed().await,
        Some("reconcile") => local_stack::jobs::reconcile(&args[1..]).await,
        Some("redrive") => local_stack::jobs::redrive(&args[1..]).await,
        Some("expire") => local_stack::jobs::expire().await,
        Some(other) => Err(format!(
            "unknown command `{other}`; use `serve`, `token`, `explore`, `seed`, `reconcile`, `redrive` or `expire`"
        )),
    };
    if let Err(e) = result {
        eprintln!("local-stack: {e}");
        std::process::exit(1);
    }
}

/// Creates `TABLE_NAME` at `DYNAMODB_ENDPOINT` (if absent) and loads the
/// demo data into it: a fresh table for a run of the sample events.
async fn seed() -> Result<(), String> {
    let store::Endpoint::Url(endpoint) = store::Endpoint::from_env() else {
        return Err("seed needs DYNAMODB_ENDPOINT (a local endpoint)".into());
    };
    let table = std::env::var(store::TABLE_VAR).map_err(|_| "seed needs TABLE_NAME".to_owned())?;
    let deps = local_stack::deps(&endpoint, &table, None).await?;
    let loaded = demo::load(&deps.store).await.map_err(|e| format!("demo data: {e}"))?;
    println!("table {table}: {loaded} demo items");
    Ok(())
}

fn token(args: &[String]) -> Result<(), String> {
    let sub = args
        .first()
        .filter(|s| !s.starts_with("--"))
        .ok_or("usage: local-stack token <sub> [--admin] [--ttl SECONDS]")?;
    let admin = args.iter().any(|a| a == "--admin");
    let ttl = match args.iter().position(|a| a == "--ttl") {
        Some(i) => args.get(i + 1).and_then(|s| s.parse().ok()).ok_or("--ttl needs a number of seconds")?,
        None => 3600 * 12,
    };
    println!("{}", jwt::mint(&jwt::secret(), sub, admin, ttl));
    Ok(())
}

async fn serve(args: &[String]) -> Result<(), String> {
    let asked = local_stack::serve_args::ServeArgs::parse(args)?;
    let limits_factor = asked.limits;
    let started = std::time::Instant::now();
    telemetry::init_logs();
    // Before any other task runs: it sets AWS_XRAY_DAEMON_ADDRESS.
    let daemon = local_stack::xray::start().await?;
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(3000);
    let table = std::env::var(store::TABLE_VAR).unwrap_or_else(|_| local_stack::DEFAULT_TABLE.to_owned());
    // Swagger UI for /docs, on first use; without it /docs says how to get it.
    let docs = tokio::task::spawn_blocking(local_stack::docs_ui::install);
    let dynamo = tokio::task::spawn_blocking(DynamoDbLocal::start)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("DynamoDB Local: {e}"))?;
    // With --limits, everything reaches DynamoDB Local through the simulation.
    let (endpoint, limits) = match limits_factor {
        Some(factor) => {
            let settings = local_stack::limits::Settings {
                factor,
                latency: std::time::Duration::from_millis(20),
                hold: std::time::Duration::from_millis(asked.hold_ms),
            };
            let (url, limits) = local_stack::limits::Limits::start(&dynamo.endpoint, settings).await?;
            (url, Some(limits))
        }
        None => (dynamo.endpoint.clone(), None),
    };
    let deps = local_stack::deps(&endpoint, &table, None).await?;
    // The demo data is there before the traffic: loaded with the simulation paused.
    limits.iter().for_each(|l| l.pause(true));
    let loaded = demo::load(&deps.store).await.map_err(|e| format!("demo data: {e}"))?;
    limits.iter().for_each(|l| l.pause(false));
    let template = Template::project()?;
    // With --regions 2: region B beside, both writing each item at its home.
    let (deps, second) = match asked.regions {
        2 => {
            let delay = std::time::Duration::from_millis(200);
            let (name, deps_a, deps_b) = local_stack::regions::start_second(&endpoint, &deps, delay).await?;
            (deps_a, Some((name, deps_b)))
        }
        _ => (deps, None),
    };
    let mut gateway = Gateway::new(template.routes(), functions::http_functions(&deps), jwt::secret())?;
    gateway.limits = limits.clone();
    let failures = local_stack::stream::failures_file();
    let poller = local_stack::stream::StreamPoller::new(deps.store.clone(), &endpoint).await?;
    tokio::spawn(poller.with_failures_file(failures.clone()).run(std::time::Duration::from_millis(250)));
    let timeout = maintenance::expire::timeout_from_env()?;
    let every = std::time::Duration::from_secs(2);
    tokio::spawn(local_stack::jobs::sweeper(deps.store.clone(), timeout, every));
    if let Some((_, deps_b)) = &second {
        tokio::spawn(local_stack::jobs::sweeper(deps_b.store.clone(), timeout, every));
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| format!("port {port}: {e}"))?;
    // Region B on the next port (both bound before anything is said).
    let second = match second {
        Some((name, deps_b)) => {
            let port_b = port.checked_add(1).ok_or("PORT + 1 is not a port")?;
            let listener_b = tokio::net::TcpListener::bind(("127.0.0.1", port_b))
                .await
                .map_err(|e| format!("port {port_b} (region B): {e}"))?;
            let gateway_b = Gateway::new(template.routes(), functions::http_functions(&deps_b), jwt::secret())?;
            Some((name, port_b, listener_b, gateway_b))
        }
        None => None,
    };
    match docs.await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => eprintln!("Swagger UI for /docs: {e}"),
        Err(e) => eprintln!("Swagger UI for /docs: {e}"),
    }
    println!("DynamoDB: {} (table {table}, {loaded} demo items; stream processor polling)", dynamo.endpoint);
    println!(
        "Jobs:     pending orders expire after {} s (swept every {} s); batches given up on go to {}",
        timeout.as_secs(),
        every.as_secs(),
        failures.display()
    );
    if let Some(factor) = limits_factor {
        println!(
            "Limits:   partitions at {:.0} RCU/s and {:.0} WCU/s (DynamoDB's x {factor}), transaction conflicts, 20 ms \
             per request: {endpoint}; counts at GET /_limits",
            3000.0 * factor,
            1000.0 * factor
        );
    }
    println!("Traces:   each request's DynamoDB calls as `span` lines (X-Ray stand-in on udp {daemon})");
    let region_a = deps.store.client().config().region().map_or_else(String::new, |r| r.to_string());
    if let Some((name, port_b, ..)) = &second {
        println!(
            "Regions:  A = {region_a} on port {port}, B = {name} on port {port_b}: one DynamoDB Local ({}), a \
             database each (DynamoDB Local keeps one per region), replicated both ways after 200 ms, a stream \
             processor each, every item written at its home (docs/regions.md); demo data loaded in A",
            dynamo.endpoint
        );
    }
    println!("API:      http://127.0.0.1:{port} (ready in {:.1} s)", started.elapsed().as_secs_f64());
    println!("Docs:     http://127.0.0.1:{port}/docs (Authorize with a token below or ./dev token <sub>)");
    println!("Admin token: {}", jwt::mint(&jwt::secret(), "admin", true, 3600 * 12));
    println!("User token:  {}", jwt::mint(&jwt::secret(), "alice", false, 3600 * 12));
    if let Some((_, port_b, listener_b, gateway_b)) = second {
        println!("API B:    http://127.0.0.1:{port_b} (the same tokens)");
        tokio::spawn(async move {
            if let Err(e) = Arc::new(gateway_b).serve(listener_b).await {
                eprintln!("region B: {e}");
            }
        });
    }
    tokio::select! {
        served = Arc::new(gateway).serve(listener) => served.map_err(|e| e.to_string()),
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}
