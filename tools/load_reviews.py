"""The reviews of `./dev load --hot` (tools/load.py): the mix's `write review`.

Setup (the simulation paused): each reviewer of this run (fresh users, so
that no earlier review of the same pair and week keeps theirs from
counting) buys one listing of the mega-seller in the top category, and the
seller confirms, ships and delivers it. During the load a `write review`
request is a reviewer's review of that order (a rating from 1 to 5, once:
a second is a 409 the API owes, not a conflict). After it, once the stream
has drained: the mega-seller's `reviewCount` and `rating` and the top
category's are what they were plus exactly the reviews written (each the
first of its pair and week, so each counts), the means to the rounding of
the two decimals they are answered with.
"""

import threading
import time

SELLER = "alice"  # the mega-seller of the mix
CATEGORY = "books"  # the top category


class Reviews:
    def __init__(self, api, token, seller_token, count):
        self.api, self.token = api, token
        run = int(time.time())
        self.reviewers = [f"load-reviewer-{run}-{n}" for n in range(count)]
        self.orders = {}  # reviewer -> order id, delivered, not reviewed yet
        self.written = []  # ratings of the reviews written (201)
        self.lock = threading.Lock()
        self.before = {}
        for who in self.reviewers:
            status, _ = api.call("POST", "/users", token(who), {"name": who, "email": f"{who}@example.com"})
            assert status == 201, (status, who)
            status, l = api.call("POST", "/listings", seller_token, {"title": f"Reviewed {who}", "price": 3, "categoryId": CATEGORY})
            assert status == 201, (status, l)
            status, o = api.call("POST", "/orders", token(who), {"listingId": l["listingId"]}, {"Idempotency-Key": f"{who}-order"})
            assert status == 201, (status, o)
            for step in ("confirmed", "shipped", "delivered"):
                status, answer = api.call("PATCH", f"/orders/{o['orderId']}", seller_token, {"status": step})
                assert status == 200, (status, step, answer)
            self.orders[who] = o["orderId"]
        self.before = self.ratings()

    def ratings(self):
        """The mega-seller's and the top category's (rating, reviewCount)."""
        _, user = self.api.call("GET", f"/users/{SELLER}", self.token("load-admin", admin=True))
        _, category = self.api.call("GET", f"/categories/{CATEGORY}")
        return {"seller": (user["rating"], user["reviewCount"]), "category": (category["rating"], category["reviewCount"])}

    def step(self, r):
        """One `write review`: a reviewer not done yet reviews its order; False if none is left."""
        with self.lock:
            if not self.orders:
                return False
            who = r.choice(sorted(self.orders))
            order = self.orders.pop(who)
        rating = r.randint(1, 5)
        status, answer = self.api.call("POST", f"/orders/{order}/reviews", self.token(who), {"rating": rating, "body": "Fine."})
        if status == 201:
            with self.lock:
                self.written.append(rating)
        elif status != 409 and status < 500:  # a conflict's 409 and any 5xx are the caller's checks
            raise AssertionError(f"review of {order}: {status} {answer}")
        return True

    def check(self, drain_seconds):
        """The failures: each rating must be its reviews, once the stream drains."""
        failures = []
        for _ in range(int(drain_seconds * 2)):
            now = self.ratings()
            if all(self.expected(k)[1] == now[k][1] for k in now):
                break
            time.sleep(0.5)
        for kind, (rating, count) in now.items():
            want_rating, want_count = self.expected(kind)
            if count != want_count:
                failures.append(f"rating of the {kind}: reviewCount {count}, want {want_count}")
            elif want_rating is not None and (rating is None or abs(rating - want_rating) > self.tolerance(kind)):
                failures.append(f"rating of the {kind}: {rating}, want {want_rating:.3f}")
        return failures

    def expected(self, kind):
        rating, count = self.before[kind]
        total = count + len(self.written)
        if total == 0:
            return None, 0
        return ((rating or 0) * count + sum(self.written)) / total, total

    def tolerance(self, kind):
        """The answered means have two decimals: the one before, and the one now."""
        _, count = self.before[kind]
        total = count + len(self.written)
        return 0.005 * count / max(total, 1) + 0.005 + 1e-9
