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

--hot: the capacity model's mix instead (tools/capacity/mix.json, its rates
and its skew: the top category, the mega-seller, the viral listing, the hot
product with its stock shared as the mix says, the top brand), paced to
--rate requests/s; run it against `./dev up --limits F [--hold MS]`, which
simulates DynamoDB's partition limits x F and its transaction conflicts (at
F = 0.001, 10 requests/s stand for 10,000: 100x the mix), each transaction
holding its items MS more. Beside the invariants above: the viral listing's favoriteCount once the
stream drains, every 409 and 503 a conflict or throttling caused, and the
simulation's own counts (GET /_limits). Kinds it does not drive (a price
change, near me) are counted; the reviews (tools/load_reviews.py) rate a
seller and a category of the run's own, written as the mega-seller's and
the top category's would be, whose ratings are checked exactly too.

--focus (with --hot): every request of the skew's dimensions goes to its
hot entity, so that this machine's rate reaches the hot items as hard as it
can; --hold-ms MS (what ./dev up's --hold was): the run then prints, for the
hot product's stock shares and the viral listing's count parts, the share
of each second each was held here (transactions/s on it x (20 ms + MS))
against the capacity model's at 1000x, and the hold that would match it;
--weight KIND=W multiplies a kind's rate (to hold an item as long as 1000x
would where this machine's rate of that kind falls short: the rating
parts), with --reviewers (at most 99) enough for the reviews it then writes.

Usage: load.py BASE_URL [--seconds N] [--buyers N] [--max-requests N] [--hot [--rate R] [--focus] [--hold-ms MS]
                                                                      [--weight KIND=W] [--reviewers N]]
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

from load_reviews import MOST as MOST_REVIEWS
from load_reviews import Reviews

SECRET = "local-dev-secret"
conflicts_seen = []  # 409s a conflict caused ("changed concurrently")
unavailable_seen = []  # 5xx answers: which request, how long it took, why
MIX = __import__("os").path.join(__import__("os").path.dirname(__file__), "capacity", "mix.json")
# An aggregate's parts (derived::aggregates::AggregateKind::parts): a
# listing's favorite count, a user's rating, a category's rating.
LISTING_FAVORITE_PARTS = 128
USER_RATING_PARTS = 16
CATEGORY_RATING_PARTS = 32
# What the local simulation adds to every request it holds (tools/local-stack limits).
REQUEST_SECONDS = 0.020


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
        answer = json.loads(text) if text else None
        with self.lock:
            self.latencies.append(elapsed)
            self.statuses[status] = self.statuses.get(status, 0) + 1
            message = str(((answer or {}).get("error") or {}).get("message", "")) if isinstance(answer, dict) else ""
            if status == 409 and "concurrently" in message:
                conflicts_seen.append(f"{method} {path}: {message}")
            if status >= 500:
                unavailable_seen.append(f"{status} {method} {path.split('?')[0]} after {elapsed * 1000:.0f} ms: {message}")
        return status, answer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--buyers", type=int, default=16)
    ap.add_argument("--max-requests", type=int, default=20000)
    ap.add_argument("--hot", action="store_true")
    ap.add_argument("--rate", type=float, default=0, help="requests/s in all (--hot; 0: as fast as they go)")
    ap.add_argument("--focus", action="store_true", help="--hot: every request of a dimension on its hot entity")
    ap.add_argument("--hold-ms", type=float, default=0, help="the stack's --hold, for the calibration")
    ap.add_argument("--weight", action="append", default=[], metavar="KIND=W",
                    help="--hot: the mix's rate of KIND times W (to hold a hot item as 1000x would)")
    ap.add_argument("--reviewers", type=int, default=0, help="--hot: reviewers with a delivered order (default: --buyers)")
    args = ap.parse_args()
    api = Api(args.base)
    admin, seller = token("load-admin", admin=True), token("alice")
    rnd = random.Random(42)
    limits = args.base.rstrip("/") + "/_limits"

    def simulation(action):  # pause or resume the limits simulation, if on
        try:
            urllib.request.urlopen(urllib.request.Request(f"{limits}/{action}", method="POST"), timeout=5).read()
        except urllib.error.URLError:
            pass

    simulation("pause")  # the setup fills the table before the traffic

    # Setup: products with known stock, listings by alice.
    products = {}
    for i in range(5):
        status, p = api.call("POST", "/products", admin, {
            "name": f"Load product {i}", "brandId": "acme", "categoryId": "pottery",
            "price": 10 + i, "stockLevel": 40})
        assert status == 201, (status, p)
        products[p["productId"]] = 40
    hot_product = None
    if args.hot:
        status, p = api.call("POST", "/products", admin, {
            "name": "Hot product", "brandId": "acme", "categoryId": "pottery", "price": 9, "stockLevel": 100000,
            # As the capacity model's mix creates it (hotProductStockShards).
            "stockShards": json.load(open(MIX)).get("hotProductStockShards", 1)})
        assert status == 201, (status, p)
        hot_product = p["productId"]
        products[hot_product] = 100000
    for n in range(args.buyers):
        me = f"load-buyer-{n}"
        status, _ = api.call("POST", "/users", token(me), {"name": f"Buyer {n}", "email": f"{me}@example.com"})
        assert status in (201, 409), status
    cold_categories = ["pottery", "electronics"]
    if args.hot:
        # Cold entities as many as the model's draws spread over: 40
        # categories; listings of many sellers, alice (the mega-seller) 5%.
        for i in range(40):
            status, _ = api.call("POST", "/categories", admin, {"id": f"cat-{i}", "name": f"Category {i}"})
            assert status in (201, 409), status
            cold_categories.append(f"cat-{i}")
    listings = []
    for i in range(120 if args.hot else 30):
        by = seller if not args.hot or i % 20 == 0 else token(f"load-buyer-{i % args.buyers}")
        category = "books" if not args.hot or i % 5 == 0 else rnd.choice(cold_categories)
        status, l = api.call("POST", "/listings", by, {"title": f"Load listing {i}", "price": 5, "categoryId": category})
        assert status == 201, (status, l)
        listings.append(l["listingId"])
    # The mix's reviews: reviewers with delivered orders of the mega-seller.
    reviews = Reviews(api, token, min(args.reviewers or args.buyers, MOST_REVIEWS)) if args.hot else None
    viral = listings[0]
    favorites = {}  # buyer -> whether the viral listing is a favorite now
    created = []
    setup_requests = len(api.latencies)

    placed = {}  # orderId -> (buyer, kind, what, qty)
    placed_lock = threading.Lock()
    deadline = time.time() + args.seconds
    budget = [args.max_requests]

    def place_order(tok, body, key, mine):  # places an order; remembers it if placed
        status, o = api.call("POST", "/orders", tok, body, {"Idempotency-Key": key})
        if status == 201:
            with placed_lock:
                placed[o["orderId"]] = o
            mine.append(o["orderId"])

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
            if args.hot:
                hot_step(me, tok, r, key, mine)
                if args.rate:
                    time.sleep(max(0.0, next_at[n] - time.time()))
                    next_at[n] += args.buyers / args.rate
                continue
            if roll < 0.15 and mine:
                order = mine.pop(r.randrange(len(mine)))
                api.call("PATCH", f"/orders/{order}", tok, {"status": "cancelled"})
                continue
            if roll < 0.55:
                body = {"listingId": r.choice(listings)}
            else:
                pid = r.choice(list(products))
                body = {"items": [{"productId": pid, "qty": r.randint(1, 3)}]}
            place_order(tok, body, key, mine)

    # --hot: the capacity model's mix (tools/capacity/mix.json): each
    # request kind in proportion to its rate, the hot entity of its
    # dimension in its share of them (the top category, the mega-seller, the
    # viral listing, the hot product, the top brand), a cold one otherwise.
    mix = json.load(open(MIX)) if args.hot else None
    assert args.hot or not args.weight, "--weight: with --hot only"
    weights = {k: float(w) for k, w in (x.split("=", 1) for x in args.weight)}
    unknown = set(weights) - set((mix or {}).get("requestsPerSecond", {}))
    assert not unknown, f"--weight: no such kind in the mix: {unknown}"
    assert all(w >= 0 for w in weights.values()), "--weight: at least 0"
    kinds = [(k, rate * weights.get(k, 1.0)) for k, rate in mix["requestsPerSecond"].items()] if mix else []
    assert not mix or sum(w for _, w in kinds) > 0, "--weight: some kind must have a rate"
    share = dict((mix or {}).get("hotShare", {}))
    if args.focus:
        share = {k: 1.0 for k in share}
    skipped = {}
    hot_writes = {"product": 0, "listing": 0}  # orders of the hot product, favorites of the viral listing

    def pick(r, dimension, hot, cold):
        return hot if r.random() < share.get(dimension, 0) else r.choice(cold)

    def hot_step(me, tok, r, key, mine):
        kind = r.choices([k for k, _ in kinds], weights=[w for _, w in kinds])[0]
        category = pick(r, "category", "books", cold_categories)
        listing = pick(r, "listing", viral, listings[1:])
        # The reads: a path each (the seller's listings with the caller's token).
        reads = {
            "browse category": lambda: f"/categories/{category}/listings?limit=20",
            "browse by price": lambda: f"/categories/{category}/listings?limit=20&sort=price",
            "get listing": lambda: f"/listings/{listing}",
            "seller listings": lambda: "/sellers/{}/listings/active".format(
                pick(r, "seller", "alice", [f"load-buyer-{n}" for n in range(args.buyers)])
            ),
            "get product": lambda: f"/products/{pick(r, 'product', hot_product, list(products))}",
            "products by category": lambda: f"/categories/{category}/products",
            "products by brand": lambda: f"/brands/{pick(r, 'brand', 'acme', ['globex', 'initech'])}/products",
            "list categories": lambda: "/categories",
            "list brands": lambda: "/brands",
        }
        if kind in reads:
            api.call("GET", reads[kind](), tok if kind == "seller listings" else None)
        elif kind == "create listing":
            who = seller if r.random() < share.get("seller", 0) else tok
            status, l = api.call("POST", "/listings", who, {"title": f"Hot {key}", "price": 7, "categoryId": category})
            if status == 201:
                with placed_lock:
                    created.append(l["listingId"])
        elif kind in ("add favorite", "remove favorite"):
            on = kind == "add favorite"
            status, _ = api.call("PUT" if on else "DELETE", f"/users/me/favorites/{listing}", tok)
            if status in (200, 201, 204) and listing == viral:
                with placed_lock:
                    favorites[me] = on
                    hot_writes["listing"] += 1
        elif kind == "place catalog order":
            pid = pick(r, "product", hot_product, list(products))
            if pid == hot_product:
                with placed_lock:
                    hot_writes["product"] += 1
            place_order(tok, {"items": [{"productId": pid, "qty": 1}]}, key, mine)
        elif kind == "place listing order":
            place_order(tok, {"listingId": r.choice(listings[1:])}, key, mine)
        elif kind == "write review" and reviews.step(r):
            pass
        elif kind in ("cancel order", "confirm order") and mine:
            order = mine.pop(r.randrange(len(mine)))
            api.call("PATCH", f"/orders/{order}", tok, {"status": "cancelled"})
        else:
            skipped[kind] = skipped.get(kind, 0) + 1

    simulation("resume")
    api.latencies, api.statuses = [], {}
    setup_requests = 0
    next_at = [time.time()] * args.buyers
    crashed = []  # a buyer that died fails the run (its invariants would hold vacuously)

    def guarded(n):
        try:
            buyer(n)
        except Exception as e:  # noqa: BLE001 (reported below)
            crashed.append(f"buyer {n}: {e!r}")
            raise

    threads = [threading.Thread(target=guarded, args=(n,)) for n in range(args.buyers)]
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
    if args.hot:
        want = sum(1 for on in favorites.values() if on)
        count = None
        # The stream processor keeps the count: let it drain (its
        # transactions are held --hold longer each).
        for _ in range(int(60 + args.hold_ms / 1000 * 30)):
            status, l = api.call("GET", f"/listings/{viral}")
            count = l["favoriteCount"]
            if count == want:
                break
            time.sleep(0.5)
        if count != want:
            failures.append(f"listing {viral}: favoriteCount {count}, {want} users have it as a favorite")
        failures.extend(reviews.check(60 + args.hold_ms / 1000 * 30))
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
        ("every buyer ran to the end", not crashed),
    ]
    if args.hot:
        checks.append(("the viral listing's favoriteCount is its favorites", not any("favoriteCount" in f for f in failures)))
        checks.append(("the reviewed seller's and category's ratings are their reviews",
                       not any(f.startswith("rating of") for f in failures)))
        checks.append(("no 409 or 503 from a conflict or throttling", not conflicts_seen and 503 not in load_statuses))
        print(f"reviews written: {len(reviews.written)} of {len(reviews.reviewers)} reviewers "
              f"(of {reviews.seller}, in category {reviews.category})")
        print(f"listings created: {len(created)}; mix kinds not driven here (counted): {skipped}; 409s: {load_statuses.get(409, 0)} "
              f"(conflicts or throttling: {len(conflicts_seen)}), 503s: {load_statuses.get(503, 0)}")
        # How long each hot item was held here, against 1000x of the mix.
        rates = mix["requestsPerSecond"]
        model_share = mix.get("hotShare", {})
        tx = mix.get("transactionSeconds", 0.03)
        for what, n, per_1x, done in [
            ("hot product's stock shares", mix.get("hotProductStockShards", 1),
             rates.get("place catalog order", 0) * model_share.get("product", 0), hot_writes["product"]),
            ("viral listing's count parts", LISTING_FAVORITE_PARTS,
             (rates.get("add favorite", 0) + rates.get("remove favorite", 0)) * model_share.get("listing", 0),
             hot_writes["listing"]),
            ("reviewed seller's rating parts (the mega-seller's)", USER_RATING_PARTS,
             rates.get("write review", 0) * model_share.get("seller", 0), len(reviews.written)),
            ("reviewed category's rating parts (the top one's)", CATEGORY_RATING_PARTS,
             rates.get("write review", 0) * model_share.get("category", 0), len(reviews.written)),
        ]:
            local = done / elapsed / n
            held = local * (REQUEST_SECONDS + args.hold_ms / 1000)
            at_1000x = per_1x * 1000 / n * tx
            needed = (at_1000x / local - REQUEST_SECONDS) * 1000 if local else float("inf")
            print(f"calibration, {what}: at most {local:.3f} tx/s each here, held {held:.1%} of each second "
                  f"(1000x of the mix: {at_1000x:.1%}; a hold of {needed:.0f} ms would match it)")
        try:
            with urllib.request.urlopen(args.base.rstrip("/") + "/_limits", timeout=5) as resp:
                print(f"simulation (GET /_limits): {resp.read().decode()}")
        except urllib.error.URLError:
            print("simulation: off (start the stack with ./dev up --limits F)")
    for name, ok in checks:
        print(f"invariant: {name}: {'ok' if ok else 'FAILED'}")
    for c in crashed:
        print("  " + c)
    for u in unavailable_seen[:10]:
        print("  " + u)
    for f in failures[:20]:
        print("  " + f)
    sys.exit(0 if all(ok for _, ok in checks) else 1)


if __name__ == "__main__":
    main()
