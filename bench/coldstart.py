#!/usr/bin/env python3
"""Cold start, invocation latency, peak memory and zip size of Lambda functions.

Plays the Lambda Runtime API on loopback and runs each target (a Rust binary
or a custom-runtime bootstrap script such as bench/node/bootstrap) as Lambda
would. Targets are interleaved in one run, so their ratios are comparable on
a noisy machine; absolute numbers are not the point.

  init     process start -> first GET /invocation/next, in the AWS
           configuration (no DYNAMODB_ENDPOINT: credential chain, TLS setup)
  first    the first invocation of a fresh process (DynamoDB Local)
  floor    what any function that reads one item must spend from process
           start to its first answer: the reference's (hello's) init + first
           invocation + one raw GetItem round trip (a fresh TCP connection
           and one GetItem request to DynamoDB Local, sent by this script
           without any SDK; measured interleaved with the cold starts)
  own      the same floor with the function's own DynamoDB requests in
           place of the GetItem: the requests its first invocation sent,
           recorded once through a forwarding proxy and replayed by this
           script on a fresh connection (what DynamoDB Local takes to answer
           them, which no code of the function can cut)
  warm     median invocation after warm-up (DynamoDB Local), and p90; the
           ratio is against the baseline's (bare SDK, one GetItem)
  rss      peak resident memory (VmHWM) after the warm invocations
  zip      deployment zip (deflate level 9) of the binary as `bootstrap`, or
           of the script's whole folder (with node_modules) for a script

Usage: bench/coldstart.py NAME=BINARY:EVENT_FILE ... [--cold N] [--warm N]
         [--reference hello] [--baseline baseline] [--compare catalog=node]
Needs DYNAMODB_ENDPOINT of a DynamoDB Local holding the demo data
(./dev up prints it) and TABLE_NAME (default marketplace).
"""

import argparse
import http.client
import http.server
import io
import json
import os
import queue
import socket
import statistics
import subprocess
import threading
import time
import urllib.parse
import zipfile

PREFIX = "/2018-06-01/runtime"
TRACE_HEADER = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
# A stand-in X-Ray daemon: a UDP socket that receives spans and drops them.
# Targets named `*-untraced` run without its address (no spans sent).
XRAY_SINK = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
XRAY_SINK.bind(("127.0.0.1", 0))


def drain_spans():
    XRAY_SINK.setblocking(False)
    while True:
        try:
            XRAY_SINK.recv(65536)
        except BlockingIOError:
            return

# The demo product that events/catalog/get-product.json reads.
RAW_KEY = {"pk": {"S": "PRODUCT#01JF8Z5Q000000000000000001"}, "sk": {"S": "#METADATA"}}


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # killed processes drop their connections; that is expected


class RuntimeApi:
    """A minimal Lambda Runtime API: hands out queued events, collects answers."""

    def __init__(self):
        self.events = queue.Queue()
        self.answers = queue.Queue()
        self.first_next = queue.Queue()
        self.sent_at = {}
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Without these, Nagle's algorithm and delayed ACKs add ~40 ms per response.
            disable_nagle_algorithm = True
            wbufsize = 1 << 16

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path != PREFIX + "/invocation/next":
                    self.send_error(404)
                    return
                api.first_next.put(time.perf_counter())
                request_id, body = api.events.get()
                if request_id is None:  # the process was killed; drop the connection
                    self.close_connection = True
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Lambda-Runtime-Aws-Request-Id", request_id)
                self.send_header("Lambda-Runtime-Deadline-Ms", str(int(time.time() * 1000) + 30000))
                self.send_header("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:000000000000:function:bench")
                # Sampled, as with active tracing: a traced function sends its spans.
                self.send_header("Lambda-Runtime-Trace-Id", TRACE_HEADER)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                api.sent_at[request_id] = time.perf_counter()
                self.wfile.write(data)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                now = time.perf_counter()
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                parts = self.path[len(PREFIX):].split("/")
                if len(parts) >= 4 and parts[1] == "invocation":
                    request_id, kind = parts[2], parts[3]
                    api.answers.put((request_id, kind, now - api.sent_at.pop(request_id, now), body))
                else:
                    api.answers.put((None, "init-error", 0, body))

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def invoke(self, body, n):
        request_id = f"req-{n}"
        self.events.put((request_id, body))
        got_id, kind, seconds, answer = self.answers.get(timeout=30)
        if got_id != request_id or kind != "response":
            raise RuntimeError(f"{kind}: {answer[:300]!r}")
        out = json.loads(answer)
        if isinstance(out, dict):
            status = out.get("statusCode", 200)
            if status >= 400:
                raise RuntimeError(f"status {status}: {answer[:300]!r}")
            if out.get("batchItemFailures"):  # a stream batch: every record must succeed
                raise RuntimeError(f"batch item failures: {answer[:300]!r}")
        return seconds


def env_for(api, aws, endpoint=None, traced=True):
    env = {
        "PATH": os.environ["PATH"],
        "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{api.port}",
        "AWS_LAMBDA_FUNCTION_NAME": "bench",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/bench",
        "AWS_LAMBDA_LOG_STREAM_NAME": "bench",
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_SESSION_TOKEN": "local",
        "TABLE_NAME": os.environ.get("TABLE_NAME", "marketplace"),
        "CURSOR_SECRET": "bench-cursor-secret-0123456789abcdef",
    }
    if not aws:
        env["DYNAMODB_ENDPOINT"] = endpoint or os.environ["DYNAMODB_ENDPOINT"]
    if traced:
        env["AWS_XRAY_DAEMON_ADDRESS"] = "%s:%d" % XRAY_SINK.getsockname()
    return env


def drain(q):
    while not q.empty():
        q.get_nowait()


def peak_rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def cold(api, binary, event, aws, endpoint=None, traced=True):
    """Returns (init seconds, first invocation seconds or None)."""
    drain(api.first_next)
    drain_spans()
    start = time.perf_counter()
    env = env_for(api, aws, endpoint, traced)
    proc = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ready = api.first_next.get(timeout=30)
        first = None if aws else api.invoke(event, 0)
        return ready - start, first
    finally:
        proc.kill()
        proc.wait()
        api.events.put((None, ""))  # release a pending /next, if any
        time.sleep(0.05)
        drain(api.events)


def warm(api, binary, event, n, traced=True):
    proc = subprocess.Popen([binary], env=env_for(api, False, traced=traced), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for i in range(20):
            api.invoke(event, i)
        times = []
        for i in range(n):
            times.append(api.invoke(event, 100 + i))
            drain_spans()
        return times, peak_rss_kb(proc.pid)
    finally:
        proc.kill()
        proc.wait()
        api.events.put((None, ""))
        time.sleep(0.05)
        drain(api.events)


class RawGetItem:
    """One GetItem sent by hand (no SDK): the round trip any function pays."""

    def __init__(self, endpoint, table):
        url = urllib.parse.urlsplit(endpoint)
        self.host, self.port = url.hostname, url.port or 80
        self.body = json.dumps({"TableName": table, "Key": RAW_KEY}).encode()
        # DynamoDB Local reads the access key and region from the header; it
        # does not check the signature.
        self.headers = {
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810.GetItem",
            "X-Amz-Date": "20260101T000000Z",
            "Authorization": "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, "
            "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=" + "0" * 64,
        }

    def _request(self, conn):
        conn.request("POST", "/", body=self.body, headers=self.headers)
        resp = conn.getresponse()
        data = resp.read()
        if resp.status != 200 or b'"Item"' not in data:
            raise RuntimeError(f"raw GetItem: {resp.status} {data[:300]!r}")

    def fresh(self):
        """Seconds for connect + one GetItem + the whole answer."""
        start = time.perf_counter()
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        conn.connect()
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._request(conn)
        seconds = time.perf_counter() - start
        conn.close()
        return seconds

    def kept_alive(self, n):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        conn.connect()
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(20):
            self._request(conn)
        times = []
        for _ in range(n):
            start = time.perf_counter()
            self._request(conn)
            times.append(time.perf_counter() - start)
        conn.close()
        return times


class Recorder:
    """A forwarding proxy to DynamoDB Local that records the requests sent
    through it (the headers DynamoDB reads, and the body)."""

    KEEP = ("content-type", "x-amz-target", "x-amz-date", "authorization", "x-amz-security-token")

    def __init__(self, endpoint):
        url = urllib.parse.urlsplit(endpoint)
        upstream = (url.hostname, url.port or 80)
        self.requests = []
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = {k: v for k, v in self.headers.items() if k.lower() in Recorder.KEEP}
                recorder.requests.append((headers, body))
                conn = http.client.HTTPConnection(*upstream, timeout=10)
                conn.request("POST", self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self):
        taken, self.requests = self.requests, []
        return taken


class RawReplay:
    """A function's recorded requests sent again by hand, in order, on one
    fresh connection, as its first invocation sent them."""

    def __init__(self, endpoint, requests):
        url = urllib.parse.urlsplit(endpoint)
        self.host, self.port = url.hostname, url.port or 80
        self.requests = requests

    def operations(self):
        return [h.get("X-Amz-Target", h.get("x-amz-target", "?")).split(".")[-1] for h, _ in self.requests]

    def fresh(self):
        """Seconds for connect + every request + every whole answer."""
        start = time.perf_counter()
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        conn.connect()
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for headers, body in self.requests:
            conn.request("POST", "/", body=body, headers=headers)
            resp = conn.getresponse()
            resp.read()
        seconds = time.perf_counter() - start
        conn.close()
        return seconds


def zip_size(binary):
    """Bytes of the deployment zip: the binary as `bootstrap`, or a script's folder."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with open(binary, "rb") as f:
            script = f.read(2) == b"#!"
        if not script:
            z.write(binary, "bootstrap")
        else:
            root = os.path.dirname(binary)
            for folder, _, files in os.walk(root):
                for name in sorted(files):
                    path = os.path.join(folder, name)
                    z.write(path, os.path.relpath(path, root))
    return buf.tell()


def ms(seconds):
    return f"{seconds * 1000:.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="+", help="NAME=BINARY:EVENT_FILE")
    parser.add_argument("--cold", type=int, default=30, help="cold starts per target (each: one AWS-config init, one first invocation)")
    parser.add_argument("--warm", type=int, default=200, help="warm invocations per target")
    parser.add_argument("--reference", default="hello", help="the target init and the floor are measured against")
    parser.add_argument("--baseline", default="baseline", help="the target warm invocations are measured against")
    parser.add_argument("--compare", action="append", default=[], metavar="A=B", help="print A against B (cold start, warm, RSS)")
    args = parser.parse_args()
    targets = []
    for t in args.targets:
        name, rest = t.split("=", 1)
        binary, event_file = rest.rsplit(":", 1)
        with open(event_file) as f:
            targets.append((name, os.path.abspath(binary), f.read()))
    names = [n for n, _, _ in targets]
    for needed in [args.reference, args.baseline] + [n for c in args.compare for n in c.split("=", 1)]:
        if needed not in names:
            parser.error(f"no target named {needed!r}")

    api = RuntimeApi()
    endpoint = os.environ["DYNAMODB_ENDPOINT"]
    raw = RawGetItem(endpoint, os.environ.get("TABLE_NAME", "marketplace"))
    recorder = Recorder(endpoint)
    replays = {}
    for name, binary, event in targets:
        cold(api, binary, event, aws=False, endpoint=recorder.endpoint)
        replays[name] = RawReplay(endpoint, recorder.take())
    raw_fresh = []
    own_fresh = {n: [] for n in names}
    inits = {n: [] for n in names}
    firsts = {n: [] for n in names}
    for i in range(args.cold):
        for name, binary, event in targets:  # interleaved
            traced = not name.endswith("-untraced")
            init, _ = cold(api, binary, event, aws=True, traced=traced)
            inits[name].append(init)
            _, first = cold(api, binary, event, aws=False, traced=traced)
            firsts[name].append(first)
            # Whichever goes first after a cold start is the slower; take turns.
            if i % 2:
                raw_fresh.append(raw.fresh())
                own_fresh[name].append(replays[name].fresh())
            else:
                own_fresh[name].append(replays[name].fresh())
                raw_fresh.append(raw.fresh())
    raw_warm = raw.kept_alive(args.warm)

    rows = {}
    for name, binary, event in targets:
        times, rss = warm(api, binary, event, args.warm, traced=not name.endswith("-untraced"))
        times.sort()
        rows[name] = dict(init=statistics.median(inits[name]), first=statistics.median(firsts[name]),
                          warm=statistics.median(times), p90=times[int(len(times) * 0.9)], rss=rss,
                          zip=zip_size(binary))
        rows[name]["cold"] = rows[name]["init"] + rows[name]["first"]

    ref, base = rows[args.reference], rows[args.baseline]
    raw_ms = statistics.median(raw_fresh)
    floor = ref["init"] + ref["first"] + raw_ms
    print(f"floor = {args.reference} init {ms(ref['init'])} + {args.reference} first {ms(ref['first'])} "
          f"+ raw GetItem {ms(raw_ms)} (new connection; {ms(statistics.median(raw_warm))} kept alive) = {ms(floor)} ms")
    head = (f"{'function':<17} {'init ms':>8} {'x ' + args.reference:>8} {'first ms':>9} {'init+first':>10} "
            f"{'x floor':>8} {'x own':>6} {'warm ms':>8} {'x ' + args.baseline:>11} {'p90 ms':>7} {'rss MB':>7} "
            f"{'zip MB':>7}")
    print(head)
    print("-" * len(head))
    for name in names:
        r = rows[name]
        own = ref["init"] + ref["first"] + statistics.median(own_fresh[name])
        print(f"{name:<17} {ms(r['init']):>8} {r['init'] / ref['init']:>8.2f} {ms(r['first']):>9} {ms(r['cold']):>10} "
              f"{r['cold'] / floor:>8.2f} {r['cold'] / own:>6.2f} {ms(r['warm']):>8} {r['warm'] / base['warm']:>11.2f} "
              f"{ms(r['p90']):>7} {r['rss'] / 1024:>7.1f} {r['zip'] / 1e6:>7.2f}")
    print("own requests (replayed raw, fresh connection, median ms): " + "; ".join(
        f"{name} {'+'.join(replays[name].operations()) or 'none'} {ms(statistics.median(own_fresh[name]))}"
        for name in names))
    for pair in args.compare:
        a, b = pair.split("=", 1)
        ra, rb = rows[a], rows[b]
        print(f"{a} vs {b}: cold start (init+first) {ms(ra['cold'])} / {ms(rb['cold'])} ms = {ra['cold'] / rb['cold']:.3f}x, "
              f"warm {ms(ra['warm'])} / {ms(rb['warm'])} ms = {ra['warm'] / rb['warm']:.2f}x, "
              f"peak RSS {ra['rss'] / 1024:.1f} / {rb['rss'] / 1024:.1f} MB = {ra['rss'] / rb['rss']:.2f}x")
    print(f"({args.cold} cold starts (AWS-config init + first invocation) and {args.warm} warm invocations "
          f"per target, medians; interleaved in one run)")


if __name__ == "__main__":
    main()
