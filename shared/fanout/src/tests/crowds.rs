//! Crowds in memory: a spot holding a thousand answers full pages at a
//! bounded cost, crowds side by side and beside the point walk exactly
//! against brute force.

use super::super::*;
use super::*;

/// Issue 33 item 3: a page at a spot holding a thousand (in a city of
/// 3,000 within 3 km) answers its limit, every page of the walk (but a few
/// around it that stop at their budget), and a page
/// at the spot reads about what it answers, page 50 as page 2: the cursor
/// goes on inside the spot's cell, and the items a query read are never
/// read again to split a cell. Exact as ever. (Before: one listing a page,
/// each page reading all thousand.)
#[test]
fn a_spot_of_a_thousand_answers_full_pages_at_a_bounded_cost() {
    let spot = Location::new(40.7128, -74.006).unwrap();
    let mut rng = rng(13);
    let mut points: Vec<Location> = std::iter::repeat_n(spot, 1_000).collect();
    points.extend((0..3_000).map(|_| spot.toward(3.0 * rng.random_range(0.0f64..1.0), rng.random_range(0.0..360.0))));
    let m = memory(&points);
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    for (radius, limit) in [(0.0, 20), (1.0, 20), (1.0, 100), (5.0, 20)] {
        let want = brute(&points, spot, radius);
        let (mut got, mut after, mut pages) = (Vec::new(), None, 0);
        let (mut at_spot, mut around, mut early) = (Cost::default(), Cost::default(), 0);
        loop {
            let (items, next, cost) = runtime.block_on(page(spot, radius, limit, after, &m)).unwrap();
            pages += 1;
            let full = items.len() == limit || next.is_none();
            assert!(full || cost.stopped_early, "r {radius}: page {pages} answered {}", items.len());
            early += usize::from(!full);
            assert!(next.as_ref().is_none_or(|n| n.within.len() <= MAX_WITHIN));
            if std::env::var("PAGES").is_ok() {
                println!("r {radius} limit {limit} page {pages}: {cost:?} km {:?}", items.last().map(|f| f.km));
            }
            // Pages after the first (which comes down to the spot's cell).
            let worst = if items.last().is_some_and(|f| f.km == 0.0) { &mut at_spot } else { &mut around };
            if pages > 1 {
                *worst = worse(*worst, cost);
            }
            got.extend(items.iter().map(|f| (f.item.id, f.km)));
            match next {
                Some(n) if pages < 60 => after = Some(n),
                _ => break,
            }
        }
        let n = got.len();
        assert_eq!(got, want[..n].to_vec(), "r {radius} limit {limit}: the walk is exact");
        println!(
            "spot of 1,000, radius {radius}, limit {limit}: {pages} pages ({early} short), at the spot {at_spot:?}, around {around:?}"
        );
        assert!(at_spot.queries <= 6 && at_spot.read <= limit + 5 * 32, "r {radius} limit {limit}: {at_spot:?}");
        // Around the spot, a few pages stop at their budget (0 to 6 a walk:
        // 6 at 1 km and 100 since a cursor keeps the places it read to
        // their end, 5 before; the worst page the same).
        assert!(early <= 6, "r {radius} limit {limit}: {early} pages stopped at their budget");
    }
}

/// Crowds side by side (several full-length cells crowded in one cell, one
/// on a cell's edge, two a metre apart), walked at every page size, with and
/// without a filter: exact against brute force, whatever cells the cursor
/// says were looked at in part.
#[test]
fn crowded_places_walk_exactly() {
    let mut rng = rng(17);
    let centre = Location::new(40.7128, -74.006).unwrap();
    // The edge of cell dr5r (a geohash cell's corner) and places beside it.
    let edge = Location::new(40.78125, -73.828125).unwrap();
    let crowds = [centre, centre.toward(0.001, 90.0), centre.toward(0.02, 10.0), centre.toward(0.3, 200.0), edge];
    let mut points = Vec::new();
    for c in crowds {
        points.extend(std::iter::repeat_n(c, 90));
    }
    points.extend((0..600).map(|_| centre.toward(25.0 * rng.random_range(0.0f64..1.0), rng.random_range(0.0..360.0))));
    let m = memory(&points);
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let kept = |u: &Ulid| u.0.is_multiple_of(3);
    for at in [centre, crowds[3], edge, centre.toward(0.01, 45.0)] {
        for radius in [0.0, 0.5, 20.0] {
            for filtered in [false, true] {
                let mut want = brute(&points, at, radius);
                if filtered {
                    want.retain(|(u, _)| kept(u));
                }
                for limit in [1usize, 7, 20, 50] {
                    let (mut got, mut after, mut pages) = (Vec::new(), None, 0);
                    loop {
                        let keep = |i: &It| !filtered || kept(&i.id);
                        let (items, next, _) = runtime
                            .block_on(page_where(at, radius, limit, after, &keep, &m, Budget::page(limit)))
                            .unwrap();
                        got.extend(items.iter().map(|f| (f.item.id, f.km)));
                        pages += 1;
                        assert!(pages < 2_000, "the walk ends");
                        match next {
                            Some(n) => after = Some(n),
                            None => break,
                        }
                    }
                    let case = format!("{at:?} r {radius} limit {limit} filtered {filtered}");
                    assert_eq!(got.len(), want.len(), "{case}");
                    for (g, w) in got.iter().zip(&want) {
                        assert_eq!(g.0, w.0, "{case}");
                    }
                }
            }
        }
    }
    assert_eq!(brute(&points, centre, 0.0).len(), 90, "a crowd at the centre");
}

/// A crowd beside the point, not on it (1 m, 50 m away; or spread inside
/// its 5 m cell, the point at the cell's centre): no item of it can come
/// out before its cell is read whole, so the rest of the cell is read in
/// asks as large as the budget holds (the pages that stop empty reading it
/// on counted as stopped early), and every page is full (found by a review: each page
/// answered one listing and read the crowd again, 32 items a round) but
/// the few that stop at their budget ([`Budget`]) in the city around it
/// (3 of each walk).
#[test]
fn a_crowd_beside_the_point_answers_full_pages() {
    let spot = Location::new(40.7128, -74.006).unwrap();
    let cell = Cell::of(&spot.geohash(HASH_LEN)).unwrap();
    let mut rng = rng(19);
    let city: Vec<Location> =
        (0..3_000).map(|_| spot.toward(3.0 * rng.random_range(0.0f64..1.0), rng.random_range(0.0..360.0))).collect();
    let spread: Vec<Location> = (0..1_000)
        .map(|_| {
            let (lat, lon) = (rng.random_range(cell.lat.0..cell.lat.1), rng.random_range(cell.lon.0..cell.lon.1));
            Location::new(lat, lon).unwrap()
        })
        .collect();
    let centre = Location::new((cell.lat.0 + cell.lat.1) / 2.0, (cell.lon.0 + cell.lon.1) / 2.0).unwrap();
    let at_one_spot: Vec<Location> = std::iter::repeat_n(spot, 1_000).chain(city.iter().copied()).collect();
    let spread_out: Vec<Location> = spread.into_iter().chain(city.iter().copied()).collect();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    for (name, points, at) in [
        ("1 m away", &at_one_spot, spot.toward(0.001, 90.0)),
        ("50 m away", &at_one_spot, spot.toward(0.05, 45.0)),
        ("spread in its cell", &spread_out, centre),
    ] {
        let m = memory(points);
        let want = brute(points, at, 1.0);
        let (mut got, mut after, mut worst, mut early) = (Vec::new(), None, Cost::default(), 0);
        for pages in 1..=60 {
            let (items, next, cost) = runtime.block_on(page(at, 1.0, 20, after, &m)).unwrap();
            let full = items.len() == 20 || next.is_none();
            assert!(full || cost.stopped_early, "{name}: page {pages} answered {}: {cost:?}", items.len());
            early += usize::from(!full);
            worst = worse(worst, cost);
            got.extend(items.iter().map(|f| (f.item.id, f.km)));
            match next {
                Some(n) => after = Some(n),
                None => break,
            }
        }
        assert_eq!(got, want[..got.len()].to_vec(), "{name}: exact");
        println!("crowd {name}: worst page {worst:?}, {early} short");
        assert!(early <= 3, "{name}: {early} pages stopped at their budget");
        assert!(worst.rounds <= 10 && worst.queries <= 40 && worst.read <= 1_600, "{name}: {worst:?}");
    }
}

/// A point beside which a 5 m cell of 400 straddles the circle, a crowd
/// just inside it and a city around: a page that reads the cell to its end
/// keeps it in its cursor, so no later page reads it again from its start
/// (a review's walk: before, the cell dropped out 14 times and 15 pages
/// stopped empty reading it again, 510 queries where the walk now takes
/// 317). Exact as ever.
#[test]
fn a_crowded_place_read_to_its_end_stays_in_the_cursor() {
    let mut rng = rng(41);
    let centre = Location::new(40.7128, -74.006).unwrap();
    let city: Vec<Location> =
        (0..300).map(|_| centre.toward(2.0 * rng.random_range(0.0f64..1.0), rng.random_range(0.0..360.0))).collect();
    // A point 0.5 km away whose 5 m cell meets the circle, the point outside it.
    let beside = (1..200)
        .map(|step| centre.toward(0.5 + f64::from(step) * 0.0002, 200.0))
        .find(|p| {
            Cell::of(&p.geohash(HASH_LEN)).unwrap().distance_bounds_km(&centre).0 <= 0.5 && centre.distance_km(p) > 0.5
        })
        .unwrap();
    let c = Cell::of(&beside.geohash(HASH_LEN)).unwrap();
    let cell =
        (0..400).filter_map(|_| Location::new(rng.random_range(c.lat.0..c.lat.1), rng.random_range(c.lon.0..c.lon.1)));
    let mut points: Vec<Location> = city.into_iter().chain(cell).collect();
    points.extend(std::iter::repeat_n(centre.toward(0.5, 120.0), 80));
    let (m, want) = (memory(&points), brute(&points, centre, 0.5));
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let (mut after, mut got, mut empty, mut back, mut queries) = (None::<After>, Vec::new(), 0, 0, 0);
    let mut furthest: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let (items, next, cost) = runtime.block_on(page(centre, 0.5, 20, after, &m)).unwrap();
        queries += cost.queries;
        got.extend(items.iter().map(|f| (f.item.id, f.km)));
        let Some(n) = next else { break };
        empty += usize::from(items.is_empty());
        for w in &n.within {
            let seen = furthest.entry(w.key[..HASH_LEN].to_owned()).or_default();
            back += usize::from(w.key < *seen);
            *seen = seen.clone().max(w.key.clone());
        }
        after = Some(n);
    }
    assert_eq!(got, want, "exact");
    println!("a place read to its end: {queries} queries, {empty} empty pages, {back} cursors gone back");
    assert_eq!((empty, back), (0, 0), "{queries} queries");
}
