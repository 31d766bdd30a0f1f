//! Descriptions (issue 33 items 2 and 5): a product's description, and a
//! listing's that would take its item past one write unit (1 KB, every key
//! included), is an item of its own in the same partition (`#DETAILS`), so
//! that a change of the item never rewrites a long text; a listing's that
//! fits is held in its `#METADATA` item (one `PutItem`, no transaction).
//! No index copy holds either (the indexes project cards) and no list
//! answers it. The listing or product answers it, read in one `Query` of
//! the partition. The item shapes are pinned here.

use std::collections::BTreeMap;

use domain::ids::{ListingId, ProductId};
use integration_tests::hostile::Hostile;
use integration_tests::pricing::item_size;
use integration_tests::{catalog, listings, req, users, As, TestTable};
use keyschema::access;
use serde_json::{json, Value};
use store::aws_sdk_dynamodb::types::AttributeValue;
use store::Item;

const L1: &str = "01JF8Z6A000000000000000001"; // alice, active, pottery, no description

/// The items of a partition as `{attribute: text}` (every attribute here
/// is a string or a number), by sort key.
fn shapes(items: Vec<Item>) -> BTreeMap<String, BTreeMap<String, String>> {
    let text = |v: &AttributeValue| match v {
        AttributeValue::S(s) | AttributeValue::N(s) => s.clone(),
        AttributeValue::M(_) => "{map}".to_owned(),
        other => format!("{other:?}"),
    };
    items
        .into_iter()
        .map(|item| {
            let sk = item.get("sk").map(text).unwrap_or_default();
            (sk, item.iter().map(|(k, v)| (k.clone(), text(v))).collect())
        })
        .collect()
}

fn attrs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// Writes `id`'s listing (a demo one) as it was written before details:
/// with its description inline. The listing as written.
async fn inline_listing(t: &TestTable, id: &str, text: &str) -> domain::model::Listing {
    let key = keyschema::keys::listing(&id.parse().expect("an id")).expect("a key");
    let mut listing: domain::model::Listing =
        t.deps.store.get_consistent(&key).await.expect("a read").expect("the demo listing");
    listing.description = Some(text.into());
    t.deps.store.put(&listing).await.expect("put");
    listing
}

/// The two items of an item's partition, the details pinned exactly:
/// `(key prefix, entity type, id attribute)`, the id, the description.
async fn partition(
    t: &TestTable,
    query: &keyschema::KeyQuery,
    (prefix, entity, id_attr): (&str, &str, &str),
    id: &str,
    description: &str,
) -> BTreeMap<String, BTreeMap<String, String>> {
    let items = shapes(t.deps.store.query_all_consistent(query).await.expect("the partition"));
    assert_eq!(items.keys().collect::<Vec<_>>(), ["#DETAILS", "#METADATA"]);
    let pk = format!("{prefix}#{id}");
    let want =
        [("pk", pk.as_str()), ("sk", "#DETAILS"), ("entityType", entity), (id_attr, id), ("description", description)];
    assert_eq!(items["#DETAILS"], attrs(&want), "the details item, exactly");
    items
}

/// A description past what fits: `n` characters of a sentence.
fn long_text(n: usize) -> String {
    "Made in 1930, polished once. ".chars().cycle().take(n).collect()
}

#[tokio::test]
async fn a_long_listing_description_is_an_item_beside_it_read_in_one_query() {
    let t = TestTable::with_demo_data().await;
    let text = long_text(1_200);
    let body = json!({ "title": "Brass lamp", "price": 5, "categoryId": "pottery", "description": text });
    let created = listings(&t.deps, req("POST /listings").by(As::User("alice")).json(body)).await;
    assert_eq!((created.status, &created.body["description"]), (201, &json!(text)), "{:?}", created.body);
    let id = created.body["listingId"].as_str().expect("an id").to_owned();
    let listing_id: ListingId = id.parse().expect("a listing id");
    let sent = t.requests();
    assert_eq!(sent.last().map(String::as_str), Some("TransactWriteItems"), "{sent:?}");
    assert_eq!(
        sent.iter().filter(|r| r.contains("Write")).count(),
        1,
        "the listing and its details in one transaction"
    );

    let query = access::listing_with_details(&listing_id).expect("a query").into_query();
    let items = partition(&t, &query, ("LISTING", "ListingDetails", "listingId"), &id, &text).await;
    let metadata = &items["#METADATA"];
    assert!(!metadata.contains_key("description"), "no long text in the item a change rewrites: {metadata:?}");
    assert_eq!(metadata["gsi1pk"], "SELLER#alice");
    t.requests();

    let get = |id: &str| req("GET /listings/{listingId}").path("listingId", id);
    let got = listings(&t.deps, get(&id)).await;
    assert_eq!((got.status, &got.body["description"], &got.body["title"]), (200, &json!(text), &json!("Brass lamp")));
    assert_eq!(t.requests(), ["Query"], "the listing and its details: one request");

    let patch = req("PATCH /listings/{listingId}").path("listingId", &id).by(As::User("alice"));
    let changed = listings(&t.deps, patch.json(json!({ "price": 7 }))).await;
    assert_eq!((changed.status, &changed.body["price"]), (200, &json!(7)));
    assert_eq!(changed.body["description"], json!(text), "a change answers the whole listing");
    assert_eq!(t.requests(), ["UpdateItem", "GetItem"]);

    let own =
        listings(&t.deps, req("GET /sellers/{sellerId}/listings").path("sellerId", "alice").by(As::User("alice")))
            .await;
    let card = own.items().iter().find(|l| l["listingId"] == json!(id)).expect("in the seller's list").clone();
    assert_eq!(card.get("description"), None, "a list answers cards: {card}");

    // Without a description: no details item, no description answered.
    let plain = listings(&t.deps, get(L1)).await;
    assert_eq!((plain.status, plain.body.get("description")), (200, None));
    let l1 = access::listing_with_details(&L1.parse().expect("an id")).expect("a query");
    assert_eq!(t.deps.store.query_all_consistent(&l1).await.expect("the partition").len(), 1);
}

/// A short description is held in the listing's own item: created in one
/// `PutItem` (1 WCU where the transaction of the listing and its details
/// took 4), changed in one `UpdateItem` that answers it.
#[tokio::test]
async fn a_short_listing_description_is_held_in_its_item() {
    let t = TestTable::with_demo_data().await;
    let body = json!({ "title": "Brass lamp", "price": 5, "categoryId": "pottery", "description": "From 1930" });
    let created = listings(&t.deps, req("POST /listings").by(As::User("alice")).json(body)).await;
    assert_eq!((created.status, &created.body["description"]), (201, &json!("From 1930")), "{:?}", created.body);
    let id = created.body["listingId"].as_str().expect("an id").to_owned();
    let sent = t.requests();
    assert_eq!(sent.last().map(String::as_str), Some("PutItem"), "{sent:?}");
    assert!(!sent.iter().any(|r| r == "TransactWriteItems"), "no transaction: {sent:?}");

    let query = access::listing_with_details(&id.parse().expect("an id")).expect("a query");
    let items = shapes(t.deps.store.query_all_consistent(&query).await.expect("the partition"));
    assert_eq!(items.keys().collect::<Vec<_>>(), ["#METADATA"], "no details item");
    assert_eq!(items["#METADATA"]["description"], "From 1930");
    t.requests();

    let got = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", &id)).await;
    assert_eq!((got.status, &got.body["description"]), (200, &json!("From 1930")));
    assert_eq!(t.requests(), ["Query"]);
    let patch = req("PATCH /listings/{listingId}").path("listingId", &id).by(As::User("alice"));
    let changed = listings(&t.deps, patch.json(json!({ "price": 7 }))).await;
    assert_eq!((changed.status, &changed.body["description"]), (200, &json!("From 1930")));
    assert_eq!(t.requests(), ["UpdateItem"], "the change answers the text it returned");
    let own = listings(&t.deps, req("GET /sellers/{sellerId}/listings/active").path("sellerId", "alice")).await;
    let card = own.items().iter().find(|l| l["listingId"] == json!(id)).expect("in the storefront").clone();
    assert_eq!(card.get("description"), None, "a list answers cards: {card}");
}

/// The listing partition's `#METADATA` item and whether it has details.
async fn stored(t: &TestTable, id: &str) -> (Item, bool) {
    let query = access::listing_with_details(&id.parse().expect("an id")).expect("a query");
    let items = t.deps.store.query_all_consistent(&query).await.expect("the partition");
    let is = |i: &Item, sk: &str| i.get("sk") == Some(&AttributeValue::S(sk.to_owned()));
    let details = items.iter().any(|i| is(i, "#DETAILS"));
    (items.into_iter().find(|i| is(i, "#METADATA")).expect("the listing"), details)
}

/// A new listing of alice's in Paris titled `title` with a description of
/// `n` characters: its id.
async fn located(t: &TestTable, title: &str, n: usize) -> String {
    let body = json!({
        "title": title, "price": 5, "categoryId": "pottery", "description": "d".repeat(n),
        "location": { "lat": 48.8566, "lon": 2.3522 },
    });
    let created = listings(&t.deps, req("POST /listings").by(As::User("alice")).json(body)).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    created.body["listingId"].as_str().expect("an id").to_owned()
}

/// Where a description goes is decided by the size DynamoDB bills (the
/// meter's own count, `integration_tests::pricing`: the documented rules,
/// written apart from the store's), the keys the stream processor adds
/// later included: of listings with descriptions of 200 to 600 characters,
/// each held inline is within 1,024 bytes once indexed with 128 to spare
/// for what later writes add (the largest of them, priced at the most and
/// favorited, its favorites folded, still is within them), and each held
/// beside it would have left less.
#[tokio::test]
async fn a_description_is_inline_exactly_when_its_item_stays_within_one_write_unit() {
    let t = TestTable::with_demo_data().await;
    let mut h = Hostile::on(&t);
    let mut made = Vec::new();
    for n in (200..=600).step_by(2) {
        made.push((located(&t, "Brass lamp", n).await, n));
    }
    h.index().await;
    let (mut inline, mut beside) = (Vec::new(), 0);
    for (id, n) in &made {
        let (metadata, details) = stored(&t, id).await;
        assert!(metadata.contains_key("gsi4pk") && metadata.contains_key("gsi2pk"), "indexed: {metadata:?}");
        let size = item_size(&metadata);
        if metadata.contains_key("description") {
            assert!(size + 128 <= 1024 && !details, "{n} characters inline: {size} bytes");
            inline.push(id.clone());
        } else {
            let with_it = size + "description".len() as u64 + *n as u64;
            assert!(with_it + 128 > 1024 && details, "{n} characters beside it: {with_it} bytes had it been inline");
            beside += 1;
        }
    }
    assert!(!inline.is_empty() && beside > 0, "both sides of the unit: {} inline, {beside} beside", inline.len());
    let largest = inline.last().expect("one inline");
    let before = item_size(&stored(&t, largest).await.0);
    let patch = req("PATCH /listings/{listingId}").path("listingId", largest).by(As::User("alice"));
    assert_eq!(listings(&t.deps, patch.json(json!({ "price": 999_999.99 }))).await.status, 200);
    for fan in ["bob", "erin"] {
        let fave = req("PUT /users/me/favorites/{listingId}").path("listingId", largest).by(As::User(fan));
        assert_eq!(integration_tests::users(&t.deps, fave).await.status, 201);
    }
    h.index().await;
    let (metadata, _) = stored(&t, largest).await;
    assert!(metadata.contains_key("favoritesFoldedRev"), "folded: {metadata:?}");
    assert!(metadata.contains_key("description"), "still inline: {metadata:?}");
    let after = item_size(&metadata);
    assert!(after <= 1024, "{after} bytes once priced and folded: {metadata:?}");
    println!(
        "{} inline, {beside} beside; the largest inline {before} bytes, {after} once priced and folded",
        inline.len()
    );
}

/// A listing's put retried after it applied (its answer lost) finds its
/// listing changed by then: a favorite's count folded into it by the
/// stream processor within a second or two, before the SDK's last retry
/// (before 2026-12-07, the browse keys it added). `put_fresh` takes it as
/// its own (the listing as it is now), where `put_new` fails.
#[tokio::test]
async fn a_put_retried_after_the_stream_processor_changed_it_is_its_own() {
    let t = TestTable::with_demo_data().await;
    let l1 = keyschema::keys::listing(&L1.parse().expect("an id")).expect("a key");
    let mut listing: domain::model::Listing = t.deps.store.get_consistent(&l1).await.expect("read").expect("L1");
    listing.listing_id = ListingId::generate();
    assert_eq!(t.deps.store.put_fresh(&listing).await.expect("put"), None, "put now");
    let favorite = req("PUT /users/me/favorites/{listingId}").path("listingId", listing.listing_id);
    assert_eq!(users(&t.deps, favorite.by(As::User("bob"))).await.status, 201);
    Hostile::on(&t).index().await;
    let err = t.deps.store.put_new(&listing).await.expect_err("not the item sent any more");
    assert!(matches!(err, store::StoreError::ConditionFailed(Some(_))), "{err:?}");
    let own = t.deps.store.put_fresh(&listing).await.expect("its own").expect("the listing as it is");
    let count = own.get("favoriteCount").and_then(|v| v.as_n().ok()).map(String::as_str);
    assert_eq!(count, Some("1"), "with the count the stream processor folded in: {own:?}");
}

/// A longer title that takes a listing holding its text past its write
/// unit moves the text into its details in the same request; the answers
/// stay the same.
#[tokio::test]
async fn a_longer_title_moves_an_inline_description_beside_its_listing() {
    let t = TestTable::with_demo_data().await;
    let text = "d".repeat(250);
    let body = json!({ "title": "Lamp", "price": 5, "categoryId": "pottery", "description": text });
    let created = listings(&t.deps, req("POST /listings").by(As::User("alice")).json(body)).await;
    let id = created.body["listingId"].as_str().expect("an id").to_owned();
    assert!(stored(&t, &id).await.0.contains_key("description"), "inline at first");
    let patch = req("PATCH /listings/{listingId}").path("listingId", &id).by(As::User("alice"));
    let title = "\u{1D11E}".repeat(200);
    let changed = listings(&t.deps, patch.json(json!({ "title": title }))).await;
    assert_eq!((changed.status, &changed.body["description"]), (200, &json!(text)), "{:?}", changed.body);
    let (metadata, details) = stored(&t, &id).await;
    assert!(!metadata.contains_key("description") && details, "moved beside it: {metadata:?}");
    assert!(item_size(&metadata) > 1024 - 128, "the title took it past the unit's room");
    let got = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", &id)).await;
    assert_eq!((&got.body["description"], &got.body["title"]), (&json!(text), &json!(title)));
}

/// A listing reactivated with a longer title: the browse keys the stream
/// processor adds back count too. Of 21 listings holding a 300-character
/// text, removed and brought back with titles 0 to 300 bytes longer, none
/// holds its text past its write unit once indexed (deciding by the item
/// as returned, without those keys, left the one 180 bytes longer holding
/// its text at 1,037 bytes).
#[tokio::test]
async fn a_reactivated_listing_holding_its_text_stays_within_its_write_unit() {
    let t = TestTable::with_demo_data().await;
    let mut h = Hostile::on(&t);
    let mut ids = Vec::new();
    for extra in (0..=300).step_by(15) {
        ids.push((located(&t, "Lamp", 300).await, extra));
    }
    h.index().await;
    let patch = |id: &str, body: Value| {
        req("PATCH /listings/{listingId}").path("listingId", id).by(As::User("alice")).json(body)
    };
    for (id, _) in &ids {
        assert!(stored(&t, id).await.0.contains_key("description"), "inline at first");
        assert_eq!(listings(&t.deps, patch(id, json!({ "status": "removed" }))).await.status, 200);
    }
    for (id, extra) in &ids {
        // `extra` bytes longer, in 4-byte characters (a title is at most 200 characters).
        let title = format!("Lamp{}{}", "x".repeat(extra % 4), "\u{1D11E}".repeat(extra / 4));
        let back = listings(&t.deps, patch(id, json!({ "status": "active", "title": title }))).await;
        assert_eq!((back.status, back.body["description"].as_str().map(str::len)), (200, Some(300)));
    }
    h.index().await;
    let mut moved = 0;
    for (id, extra) in &ids {
        let (metadata, details) = stored(&t, id).await;
        assert!(metadata.contains_key("gsi2pk"), "active again: {metadata:?}");
        if metadata.contains_key("description") {
            assert!(item_size(&metadata) <= 1024, "{extra} bytes longer: {} bytes", item_size(&metadata));
        } else {
            assert!(details, "{extra}: moved beside it");
            moved += 1;
        }
    }
    assert!(moved > 0 && moved < ids.len(), "{moved} of {} moved", ids.len());
}

/// The move after a longer title is best effort: the change is applied
/// first, so a move that fails (throttled on every attempt) leaves the
/// answer 200 with the text, inline; the next change that finds the item
/// past its unit moves it.
#[tokio::test]
async fn a_move_that_fails_leaves_the_change_answered() {
    let (t, faults) = TestTable::with_faults().await;
    let body = json!({ "title": "Lamp", "price": 5, "categoryId": "pottery", "description": "d".repeat(250) });
    let created = listings(&t.deps, req("POST /listings").by(As::User("alice")).json(body)).await;
    let id = created.body["listingId"].as_str().expect("an id").to_owned();
    let patch =
        |body: Value| req("PATCH /listings/{listingId}").path("listingId", &id).by(As::User("alice")).json(body);
    faults.inject("TransactWriteItems", integration_tests::faults::Fault::Throttled, 3);
    let long = "\u{1D11E}".repeat(200);
    let changed = listings(&t.deps, patch(json!({ "title": long }))).await;
    assert_eq!((changed.status, changed.body["description"].as_str().map(str::len)), (200, Some(250)));
    assert_eq!(faults.pending(), 0, "the move was tried");
    assert!(stored(&t, &id).await.0.contains_key("description"), "left inline");
    let again = listings(&t.deps, patch(json!({ "price": 6 }))).await;
    assert_eq!((again.status, again.body["description"].as_str().map(str::len)), (200, Some(250)));
    let (metadata, details) = stored(&t, &id).await;
    assert!(!metadata.contains_key("description") && details, "moved by the next change: {metadata:?}");
}

/// A listing written before descriptions moved out holds its own: it is
/// still answered.
#[tokio::test]
async fn a_listing_written_before_details_answers_its_own_description() {
    let t = TestTable::with_demo_data().await;
    inline_listing(&t, L1, "Written inline").await;
    let got = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", L1)).await;
    assert_eq!((got.status, &got.body["description"]), (200, &json!("Written inline")));
}

#[tokio::test]
async fn a_product_s_description_is_an_item_beside_it_read_in_one_query() {
    let t = TestTable::with_demo_data().await;
    let body = json!({ "name": "Bowl", "brandId": "acme", "categoryId": "pottery", "price": 4, "stockLevel": 3, "description": "Glazed" });
    let created = catalog(&t.deps, req("POST /products").by(As::Admin).json(body)).await;
    assert_eq!((created.status, &created.body["description"]), (201, &json!("Glazed")), "{:?}", created.body);
    let id = created.body["productId"].as_str().expect("an id").to_owned();
    let product_id: ProductId = id.parse().expect("a product id");

    let query = access::product_with_details(&product_id).expect("a query").into_query();
    let items = partition(&t, &query, ("PRODUCT", "ProductDetails", "productId"), &id, "Glazed").await;
    assert!(!items["#METADATA"].contains_key("description"));
    t.requests();

    let got = catalog(&t.deps, req("GET /products/{productId}").path("productId", &id)).await;
    assert_eq!((got.status, &got.body["description"]), (200, &json!("Glazed")));
    assert_eq!(t.requests(), ["Query"]);

    let stock = req("POST /products/{productId}/stock").path("productId", &id).by(As::Admin);
    let changed = catalog(&t.deps, stock.json(json!({ "delta": 2 }))).await;
    assert_eq!(
        (changed.status, &changed.body["stockLevel"], &changed.body["description"]),
        (200, &json!(5), &json!("Glazed"))
    );
    assert_eq!(t.requests(), ["TransactWriteItems", "Query"]);

    let list = catalog(&t.deps, req("GET /brands/{brandId}/products").path("brandId", "acme")).await;
    let card: &Value = list.items().iter().find(|p| p["productId"] == json!(id)).expect("in the brand's list");
    assert_eq!(
        (card.get("description"), card.get("stockLevel")),
        (None, None),
        "a list answers no description and no stock (the product page does): {card}"
    );
}

/// Items written before descriptions moved out: reconcile moves a
/// product's inline description, and a listing's that takes its item past
/// a write unit, into its details item (a dry run only finds them), and
/// leaves a listing's that fits; the API answers the same before and
/// after, and a second run finds nothing.
#[tokio::test]
async fn reconcile_moves_inline_descriptions_into_details() {
    use maintenance::pace::Budget;
    use maintenance::reconcile::{self, Kind, Options};
    let t = TestTable::with_demo_data().await;
    // A product's moves whatever its length.
    let (listing_text, product_text) = (long_text(1_100), "Also inline".to_owned());
    let listing = inline_listing(&t, L1, &listing_text).await;
    // One that fits a write unit stays where it is.
    let short = local_stack::demo::LISTING_IDS[1];
    inline_listing(&t, short, "Short and inline").await;
    let product_id = local_stack::demo::PRODUCT_IDS[0];
    let product_key = keyschema::keys::product(&product_id.parse().expect("an id")).expect("a key");
    let mut product: domain::model::Product =
        t.deps.store.get_consistent(&product_key).await.expect("a read").expect("the demo product");
    product.description = Some(product_text.clone());
    t.deps.store.put(&product).await.expect("put");
    let answers = || async {
        let l = listings(&t.deps, req("GET /listings/{listingId}").path("listingId", L1)).await;
        let p = catalog(&t.deps, req("GET /products/{productId}").path("productId", product_id)).await;
        (l.body, p.body)
    };
    let before = answers().await;
    assert_eq!((&before.0["description"], &before.1["description"]), (&json!(listing_text), &json!(product_text)));
    // A list answers cards, even of an item that still holds its text.
    let brand = product.brand_id.to_string();
    let list = catalog(&t.deps, req("GET /brands/{brandId}/products").path("brandId", &brand)).await;
    let card = list.items().iter().find(|p| p["productId"] == json!(product_id)).expect("in the brand's list").clone();
    assert_eq!(card.get("description"), None, "{card}");

    let unpaced = Options { budget: Budget { rcu: 0.0, wcu: 0.0 }, ..Options::default() };
    let dry = reconcile::run(&t.deps.store, Options { dry_run: true, ..unpaced }).await;
    let tally = |r: &reconcile::Report| (r.of(Kind::InlineDescriptions).found, r.of(Kind::InlineDescriptions).repaired);
    assert_eq!(tally(&dry), (2, 0), "found, not moved: {dry:#?}");
    let run = reconcile::run(&t.deps.store, unpaced).await;
    assert!(run.complete, "{run:?}");
    assert_eq!(tally(&run), (2, 2), "{run:#?}");

    for (query, text) in [
        (access::listing_with_details(&listing.listing_id).expect("q").into_query(), listing_text.as_str()),
        (access::product_with_details(&product.product_id).expect("q").into_query(), product_text.as_str()),
    ] {
        let items = shapes(t.deps.store.query_all_consistent(&query).await.expect("read"));
        assert_eq!(items["#DETAILS"]["description"], text);
        assert!(!items["#METADATA"].contains_key("description"), "moved, not copied: {items:?}");
    }
    assert_eq!(answers().await, before, "the same answers before and after");
    let q = access::listing_with_details(&short.parse().expect("an id")).expect("a query");
    let items = shapes(t.deps.store.query_all_consistent(&q).await.expect("read"));
    assert_eq!(items["#METADATA"]["description"], "Short and inline", "within a write unit: left");

    let again = reconcile::run(&t.deps.store, unpaced).await;
    assert_eq!(tally(&again), (0, 0), "a second run finds nothing: {again:#?}");
}

/// Details someone else wrote: with the same text, the inline copy goes;
/// with another, both stay and the run reports it.
#[tokio::test]
async fn reconcile_leaves_an_inline_text_its_details_contradict() {
    use maintenance::pace::Budget;
    use maintenance::reconcile::{self, Kind, Options};
    let t = TestTable::with_demo_data().await;
    let unpaced = Options { budget: Budget { rcu: 0.0, wcu: 0.0 }, ..Options::default() };
    let ids = local_stack::demo::LISTING_IDS;
    let (same, another) = (long_text(1_100), long_text(1_101));
    for (id, details) in [(ids[0], &same), (ids[1], &another)] {
        let listing_id = inline_listing(&t, id, &same).await.listing_id;
        let written = domain::model::ListingDetails { listing_id, description: details.clone() };
        t.deps.store.put(&written).await.expect("put details");
    }
    let run = reconcile::run(&t.deps.store, unpaced).await;
    assert!(run.complete, "{run:?}");
    let tally = run.of(Kind::InlineDescriptions);
    assert_eq!((tally.found, tally.repaired), (1, 1), "{run:#?}");
    assert_eq!(run.of(Kind::Unreadable).found, 1, "the contradicted one reported: {run:#?}");
    for (id, inline_left) in [(ids[0], false), (ids[1], true)] {
        let q = access::listing_with_details(&id.parse().expect("an id")).expect("a query");
        let items = shapes(t.deps.store.query_all_consistent(&q).await.expect("read"));
        assert_eq!(items["#METADATA"].contains_key("description"), inline_left, "{id}: {items:?}");
    }
}
