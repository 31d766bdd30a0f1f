#!/usr/bin/env python3
"""Cold start, invocation latency and peak memory of Lambda binaries.

Plays the Lambda Runtime API on loopback and runs each binary as Lambda
would. Binaries are interleaved in one run, so their ratios are comparable
on a noisy machine; absolute numbers are not the point.

  init     process start -> first GET /invocation/next, in the AWS
           configuration (no DYNAMODB_ENDPOINT: credential chain, TLS setup)
  first    the first invocation of a fresh process (DynamoDB Local)
  warm     median invocation after warm-up (DynamoDB Local), and p90
  rss      peak resident memory (VmHWM) after the warm invocations

Usage: bench/coldstart.py NAME=BINARY:EVENT_FILE ... [--cold N] [--warm N]
Needs DYNAMODB_ENDPOINT of a DynamoDB Local holding the demo data
(./dev up prints it) and TABLE_NAME (default marketplace).
"""

import argparse
import http.server
import json
import os
import queue
import socket
import statistics
import subprocess
import threading
import time

PREFIX = "/2018-06-01/runtime"


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
                self.send_header("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000")
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

        class Server(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # killed processes drop their connections; that is expected

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def invoke(self, body, n):
        request_id = f"req-{n}"
        self.events.put((request_id, body))
        got_id, kind, seconds, answer = self.answers.get(timeout=30)
        if got_id != request_id or kind != "response":
            raise RuntimeError(f"{kind}: {answer[:300]!r}")
        status = json.loads(answer).get("statusCode", 200)
        if status >= 400:
            raise RuntimeError(f"status {status}: {answer[:300]!r}")
        return seconds


def env_for(api, aws):
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
        env["DYNAMODB_ENDPOINT"] = os.environ["DYNAMODB_ENDPOINT"]
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


def cold(api, binary, event, aws):
    """Returns (init seconds, first invocation seconds or None)."""
    drain(api.first_next)
    start = time.perf_counter()
    proc = subprocess.Popen([binary], env=env_for(api, aws), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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


def warm(api, binary, event, n):
    proc = subprocess.Popen([binary], env=env_for(api, False), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for i in range(20):
            api.invoke(event, i)
        times = [api.invoke(event, 100 + i) for i in range(n)]
        return times, peak_rss_kb(proc.pid)
    finally:
        proc.kill()
        proc.wait()
        api.events.put((None, ""))
        time.sleep(0.05)
        drain(api.events)


def ms(seconds):
    return f"{seconds * 1000:.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="+", help="NAME=BINARY:EVENT_FILE")
    parser.add_argument("--cold", type=int, default=20, help="cold starts per binary")
    parser.add_argument("--warm", type=int, default=200, help="warm invocations per binary")
    args = parser.parse_args()
    targets = []
    for t in args.targets:
        name, rest = t.split("=", 1)
        binary, event_file = rest.rsplit(":", 1)
        with open(event_file) as f:
            targets.append((name, os.path.abspath(binary), f.read()))

    api = RuntimeApi()
    inits = {n: [] for n, _, _ in targets}
    firsts = {n: [] for n, _, _ in targets}
    for _ in range(args.cold):
        for name, binary, event in targets:  # interleaved
            init, _ = cold(api, binary, event, aws=True)
            inits[name].append(init)
            _, first = cold(api, binary, event, aws=False)
            firsts[name].append(first)
    rows = []
    for name, binary, event in targets:
        times, rss = warm(api, binary, event, args.warm)
        times.sort()
        rows.append((name, statistics.median(inits[name]), statistics.median(firsts[name]),
                     statistics.median(times), times[int(len(times) * 0.9)], rss, os.path.getsize(binary)))
    base_init = rows[0][1]
    print(f"{'binary':<12} {'init ms':>8} {'x ' + rows[0][0]:>10} {'first ms':>9} {'warm ms':>8} {'p90 ms':>7} {'rss MB':>7} {'size MB':>8}")
    for name, init, first, med, p90, rss, size in rows:
        print(f"{name:<12} {ms(init):>8} {init / base_init:>10.2f} {ms(first):>9} {ms(med):>8} {ms(p90):>7} "
              f"{rss / 1024:>7.1f} {size / 1e6:>8.2f}")
    print(f"({args.cold} cold starts and {args.warm} warm invocations each, medians; interleaved in one run)")


if __name__ == "__main__":
    main()
