//! The API reference at `/docs`: Swagger UI (the static files of the npm
//! package `swagger-ui-dist`, installed on first use under `.tools/docs-ui/`)
//! rendering `/openapi.yaml`, the repo's spec with its `servers` pointed at
//! this local stack, so "Try it out" calls the routes it serves. Neither is
//! an API route: they are answered before the template's routes are matched.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Response, StatusCode};

use crate::dynamodb_local::workspace_root;

/// The npm package and version whose static files render the docs.
pub const PACKAGE: &str = "swagger-ui-dist@5.35.0";

/// The `servers` the served spec declares: the origin it is served from.
const SAME_ORIGIN_SERVERS: &str = "servers:\n  - url: /\n    description: this local stack (./dev up)\n";

/// The folder holding Swagger UI's files.
pub fn dir() -> PathBuf {
    workspace_root().join(".tools/docs-ui")
}

/// Installs [`PACKAGE`] into [`dir`] unless its stamp names that version
/// already; returns the folder.
pub fn install() -> io::Result<PathBuf> {
    let dir = dir();
    let stamp = dir.join(".installed");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == PACKAGE) {
        return Ok(dir);
    }
    eprintln!("installing Swagger UI ({PACKAGE}) into {} ...", dir.display());
    let tools = workspace_root().join(".tools");
    std::fs::create_dir_all(&tools)?;
    let out = Command::new("npm")
        .args(["pack", PACKAGE, "--silent"])
        .current_dir(&tools)
        .stderr(Stdio::inherit())
        .output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!("npm pack {PACKAGE} failed: {}", out.status)));
    }
    let tarball = tools.join(String::from_utf8_lossy(&out.stdout).trim());
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let status =
        Command::new("tar").arg("xzf").arg(&tarball).args(["--strip-components=1", "-C"]).arg(&dir).status()?;
    std::fs::remove_file(&tarball)?;
    if !status.success() || !dir.join("swagger-ui-bundle.js").exists() {
        return Err(io::Error::other(format!("{PACKAGE} did not unpack swagger-ui-bundle.js")));
    }
    std::fs::write(&stamp, PACKAGE)?;
    Ok(dir)
}

/// The answer to `GET /docs`, `/docs/<file>` and `/openapi.yaml`; `None`
/// for any other request, which goes on to the API's routes.
pub fn answer(method: &Method, path: &str) -> Option<Response<Full<Bytes>>> {
    if method != Method::GET && method != Method::HEAD {
        return None;
    }
    match path {
        "/openapi.yaml" => Some(spec(&workspace_root().join("openapi.yaml"))),
        "/docs" | "/docs/" | "/docs/index.html" => Some(index(&dir())),
        _ => path.strip_prefix("/docs/").map(|name| file(&dir(), name)),
    }
}

fn index(dir: &Path) -> Response<Full<Bytes>> {
    if !dir.join(".installed").exists() {
        let page = format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"UTF-8\"><title>API reference</title></head>\
             <body><h1>API reference</h1><p>The page needs Swagger UI ({PACKAGE}), which <code>./dev up</code> \
             installs under <code>.tools/docs-ui/</code> on first use: run <code>./dev up</code>. The spec itself \
             is at <a href=\"/openapi.yaml\">/openapi.yaml</a>.</p></body></html>"
        );
        return respond(StatusCode::SERVICE_UNAVAILABLE, "text/html; charset=utf-8", page.into_bytes());
    }
    respond(StatusCode::OK, "text/html; charset=utf-8", INDEX.as_bytes().to_vec())
}

/// Swagger UI's page: the spec from this origin, the "Authorize" dialog for
/// the bearer JWT (`./dev token <sub>`), "Try it out" on every operation.
const INDEX: &str = r##"<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>Marketplace API reference</title>
    <link rel="stylesheet" type="text/css" href="/docs/swagger-ui.css">
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script>
      window.ui = SwaggerUIBundle({
        url: "/openapi.yaml",
        dom_id: "#swagger-ui",
        deepLinking: true,
        displayRequestDuration: true,
        persistAuthorization: true,
        presets: [SwaggerUIBundle.presets.apis],
        layout: "BaseLayout",
      });
    </script>
  </body>
</html>
"##;

fn spec(path: &Path) -> Response<Full<Bytes>> {
    match std::fs::read_to_string(path) {
        Ok(text) => respond(StatusCode::OK, "application/yaml; charset=utf-8", same_origin(&text).into_bytes()),
        Err(e) => respond(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            format!("{}: {e}\n", path.display()).into_bytes(),
        ),
    }
}

/// The spec with its top-level `servers` replaced by the origin it is
/// served from, so "Try it out" calls this stack whatever its port; the
/// rest of the text is kept as it is.
pub fn same_origin(spec: &str) -> String {
    let mut out = String::with_capacity(spec.len());
    let mut in_servers = false;
    for line in spec.split_inclusive('\n') {
        // A block ends at the next top-level key (not indented, not a
        // comment, not a sequence item at column 0).
        if in_servers && line.starts_with(|c: char| !c.is_whitespace() && c != '#' && c != '-') {
            in_servers = false;
        }
        if line.starts_with("servers:") {
            in_servers = true;
            out.push_str(SAME_ORIGIN_SERVERS);
        } else if !in_servers {
            out.push_str(line);
        }
    }
    out
}

fn file(dir: &Path, name: &str) -> Response<Full<Bytes>> {
    // One plain file name of the package: no folders, no dot files.
    if name.is_empty() || name.starts_with('.') || name.contains(['/', '\\']) {
        return not_found();
    }
    match std::fs::read(dir.join(name)) {
        Ok(bytes) => respond(StatusCode::OK, content_type(name), bytes),
        Err(_) => not_found(),
    }
}

fn not_found() -> Response<Full<Bytes>> {
    respond(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", b"Not Found\n".to_vec())
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        Some("map" | "json") => "application/json",
        _ => "application/octet-stream",
    }
}

fn respond(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_point_at_the_serving_origin_and_the_rest_is_kept() {
        let spec = "openapi: 3.1.0\nservers:\n  - url: http://127.0.0.1:3000\n    description: x\n\n# c\nsecurity:\n  - jwt: []\npaths: {}\n";
        assert_eq!(
            same_origin(spec),
            format!("openapi: 3.1.0\n{SAME_ORIGIN_SERVERS}security:\n  - jwt: []\npaths: {{}}\n")
        );
        let compact = "servers:\n- url: http://a\ninfo: {}\n";
        assert_eq!(same_origin(compact), format!("{SAME_ORIGIN_SERVERS}info: {{}}\n"));
        assert_eq!(same_origin("openapi: 3.1.0\n"), "openapi: 3.1.0\n");
    }

    #[test]
    fn the_repo_spec_keeps_every_path() {
        let text = std::fs::read_to_string(workspace_root().join("openapi.yaml")).unwrap();
        let served = same_origin(&text);
        assert!(served.contains(SAME_ORIGIN_SERVERS));
        assert!(!served.contains("127.0.0.1:3000"));
        let lines = |t: &str| t.lines().filter(|l| l.starts_with("  /")).count();
        assert_eq!(lines(&served), lines(&text));
    }

    #[test]
    fn only_the_docs_paths_are_answered_and_files_stay_in_the_folder() {
        assert!(answer(&Method::GET, "/brands").is_none());
        assert!(answer(&Method::POST, "/docs").is_none());
        assert!(answer(&Method::GET, "/docs").is_some());
        let dir = std::env::temp_dir();
        assert_eq!(file(&dir, "../etc/passwd").status(), StatusCode::NOT_FOUND);
        assert_eq!(file(&dir, ".installed").status(), StatusCode::NOT_FOUND);
        assert_eq!(index(Path::new("/nonexistent")).status(), StatusCode::SERVICE_UNAVAILABLE);
    }
}
