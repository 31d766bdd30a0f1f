//! Pending orders expire (issue 19): the sweeper cancels orders pending
//! longer than the timeout exactly as a buyer's cancel does, once, and a
//! buyer's cancel, a seller's confirm and the sweeper racing on one order
//! end in one outcome.

use std::time::Duration;

use integration_tests::workload::id_of;
use integration_tests::{catalog, listings, move_order, new_listing, orders, req, sign_up_all, As, Reply, TestTable};
use maintenance::expire::{sweep, Sweep};
use serde_json::json;

const SHARDS: u16 = 10;
const P4: &str = "01JF8Z5Q000000000000000004"; // stock 300

fn place(by: &'static str, key: &str, body: serde_json::Value) -> integration_tests::Req {
    req("POST /orders").by(As::User(by)).header("Idempotency-Key", key).json(body)
}

fn buyer(i: usize) -> &'static str {
    Box::leak(format!("buyer-{i:02}").into_boxed_str())
}

async fn new_listings(t: &TestTable, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let r = listings(&t.deps, new_listing(&format!("Item {i}"))).await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        ids.push(id_of(&r.body, "listingId"));
    }
    ids
}

async fn stock(t: &TestTable) -> i64 {
    let r = catalog(&t.deps, req("GET /products/{productId}").path("productId", P4)).await;
    r.body["stockLevel"].as_i64().unwrap_or(-1)
}

async fn listing_status(t: &TestTable, id: &str) -> String {
    let r = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", id)).await;
    r.body["status"].as_str().unwrap_or_default().to_owned()
}

async fn order_status(t: &TestTable, id: &str) -> String {
    let r = orders(&t.deps, SHARDS, req("GET /orders/{orderId}").path("orderId", id).by(As::Admin)).await;
    r.body["status"].as_str().unwrap_or_default().to_owned()
}

fn add(total: &mut Sweep, s: &Sweep) {
    total.examined += s.examined;
    total.cancelled += s.cancelled;
    total.moved_on += s.moved_on;
    total.blocked += s.blocked;
    total.contended += s.contended;
}

/// 10 listing orders and 10 catalog orders stay pending; with a 3-second
/// timeout, two sweepers running side by side (as overlapping schedules
/// would) cancel each exactly once: listings active again, stock back. A
/// confirmed order is never touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_orders_expire_once_and_give_back_listings_and_stock() {
    let t = TestTable::with_demo_data().await;
    let buyers: Vec<&'static str> = (0..20).map(buyer).collect();
    sign_up_all(&t.deps, &buyers).await;
    let listing_ids = new_listings(&t, 11).await;
    let stock_before = stock(&t).await;
    let mut placed = Vec::new();
    for (i, by) in buyers.iter().enumerate() {
        let body = match listing_ids.get(i) {
            Some(listing) if i < 10 => json!({ "listingId": listing }),
            _ => json!({ "items": [{ "productId": P4, "qty": 1 + i % 3 }] }),
        };
        let r = orders(&t.deps, SHARDS, place(by, &format!("k{i}"), body)).await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        placed.push(id_of(&r.body, "orderId"));
    }
    // One more, confirmed by its seller: not pending, never expires.
    let r = orders(&t.deps, SHARDS, place(buyers[0], "confirmed", json!({ "listingId": listing_ids[10] }))).await;
    let confirmed = id_of(&r.body, "orderId");
    let confirm = req("PATCH /orders/{orderId}").path("orderId", &confirmed).by(As::User("alice"));
    assert_eq!(orders(&t.deps, SHARDS, confirm.json(json!({ "status": "confirmed" }))).await.status, 200);
    let units: i64 = (10..20).map(|i| 1 + (i % 3) as i64).sum();
    assert_eq!(stock(&t).await, stock_before - units);
    for id in &listing_ids {
        assert_eq!(listing_status(&t, id).await, "sold");
    }
    // Nothing is older than an hour: a sweep with that timeout reads nothing.
    assert_eq!(sweep(&t.deps.store, SHARDS, Duration::from_secs(3600)).await.unwrap(), Sweep::default());

    let mut total = Sweep::default();
    for _ in 0..40 {
        let (a, b) = tokio::join!(
            sweep(&t.deps.store, SHARDS, Duration::from_secs(3)),
            sweep(&t.deps.store, SHARDS, Duration::from_secs(3))
        );
        add(&mut total, &a.unwrap());
        add(&mut total, &b.unwrap());
        if total.cancelled == 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!((total.cancelled, total.blocked), (20, 0), "each order cancelled once: {total:?}");
    for id in &placed {
        assert_eq!(order_status(&t, id).await, "cancelled", "{id}");
    }
    assert_eq!(order_status(&t, &confirmed).await, "confirmed");
    for id in &listing_ids[..10] {
        assert_eq!(listing_status(&t, id).await, "active", "{id} relisted");
    }
    assert_eq!(listing_status(&t, &listing_ids[10]).await, "sold");
    assert_eq!(stock(&t).await, stock_before, "every unit back, once");
    // Later sweeps find nothing pending.
    let after = sweep(&t.deps.store, SHARDS, Duration::ZERO).await.unwrap();
    assert_eq!(after, Sweep::default());
}

/// The writes of order `id` that left it `cancelled`, as the table's stream
/// recorded them (a second cancel would show as one more, cancelled to
/// cancelled). A buyer's cancel that finds the order already cancelled (by
/// the sweeper) answers 200 and writes nothing, as a retry would: replies
/// cannot tell how many cancels took effect, the stream can.
async fn cancels_of(t: &TestTable, id: &str) -> usize {
    use serde_dynamo::AttributeValue::S;
    let status = |image: &serde_dynamo::Item| match image.get("status") {
        Some(S(s)) => s.clone(),
        _ => String::new(),
    };
    let order = S(format!("ORDER#{id}"));
    integration_tests::stream_records(t)
        .await
        .iter()
        .filter(|r| r.change.keys.get("pk") == Some(&order) && r.change.new_image.contains_key("orderId"))
        .filter(|r| status(&r.change.new_image) == "cancelled")
        .count()
}

/// A buyer's cancel, a seller's (or admin's) confirm and the sweeper race on
/// one order, 8 rounds each for a listing and a catalog order: the order
/// ends cancelled (its units back once, by whichever cancel won) or
/// confirmed (nothing given back); never two cancels (counted in the
/// stream: a buyer's cancel after the sweeper's is answered 200, unwritten).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_buyers_cancel_a_confirm_and_the_sweeper_end_in_one_outcome() {
    let t = TestTable::with_demo_data().await;
    sign_up_all(&t.deps, &["bob"]).await;
    let listing_ids = new_listings(&t, 8).await;
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    let rounds = listing_ids.iter().map(Some).chain([None; 8]);
    for (round, listing) in rounds.enumerate() {
        let on_listing = listing.is_some();
        let body = if let Some(listing) = listing {
            json!({ "listingId": listing })
        } else {
            json!({ "items": [{ "productId": P4, "qty": 2 }] })
        };
        let stock_before = stock(&t).await;
        let r = orders(&t.deps, SHARDS, place("bob", &format!("race{round}"), body)).await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        let id = id_of(&r.body, "orderId");
        let patch = |who: As, status: &str| {
            req("PATCH /orders/{orderId}").path("orderId", &id).by(who).json(json!({ "status": status }))
        };
        let confirmer = if on_listing { As::User("alice") } else { As::Admin };
        let (cancel, confirm, swept): (Reply, Reply, _) = tokio::join!(
            orders(&t.deps, SHARDS, patch(As::User("bob"), "cancelled")),
            orders(&t.deps, SHARDS, patch(confirmer, "confirmed")),
            sweep(&t.deps.store, SHARDS, Duration::ZERO)
        );
        let swept = swept.unwrap();
        for reply in [&cancel, &confirm] {
            assert!([200, 409].contains(&reply.status), "{} {:?}", reply.status, reply.body);
        }
        let cancels = cancels_of(&t, &id).await;
        let status = order_status(&t, &id).await;
        match status.as_str() {
            // Cancelled by exactly one write, which a cancel reported; a
            // confirm may have come first.
            "cancelled" => {
                assert_eq!(cancels, 1, "{round}: {swept:?} {}", cancel.status);
                assert!(cancel.status == 200 || swept.cancelled == 1, "{round}: nobody says they cancelled");
            }
            "confirmed" => {
                assert_eq!((cancels, cancel.status, swept.cancelled, confirm.status), (0, 409, 0, 200), "{round}")
            }
            other => panic!("{round}: ended {other}"),
        }
        if swept.cancelled == 1 {
            assert_eq!(confirm.status, 409, "{round}: a confirm after the sweeper's cancel fails");
        }
        let back = status == "cancelled";
        if let Some(listing) = listing {
            let expected = if back { "active" } else { "sold" };
            assert_eq!(listing_status(&t, listing).await, expected, "{round}");
        } else {
            assert_eq!(stock(&t).await, stock_before - if back { 0 } else { 2 }, "{round}");
        }
        let winner = match (cancel.status, confirm.status, swept.cancelled) {
            (200, 200, _) => "confirmed, then the buyer's cancel",
            // The buyer's 200 after it is the answer of a cancel already done.
            (_, _, 1) => "the sweeper",
            (200, _, _) => "the buyer's cancel",
            (_, 200, _) => "the confirm",
            _ => "nobody",
        };
        *outcomes.entry(winner.to_owned()).or_default() += 1;
    }
    println!("race outcomes: {outcomes:?}");
}

/// The race above, in the one order that flaked it: the sweeper cancels an
/// expired order, then the buyer's cancel arrives. The buyer is answered 200
/// with the cancelled order (as a retry would be), the stock comes back
/// once, and the stream holds one write that cancelled it.
#[tokio::test]
async fn a_buyers_cancel_after_the_sweepers_is_answered_and_gives_nothing_back_twice() {
    let t = TestTable::with_demo_data().await;
    sign_up_all(&t.deps, &["bob"]).await;
    let stock_before = stock(&t).await;
    let r =
        orders(&t.deps, SHARDS, place("bob", "late-cancel", json!({ "items": [{ "productId": P4, "qty": 2 }] }))).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let id = id_of(&r.body, "orderId");
    assert_eq!(sweep(&t.deps.store, SHARDS, Duration::ZERO).await.unwrap().cancelled, 1);
    let cancel = move_order(&id, As::User("bob"), "cancelled");
    let late = orders(&t.deps, SHARDS, cancel).await;
    assert_eq!((late.status, late.body["status"].as_str()), (200, Some("cancelled")), "{:?}", late.body);
    assert_eq!(cancels_of(&t, &id).await, 1, "one write cancelled it");
    assert_eq!(stock(&t).await, stock_before, "the units came back once");
}

/// At 100x, expired orders of one hot product share its stock item with
/// live orders: a sweep whose cancel meets a transaction conflict counts it
/// and sweeps on (the order is cancelled by the next sweep); it does not
/// fail the sweep and leave every other expired order pending.
#[tokio::test]
async fn a_conflict_on_one_order_leaves_it_to_the_next_sweep() {
    // One status shard: the sweep cancels one order after the other.
    const ONE_SHARD: u16 = 1;
    let (t, faults) = TestTable::with_faults().await;
    sign_up_all(&t.deps, &["bob"]).await;
    let stock_before = stock(&t).await;
    let mut placed = Vec::new();
    for i in 0..3 {
        let r = orders(
            &t.deps,
            ONE_SHARD,
            place("bob", &format!("hot{i}"), json!({ "items": [{ "productId": P4, "qty": 1 }] })),
        )
        .await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        placed.push(id_of(&r.body, "orderId"));
    }
    // Every attempt of one cancel (the store retries a conflict a few times).
    faults.inject("TransactWriteItems", integration_tests::faults::Fault::Conflict, store::conflicts::ATTEMPTS);
    let first = sweep(&t.deps.store, ONE_SHARD, Duration::ZERO).await.expect("a conflict does not fail the sweep");
    assert_eq!((first.cancelled, first.contended), (2, 1), "{first:?}");
    let second = sweep(&t.deps.store, ONE_SHARD, Duration::ZERO).await.unwrap();
    assert_eq!((second.cancelled, second.contended), (1, 0), "{second:?}");
    for id in &placed {
        assert_eq!(order_status(&t, id).await, "cancelled");
    }
    assert_eq!(stock(&t).await, stock_before, "every unit back, once");
}
