//! Issue 33 item 1: every public and user read of listings within its
//! worst-case cost (shared/SPEC.md section 2, "Bounded cost") with hostile
//! data made through the API (`integration_tests::hostile`): a page of 20
//! at most 24 requests and 12 RCU, a page of 100 at most 40 and 40, one
//! listing at most 5 RCU, RCU by DynamoDB's documented pricing from the
//! items each request read (`integration_tests::pricing`), walked five
//! pages at 20 and three at 100. A page shorter than its limit with a next
//! page breaks the contract too (issue 33 item 2: pages stay full), except
//! where the contract lets a filtered page stop early.
//!
//! Each test prints its pages (`BOUND | route | ...`, with `--nocapture`).
//! A browse page may stop at its bound (`stoppedEarly`: its second round
//! over 16 shards of the largest cards cut to what its first left).
//! Those still over their bound are ignored with the reason (issue 33);
//! `--run-ignored only` runs them. The largest user and category ids the
//! API takes stand in the keys, as the longest title and description do.

use domain::geo::{Cell, Location, CELL_LEN};
use integration_tests::hostile::Hostile;
use integration_tests::metered::{assert_pages_within, assert_within, check, once, Bound, Fullness, Function, Route};
use integration_tests::{req, As, TestTable};

/// Listings of the longest title and description (17 KB items).
pub const LONG: usize = 300;
/// Listings at one spot.
pub const SPOT: usize = 1000;
/// Listings titled with expanding characters.
pub const EXPANDING: usize = 120;
/// Listings whose titles' posting lists never meet.
pub const NEVER_MEETING: usize = 240;
/// Listings around each polar or antimeridian place (within 18 km).
pub const POLAR: usize = 60;
/// The most browse shards a category takes (admin).
const SHARDS: u16 = domain::shard::MAX_LISTING_SHARDS;
/// The longest user id the API takes (a JWT `sub`): it stands in the
/// seller's listings and their index keys.
const SELLER: &str = "longest-seller-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
/// The longest category id: it stands in every browse and price key.
const WIDE: &str = "widest-category-yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy";

fn paris() -> Location {
    Location::new(48.8566, 2.3522).unwrap()
}

fn spot() -> Location {
    Location::new(40.7128, -74.006).unwrap()
}

/// `seller` with [`LONG`] long listings in category `wide` ([`SHARDS`]
/// shards), within 5 km of Paris, indexed; and a user `fan`.
async fn long_listings(h: &mut Hostile<'_>, seller: &'static str) -> Vec<String> {
    h.users(&[seller, "fan"]).await;
    h.category(WIDE, SHARDS).await;
    let ids = h.long_listings(seller, WIDE, LONG, paris(), 5.0).await;
    h.index().await;
    ids
}

/// A search for `q` on the data `data` names, holding `holds`: a page
/// answers at most 50 (the contract: each listing is read on its own, 0.5
/// RCU at least), fewer where its posting reads leave less of its bound
/// (`stoppedEarly`).
fn search(q: &str, data: &str, holds: usize) -> Route {
    let r = req("GET /search/listings").query("q", q);
    Route::new(&format!("GET /search/listings?q={q} ({data})"), Function::Listings, r, holds)
        .full(Fullness::AtMostOrStoppedEarly(50))
}

fn near(lat: f64, lon: f64, radius_km: f64) -> integration_tests::Req {
    req("GET /listings/near").query("lat", lat).query("lon", lon).query("radiusKm", radius_km)
}

#[tokio::test]
async fn one_listing_costs_at_most_5_rcu() {
    let (t, meter) = TestTable::with_meter().await;
    let mut h = Hostile::on(&t);
    h.users(&[SELLER]).await;
    h.category(WIDE, 1).await;
    let ids = h.long_listings(SELLER, WIDE, 1, paris(), 0.0).await;
    h.index().await;
    let get = req("GET /listings/{listingId}").path("listingId", &ids[0]);
    let page = once(&t, &meter, Function::Listings, get).await;
    assert_within(&check("GET /listings/{id} (17 KB listing)", None, &[page], Bound::ONE, Fullness::Full));
}

/// 16 shards of the largest cards: a page's second round keeps to what its
/// first left (`fanout::Bounded`), so it may stop before it is full.
#[tokio::test]
async fn browse_newest_within_page_bounds() {
    browse_within_page_bounds(None).await;
}

#[tokio::test]
async fn browse_by_price_within_page_bounds() {
    browse_within_page_bounds(Some("price")).await;
}

/// Browse `sort`ed (the newest first without) over [`long_listings`], the
/// category read from the table (not remembered).
async fn browse_within_page_bounds(sort: Option<&str>) {
    let (t, meter) = TestTable::with_meter().await;
    long_listings(&mut Hostile::on(&t), SELLER).await;
    api::cache::forget(&t.deps.store, &keyschema::keys::category(&WIDE.parse().unwrap()).unwrap());
    let mut route = req("GET /categories/{categoryId}/listings").path("categoryId", WIDE);
    if let Some(sort) = sort {
        route = route.query("sort", sort);
    }
    let name = format!("GET /categories/{{id}}/listings?sort={}", sort.unwrap_or("newest"));
    let route = Route::new(&name, Function::Listings, route, LONG);
    assert_pages_within(&t, &meter, [route.full(Fullness::StoppedEarlyAllowed)]).await;
}

/// The largest cards' index copies weigh at most what a browse page counts
/// a card at (`ListingCard::MAX_STORED_BYTES`): a page of 100 of them, the
/// category's read aside.
#[tokio::test]
async fn the_largest_cards_weigh_at_most_their_bound() {
    let (t, meter) = TestTable::with_meter().await;
    long_listings(&mut Hostile::on(&t), SELLER).await;
    let route = req("GET /categories/{categoryId}/listings").path("categoryId", WIDE).query("limit", 100);
    let page = once(&t, &meter, Function::Listings, route).await;
    let (items, bytes) = (page.cost.items.saturating_sub(1), page.cost.bytes);
    let most = domain::answers::ListingCard::MAX_STORED_BYTES as u64;
    println!("{items} cards and the category read {bytes} bytes");
    assert!(items >= 100 && bytes <= (items + 1) * most, "{bytes} bytes for {items} cards, more than {most} each");
    assert!(bytes > items * most * 3 / 4, "the cards are the largest: {bytes} bytes for {items}");
}

#[tokio::test]
async fn a_seller_s_listings_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    long_listings(&mut Hostile::on(&t), SELLER).await;
    let routes = [
        ("GET /sellers/{id}/listings (owner)", req("GET /sellers/{sellerId}/listings").by(As::User(SELLER))),
        (
            "GET /sellers/{id}/listings?status=active",
            req("GET /sellers/{sellerId}/listings").query("status", "active").by(As::User("fan")),
        ),
        ("GET /sellers/{id}/listings/active", req("GET /sellers/{sellerId}/listings/active")),
    ];
    let routes = routes.map(|(name, r)| Route::new(name, Function::Listings, r.path("sellerId", SELLER), LONG));
    assert_pages_within(&t, &meter, routes).await;
}

#[tokio::test]
async fn search_long_titles_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    long_listings(&mut Hostile::on(&t), SELLER).await;
    assert_pages_within(&t, &meter, ["lamp", "la"].map(|q| search(q, "long listings", LONG))).await;
}

#[tokio::test]
async fn search_expanding_titles_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    let mut h = Hostile::on(&t);
    h.users(&[SELLER]).await;
    h.category("words", 1).await;
    h.expanding_listings(SELLER, "words", EXPANDING).await;
    h.index().await;
    // The last: an exact word (cut to 32 bytes as the title's is) and a prefix.
    let queries = ["s", "s\u{3316}", "b\u{3316}\u{3316} s"];
    assert_pages_within(&t, &meter, queries.map(|q| search(q, "expanding titles", EXPANDING))).await;
}

/// Posting lists of the largest postings that never meet (six words, each
/// title holding five), under the longest category id: a page reads the
/// heads of three lists and the driver as far as its bound holds, and
/// answers what its reads leave (issue 33). Seen failing before the budget:
/// pages of 20 at 15 RCU, and `bravo a` at 16-20.5 (six heads, then 200
/// postings a query).
#[tokio::test]
async fn search_lists_that_never_meet_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    let mut h = Hostile::on(&t);
    h.users(&[SELLER]).await;
    h.category(WIDE, 1).await;
    h.never_meeting_listings(SELLER, WIDE, NEVER_MEETING).await;
    h.index().await;
    // The largest posting weighs at most what a page counts one at.
    let postings = integration_tests::derived::scan(&t.deps.store).await;
    let postings = postings
        .iter()
        .filter(|i| integration_tests::derived::s(i, "entityType") == keyschema::table::EntityType::Posting.as_str());
    let widest = postings.map(integration_tests::pricing::item_size).max().unwrap_or(0);
    println!("the widest posting: {widest} bytes");
    assert!(widest as usize <= fanout::search::MAX_POSTING_BYTES && widest > 350, "{widest} bytes");
    let all = integration_tests::hostile::NEVER_MEETING.join(" ").replace("foxtrot", "fox");
    let routes =
        [search(&all, "lists that never meet", 0), search("bravo a", "lists that never meet", NEVER_MEETING * 4 / 6)];
    assert_pages_within(&t, &meter, routes).await;
}

/// 300 listings of the longest title within 5 km of Paris: their cards
/// weigh up to 1.5 KB, so a page reads few at its bound and stops early
/// (before the walk by ring, pages of 20 reached 16-18 RCU).
#[tokio::test]
async fn near_long_listings_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    long_listings(&mut Hostile::on(&t), SELLER).await;
    let (lat, lon) = (paris().lat, paris().lon);
    let wide = near(lat, lon, 50.0).query("categoryId", WIDE);
    let routes = [
        Route::new("GET /listings/near (long listings, 50 km)", Function::Listings, near(lat, lon, 50.0), LONG)
            .full(Fullness::StoppedEarlyAllowed),
        Route::new("GET /listings/near?categoryId=wide (long listings)", Function::Listings, wide, LONG)
            .full(Fullness::StoppedEarlyAllowed),
    ];
    assert_pages_within(&t, &meter, routes).await;
}

/// [`SPOT`] listings of category `spot` at [`spot`], indexed; a category
/// `other`.
async fn spot_of_1000(t: &TestTable) {
    let mut h = Hostile::on(t);
    h.users(&["seller-2"]).await;
    h.category("spot", 1).await;
    h.category("other", 1).await;
    h.spot_listings("seller-2", "spot", SPOT, spot()).await;
    h.index().await;
}

/// A page looking for a category none of a spot of a thousand holds stops
/// at its budget (`stoppedEarly`) within the bound (before: 18 queries and
/// 25 RCU a page of 20, 64 and 62 of 100).
#[tokio::test]
async fn near_a_spot_for_a_category_it_lacks_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    spot_of_1000(&t).await;
    let r = near(spot().lat, spot().lon, 1.0).query("categoryId", "other");
    let route = Route::new("GET /listings/near?categoryId=other (the spot, 1 km)", Function::Listings, r, 0);
    assert_pages_within(&t, &meter, [route.full(Fullness::StoppedEarlyAllowed)]).await;
}

/// Issue 33 item 3 too: a page at a spot holding a thousand answers its
/// limit (no early stop there); 5 m away with nothing in the radius the
/// page stays within the bound: 4 m from the crowded 5 m cell, whose
/// listings are all 5 m away, a page reads it as far as its bound and
/// stops early, empty, its cursor reading the place on (before: one page
/// read it all, 7 requests and 37 RCU).
#[tokio::test]
async fn near_a_spot_of_1000_listings_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    spot_of_1000(&t).await;
    let (at, away) = (spot(), spot().toward(0.005, 90.0));
    let routes = [
        ("GET /listings/near (1,000 at the spot, radius 0)", near(at.lat, at.lon, 0.0), SPOT),
        ("GET /listings/near (1,000 at the spot, radius 1 km)", near(at.lat, at.lon, 1.0), SPOT),
        ("GET /listings/near (5 m from the spot, radius 0)", near(away.lat, away.lon, 0.0), 0),
        (
            "GET /listings/near?categoryId=spot (the spot, 1 km)",
            near(at.lat, at.lon, 1.0).query("categoryId", "spot"),
            SPOT,
        ),
    ];
    let beside = near(away.lat, away.lon, 0.004);
    let beside = Route::new("GET /listings/near (5 m from the spot, radius 4 m)", Function::Listings, beside, 0);
    let routes = routes.map(|(name, r, holds)| Route::new(name, Function::Listings, r, holds));
    assert_pages_within(&t, &meter, routes.into_iter().chain([beside.full(Fullness::StoppedEarlyAllowed)])).await;
}

/// The radius a search of 50 km at `(lat, lon)` searches: near a pole the
/// cells are narrow wedges and a search reads at most 16 of them
/// (`listings::near::MAX_CELLS`), so a wider radius there is narrowed to
/// the widest, to 10 m, and answered as `radiusKm` (asserted here).
async fn allowed_radius(t: &TestTable, lat: f64, lon: f64) -> f64 {
    let at = Location::new(lat, lon).unwrap();
    let widest = Cell::widest_radius(&at, 50.0, 16, CELL_LEN).unwrap();
    let widest = if widest >= 50.0 { 50.0 } else { (widest * 100.0).floor() / 100.0 };
    let page = integration_tests::listings(&t.deps, near(lat, lon, 50.0)).await;
    assert_eq!(page.status, 200, "{:?}", page.body);
    assert_eq!(page.body["radiusKm"].as_f64(), Some(widest), "{:?}", page.body);
    widest
}

/// [`POLAR`] listings around each of `places`, within 18 km, each page of
/// a search of 50 km there (narrowed as [`allowed_radius`] says) within
/// its bound. A page that has found nothing beyond its cursor stops at
/// its budget, empty, and its cursor skips the cells it read (a pole's
/// wedges, a walk's last page proving it is the last; before: 58 to 62
/// requests a page).
async fn polar_pages_within_bounds(places: &[(f64, f64)]) {
    let (t, meter) = TestTable::with_meter().await;
    let mut h = Hostile::on(&t);
    h.users(&["seller-3"]).await;
    h.category("polar", 1).await;
    let around = |&(lat, lon): &(f64, f64)| {
        let at = Location::new(lat, lon).unwrap();
        (0..POLAR).map(move |i| at.toward(i as f64 * 0.3, i as f64 * 47.0))
    };
    for place in places {
        let bodies = around(place)
            .enumerate()
            .map(|(i, there)| {
                integration_tests::hostile::listing_body(&format!("Polar {i}"), "polar", None, Some(there))
            })
            .collect();
        h.listings("seller-3", bodies).await;
    }
    h.index().await;
    let mut routes = Vec::new();
    for &(lat, lon) in places {
        let radius = allowed_radius(&t, lat, lon).await;
        let at = Location::new(lat, lon).unwrap();
        let holds = places.iter().flat_map(around).filter(|p| at.distance_km(p) <= radius - 0.001).count();
        let name = format!("GET /listings/near (lat {lat}, lon {lon}, {radius} km)");
        let route = Route::new(&name, Function::Listings, near(lat, lon, radius), holds);
        routes.push(route.full(Fullness::StoppedEarlyAllowed));
    }
    assert_pages_within(&t, &meter, routes).await;
}

#[tokio::test]
async fn near_the_poles_within_page_bounds() {
    polar_pages_within_bounds(&[(90.0, 0.0), (-89.99, 45.0), (89.99, -120.0), (88.0, 30.0)]).await;
}

/// Two crowds 11 m apart, in cells far apart in key order: 120 listings
/// over many narrow rings (a page reads each cell it meets whole where the
/// density it read says it is sparse).
#[tokio::test]
async fn near_the_antimeridian_within_page_bounds() {
    polar_pages_within_bounds(&[(0.0, 180.0), (0.0, -179.9999)]).await;
}

#[tokio::test]
async fn near_a_pole_of_an_empty_table_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    let mut routes = Vec::new();
    for (lat, lon) in [(90.0, 0.0), (-90.0, 0.0), (0.0, 180.0), (89.5, 10.0), (-87.0, -60.0)] {
        let radius = allowed_radius(&t, lat, lon).await;
        let name = format!("GET /listings/near (empty table, lat {lat}, lon {lon}, {radius} km)");
        routes.push(Route::new(&name, Function::Listings, near(lat, lon, radius), 0));
    }
    assert_pages_within(&t, &meter, routes).await;
}

#[tokio::test]
async fn favorites_within_page_bounds() {
    let (t, meter) = TestTable::with_meter().await;
    let mut h = Hostile::on(&t);
    let ids = long_listings(&mut h, SELLER).await;
    h.favorites("fan", &ids[..120]).await;
    h.index().await;
    let r = req("GET /users/me/favorites").by(As::User("fan"));
    assert_pages_within(&t, &meter, [Route::new("GET /users/me/favorites", Function::Users, r, 120)]).await;
}
