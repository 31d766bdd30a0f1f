//! The search near a point against cells held in memory: walks of random
//! points (spread over the globe, clustered across the antimeridian, at the
//! poles, a hundred at one spot) are exact against a brute-force sort by
//! ring then sort key, at every page size, radius 0 and the radius edge
//! included, with and without a filter and a budget; and what a page
//! costs in a city, first and later in a walk.

use std::convert::Infallible;

use domain::geo::{Location, HASH_LEN};
use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use ulid::Ulid;

use super::*;

#[derive(Clone, Debug, PartialEq)]
struct It {
    at: Location,
    id: Ulid,
}

impl Placed for It {
    fn location(&self) -> Option<Location> {
        Some(self.at)
    }
    fn id(&self) -> Ulid {
        self.id
    }
    fn sort_key(&self) -> String {
        format!("{}#{}", self.at.geohash(HASH_LEN), self.id)
    }
}

type Memory = memory::InMemory<It>;

fn rng(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

fn id(i: usize) -> Ulid {
    Ulid::from_parts(1_790_000_000_000 + i as u64, i as u128)
}

fn memory(points: &[Location]) -> Memory {
    memory::InMemory::new(points.iter().enumerate().map(|(i, at)| It { at: *at, id: id(i) }))
}

/// A city: 20,000 listings within 25 km of Paris, denser toward the
/// centre; the centre, the points and the generator drawn from (for the
/// points a page is asked at).
fn city() -> (Location, Vec<Location>, TestRng) {
    let paris = Location::new(48.8566, 2.3522).unwrap();
    let mut rng = rng(11);
    let points = (0..20_000)
        .map(|_| paris.toward(25.0 * rng.random_range(0.0f64..1.0).powf(1.5), rng.random_range(0.0..360.0)))
        .collect();
    (paris, points, rng)
}

/// The ids of every page of a walk of [`page_where`] within `budget`, each
/// page's length, whether it has a next and its cost given to `each`.
fn walk_where<A: CellAsker<It, Error = Infallible>>(
    m: &A,
    (at, radius, limit): (Location, f64, usize),
    keep: &(dyn Fn(&It) -> bool + Sync),
    budget: Budget,
    mut each: impl FnMut(usize, bool, &Cost),
) -> Vec<Ulid> {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let (mut got, mut after) = (Vec::new(), None);
    for _ in 0..50_000 {
        let (items, next, cost) = runtime.block_on(page_where(at, radius, limit, after, keep, m, budget)).unwrap();
        assert!(items.len() <= limit);
        each(items.len(), next.is_some(), &cost);
        got.extend(items.iter().map(|f| f.item.id));
        match next {
            Some(n) => after = Some(n),
            None => return got,
        }
    }
    panic!("the walk does not end");
}

/// Asserts a page kept to `budget`, but for its first round of one ask
/// (two queries where a cell is read in two partitions), which always goes.
fn assert_within(cost: &Cost, budget: Budget) {
    let within = cost.queries <= budget.requests && cost.units <= budget.units;
    assert!(within || (cost.rounds == 1 && cost.queries <= 2), "{cost:?} over {budget:?}");
}

/// The items within `radius` of `at`, by ring then sort key, with their
/// distances.
fn brute(points: &[Location], at: Location, radius: f64) -> Vec<(Ulid, f64)> {
    let rings = Rings::new(radius);
    let mut want: Vec<(usize, String, Ulid, f64)> = points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let km = at.distance_km(p);
            let it = It { at: *p, id: id(i) };
            Some((rings.of(km)?, it.sort_key(), it.id, km))
        })
        .collect();
    want.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    want.into_iter().map(|(_, _, u, km)| (u, km)).collect()
}

#[test]
fn walks_are_exact_against_a_brute_force_sort() {
    let centres = [
        Location::new(48.8566, 2.3522).unwrap(),
        Location::new(0.0, 179.98).unwrap(),
        Location::new(-12.0, -179.99).unwrap(),
        Location::new(89.95, 10.0).unwrap(),
        Location::new(-89.99, -40.0).unwrap(),
        Location::new(90.0, 0.0).unwrap(),
    ];
    let mut rng = rng(7);
    let mut points = Vec::new();
    // Clustered within 60 km of each centre, a hundred at one spot, and some
    // exactly on a radius's edge; plus points anywhere.
    for c in centres {
        for _ in 0..300 {
            points.push(c.toward(rng.random_range(0.0..60.0), rng.random_range(0.0..360.0)));
        }
        for k in 0..8 {
            points.push(c.toward(20.0, f64::from(k) * 45.0));
        }
    }
    let spot = Location::new(48.86, 2.35).unwrap();
    points.extend(std::iter::repeat_n(spot, 100));
    for _ in 0..1_000 {
        let (lat, lon): (f64, f64) = (rng.random_range(-90.0..=90.0), rng.random_range(-180.0..=180.0));
        points.push(Location::new(lat, lon).unwrap());
    }
    let m = memory(&points);
    let kept = |u: &Ulid| u.0.is_multiple_of(3);
    let mut worst = Cost::default();
    for at in centres.into_iter().chain([spot]) {
        for radius in [0.0, 5.0, 20.0, 50.0] {
            for filtered in [false, true] {
                let mut want = brute(&points, at, radius);
                if filtered {
                    want.retain(|(u, _)| kept(u));
                }
                let want: Vec<Ulid> = want.into_iter().map(|(u, _)| u).collect();
                for limit in [1usize, 7, 50].into_iter().filter(|l| *l > 1 || radius <= 20.0) {
                    // A budget of nothing: a query a page (at a limit of 7, to 5 km).
                    let none = Budget { requests: 0, units: 0 };
                    let budgets = match limit == 7 && radius <= 5.0 {
                        true => vec![Budget::page(limit), none],
                        false => vec![Budget::page(limit)],
                    };
                    for budget in budgets {
                        let keep = |i: &It| !filtered || kept(&i.id);
                        let mut most = Cost::default();
                        let got = walk_where(&m, (at, radius, limit), &keep, budget, |len, next, cost| {
                            assert_within(cost, budget);
                            assert!(len == limit || !next || cost.stopped_early, "short, not stopped early: {cost:?}");
                            most = worse(most, *cost);
                        });
                        let case = format!("{at:?} r {radius} limit {limit} filtered {filtered} {budget:?}");
                        assert_eq!(got, want, "{case}");
                        if limit == 50 && budget.units > 0 {
                            worst = worse(worst, most);
                        }
                    }
                }
            }
        }
    }
    assert_eq!(brute(&points, spot, 0.0).len(), 100, "radius 0: the hundred at the point");
    println!("worst page of 50: {worst:?}");
}

/// The larger of each of two pages' costs.
fn worse(a: Cost, b: Cost) -> Cost {
    Cost {
        queries: a.queries.max(b.queries),
        rounds: a.rounds.max(b.rounds),
        read: a.read.max(b.read),
        units: a.units.max(b.units),
        stopped_early: a.stopped_early || b.stopped_early,
    }
}

#[test]
fn a_page_is_nearest_first_to_within_a_ring() {
    let (paris, points, _) = city();
    let m = memory(&points);
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let (items, ..) = runtime.block_on(page(paris, 50.0, 100, None, &m)).unwrap();
    assert_eq!(items.len(), 100);
    for pair in items.windows(2) {
        assert!(pair[0].km < (pair[1].km * GROWTH).max(FIRST_KM), "{} before {}", pair[0].km, pair[1].km);
    }
}

#[path = "dense.rs"]
mod dense;
#[path = "near_budget.rs"]
mod near_budget;
