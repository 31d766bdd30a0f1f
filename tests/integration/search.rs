//! Search (issue 21): titles through the API and the stream processor;
//! every word must match (the last as a prefix), case and accents folded,
//! newest first, each once across pages, a page a bounded number of
//! requests; a changed title moves its postings, a listing taken out of
//! active leaves the results at once (the page reads the listings it
//! returns) and its postings with its record; the stream replayed as
//! recorded, reversed and in overlapping windows changes nothing; a walk
//! over a few hundred titles of the corpus is exact against a brute-force
//! filter; reconcile recomputes postings (see reconcile.rs).

use std::collections::BTreeSet;

use domain::words::Query;
use integration_tests::derived::{differences, s, scan};
use integration_tests::{listings, process_stream, req, stream_records, As, Reply, TestTable};
use keyschema::table::EntityType;
use serde_json::json;

async fn create(t: &TestTable, title: &str, category: &str) -> String {
    let body = json!({ "title": title, "price": 12, "categoryId": category });
    let r = listings(&t.deps, req("POST /listings").by(As::User("alice")).json(body)).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body["listingId"].as_str().unwrap().to_owned()
}

async fn search(t: &TestTable, q: &str, extra: &[(&str, &str)]) -> Reply {
    let mut r = req("GET /search/listings").query("q", q);
    for (k, v) in extra {
        r = r.query(k, v);
    }
    listings(&t.deps, r).await
}

/// Every page of a search: the titles found, and the requests of each page.
async fn walk(t: &TestTable, q: &str, limit: u16, category: Option<&str>) -> (Vec<String>, Vec<Vec<String>>) {
    let (mut found, mut requests, mut cursor) = (Vec::new(), Vec::new(), None::<String>);
    t.requests();
    loop {
        let mut extra = vec![("limit", limit.to_string())];
        extra.extend(category.map(|c| ("categoryId", c.to_owned())));
        extra.extend(cursor.clone().map(|c| ("cursor", c)));
        let extra: Vec<(&str, &str)> = extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let page = search(t, q, &extra).await;
        assert_eq!(page.status, 200, "{q}: {:?}", page.body);
        found.extend(page.item_field("title"));
        requests.push(t.requests());
        cursor = page.next_cursor();
        if cursor.is_none() {
            return (found, requests);
        }
        assert!(requests.len() < 500, "the walk ends");
    }
}

async fn postings(t: &TestTable) -> BTreeSet<(String, String, String)> {
    let items = scan(&t.deps.store).await;
    let of = items.iter().filter(|i| s(i, "entityType") == EntityType::Posting.as_str());
    of.map(|i| (s(i, "term"), s(i, "listingId"), s(i, "words"))).collect()
}

#[tokio::test]
async fn search_finds_every_word_folded_newest_first_and_follows_the_listing() {
    let t = TestTable::with_demo_data().await;
    create(&t, "Blue ceramic mug", "pottery").await;
    let vase = create(&t, "Céramique bleue: VASE (signée)", "pottery").await;
    create(&t, "Blue glass bowl", "pottery").await;
    let mug = create(&t, "Ceramic mug, blue", "books").await;
    create(&t, "The mug of the year", "pottery").await;
    assert_eq!(process_stream(&t, stream_records(&t).await).await, Vec::<String>::new());
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new(), "postings exact");

    let titles = |r: &Reply| r.item_field("title");
    // Every word, the last as a prefix; newest first.
    assert_eq!(titles(&search(&t, "blue cer", &[]).await), ["Ceramic mug, blue", "Blue ceramic mug"]);
    assert_eq!(titles(&search(&t, "CERAMIQUE", &[]).await), ["Céramique bleue: VASE (signée)"]);
    assert_eq!(titles(&search(&t, "bleue sign", &[]).await), ["Céramique bleue: VASE (signée)"]);
    assert_eq!(titles(&search(&t, "mug the", &[]).await), Vec::<String>::new(), "no word begins with `the`");
    assert_eq!(titles(&search(&t, "the mug", &[]).await).len(), 4, "stop words are not required");
    assert_eq!(titles(&search(&t, "blue cer", &[("categoryId", "books")]).await), ["Ceramic mug, blue"]);
    // Demo data is found too.
    assert_eq!(titles(&search(&t, "stoneware", &[]).await), ["Stoneware mug, blue glaze"]);

    // Each once across pages; a page is one query per list and one read of the listings.
    let (all, requests) = walk(&t, "mug", 1, None).await;
    assert_eq!(all, ["The mug of the year", "Ceramic mug, blue", "Blue ceramic mug", "Stoneware mug, blue glaze"]);
    for r in &requests {
        assert!(r == &["Query", "BatchGetItem"] || r == &["Query"], "{r:?}");
    }
    let (_, requests) = walk(&t, "blue cer", 100, None).await;
    assert_eq!(requests, [["Query", "Query", "BatchGetItem"]]);

    // A new title moves its postings.
    let r = req("PATCH /listings/{listingId}").path("listingId", &mug).by(As::User("alice"));
    assert_eq!(listings(&t.deps, r.json(json!({ "title": "Green teapot" }))).await.status, 200);
    // Before its record is processed the old title no longer shows (the page reads the listing).
    assert_eq!(titles(&search(&t, "blue cer", &[]).await), ["Blue ceramic mug"]);
    assert_eq!(process_stream(&t, stream_records(&t).await).await, Vec::<String>::new());
    assert_eq!(titles(&search(&t, "teapot", &[]).await), ["Green teapot"]);
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new(), "the old title's postings are gone");

    // Taken out of active: gone from the results at once, its postings with its record.
    let r = req("PATCH /listings/{listingId}").path("listingId", &vase).by(As::User("alice"));
    assert_eq!(listings(&t.deps, r.json(json!({ "status": "removed" }))).await.status, 200);
    assert_eq!(titles(&search(&t, "ceramique", &[]).await), Vec::<String>::new());
    assert_eq!(process_stream(&t, stream_records(&t).await).await, Vec::<String>::new());
    assert!(postings(&t).await.iter().all(|(_, l, _)| *l != vase));
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());

    // Replays: as recorded, reversed, overlapping windows: nothing changes.
    let before = postings(&t).await;
    let records = stream_records(&t).await;
    let mut reversed = records.clone();
    reversed.reverse();
    assert_eq!(process_stream(&t, records.clone()).await, Vec::<String>::new());
    assert_eq!(process_stream(&t, reversed).await, Vec::<String>::new());
    for window in records.windows(7).step_by(3) {
        assert_eq!(process_stream(&t, window.to_vec()).await, Vec::<String>::new());
    }
    assert_eq!(postings(&t).await, before, "replays change nothing");
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
}

#[tokio::test]
async fn bad_queries_are_400_with_what_is_accepted() {
    let t = TestTable::with_demo_data().await;
    for (q, says) in [
        ("", "q must hold a word"),
        (" ,;- ", "q must hold a word"),
        ("a b c d e f g", "at most 6 words"),
        ("a_b_c_d_e_f_g", "at most 6 words"),
        (&"x".repeat(101), "at most 100 characters"),
    ] {
        let r = search(&t, q, &[]).await;
        assert_eq!(r.status, 400, "{q:?}");
        assert!(r.body["error"]["message"].as_str().unwrap_or_default().contains(says), "{q:?}: {:?}", r.body);
    }
    let r = listings(&t.deps, req("GET /search/listings")).await;
    assert_eq!(r.status, 400);
    assert_eq!(search(&t, "mug", &[("categoryId", "Not A Slug!")]).await.status, 400);
    assert_eq!(search(&t, "mug", &[("unknown", "1")]).await.status, 400);
    create(&t, "Blue mug", "pottery").await;
    assert_eq!(process_stream(&t, stream_records(&t).await).await, Vec::<String>::new());
    // Short prefixes and stop words are fine; a run of symbols matches nothing.
    assert_eq!(search(&t, "b", &[]).await.item_field("title"), ["Blue mug", "Stoneware mug, blue glaze"]);
    assert_eq!(search(&t, "the bl", &[]).await.item_field("title"), ["Blue mug", "Stoneware mug, blue glaze"]);
    let r = search(&t, "——", &[]).await;
    assert_eq!((r.status, r.item_field("title")), (200, Vec::<String>::new()));
    // A cursor is bound to its query.
    let page = search(&t, "mug", &[("limit", "1")]).await;
    let cursor = page.next_cursor().expect("two mugs: a cursor");
    assert_eq!(search(&t, "blue", &[("cursor", &cursor)]).await.status, 400);
}

/// 100 titles of the corpus through the API and the stream processor:
/// walks of queries made from them are exact against a brute-force filter
/// of the titles, every page within the bound of requests.
#[tokio::test]
async fn walks_over_corpus_titles_are_exact() {
    let t = TestTable::with_demo_data().await;
    // The demo's active listings (older than any created here), then 100 of the corpus.
    let mut titles = vec![("Stoneware mug, blue glaze", "pottery"), ("First edition, signed", "books")];
    let corpus = include_str!("../data/search-titles.txt").lines().take(100);
    titles.extend(corpus.enumerate().map(|(i, title)| (title, ["pottery", "books"][i % 2])));
    for (title, category) in &titles[2..] {
        create(&t, title, category).await;
    }
    assert_eq!(process_stream(&t, stream_records(&t).await).await, Vec::<String>::new());
    let queries = ["time", "new yo", "people", "was th", "one", "good", "de", "year", "like wo", "s"];
    for (i, q) in queries.iter().enumerate() {
        let Ok(query) = Query::parse(q) else { continue };
        let category = (i % 3 == 0).then_some("books");
        let mut want: Vec<String> = titles
            .iter()
            .filter(|(title, c)| {
                category.is_none_or(|want| want == *c) && query.matches(&domain::words::indexed(title))
            })
            .map(|(title, _)| (*title).to_owned())
            .collect();
        want.reverse();
        let (got, requests) = walk(&t, q, 7, category).await;
        assert_eq!(got, want, "{q:?} in {category:?}");
        // At most MAX_QUERIES queries and a BatchGetItem of the listings
        // (two when a page reads on past a listing no longer active: none here).
        for r in &requests {
            assert!(r.len() <= fanout::search::MAX_QUERIES + 1, "{q}: {r:?}");
        }
    }
}

/// Reconcile writes a listing's postings while its title changes and the
/// stream processor handles the change before those writes land: the
/// postings of the old title are deleted in reconcile's next round. Seen
/// failing without it (the old title's postings were left).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_racing_a_title_change_leaves_the_new_title_only() {
    use integration_tests::faults::{Fault, DELAY};
    let (t, faults) = TestTable::with_faults().await;
    let id = create(&t, "Walnut chair", "pottery").await;
    assert_eq!(process_stream(&t, stream_records(&t).await).await, Vec::<String>::new());
    // Its postings lost: reconcile will put them back.
    let lost: Vec<keyschema::Key> = postings(&t)
        .await
        .iter()
        .filter(|(_, l, _)| *l == id)
        .map(|(term, l, _)| keyschema::keys::posting(term, &l.parse().unwrap()).unwrap().into_key())
        .collect();
    t.deps.store.write_batch::<keyschema::records::Posting>(&[], &lost).await.unwrap();
    let records_before = stream_records(&t).await.len();
    faults.delay_through(&integration_tests::delaying_proxy(DELAY).await);
    faults.inject("BatchWriteItem", Fault::Delayed, 1);
    let store = t.deps.store.clone();
    let listing: domain::ids::ListingId = id.parse().unwrap();
    let touched = derived::postings::Touched::listing(listing);
    let settle = tokio::spawn(async move { derived::postings::settle(&store, &touched, false).await });
    tokio::time::sleep(DELAY / 4).await;
    assert_eq!(faults.pending(), 0, "reconcile's write is waiting");
    let r = req("PATCH /listings/{listingId}").path("listingId", &id).by(As::User("alice"));
    assert_eq!(listings(&t.deps, r.json(json!({ "title": "Oak table" }))).await.status, 200);
    let records = stream_records(&t).await;
    assert_eq!(process_stream(&t, records[records_before..].to_vec()).await, Vec::<String>::new());
    let settled = settle.await.unwrap().unwrap();
    assert_eq!(settled, derived::postings::Settled::Repaired);
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
    let titles = |r: Reply| r.item_field("title");
    assert_eq!(titles(search(&t, "walnut", &[]).await), Vec::<String>::new());
    assert_eq!(titles(search(&t, "oak", &[]).await), ["Oak table"]);
}

/// A title whose words fold into very long ones (`㌖` is `キロメートル`)
/// is indexed with its words cut, every key within DynamoDB's limits.
#[tokio::test]
async fn a_title_of_very_long_folded_words_is_indexed() {
    let t = TestTable::with_demo_data().await;
    create(&t, &"㌖".repeat(114), "pottery").await;
    assert_eq!(process_stream(&t, stream_records(&t).await).await, Vec::<String>::new());
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());
    assert_eq!(search(&t, &"㌖".repeat(40), &[]).await.item_field("title").len(), 1);
}
