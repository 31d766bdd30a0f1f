//! Listings near me (issue 21): walks of the API's pages are exact against a
//! brute-force sort by ring then sort key over a few thousand random points (clustered
//! in a city, across the antimeridian, at a pole, many at one spot), at
//! radius 0, the radius edge and across pages; sold and removed listings
//! never show (nor those the index still holds a moment after they were
//! sold); every page is a bounded number of queries of GSI5 (the cards)
//! and nothing else; reconcile restores the index's keys.

use api::Deps;
use domain::geo::{Cell, Location, CELL_LEN};
use domain::ids::ListingId;
use domain::model::{Listing, ListingStatus, Money};
use integration_tests::derived::set_raw;
use integration_tests::{listings, process_stream, req, stream_records, walk_pages, As, Reply, TestTable};
use keyschema::Entity;
use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use serde_json::json;
use store::aws_sdk_dynamodb::types::AttributeValue::S;
use ulid::Ulid;

/// A listing as the stream processor leaves it (every index key it has).
pub(super) fn listing(i: usize, at: Option<Location>, status: ListingStatus) -> Listing {
    Listing {
        home: None,
        listing_id: ListingId::from_ulid(Ulid::from_parts(1_790_000_000_000 + i as u64, i as u128)),
        seller_id: "alice".parse().unwrap(),
        title: format!("Thing {i}"),
        price: Money::from_cents(100),
        category_id: "pottery".parse().unwrap(),
        shard: 0,
        description: None,
        location: None,
        geohash: None,
        status,
        favorite_count: 0,
        created_at: "2026-11-24T00:00:00.000Z".into(),
        updated_at: "2026-11-24T00:00:00.000Z".into(),
    }
    .locate(at)
}

/// Writes them with their keys (and the dense cells' partitions that hold
/// them), as the stream processor leaves them, 16 at a time.
pub(super) async fn put_all(t: &TestTable, all: &[Listing]) {
    use futures_util::stream::{self, StreamExt};
    stream::iter(all)
        .for_each_concurrent(16, |l| async move {
            let keys = <Listing as Entity>::DECL.item_keys(&l.attrs().unwrap()).unwrap();
            let item = store::item::with_keys(l, &keys).unwrap();
            let put = t.deps.store.client().put_item().table_name(t.deps.store.table()).set_item(Some(item));
            put.send().await.unwrap();
            // And the partition of a dense cell its near key is in.
            let near = keys.on(keyschema::table::Index::Gsi5).and(l.geohash.as_deref());
            if let Some(cell) = near.and_then(keyschema::records::NearCell::of) {
                t.deps.store.put(&cell).await.unwrap();
            }
        })
        .await;
}

/// Every page of a walk: (id, distanceKm) in order; the most queries a page sent.
async fn walk(t: &TestTable, at: Location, radius: f64, limit: u16) -> (Vec<(String, f64)>, usize) {
    walk_with(t, &t.deps, at, radius, limit).await
}

/// [`walk`] with `deps` (which dense cells are still splitting).
pub(super) async fn walk_with(
    t: &TestTable,
    deps: &Deps,
    at: Location,
    radius: f64,
    limit: u16,
) -> (Vec<(String, f64)>, usize) {
    let (mut out, mut most) = (Vec::new(), 0);
    let request = || near_request(at, radius, limit);
    walk_pages(
        t,
        request,
        |r| listings(deps, r),
        |page: &Reply, sent| {
            // The cells' queries alone (GSI5: the cards).
            assert!(sent.iter().all(|r| r == "Query"), "{sent:?}");
            most = most.max(sent.len());
            out.extend(
                page.items()
                    .iter()
                    .map(|l| (l["listingId"].as_str().unwrap().to_owned(), l["distanceKm"].as_f64().unwrap())),
            );
        },
    )
    .await;
    (out, most)
}

/// `GET /listings/near` at `at` within `radius`, `limit` a page.
fn near_request(at: Location, radius: f64, limit: u16) -> integration_tests::Req {
    req("GET /listings/near").query("lat", at.lat).query("lon", at.lon).query("radiusKm", radius).query("limit", limit)
}

/// The listings within `radius` of `at` as a walk answers them: by ring
/// (`fanout::nearest::Rings`), then by sort key (geohash, id); with their
/// distances.
pub(super) fn by_ring(
    points: impl IntoIterator<Item = (String, Location)>,
    at: Location,
    radius: f64,
) -> Vec<(String, f64)> {
    let rings = fanout::nearest::Rings::new(radius);
    let mut want: Vec<(usize, String, String, f64)> = points
        .into_iter()
        .filter_map(|(id, p)| {
            let km = at.distance_km(&p);
            Some((rings.of(km)?, format!("{}#{id}", p.geohash(domain::geo::HASH_LEN)), id, km))
        })
        .collect();
    want.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    want.into_iter().map(|(_, _, id, km)| (id, km)).collect()
}

#[tokio::test]
async fn walks_by_ring_are_exact_against_a_brute_force_sort() {
    let t = TestTable::new().await;
    let centres = [
        Location::new(48.8566, 2.3522).unwrap(),
        Location::new(0.0, 179.98).unwrap(),
        Location::new(89.95, 10.0).unwrap(),
    ];
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[21; 32]);
    let mut all = Vec::new();
    for c in centres {
        for k in 0..250 {
            let at = c.toward(rng.random_range(0.0..55.0), rng.random_range(0.0..360.0));
            // Every tenth is sold: not in the index.
            let status = if k % 10 == 9 { ListingStatus::Sold } else { ListingStatus::Active };
            all.push(listing(all.len(), Some(at), status));
        }
        // Exactly on a 10 km circle.
        for k in 0..6 {
            all.push(listing(all.len(), Some(c.toward(10.0, f64::from(k) * 60.0)), ListingStatus::Active));
        }
        // And a dozen within a km (near the pole, the radius a search may
        // have is about that: `listings::near::MAX_CELLS`).
        for k in 1..=12 {
            let at = c.toward(f64::from(k) * 0.08, f64::from(k) * 30.0);
            all.push(listing(all.len(), Some(at), ListingStatus::Active));
        }
    }
    let spot = centres[0];
    for _ in 0..40 {
        all.push(listing(all.len(), Some(spot), ListingStatus::Active));
    }
    all.push(listing(all.len(), None, ListingStatus::Active));
    put_all(&t, &all).await;
    let points: Vec<(ListingId, Location)> = all
        .iter()
        .filter(|l| l.status == ListingStatus::Active)
        .filter_map(|l| Some((l.listing_id, l.location?)))
        .collect();
    let mut most = 0;
    for (at, radius, limit) in [
        (centres[0], 0.0, 7u16),
        (centres[0], 10.0, 50),
        (centres[0], 50.0, 100),
        (centres[1], 25.0, 20),
        (Location::new(0.0, -179.99).unwrap(), 30.0, 100),
        (centres[2], 20.0, 100),
        (Location::new(89.99, 0.0).unwrap(), 8.0, 20),
    ] {
        // Near a pole, the widest radius a search may have there.
        let radius = Cell::widest_radius(&at, radius, 16, CELL_LEN).unwrap_or(0.0);
        let radius = (radius * 100.0).floor() / 100.0;
        let want = by_ring(points.iter().map(|(id, p)| (id.to_string(), *p)), at, radius);
        {
            let (got, queries) = walk(&t, at, radius, limit).await;
            let case = format!("{at:?} r {radius} limit {limit}: {} of {}", got.len(), want.len());
            assert_eq!(
                got.iter().map(|g| &g.0).collect::<Vec<_>>(),
                want.iter().map(|w| &w.0).collect::<Vec<_>>(),
                "{case}"
            );
            for (g, w) in got.iter().zip(&want) {
                assert!((g.1 - w.1).abs() <= 0.0005, "{case}: {} vs {}", g.1, w.1);
            }
            assert!(queries <= 600, "{case}: {queries} queries on a page");
            most = most.max(queries);
        }
    }
    println!("most queries on a page: {most}");
    assert_eq!(walk(&t, spot, 0.0, 100).await.0.len(), 40, "radius 0: the forty at the point");
}

#[tokio::test]
async fn a_listing_with_a_location_is_near_until_it_is_removed_and_bad_input_is_400() {
    let t = TestTable::with_demo_data().await;
    let at = Location::new(-33.8688, 151.2093).unwrap();
    let body = json!({ "title": "Surfboard", "price": 120, "categoryId": "pottery", "location": { "lat": at.lat, "lon": at.lon } });
    let made = listings(&t.deps, req("POST /listings").by(As::User("alice")).json(body)).await;
    assert_eq!(made.status, 201, "{:?}", made.body);
    assert_eq!(made.body["location"]["lat"], at.lat);
    let id = made.body["listingId"].as_str().unwrap().to_owned();
    assert_eq!(walk(&t, at, 1.0, 20).await.0, vec![(id.clone(), 0.0)], "put with it");
    assert!(process_stream(&t, stream_records(&t).await).await.is_empty());
    assert_eq!(walk(&t, at, 1.0, 20).await.0, vec![(id.clone(), 0.0)]);
    // An index copy lags its listing a moment: a listing sold that the
    // index still holds is left out.
    let key = keyschema::keys::listing(&id.parse().unwrap()).unwrap();
    let before = set_raw(&t.deps.store, &key, &[("status", S("sold".into()))], &[]).await;
    assert!(walk(&t, at, 1.0, 20).await.0.is_empty(), "sold, the index copy not yet gone");
    set_raw(&t.deps.store, &key, &[("status", before["status"].clone())], &[]).await;
    assert_eq!(walk(&t, at, 1.0, 20).await.0.len(), 1);
    let remove = req("PATCH /listings/{listingId}").path("listingId", &id).by(As::User("alice"));
    assert_eq!(listings(&t.deps, remove.json(json!({ "status": "removed" }))).await.status, 200);
    assert!(walk(&t, at, 1.0, 20).await.0.is_empty(), "removed in the same write");
    // Coordinates are kept to 7 decimals (DynamoDB stores no number below 1e-130).
    let tiny = json!({ "title": "Tiny", "price": 1, "categoryId": "pottery", "location": { "lat": -4.077e-215, "lon": 1e-300 } });
    let made = listings(&t.deps, req("POST /listings").by(As::User("alice")).json(tiny)).await;
    assert_eq!((made.status, made.body["location"]["lat"].as_f64()), (201, Some(0.0)), "{:?}", made.body);
    for bad in [
        json!({ "lat": 91, "lon": 0 }),
        json!({ "lat": 0, "lon": -180.5 }),
        json!({ "lat": "1", "lon": 0 }),
        json!({ "lat": 0 }),
        json!({ "lat": 0, "lon": 0, "alt": 3 }),
    ] {
        let body = json!({ "title": "X", "price": 1, "categoryId": "pottery", "location": bad });
        assert_eq!(
            listings(&t.deps, req("POST /listings").by(As::User("alice")).json(body)).await.status,
            400,
            "{bad}"
        );
    }
    for q in [
        vec![("lon", "0"), ("radiusKm", "1")],
        vec![("lat", "0"), ("lon", "0"), ("radiusKm", "50.5")],
        vec![("lat", "0"), ("lon", "0"), ("radiusKm", "-1")],
        vec![("lat", "90.1"), ("lon", "0"), ("radiusKm", "1")],
        vec![("lat", "0"), ("lon", "abc"), ("radiusKm", "1")],
        vec![("lat", "NaN"), ("lon", "0"), ("radiusKm", "1")],
        vec![("lat", "0"), ("lon", "0"), ("radiusKm", "1"), ("categoryId", "Not A Slug!")],
    ] {
        let mut r = req("GET /listings/near");
        for (k, v) in &q {
            r = r.query(k, v);
        }
        assert_eq!(listings(&t.deps, r).await.status, 400, "{q:?}");
    }
    // Cursors signed for this search: a ring of it (200), a ring past its
    // last, a key no walk reads, and the exact walk's cursor of before the
    // rings (a distance's bits and an id, under its old scope): 400.
    let sealed = |scope: &str, payload: serde_json::Value| t.deps.cursors.seal(scope, &payload);
    let scope = "near-ring|0.0|0.0|1.0|None";
    let page = |cursor: String| near_request(Location::new(0.0, 0.0).unwrap(), 1.0, 20).query("cursor", cursor);
    let ok = listings(&t.deps, page(sealed(scope, json!({ "r": 3, "k": "s00000000~" })))).await;
    assert_eq!(ok.status, 200, "{:?}", ok.body);
    for bad in [
        sealed(scope, json!({ "r": 12 })),
        sealed(scope, json!({ "r": 0, "k": "s0000<0000" })),
        sealed(scope, json!({ "r": 0, "k": "s".repeat(37) })),
        sealed("near|0.0|0.0|1.0|None", json!({ "k": 0u64, "i": id })),
        sealed(scope, json!({ "k": 0u64, "i": id })),
    ] {
        assert_eq!(listings(&t.deps, page(bad)).await.status, 400);
    }
}

/// `categoryId` filters: 600 listings around one point, one in 20 in
/// another category; walks of that category are exact against a brute-force
/// sort, pages stop at the bound of rounds (saying so) and go on, and every
/// page moves the cursor.
#[tokio::test]
async fn a_category_near_a_point_is_exact_and_bounded() {
    let t = TestTable::with_demo_data().await;
    let centre = Location::new(48.8566, 2.3522).unwrap();
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[9; 32]);
    let all: Vec<Listing> = (0..600)
        .map(|i| {
            let at = centre.toward(rng.random_range(0.0..8.0), rng.random_range(0.0..360.0));
            let mut l = listing(i, Some(at), ListingStatus::Active);
            if i % 20 == 0 {
                l.category_id = "books".parse().unwrap();
            } else if i % 150 == 7 {
                l.category_id = "electronics".parse().unwrap();
            }
            l
        })
        .collect();
    put_all(&t, &all).await;
    for (category, radius, limit) in [("books", 5.0, 3u16), ("books", 8.0, 100), ("electronics", 8.0, 3)] {
        let of = all.iter().filter(|l| l.category_id.as_str() == category);
        let want = by_ring(of.map(|l| (l.listing_id.to_string(), l.location.unwrap())), centre, radius);
        let (mut got, mut early, mut pages, mut empty, mut last) = (Vec::new(), 0, 0, 0, None::<String>);
        let request = || near_request(centre, radius, limit).query("categoryId", category);
        walk_pages(
            &t,
            request,
            |r| listings(&t.deps, r),
            |page: &Reply, _| {
                early += usize::from(page.body["stoppedEarly"] == true);
                empty += usize::from(page.body["stoppedEarly"] == true && page.items().is_empty());
                got.extend(page.items().iter().map(|l| {
                    assert_eq!(l["categoryId"], category);
                    l["listingId"].as_str().unwrap().to_owned()
                }));
                pages += 1;
                let next = page.next_cursor();
                assert!(next != last || next.is_none(), "every page moves on");
                last = next;
                assert!(pages < 500, "the walk ends");
            },
        )
        .await;
        let want: Vec<String> = want.into_iter().map(|(id, _)| id).collect();
        assert_eq!(got, want, "{category}, radius {radius}, limit {limit}");
        println!(
            "near a point, {category} ({} of 600), radius {radius}, limit {limit}: {pages} pages, {early} stopped early, {empty} of them empty",
            want.len()
        );
        if category == "electronics" {
            // So rare that a page stops at its bound with nothing to return,
            // and its cursor still moves on (checked above).
            assert!(empty > 0, "a page of a rare category stopped early with nothing");
        }
    }
}

/// Reconcile recomputes the near index's keys from each listing's state: a
/// listing whose keys were lost, one whose keys point elsewhere, and a sold
/// one that kept its keys are all found (a dry run writes nothing), one run
/// makes the walk exact again (the sold one a page leaves out anyway: the
/// counts show its repair), and a second run finds nothing.
#[tokio::test]
async fn reconcile_restores_the_near_keys() {
    use maintenance::reconcile::{self, Options};
    let t = TestTable::new().await;
    let centre = Location::new(-33.8688, 151.2093).unwrap();
    let mut all: Vec<Listing> = (0..30)
        .map(|i| listing(i, Some(centre.toward(f64::from(i as u8) * 0.2, 40.0)), ListingStatus::Active))
        .collect();
    all[29].status = ListingStatus::Sold;
    put_all(&t, &all).await;
    let exact = |walked: Vec<(String, f64)>| walked.into_iter().map(|w| w.0).collect::<Vec<_>>();
    let want: Vec<String> = all[..29].iter().map(|l| l.listing_id.to_string()).collect();
    assert_eq!(exact(walk(&t, centre, 10.0, 100).await.0), want);
    // Lost; pointing at another cell; a sold listing's keys left behind.
    let key = |l: &Listing| keyschema::keys::listing(&l.listing_id).unwrap();
    set_raw(&t.deps.store, &key(&all[3]), &[], &["gsi4pk", "gsi4sk"]).await;
    set_raw(&t.deps.store, &key(&all[7]), &[("gsi4pk", S("GEO#zzz".into())), ("gsi4sk", S("zzz#1".into()))], &[]).await;
    let sold = &all[29];
    let sk = format!("{}#{}", sold.geohash.as_deref().unwrap(), sold.listing_id);
    let pk = format!("GEO#{}", &sold.geohash.as_deref().unwrap()[..3]);
    set_raw(&t.deps.store, &key(sold), &[("gsi4pk", S(pk)), ("gsi4sk", S(sk))], &[]).await;
    let broken = exact(walk(&t, centre, 10.0, 100).await.0);
    assert!(!broken.contains(&want[3]) && !broken.contains(&want[7]), "the lost keys show");

    let unpaced = || Options { budget: maintenance::pace::Budget { rcu: 0.0, wcu: 0.0 }, ..Options::default() };
    let dry = reconcile::run(&t.deps.store, Options { dry_run: true, ..unpaced() }).await;
    let found = |r: &reconcile::Report| r.of(reconcile::Kind::IndexKeys(keyschema::table::EntityType::Listing)).found;
    assert_eq!(found(&dry), 3, "{:#?}", dry.kinds);
    assert_eq!(exact(walk(&t, centre, 10.0, 100).await.0), broken, "a dry run writes nothing");
    let run = reconcile::run(&t.deps.store, unpaced()).await;
    assert!(run.complete && found(&run) == 3, "{run:#?}");
    assert_eq!(exact(walk(&t, centre, 10.0, 100).await.0), want, "exact after one run");
    let again = reconcile::run(&t.deps.store, unpaced()).await;
    assert_eq!(again.found(), 0, "{:#?}", again.kinds);
}

/// What a page near me takes through a 20 ms round trip to DynamoDB
/// (`cargo nextest run -p integration-tests -E
/// 'test(/what_a_near_page_takes/)' --run-ignored only --no-capture`):
/// 3,000 listings within 10 km of Paris (in its dense cells), walks of 10
/// pages of 20 from 5 points, each page's time beside one `GetItem`'s
/// through the same proxy.
#[tokio::test]
#[ignore = "a measurement: run on its own"]
async fn what_a_near_page_takes_through_a_20_ms_round_trip() {
    use std::time::{Duration, Instant};
    let t = TestTable::new().await;
    let paris = Location::new(48.8566, 2.3522).unwrap();
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[33; 32]);
    let mut place = || paris.toward(10.0 * rng.random_range(0.0f64..1.0).powf(1.5), rng.random_range(0.0..360.0));
    let all: Vec<Listing> = (0..3_000).map(|i| listing(i, Some(place()), ListingStatus::Active)).collect();
    put_all(&t, &all).await;
    let proxy = integration_tests::delaying_proxy(Duration::from_millis(20)).await;
    let slow = integration_tests::through(&t, &proxy).await;
    let get = || req("GET /listings/{listingId}").path("listingId", all[0].listing_id.to_string());
    assert_eq!(listings(&slow, get()).await.status, 200);
    let started = Instant::now();
    for _ in 0..10 {
        listings(&slow, get()).await;
    }
    let one = started.elapsed().as_secs_f64() * 100.0;
    // Per page of the walks: ms, listings answered.
    let mut pages: Vec<Vec<(f64, usize)>> = vec![Vec::new(); 10];
    for _ in 0..5 {
        let at = place();
        let mut cursor: Option<String> = None;
        for each in pages.iter_mut() {
            let mut r = near_request(at, 50.0, 20);
            if let Some(c) = cursor.take() {
                r = r.query("cursor", c);
            }
            let started = Instant::now();
            let page = listings(&slow, r).await;
            each.push((started.elapsed().as_secs_f64() * 1000.0, page.items().len()));
            cursor = page.next_cursor();
        }
    }
    println!("one GetItem through the proxy: {one:.0} ms");
    for (n, each) in pages.iter().enumerate() {
        let ms = each.iter().map(|p| p.0).sum::<f64>() / each.len() as f64;
        let answered = each.iter().map(|p| p.1).sum::<usize>() as f64 / each.len() as f64;
        println!("page {}: {ms:.0} ms ({:.1} round trips), {answered:.1} answered", n + 1, ms / one);
    }
}
