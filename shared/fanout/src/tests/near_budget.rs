//! Walks within budgets (review of the near page's budget): crowds at a
//! spot, a metre away and spread in one 5 m cell, among 400 listings within
//! 3 km; items of 360 to 9,000 bytes, guessed right or not; budgets from
//! none to the contract's: every walk ends, is exact against brute force,
//! and a page shorter than its limit says it stopped early.

use std::convert::Infallible;

use domain::geo::{Cell, Location, HASH_LEN};
use proptest::prelude::RngExt;
use ulid::Ulid;

use super::super::*;
use super::{brute, memory, rng, walk_where, It, Memory};

/// An item's bytes.
type Bytes = dyn Fn(&It) -> usize;

/// The memory's items, each of `bytes(item)`, billed as DynamoDB bills a
/// query (their sum rounded up to 4 KB units, at least one).
struct Sized<'a> {
    inner: &'a Memory,
    bytes: &'a Bytes,
    guess: usize,
}

impl CellAsker<It> for Sized<'_> {
    type Error = Infallible;
    async fn ask(&self, asks: Vec<CellAsk>) -> Result<Vec<(CellAsk, CellAnswer<It>)>, Infallible> {
        let answers = self.inner.ask(asks).await?;
        Ok(answers
            .into_iter()
            .map(|(ask, mut a)| {
                a.units = a.items.iter().map(|i| (self.bytes)(i)).sum::<usize>().div_ceil(4096).max(1);
                (ask, a)
            })
            .collect())
    }
    fn may_hold(&self, cell: &str) -> bool {
        self.inner.may_hold(cell)
    }
    fn item_bytes(&self) -> usize {
        self.guess
    }
}

fn walk(
    m: &Sized,
    at: Location,
    radius: f64,
    limit: usize,
    keep: &(dyn Fn(&It) -> bool + Sync),
    b: Budget,
) -> Vec<Ulid> {
    walk_where(m, (at, radius, limit), keep, b, |len, next, cost| {
        assert!(len == limit || !next || cost.stopped_early, "short, not stopped early: {cost:?}");
    })
}

#[test]
fn walks_within_budgets_are_exact() {
    let mut rng = rng(23);
    let centre = Location::new(40.7128, -74.006).unwrap();
    let cell = Cell::of(&centre.geohash(HASH_LEN)).unwrap();
    let mut points: Vec<Location> = std::iter::repeat_n(centre, 60).collect();
    points.extend(std::iter::repeat_n(centre.toward(0.001, 90.0), 30));
    points.extend((0..40).map(|_| {
        let (lat, lon) = (rng.random_range(cell.lat.0..cell.lat.1), rng.random_range(cell.lon.0..cell.lon.1));
        Location::new(lat, lon).unwrap()
    }));
    points.extend((0..400).map(|_| centre.toward(3.0 * rng.random_range(0.0f64..1.0), rng.random_range(0.0..360.0))));
    let m = memory(&points);
    let kept = |u: &Ulid| u.0.is_multiple_of(3);
    let mixed = |i: &It| if i.id.0.is_multiple_of(7) { 4_000 } else { 300 };
    let (small, large, huge) = (|_: &It| 360, |_: &It| 1_800, |_: &It| 9_000);
    let sizes: [(&Bytes, usize); 4] = [(&small, 360), (&large, 512), (&huge, 512), (&mixed, 512)];
    for (bytes, guess) in sizes {
        let asker = Sized { inner: &m, bytes, guess };
        for at in [centre.toward(0.002, 45.0), centre.toward(2.0, 10.0)] {
            for radius in [0.003, 0.5, 2.0] {
                for filtered in [false, true] {
                    let mut want = brute(&points, at, radius);
                    if filtered {
                        want.retain(|(u, _)| kept(u));
                    }
                    let want: Vec<Ulid> = want.into_iter().map(|(u, _)| u).collect();
                    for limit in [1usize, 20, 100] {
                        for budget in
                            [Budget::page(limit), Budget { requests: 0, units: 0 }, Budget { requests: 2, units: 5 }]
                        {
                            let keep = |i: &It| !filtered || kept(&i.id);
                            let got = walk(&asker, at, radius, limit, &keep, budget);
                            let case = format!("{guess} {at:?} r {radius} limit {limit} {filtered} {budget:?}");
                            assert_eq!(got, want, "{case}");
                        }
                    }
                }
            }
        }
    }
}
