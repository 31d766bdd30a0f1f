#!/usr/bin/env python3
"""Checks what the functions printed while ./dev test pushed events/ through
cargo lambda's Runtime API at one log level (the template's LogLevel, passed as
AWS_LAMBDA_LOG_LEVEL): every line a function wrote is a JSON object; each
invocation wrote an EMF document carrying its request id; at INFO and below
each API invocation also wrote one request line (request id, route, status,
latency, DynamoDB operations and capacity) and each stream batch one batch
line; nothing personal at any level: no email, bearer token, JWT or cursor,
and none of the texts the events carry (names, emails, titles, descriptions,
message and review bodies, the authorization header).

Usage: tools/check_logs.py FUNCTIONS_LOG API_INVOCATIONS STREAM_INVOCATIONS LEVEL [CURSOR ...]
FUNCTIONS_LOG holds what the functions wrote and nothing else: every line counts.
"""

import glob
import json
import os
import re
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.")
REQUEST_FIELDS = ["requestId", "route", "status", "latencyMs", "requests", "rcu", "wcu", "ops"]
BATCH_FIELDS = ["requestId", "records", "malformed", "writes", "failed", "requests", "rcu", "wcu"]
PERSONAL_FIELDS = {"name", "email", "title", "description", "body"}
VERBOSE = {"TRACE", "DEBUG", "INFO"}


def personal_texts(events_dir):
    """The personal texts the sample events carry: request bodies' names,
    emails, titles, descriptions and bodies; stream images' too; the
    authorization header."""
    texts = set()

    def walk(value, key=None):
        if isinstance(value, dict):
            if set(value) == {"S"} and key in PERSONAL_FIELDS:
                texts.add(value["S"])
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key in PERSONAL_FIELDS:
            texts.add(value)

    for path in glob.glob(os.path.join(events_dir, "*", "*.json")):
        with open(path, encoding="utf-8") as f:
            event = json.load(f)
        if isinstance(event.get("body"), str):
            try:
                walk(json.loads(event["body"]))
            except ValueError:
                pass
        walk(event.get("Records", []))
        auth = (event.get("headers") or {}).get("authorization")
        if auth:
            texts.add(auth)
            texts.add(auth.split()[-1])
    return sorted(t for t in texts if len(t) >= 3)


def main():
    path, api, stream, level = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].upper()
    secrets = [s for s in sys.argv[5:] if s]
    texts = personal_texts(os.path.join(os.path.dirname(__file__), "..", "events"))
    problems, requests, batches, emf = [], [], [], {}
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = [ANSI.sub("", l.rstrip("\n")) for l in f]
    for n, line in enumerate(lines, 1):
        if not line.strip():
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
        for text in texts:
            if text in line:
                problems.append(f"line {n} carries a text of an event ({text[:20]!r}): {line[:160]}")
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
    expected = (api, stream) if level in VERBOSE else (0, 0)
    if len(requests) != expected[0]:
        problems.append(f"{len(requests)} request lines for {api} API invocations at {level}")
    if len(batches) != expected[1]:
        problems.append(f"{len(batches)} batch lines for {stream} stream invocations at {level}")
    if len(emf) < api + stream:
        problems.append(f"EMF documents of {len(emf)} invocations for {api + stream}")
    for p in problems:
        print(p)
    print(f"function logs at {level}: {api + stream} invocations, {len(requests) + len(batches)} request/batch "
          f"lines, {sum(len(v) for v in emf.values())} EMF documents, {len(texts)} event texts looked for, "
          f"{len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
