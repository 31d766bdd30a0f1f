"""The reviews of `./dev load --hot` (tools/load.py): the mix's `write review`.

Setup (the simulation paused): a seller and a category of this run's own
(so that their ratings hold this run's reviews alone), and reviewers, fresh
users, each buying one of the seller's listings in the category, which the
seller confirms, ships and delivers. During the load a `write review`
request is a reviewer's review of that order (a rating from 1 to 5, once);
every answer but 201, a conflict's 409 and a 5xx (the load's own checks)
stops the run. After it, once the stream has drained: the seller's and the
category's `reviewCount` are the reviews written, and their `rating` their
mean. At most 99 reviewers, so that one star counted wrong moves the mean
by more than the two decimals it is answered with: the check is exact.
"""

import threading
import time

MOST = 99  # reviews a run may write (see above)


class Reviews:
    def __init__(self, api, token, count):
        self.api, self.token = api, token
        assert 0 < count <= MOST, f"reviewers: 1 to {MOST}, so that the rating check is exact"
        run = int(time.time())
        self.seller, self.category = f"load-seller-{run}", f"load-{run}"
        self.reviewers = [f"load-reviewer-{run}-{n}" for n in range(count)]
        self.orders = {}  # reviewer -> order id, delivered, not reviewed yet
        self.written = []  # ratings of the reviews written (201)
        self.lock = threading.Lock()
        admin, seller = token("load-admin", admin=True), token(self.seller)
        status, answer = api.call("POST", "/categories", admin, {"id": self.category, "name": "Load reviews"})
        assert status == 201, (status, answer)
        status, answer = api.call("POST", "/users", seller, {"name": self.seller, "email": f"{self.seller}@example.com"})
        assert status == 201, (status, answer)
        for who in self.reviewers:
            status, _ = api.call("POST", "/users", token(who), {"name": who, "email": f"{who}@example.com"})
            assert status == 201, (status, who)
            body = {"title": f"Reviewed {who}", "price": 3, "categoryId": self.category}
            status, l = api.call("POST", "/listings", seller, body)
            assert status == 201, (status, l)
            status, o = api.call("POST", "/orders", token(who), {"listingId": l["listingId"]}, {"Idempotency-Key": f"{who}-order"})
            assert status == 201, (status, o)
            for step in ("confirmed", "shipped", "delivered"):
                status, answer = api.call("PATCH", f"/orders/{o['orderId']}", seller, {"status": step})
                assert status == 200, (status, step, answer)
            self.orders[who] = o["orderId"]

    def ratings(self):
        """The seller's and the category's (rating, reviewCount); None while either does not answer 200."""
        status, user = self.api.call("GET", f"/users/{self.seller}", self.token("load-admin", admin=True))
        status2, category = self.api.call("GET", f"/categories/{self.category}")
        if status != 200 or status2 != 200:
            return None
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
        message = str(((answer or {}).get("error") or {}).get("message", "")) if isinstance(answer, dict) else ""
        if status == 201:
            with self.lock:
                self.written.append(rating)
        elif not (status >= 500 or (status == 409 and "concurrently" in message)):
            raise AssertionError(f"review of {order}: {status} {answer}")
        return True

    def check(self, drain_seconds):
        """The failures: each rating must be its reviews, once the stream drains."""
        if not self.written:
            return ["rating of the seller: no review written (nothing checked)"]
        count, total = len(self.written), sum(self.written)
        now = None
        for _ in range(int(drain_seconds * 2)):
            now = self.ratings()
            if now and all(n == count for _, n in now.values()):
                break
            time.sleep(0.5)
        if now is None:
            return ["rating of the seller: the seller or the category did not answer"]
        failures = []
        for kind, (rating, n) in now.items():
            if n != count:
                failures.append(f"rating of the {kind}: reviewCount {n}, want {count}")
            elif rating is None or abs(rating - total / count) > 0.005 + 1e-9:
                failures.append(f"rating of the {kind}: {rating}, want {total / count:.4f}")
        return failures
