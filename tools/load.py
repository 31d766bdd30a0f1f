#!/usr/bin/env python3
"""Load with invariants against the local stack (./dev load).

Many buyers order catalog products and marketplace listings at once for a
fixed time; some cancel. At the end it checks, through the API only:
  - stock + units ordered (not cancelled) = initial stock, for every product;
  - no listing is in two live orders, and a listing is sold iff it is in one;
  - every placed order reads back, and the admin's status index lists each
    placed order exactly once, under its current status.
It prints requests/s, p50/p99 latency and each invariant. Loopback only,
bounded in time and in requests; standard library only.

Usage: load.py BASE_URL [--seconds N] [--buyers N] [--max-requests N]
"""

import argparse
import base64
import hashlib
import hmac
import json
import random
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request

SECRET = "local-dev-secret"


def token(sub, admin=False):
    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    now = int(time.time())
    claims = {"sub": sub, "iat": now, "exp": now + 3600, "iss": "load"}
    if admin:
        claims["cognito:groups"] = ["admin"]
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps(claims).encode())
    sig = hmac.new(SECRET.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(sig)}"


class Api:
    def __init__(self, base):
        assert base.startswith("http://127.") or base.startswith("http://localhost"), "loopback only"
        self.base = base.rstrip("/")
        self.lock = threading.Lock()
        self.latencies = []
        self.statuses = {}

    def call(self, method, path, who=None, body=None, headers=None):
        req = urllib.request.Request(self.base + path, method=method)
        if who:
            req.add_header("authorization", "Bearer " + who)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        data = json.dumps(body).encode() if body is not None else None
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(req, data=data, timeout=30) as resp:
                status, text = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read()
        elapsed = time.perf_counter() - started
        with self.lock:
            self.latencies.append(elapsed)
            self.statuses[status] = self.statuses.get(status, 0) + 1
        return status, (json.loads(text) if text else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--buyers", type=int, default=16)
    ap.add_argument("--max-requests", type=int, default=20000)
    args = ap.parse_args()
    api = Api(args.base)
    admin, seller = token("load-admin", admin=True), token("alice")
    rnd = random.Random(42)

    # Setup: products with known stock, listings by alice.
    products = {}
    for i in range(5):
        status, p = api.call("POST", "/products", admin, {
            "name": f"Load product {i}", "brandId": "acme", "categoryId": "pottery",
            "price": 10 + i, "stockLevel": 40})
        assert status == 201, (status, p)
        products[p["productId"]] = 40
    listings = []
    for i in range(30):
        status, l = api.call("POST", "/listings", seller, {"title": f"Load listing {i}", "price": 5, "categoryId": "books"})
        assert status == 201, (status, l)
        listings.append(l["listingId"])
    setup_requests = len(api.latencies)

    placed = {}  # orderId -> (buyer, kind, what, qty)
    placed_lock = threading.Lock()
    deadline = time.time() + args.seconds
    budget = [args.max_requests]

    def buyer(n):
        me = f"load-buyer-{n}"
        tok = token(me)
        r = random.Random(n)
        mine = []
        k = 0
        while time.time() < deadline:
            with placed_lock:
                if budget[0] <= 0:
                    return
                budget[0] -= 1
            k += 1
            key = f"{me}-{k}"
            roll = r.random()
            if roll < 0.15 and mine:
                order = mine.pop(r.randrange(len(mine)))
                api.call("PATCH", f"/orders/{order}", tok, {"status": "cancelled"})
                continue
            if roll < 0.55:
                body = {"listingId": r.choice(listings)}
            else:
                pid = r.choice(list(products))
                body = {"items": [{"productId": pid, "qty": r.randint(1, 3)}]}
            status, o = api.call("POST", "/orders", tok, body, {"Idempotency-Key": key})
            if status == 201:
                with placed_lock:
                    placed[o["orderId"]] = o
                mine.append(o["orderId"])

    threads = [threading.Thread(target=buyer, args=(n,)) for n in range(args.buyers)]
    started = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - started
    load_latencies = api.latencies[setup_requests:]
    load_statuses = dict(api.statuses)

    # Invariants, through the API.
    failures = []
    orders = {}
    for oid in placed:
        status, o = api.call("GET", f"/orders/{oid}", admin)
        if status != 200:
            failures.append(f"order {oid} does not read back: {status}")
        else:
            orders[oid] = o
    live = [o for o in orders.values() if o["status"] != "cancelled"]
    for pid, initial in products.items():
        status, p = api.call("GET", f"/products/{pid}")
        ordered = sum(l["qty"] for o in live for l in o["lines"] if l["itemId"] == pid)
        if p["stockLevel"] + ordered != initial:
            failures.append(f"product {pid}: stock {p['stockLevel']} + ordered {ordered} != {initial}")
    for lid in listings:
        holders = [o for o in live if o.get("listingId") == lid]
        status, l = api.call("GET", f"/listings/{lid}")
        if len(holders) > 1:
            failures.append(f"listing {lid} sold {len(holders)} times")
        if (l["status"] == "sold") != (len(holders) == 1):
            failures.append(f"listing {lid} is {l['status']} with {len(holders)} live orders")
    seen = {}
    cursor = None
    while True:
        q = "/orders?limit=100" + (f"&cursor={cursor}" if cursor else "")
        status, page = api.call("GET", q, admin)
        assert status == 200, (status, page)
        for o in page["items"]:
            seen.setdefault(o["orderId"], []).append(o["status"])
        cursor = page["nextCursor"]
        if not cursor:
            break
    for oid, o in orders.items():
        if seen.get(oid) != [o["status"]]:
            failures.append(f"order {oid} in the status index as {seen.get(oid)}, stored {o['status']}")

    lat = sorted(load_latencies)
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else 0
    print(f"requests: {len(lat)} in {elapsed:.1f} s = {len(lat) / elapsed:.0f} requests/s "
          f"({args.buyers} buyers); p50 {p(0.50):.1f} ms, p99 {p(0.99):.1f} ms, mean {statistics.mean(lat) * 1000:.1f} ms")
    print(f"statuses: {dict(sorted(load_statuses.items()))}")
    print(f"orders placed: {len(placed)} ({len(placed) - len(live)} cancelled); "
          f"listings sold: {sum(1 for o in live if o.get('listingId'))} of {len(listings)}")
    checks = [
        ("stock + ordered = initial, every product", not any("product" in f for f in failures)),
        ("no listing sold twice; sold iff in one live order", not any("listing" in f for f in failures)),
        ("every placed order reads back and is in the status index exactly once",
         not any("order" in f and "listing" not in f and "product" not in f for f in failures)),
        ("no 5xx", not any(s >= 500 for s in load_statuses)),
    ]
    for name, ok in checks:
        print(f"invariant: {name}: {'ok' if ok else 'FAILED'}")
    for f in failures[:20]:
        print("  " + f)
    sys.exit(0 if all(ok for _, ok in checks) else 1)


if __name__ == "__main__":
    main()
