//! A sale keeps its listing's search postings until it is final (issue
//! 33): a sold listing leaves the answers at once (the page reads the
//! listings it returns); a cancel relists it with its postings still there
//! (found at once, no posting written); the shipment of the order that sold
//! it deletes them; replays change nothing. Reconcile deletes the postings
//! of a final sale whose record was lost and leaves a pending sale's.

use integration_tests::derived::{differences, s, scan};
use integration_tests::{listings, move_order, orders, process_stream, req, stream_records, As, TestTable};
use keyschema::table::EntityType;
use maintenance::pace::Budget;
use maintenance::reconcile::{self, Kind, Options};
use serde_json::json;

const SHARDS: u16 = 4;

async fn create(t: &TestTable, title: &str) -> String {
    let body = json!({ "title": title, "price": 12, "categoryId": "pottery" });
    let r = listings(&t.deps, req("POST /listings").by(As::User("alice")).json(body)).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body["listingId"].as_str().unwrap().to_owned()
}

async fn buy(t: &TestTable, listing: &str, key: &str) -> String {
    let r = req("POST /orders").by(As::User("bob")).header("Idempotency-Key", key);
    let r = orders(&t.deps, SHARDS, r.json(json!({ "listingId": listing }))).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body["orderId"].as_str().unwrap().to_owned()
}

async fn move_to(t: &TestTable, order: &str, by: &'static str, status: &str) {
    let r = orders(&t.deps, SHARDS, move_order(order, As::User(by), status)).await;
    assert_eq!(r.status, 200, "{status}: {:?}", r.body);
}

async fn found(t: &TestTable, q: &str) -> Vec<String> {
    listings(&t.deps, req("GET /search/listings").query("q", q)).await.item_field("title")
}

/// The terms of the listing's postings in the table.
async fn postings_of(t: &TestTable, listing: &str) -> Vec<String> {
    let items = scan(&t.deps.store).await;
    let of =
        items.iter().filter(|i| s(i, "entityType") == EntityType::Posting.as_str() && s(i, "listingId") == listing);
    of.map(|i| s(i, "term")).collect()
}

/// Processes the records after the first `from`: how many there are now,
/// and the requests the stream processor sent.
async fn process_from(t: &TestTable, from: usize) -> (usize, Vec<String>) {
    let records = stream_records(t).await;
    t.requests();
    assert_eq!(process_stream(t, records[from..].to_vec()).await, Vec::<String>::new());
    (records.len(), t.requests())
}

fn writes_of_postings(requests: &[String]) -> usize {
    requests.iter().filter(|r| *r == "BatchWriteItem").count()
}

#[tokio::test]
async fn a_sale_keeps_its_postings_until_its_order_ships() {
    let t = TestTable::with_demo_data().await;
    let lamp = create(&t, "Walnut desk lamp").await;
    let (seen, _) = process_from(&t, 0).await;
    let terms = postings_of(&t, &lamp).await;
    assert_eq!(terms.len(), 9, "three words' first 1, 2 and 3 characters: {terms:?}");

    // Sold: gone from the answers at once; its record writes no posting.
    let first = buy(&t, &lamp, "lamp-1").await;
    assert_eq!(found(&t, "walnut").await, Vec::<String>::new());
    let (seen, sent) = process_from(&t, seen).await;
    assert_eq!(writes_of_postings(&sent), 0, "{sent:?}");
    assert_eq!(postings_of(&t, &lamp).await, terms, "kept through the sale");
    assert_eq!(found(&t, "walnut").await, Vec::<String>::new());
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());

    // Cancelled: found again before its record is processed; the record
    // reads the postings and writes none.
    move_to(&t, &first, "bob", "cancelled").await;
    assert_eq!(found(&t, "walnut").await, ["Walnut desk lamp"]);
    let (seen, sent) = process_from(&t, seen).await;
    assert_eq!(writes_of_postings(&sent), 0, "{sent:?}");
    assert!(sent.contains(&"BatchGetItem".to_owned()), "the postings read: {sent:?}");
    assert_eq!(postings_of(&t, &lamp).await, terms);
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());

    // Sold again, confirmed: still kept. Shipped: deleted, in one request.
    let second = buy(&t, &lamp, "lamp-2").await;
    move_to(&t, &second, "alice", "confirmed").await;
    let (seen, sent) = process_from(&t, seen).await;
    assert_eq!((writes_of_postings(&sent), postings_of(&t, &lamp).await), (0, terms.clone()));
    move_to(&t, &second, "alice", "shipped").await;
    let (_, sent) = process_from(&t, seen).await;
    assert_eq!(writes_of_postings(&sent), 1, "{sent:?}");
    assert_eq!(postings_of(&t, &lamp).await, Vec::<String>::new());
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());

    // Delivered (a later final status) writes nothing more.
    move_to(&t, &second, "alice", "delivered").await;
    let records = stream_records(&t).await;
    let (_, sent) = process_from(&t, records.len() - 1).await;
    assert_eq!(writes_of_postings(&sent), 0, "{sent:?}");

    // The whole stream replayed, as recorded and reversed: nothing comes back.
    let mut reversed = records.clone();
    reversed.reverse();
    assert_eq!(process_stream(&t, records.clone()).await, Vec::<String>::new());
    assert_eq!(process_stream(&t, reversed).await, Vec::<String>::new());
    assert_eq!(postings_of(&t, &lamp).await, Vec::<String>::new());
    assert_eq!(found(&t, "walnut").await, Vec::<String>::new());
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

#[tokio::test]
async fn reconcile_deletes_a_final_sale_s_postings_and_keeps_a_pending_one_s() {
    let t = TestTable::with_demo_data().await;
    let (shipped, pending) = (create(&t, "Walnut desk lamp").await, create(&t, "Oak side table").await);
    let (seen, _) = process_from(&t, 0).await;
    let order = buy(&t, &shipped, "r-1").await;
    buy(&t, &pending, "r-2").await;
    move_to(&t, &order, "alice", "confirmed").await;
    move_to(&t, &order, "alice", "shipped").await;
    // The shipment's record is lost: every record but the last processed.
    let records = stream_records(&t).await;
    assert_eq!(process_stream(&t, records[seen..records.len() - 1].to_vec()).await, Vec::<String>::new());
    assert_eq!(postings_of(&t, &shipped).await.len(), 9);
    assert_eq!(differences(&t.deps.store).await.len(), 9, "the shipped sale's postings are left");

    let options = Options { budget: Budget { rcu: 0.0, wcu: 0.0 }, ..Options::default() };
    let report = reconcile::run(&t.deps.store, options).await;
    assert_eq!(report.of(Kind::SearchPostings).repaired, 1, "{report:?}");
    assert_eq!(postings_of(&t, &shipped).await, Vec::<String>::new());
    assert_eq!(postings_of(&t, &pending).await.len(), 9, "a pending sale's are kept");
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
    let again = reconcile::run(&t.deps.store, options).await;
    assert_eq!(again.of(Kind::SearchPostings).found, 0, "{again:?}");
}
