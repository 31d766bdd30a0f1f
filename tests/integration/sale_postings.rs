//! A sale keeps its listing's search postings while its order is pending
//! (issue 33): a sold listing leaves the answers at once (the page reads
//! the listings it returns); a cancel relists it with its postings still
//! there (found at once, no posting written); the seller's confirmation of
//! the order that bought it deletes them; replays change nothing. A page
//! that meets a sold listing's postings reads on past it within its bound.
//! Reconcile deletes any sold listing's postings, and a cancel after it
//! puts them back.

use integration_tests::derived::{differences, differences_after_reconcile, s, scan};
use integration_tests::hostile::Hostile;
use integration_tests::metered::{assert_pages_within, Fullness, Function, Route};
use integration_tests::{listings, move_order, orders, process_stream, req, stream_records, As, Reply, TestTable};
use keyschema::table::EntityType;
use maintenance::pace::Budget;
use maintenance::reconcile::{self, Kind, Options};
use serde_json::json;

const SHARDS: u16 = 4;

async fn create(t: &TestTable, title: &str) -> String {
    create_as(t, "alice", "pottery", title).await
}

async fn create_as(t: &TestTable, seller: &'static str, category: &str, title: &str) -> String {
    let body = json!({ "title": title, "price": 12, "categoryId": category });
    let r = listings(&t.deps, req("POST /listings").by(As::User(seller)).json(body)).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body["listingId"].as_str().unwrap().to_owned()
}

async fn buy(t: &TestTable, listing: &str, key: &str) -> String {
    buy_as(t, "bob", listing, key).await
}

async fn buy_as(t: &TestTable, buyer: &'static str, listing: &str, key: &str) -> String {
    let r = req("POST /orders").by(As::User(buyer)).header("Idempotency-Key", key);
    let r = orders(&t.deps, SHARDS, r.json(json!({ "listingId": listing }))).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body["orderId"].as_str().unwrap().to_owned()
}

async fn move_to(t: &TestTable, order: &str, by: &'static str, status: &str) {
    let r = orders(&t.deps, SHARDS, move_order(order, As::User(by), status)).await;
    assert_eq!(r.status, 200, "{status}: {:?}", r.body);
}

async fn found(t: &TestTable, q: &str) -> Vec<String> {
    search(t, q, 20).await.item_field("title")
}

async fn search(t: &TestTable, q: &str, limit: u16) -> Reply {
    let r = listings(&t.deps, req("GET /search/listings").query("q", q).query("limit", limit)).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r
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
async fn a_sale_keeps_its_postings_while_its_order_is_pending() {
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
    assert_eq!(postings_of(&t, &lamp).await, terms, "kept while the order is pending");
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

    // Sold again: kept. Confirmed: deleted, in one request.
    let second = buy(&t, &lamp, "lamp-2").await;
    let (seen, sent) = process_from(&t, seen).await;
    assert_eq!((writes_of_postings(&sent), postings_of(&t, &lamp).await), (0, terms.clone()));
    move_to(&t, &second, "alice", "confirmed").await;
    let (seen, sent) = process_from(&t, seen).await;
    assert_eq!(writes_of_postings(&sent), 1, "{sent:?}");
    assert_eq!(postings_of(&t, &lamp).await, Vec::<String>::new());
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());

    // Shipped and delivered (later accepted statuses) write nothing more.
    move_to(&t, &second, "alice", "shipped").await;
    move_to(&t, &second, "alice", "delivered").await;
    let (_, sent) = process_from(&t, seen).await;
    assert_eq!(writes_of_postings(&sent), 0, "{sent:?}");

    // The whole stream replayed, as recorded and reversed: nothing comes back.
    let records = stream_records(&t).await;
    let mut reversed = records.clone();
    reversed.reverse();
    assert_eq!(process_stream(&t, records.clone()).await, Vec::<String>::new());
    assert_eq!(process_stream(&t, reversed).await, Vec::<String>::new());
    assert_eq!(postings_of(&t, &lamp).await, Vec::<String>::new());
    assert_eq!(found(&t, "walnut").await, Vec::<String>::new());
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

/// Five listings, the second newest sold: a page of 2 looks for one match
/// more than it answers, so it answers the newest and the third in one
/// query and one read. The third sold too: it drops both and reads on once
/// to fill itself. Seen failing without the spare (two reads) and without
/// reading on (one item, `stoppedEarly`).
#[tokio::test]
async fn a_page_looks_past_sold_listings() {
    let t = TestTable::with_demo_data().await;
    let mut ids = Vec::new();
    for title in ["Quokka print one", "Quokka print two", "Quokka print three", "Quokka print sold"] {
        ids.push(create(&t, title).await);
    }
    create(&t, "Quokka print newest").await;
    let (seen, _) = process_from(&t, 0).await;
    buy(&t, &ids[3], "q-1").await;
    let (seen, _) = process_from(&t, seen).await;
    t.requests();
    let page = search(&t, "quokka", 2).await;
    assert_eq!(page.item_field("title"), ["Quokka print newest", "Quokka print three"]);
    assert_eq!(
        (page.body["stoppedEarly"].clone(), t.requests()),
        (json!(false), vec!["Query".into(), "BatchGetItem".into()])
    );
    let r =
        req("GET /search/listings").query("q", "quokka").query("limit", 2).query("cursor", page.next_cursor().unwrap());
    assert_eq!(listings(&t.deps, r).await.item_field("title"), ["Quokka print two", "Quokka print one"]);

    buy(&t, &ids[2], "q-2").await;
    process_from(&t, seen).await;
    t.requests();
    let page = search(&t, "quokka", 2).await;
    assert_eq!(page.item_field("title"), ["Quokka print newest", "Quokka print two"]);
    assert_eq!(page.body["stoppedEarly"], false);
    assert_eq!(t.requests(), ["Query", "BatchGetItem", "Query", "BatchGetItem"]);
}

/// 60 listings of one word, 40 of them sold (orders pending, every one
/// of three kept): every page at limits 20 and 100 within its bound,
/// full or saying `stoppedEarly`, and the walk exact.
#[tokio::test]
async fn search_over_sold_listings_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    let mut h = Hostile::on(&t);
    h.users(&["quokka-seller", "quokka-buyer"]).await;
    h.category("quokkas", 1).await;
    let mut ids = Vec::new();
    for i in 0..60 {
        ids.push(create_as(&t, "quokka-seller", "quokkas", &format!("Quokka print {i}")).await);
    }
    h.index().await;
    let mut active = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        if i % 3 == 0 {
            active.push(format!("Quokka print {i}"));
        } else {
            buy_as(&t, "quokka-buyer", id, &format!("k-{i}")).await;
        }
    }
    h.index().await;
    let route = Route::new(
        "GET /search/listings?q=quokka (40 of 60 sold)",
        Function::Listings,
        req("GET /search/listings").query("q", "quokka"),
        active.len(),
    );
    assert_pages_within(&t, &meter, [route.full(Fullness::AtMostOrStoppedEarly(50))]).await;
    // The walk answers every active one, newest first, each once.
    let (mut walked, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let mut r = req("GET /search/listings").query("q", "quokka").query("limit", 20);
        if let Some(c) = &cursor {
            r = r.query("cursor", c);
        }
        let page = listings(&t.deps, r).await;
        walked.extend(page.item_field("title"));
        cursor = page.next_cursor();
        if cursor.is_none() {
            break;
        }
    }
    active.reverse();
    assert_eq!(walked, active);
}

/// Reconcile reads no orders: a sold listing keeps its postings while it
/// could still be pending (sold less than the pending timeout and 5
/// minutes ago), then loses them, which is always safe: an accepted sale
/// whose record was lost loses them, and a pending one that is then
/// cancelled gets them back from its relisting.
#[tokio::test]
async fn reconcile_deletes_a_sold_listing_s_postings_once_its_order_cannot_be_pending() {
    let t = TestTable::with_demo_data().await;
    let (accepted, pending) = (create(&t, "Walnut desk lamp").await, create(&t, "Oak side table").await);
    let (seen, _) = process_from(&t, 0).await;
    let order = buy(&t, &accepted, "r-1").await;
    let kept = buy(&t, &pending, "r-2").await;
    move_to(&t, &order, "alice", "confirmed").await;
    // The confirmation's record is lost: every record but the last processed.
    let records = stream_records(&t).await;
    assert_eq!(process_stream(&t, records[seen..records.len() - 1].to_vec()).await, Vec::<String>::new());
    assert_eq!(postings_of(&t, &accepted).await.len(), 9);
    assert_eq!(differences(&t.deps.store).await.len(), 9, "the accepted sale's postings are left");

    // Sold moments ago: both may still be pending as far as reconcile knows.
    let unpaced = Options { budget: Budget { rcu: 0.0, wcu: 0.0 }, ..Options::default() };
    let young = reconcile::run(&t.deps.store, unpaced).await;
    assert_eq!(young.of(Kind::SearchPostings).found, 0, "{young:?}");
    assert_eq!((postings_of(&t, &accepted).await.len(), postings_of(&t, &pending).await.len()), (9, 9));
    assert_eq!(differences_after_reconcile(&t.deps.store).await, Vec::<String>::new());

    // Once the pending timeout has passed (here: none), both lose them.
    let old = Options { sold_postings_for: std::time::Duration::ZERO, ..unpaced };
    let report = reconcile::run(&t.deps.store, old).await;
    // Each listing is settled from every page naming it (its own, its postings').
    assert!(report.of(Kind::SearchPostings).repaired >= 2, "{report:?}");
    assert_eq!(postings_of(&t, &accepted).await, Vec::<String>::new());
    assert_eq!(postings_of(&t, &pending).await, Vec::<String>::new());
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
    let again = reconcile::run(&t.deps.store, old).await;
    assert_eq!(again.of(Kind::SearchPostings).found, 0, "{again:?}");

    // The pending sale cancelled: its relisting puts back what is missing.
    let seen = stream_records(&t).await.len();
    move_to(&t, &kept, "bob", "cancelled").await;
    let (_, sent) = process_from(&t, seen).await;
    assert_eq!(writes_of_postings(&sent), 1, "{sent:?}");
    assert_eq!(postings_of(&t, &pending).await.len(), 9);
    assert_eq!(found(&t, "oak").await, ["Oak side table"]);
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

/// The seller confirms while the buyer cancels the confirmed order: the
/// confirmation's deletes (its record on the order's shard) land after the
/// cancel's relisting (on the listing's shard) found every posting there
/// and put none. The confirmation's read of the listing after its writes
/// sees it relisted and puts them back. Seen failing with no read after a
/// delete (the relisted listing had no postings).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmation_s_deletes_landing_after_a_relisting_are_put_back() {
    use derived::postings::{sync, Sale, Touched};
    use integration_tests::faults::{Fault, DELAY};
    let (t, faults) = TestTable::with_faults().await;
    let lamp = create(&t, "Walnut desk lamp").await;
    let (seen, _) = process_from(&t, 0).await;
    let order = buy(&t, &lamp, "race-1").await;
    let (seen, _) = process_from(&t, seen).await;
    move_to(&t, &order, "alice", "confirmed").await;
    let seen = seen + 1;
    // The confirmation's record: its deletes held back.
    faults.delay_through(&integration_tests::delaying_proxy(DELAY).await);
    faults.inject("BatchWriteItem", Fault::Delayed, 1);
    let (store, id) = (t.deps.store.clone(), lamp.parse().unwrap());
    let accepted = Touched { sale: Sale::Accepted, ..Touched::listing(id) };
    let confirming = tokio::spawn(async move { sync(&store, &accepted).await });
    tokio::time::sleep(DELAY / 4).await;
    assert_eq!(faults.pending(), 0, "the confirmation's deletes are waiting");
    // Meanwhile the buyer cancels and the relisting is processed: every
    // posting still there, none put.
    move_to(&t, &order, "bob", "cancelled").await;
    let (_, sent) = process_from(&t, seen).await;
    assert_eq!(writes_of_postings(&sent), 0, "{sent:?}");
    // The deletes land; the confirmation sees the listing relisted.
    assert_eq!(confirming.await.unwrap().unwrap(), 2, "the deletes, then the postings put back");
    assert_eq!(postings_of(&t, &lamp).await.len(), 9);
    assert_eq!(found(&t, "walnut").await, ["Walnut desk lamp"]);
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}
