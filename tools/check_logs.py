#!/usr/bin/env python3
"""Checks what the functions printed while ./dev test pushed events/ through
`cargo lambda watch`: every line a function wrote is a JSON object; each API
invocation wrote one request line (request id, route, status, latency,
DynamoDB operations and capacity) and an EMF document carrying its request
id and the route's metrics; each stream batch wrote one batch line and an
EMF document; nothing personal (no email, bearer token, JWT or cursor).

Usage: tools/check_logs.py WATCH_LOG API_INVOCATIONS STREAM_INVOCATIONS [CURSOR ...]
Lines cargo-lambda writes itself (` INFO ...`, ` WARN ...`) are skipped.
"""

import json
import re
import sys

CARGO_LAMBDA = re.compile(r"^\s*(TRACE|DEBUG|INFO|WARN|ERROR)\s")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.")
REQUEST_FIELDS = ["requestId", "route", "status", "latencyMs", "requests", "rcu", "wcu", "ops"]
BATCH_FIELDS = ["requestId", "records", "malformed", "writes", "failed", "requests", "rcu", "wcu"]


def main():
    path, api, stream = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    secrets = [s for s in sys.argv[4:] if s]
    problems, requests, batches, emf = [], [], [], {}
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = [ANSI.sub("", l.rstrip("\n")) for l in f]
    for n, line in enumerate(lines, 1):
        if not line.strip() or CARGO_LAMBDA.match(line):
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            problems.append(f"line {n} is not JSON: {line[:160]}")
            continue
        if not isinstance(doc, dict):
            problems.append(f"line {n} is not a JSON object")
            continue
        for pattern, what in ((EMAIL, "an email"), (JWT, "a JWT"), (re.compile("[Bb]earer "), "a bearer token")):
            if pattern.search(line):
                problems.append(f"line {n} carries {what}: {line[:160]}")
        for secret in secrets:
            if secret in line:
                problems.append(f"line {n} carries a cursor")
        if "_aws" in doc:
            metrics = doc["_aws"]["CloudWatchMetrics"][0]
            names = [m["Name"] for m in metrics["Metrics"]]
            missing = [name for name in names + metrics["Dimensions"][0] if name not in doc]
            if missing or not metrics.get("Namespace") or "Timestamp" not in doc["_aws"]:
                problems.append(f"line {n}: EMF document without {missing or 'namespace/timestamp'}")
            emf.setdefault(doc.get("requestId"), []).append(names)
        elif doc.get("message") in ("request", "request failed"):
            requests.append((n, doc))
        elif doc.get("message") == "batch":
            batches.append((n, doc))
    for kind, found, fields in (("request", requests, REQUEST_FIELDS), ("batch", batches, BATCH_FIELDS)):
        for n, doc in found:
            missing = [f for f in fields if f not in doc]
            if missing:
                problems.append(f"line {n}: {kind} line without {missing}")
            names = [name for docs in emf.get(doc.get("requestId"), []) for name in docs]
            wanted = ["Requests", "Latency", "ReadCapacity"] if kind == "request" else ["Records", "Writes"]
            if not all(w in names for w in wanted):
                problems.append(f"line {n}: no EMF document with {wanted} for request {doc.get('requestId')}")
    if len(requests) != api:
        problems.append(f"{len(requests)} request lines for {api} API invocations")
    if len(batches) != stream:
        problems.append(f"{len(batches)} batch lines for {stream} stream invocations")
    for p in problems:
        print(p)
    checked = len(requests) + len(batches)
    print(f"function logs: {checked} invocations, {sum(len(v) for v in emf.values())} EMF documents, "
          f"{len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
