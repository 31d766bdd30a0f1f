//! DynamoDB Local: AWS's emulator, from the jar inside the npm package
//! `amplify-dynamodb-simulator`, run on the machine's Java. Installed on
//! first use under `.tools/`; `DYNAMODB_ENDPOINT` points elsewhere instead.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// The npm package and version that carries the jar.
pub const PACKAGE: &str = "amplify-dynamodb-simulator@2.9.30";
/// Overrides where the emulator folder (with `DynamoDBLocal.jar`) is.
pub const DIR_VAR: &str = "DYNAMODB_LOCAL_DIR";

/// A running DynamoDB Local, or an endpoint given by the environment.
/// Dropping it (or ending the process) stops the emulator.
#[derive(Debug)]
pub struct DynamoDbLocal {
    /// `http://127.0.0.1:<port>` or the endpoint from the environment.
    pub endpoint: String,
    // The emulator runs under `sh`, which kills it when this pipe closes,
    // so it never outlives us, even if we are killed.
    _lifeline: Option<(Child, ChildStdin)>,
}

/// The workspace root (where `.tools/` lives).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap_or_else(|_| PathBuf::from("."))
}

/// The folder holding `DynamoDBLocal.jar`, installing it on first use.
pub fn install() -> io::Result<PathBuf> {
    if let Ok(dir) = std::env::var(DIR_VAR) {
        return Ok(PathBuf::from(dir));
    }
    let tools = workspace_root().join(".tools");
    let dir = tools.join("dynamodb-local/emulator");
    if dir.join("DynamoDBLocal.jar").exists() {
        return Ok(dir);
    }
    eprintln!("installing DynamoDB Local ({PACKAGE}) into {} ...", tools.display());
    std::fs::create_dir_all(&tools)?;
    let tarball = run_output(Command::new("npm").args(["pack", PACKAGE, "--silent"]).current_dir(&tools))?;
    let tarball = tools.join(tarball.trim());
    let target = tools.join("dynamodb-local");
    let _ = std::fs::remove_dir_all(&target);
    std::fs::create_dir_all(&target)?;
    run_output(Command::new("tar").arg("xzf").arg(&tarball).args(["--strip-components=1", "-C"]).arg(&target))?;
    std::fs::remove_file(&tarball)?;
    if dir.join("DynamoDBLocal.jar").exists() {
        Ok(dir)
    } else {
        Err(io::Error::other(format!("{PACKAGE} did not contain emulator/DynamoDBLocal.jar")))
    }
}

fn run_output(cmd: &mut Command) -> io::Result<String> {
    let out = cmd.stderr(Stdio::inherit()).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!("{cmd:?} failed: {}", out.status)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A port nobody listens on right now.
pub fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// DynamoDB Local's usual port: the one `events/sam-local-env.json` names,
/// so `sam local invoke --env-vars` reaches `./dev up`'s emulator.
pub const PREFERRED_PORT: u16 = 8000;

/// [`PREFERRED_PORT`] when nobody listens on it (on any address), else any free port.
pub fn preferred_port() -> io::Result<u16> {
    match TcpListener::bind(("0.0.0.0", PREFERRED_PORT)) {
        Ok(_) => Ok(PREFERRED_PORT),
        Err(_) => free_port(),
    }
}

/// The emulator's JVM: the first JIT tier only and the serial collector.
/// A test run or a laptop session is short, and with the JVM's defaults
/// over a third of the emulator's CPU went to compiling and collecting.
/// Measured on the tests (`cargo nextest`, 4 emulators, 2 cores): emulators' CPU 179 s ->
/// 113 s, the run 121 s -> 90 s. `./dev` starts its pool with the same.
pub const JVM_FLAGS: &str = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

impl DynamoDbLocal {
    /// `DYNAMODB_ENDPOINT` if set; else installs (first time) and starts an
    /// in-memory DynamoDB Local on [`preferred_port`] and waits until it answers.
    pub fn start() -> io::Result<Self> {
        if let store::Endpoint::Url(endpoint) = store::Endpoint::from_env() {
            return Ok(DynamoDbLocal { endpoint, _lifeline: None });
        }
        Self::spawn(preferred_port()?)
    }

    /// Starts DynamoDB Local on `port`, with [`JVM_FLAGS`].
    pub fn spawn(port: u16) -> io::Result<Self> {
        let dir = install()?;
        let java = format!(
            "java {JVM_FLAGS} -Djava.library.path=./DynamoDBLocal_lib -jar DynamoDBLocal.jar -inMemory -sharedDb -port {port} -disableTelemetry"
        );
        // `read` returns when our end of stdin closes (we exited or dropped it).
        let script = format!("{java} >/dev/null 2>&1 & pid=$!; trap 'kill $pid 2>/dev/null' EXIT; read _; exit 0");
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().ok_or_else(|| io::Error::other("no stdin pipe"))?;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if Instant::now() > deadline || child.try_wait()?.is_some() {
                return Err(io::Error::other("DynamoDB Local did not start (is Java 17 installed?)"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(DynamoDbLocal { endpoint: format!("http://127.0.0.1:{port}"), _lifeline: Some((child, stdin)) })
    }
}

impl Drop for DynamoDbLocal {
    fn drop(&mut self) {
        if let Some((mut child, stdin)) = self._lifeline.take() {
            drop(stdin);
            let _ = child.wait();
        }
    }
}
