#!/usr/bin/env bash
# Contract fuzzing: Schemathesis checks a running API against openapi.yaml.
#
#   tools/contract.sh BASE_URL     for example http://127.0.0.1:3000 (./dev up)
#
# Two runs, every check (--checks all) and every phase (examples, coverage,
# fuzzing, and the stateful phase, which follows openapi.yaml's links:
# product -> order -> order item, listing -> order): one as an admin (sub
# `ops`), one as the demo buyer `bob`. A fixed seed and a bounded number of
# examples per operation keep both runs reproducible; they run at once. Exits non-zero if either run reports any failure.
#
# The one check left out is unsupported_method: an undeclared method answers
# 404 as API Gateway does (the route key does not exist), not 405.
#
# Two kinds of value cannot be drawn from a schema, so a hook supplies them
# the way a correct client does (negative cases keep what was drawn):
#   - cursor: a positive case never invents one; a drawn cursor is replaced
#     by a real nextCursor of the same query (same path and filters), or
#     dropped when that query has a single page.
#   - Idempotency-Key: a key already sent with another body is replaced by a
#     fresh one (reusing it would rightly be a 422).
#   - references a schema cannot express: a new product or listing names a
#     brand and category that exist (the demo's acme / pottery; a missing one
#     is a 400 naming it), a date range has from <= to and a price range
#     minPrice <= maxPrice with sort=price (otherwise 400), and an order
#     names each product in one line only (JSON Schema's uniqueItems cannot
#     say "unique by productId").
#
# The runs write to the API they are given (they create brands, products,
# listings and orders and change the demo users): point it at a stack whose
# data may change. Tunables: CONTRACT_SEED, CONTRACT_EXAMPLES (per operation).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BASE_URL=${1:?usage: tools/contract.sh BASE_URL}
BASE_URL=${BASE_URL%/}
ST=${ST:-$ROOT/.tools/venv/bin/st}
SEED=${CONTRACT_SEED:-7}
EXAMPLES=${CONTRACT_EXAMPLES:-40}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# LOCAL_STACK: the local stack's binary when ./dev test has built it (no
# second build by `cargo run`); else ./dev, which runs it through cargo.
token() { if [ -n "${LOCAL_STACK:-}" ]; then "$LOCAL_STACK" token "$@"; else ./dev token "$@"; fi; }
admin_token=$(token ops --admin)
user_token=$(token bob)

cat >"$work/contract_hooks.py" <<'PY'
"""Schemathesis hooks for tools/contract.sh (see there)."""

import json
import os
import threading
import uuid

import requests
import schemathesis

BASE_URL = os.environ["CONTRACT_BASE_URL"]
TOKEN = os.environ["CONTRACT_TOKEN"]
PAGING = {"cursor", "limit"}

_lock = threading.Lock()
# cursor -> the query it was issued for (path and filters)
_issued: dict[str, tuple[str, frozenset]] = {}
# Idempotency-Key -> the body it was first sent with
_keys: dict[str, str] = {}


def _scope(path: str, query: dict | None) -> tuple[str, frozenset]:
    filters = {k: str(v) for k, v in (query or {}).items() if k not in PAGING}
    return path, frozenset(filters.items())


def _is_positive(case) -> bool:
    meta = case.meta
    return meta is not None and meta.generation.mode.is_positive


def _real_cursor(case) -> str | None:
    """The nextCursor of the first page of the case's own query, if any."""
    params = {k: v for k, v in case.query.items() if k not in PAGING}
    params["limit"] = 1
    try:
        r = requests.get(
            BASE_URL + case.formatted_path,
            params=params,
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=30,
        )
        cursor = r.json().get("nextCursor") if r.status_code == 200 else None
    except (requests.RequestException, ValueError, AttributeError):
        return None
    return cursor if isinstance(cursor, str) else None


@schemathesis.hook
def before_call(context, case, kwargs):
    if not _is_positive(case):
        return
    query = case.query
    if query and "cursor" in query:
        with _lock:
            issued_for = _issued.get(str(query["cursor"]))
        if issued_for != _scope(case.formatted_path, query):
            cursor = _real_cursor(case)
            if cursor is None:
                del query["cursor"]
            else:
                query["cursor"] = cursor
    body = case.body
    if case.method == "POST" and case.path in ("/products", "/listings") and isinstance(body, dict):
        if "brandId" in body:
            body["brandId"] = "acme"
        if "categoryId" in body:
            body["categoryId"] = "pottery"
    if case.method == "POST" and case.path == "/orders" and isinstance(body, dict):
        lines = body.get("items")
        if isinstance(lines, list):
            seen = set()
            unique = []
            for line in lines:
                product = line.get("productId") if isinstance(line, dict) else None
                if product not in seen:
                    unique.append(line)
                    seen.add(product)
            body["items"] = unique
    if query and "from" in query and "to" in query and str(query["from"]) > str(query["to"]):
        query["from"], query["to"] = query["to"], query["from"]
    if query and ("minPrice" in query or "maxPrice" in query):
        query["sort"] = "price"
        if "minPrice" in query and "maxPrice" in query and float(query["minPrice"]) > float(query["maxPrice"]):
            query["minPrice"], query["maxPrice"] = query["maxPrice"], query["minPrice"]
    headers = case.headers
    if headers is not None and "Idempotency-Key" in headers:
        body = json.dumps(case.body, sort_keys=True, default=str)
        with _lock:
            key = str(headers["Idempotency-Key"])
            if _keys.setdefault(key, body) != body:
                key = uuid.uuid4().hex
                headers["Idempotency-Key"] = key
                _keys[key] = body


@schemathesis.hook
def after_call(context, case, response):
    try:
        cursor = response.json().get("nextCursor")
    except (ValueError, AttributeError, TypeError):
        return
    if isinstance(cursor, str):
        with _lock:
            _issued[cursor] = _scope(case.formatted_path, case.query)
PY

failed=0
run() { # name token
  local name=$1 token=$2 rc=0
  echo "== contract ($name): schemathesis --checks all, seed $SEED, $EXAMPLES examples per operation"
  (cd "$work" && PYTHONPATH="$work" SCHEMATHESIS_HOOKS=contract_hooks \
    CONTRACT_BASE_URL="$BASE_URL" CONTRACT_TOKEN="$token" \
    "$ST" run "$ROOT/openapi.yaml" \
      --url "$BASE_URL" \
      -H "Authorization: Bearer $token" \
      --checks all \
      --exclude-checks unsupported_method \
      --phases examples,coverage,fuzzing,stateful \
      --max-examples "$EXAMPLES" \
      --seed "$SEED" \
      --workers 1 \
      --generation-database none \
      --no-color) >"$work/$name.log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    sed -n '/^=* FAILURES =*$/,$p' "$work/$name.log"
    [ -s "$work/$name.log" ] && grep -q "FAILURES" "$work/$name.log" || tail -40 "$work/$name.log"
    failed=1
  fi
  grep -E '^ *[0-9]+ generated' "$work/$name.log" | sed "s/^ */contract ($name): /" || true
  echo "contract ($name): $(grep -E '^=+ .* in [0-9.]+s =+$' "$work/$name.log" | tail -1 | tr -d '=' | xargs)"
  return "$rc"
}

# Both runs at once (each single-worker), each reporting into its own log.
run admin "$admin_token" >"$work/admin.out" 2>&1 &
admin_pid=$!
run user "$user_token" >"$work/user.out" 2>&1 &
user_pid=$!
wait "$admin_pid" || failed=1
wait "$user_pid" || failed=1
cat "$work/admin.out" "$work/user.out"
exit "$failed"
