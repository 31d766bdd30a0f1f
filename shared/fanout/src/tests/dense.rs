//! Dense cells (`domain::geo::partition`) in memory: walks over an asker
//! that answers as the listings function does while dense cells are
//! splitting (each dense cell's query in its own partition and in the one
//! that held it before, the answers `merged`), some items still keyed in
//! the old partition and some, moving, in both, are exact against brute
//! force; and a partition of a dense cell the asker knows to be empty is
//! never queried, whatever the radius. (Both written by a review of the
//! dense cells' first commit; the second failed on it at radii 1-10 km.)

use std::convert::Infallible;
use std::sync::Mutex;

use domain::geo::partition::{is_dense, partition};
use domain::geo::Location;
use proptest::prelude::RngExt;
use ulid::Ulid;

use super::super::memory::CARD_BYTES;
use super::super::*;
use super::{assert_within, brute, rng, walk_where, It};

struct Split {
    /// (sort key, item, in the old partition, in the new one)
    items: Vec<(String, It, bool, bool)>,
    splitting: bool,
}

fn query(items: &[(String, It, bool, bool)], ask: &CellAsk, old: bool) -> CellAnswer<It> {
    let dense = is_dense(&ask.prefix);
    let got: Vec<It> = items
        .iter()
        .filter(|(_, _, o, n)| {
            if !dense {
                true
            } else if old {
                *o
            } else {
                *n
            }
        })
        .filter(|(k, ..)| k.starts_with(&ask.prefix))
        .filter(|(k, ..)| ask.after.as_ref().is_none_or(|a| k > a))
        .filter(|(k, ..)| ask.before.as_ref().is_none_or(|b| k < b))
        .take(ask.limit)
        .map(|(_, i, ..)| i.clone())
        .collect();
    let more = got.len() == ask.limit;
    let units = (got.len() * CARD_BYTES).div_ceil(4096).max(1);
    CellAnswer { items: got, more, units }
}

impl CellAsker<It> for Split {
    type Error = Infallible;
    async fn ask(&self, asks: Vec<CellAsk>) -> Result<Vec<(CellAsk, CellAnswer<It>)>, Infallible> {
        Ok(asks
            .into_iter()
            .map(|ask| {
                assert!(partition(&ask.prefix).is_some(), "a query of {} spans partitions", ask.prefix);
                let now = query(&self.items, &ask, false);
                let answer = if self.splitting && is_dense(&ask.prefix) {
                    merged(now, query(&self.items, &ask, true), ask.limit)
                } else {
                    now
                };
                (ask, answer)
            })
            .collect())
    }
    fn queries(&self, prefix: &str) -> usize {
        1 + usize::from(self.splitting && is_dense(prefix))
    }
    fn may_hold(&self, cell: &str) -> bool {
        self.splitting || self.items.iter().any(|(k, _, _, n)| *n && partition(k) == Some(cell))
    }
}

/// A walk, each page within its budget (but a first query over it): a
/// cell read in two partitions is two queries, each billed on its own.
fn walk_split(m: &Split, at: Location, radius: f64, limit: usize, keep: &(dyn Fn(&It) -> bool + Sync)) -> Vec<Ulid> {
    let budget = Budget::page(limit);
    walk_where(m, (at, radius, limit), keep, budget, |_, _, cost| assert_within(cost, budget))
}

#[test]
fn splitting_walks_are_exact() {
    let paris = Location::new(48.8566, 2.3522).unwrap();
    let mut rng = rng(101);
    let mut points: Vec<Location> = (0..1_500)
        .map(|_| paris.toward(30.0 * rng.random_range(0.0f64..1.0).powf(1.5), rng.random_range(0.0..360.0)))
        .collect();
    // Crowds: 80 at a spot in a dense cell, 80 on a fine partition's edge.
    let fine = Cell::of("u09tv").unwrap();
    let edge = Location::new(fine.lat.0, fine.lon.0).unwrap();
    points.extend(std::iter::repeat_n(paris, 80));
    points.extend(std::iter::repeat_n(edge, 80));
    let items: Vec<(String, It, bool, bool)> = points
        .iter()
        .enumerate()
        .map(|(i, at)| {
            let it = It { at: *at, id: Ulid::from_parts(1_790_000_000_000 + i as u64, i as u128) };
            let (old, new) = match i % 5 {
                0 | 1 => (true, false),
                2 => (true, true),
                _ => (false, true),
            };
            (it.sort_key(), it, old, new)
        })
        .collect();
    let mut items = items;
    items.sort_by(|a, b| a.0.cmp(&b.0));
    let m = Split { items, splitting: true };
    let kept = |u: &Ulid| u.0.is_multiple_of(3);
    for at in [paris, edge, edge.toward(0.3, 30.0), paris.toward(20.0, 120.0)] {
        for radius in [0.0, 0.4, 3.0, 12.0, 50.0] {
            for filtered in [false, true] {
                let mut want = brute(&points, at, radius);
                if filtered {
                    want.retain(|(u, _)| kept(u));
                }
                let want: Vec<Ulid> = want.into_iter().map(|(u, _)| u).collect();
                for limit in [1usize, 7, 100].into_iter().filter(|l| *l > 1 || radius <= 3.0) {
                    let keep = |i: &It| !filtered || kept(&i.id);
                    let got = walk_split(&m, at, radius, limit, &keep);
                    assert_eq!(got, want, "{at:?} r {radius} limit {limit} filtered {filtered}");
                }
            }
        }
    }
}

struct Empty(Mutex<Vec<String>>);
impl CellAsker<It> for Empty {
    type Error = Infallible;
    async fn ask(&self, asks: Vec<CellAsk>) -> Result<Vec<(CellAsk, CellAnswer<It>)>, Infallible> {
        self.0.lock().unwrap().extend(asks.iter().map(|a| a.prefix.clone()));
        Ok(asks.into_iter().map(|a| (a, CellAnswer { items: Vec::new(), more: false, units: 1 })).collect())
    }
    fn may_hold(&self, _: &str) -> bool {
        false
    }
}

#[test]
fn an_empty_dense_partition_is_never_queried() {
    let paris = Location::new(48.8566, 2.3522).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let mut bad = Vec::new();
    for radius in [1.0, 5.0, 10.0, 20.0, 50.0] {
        let asker = Empty(Mutex::new(Vec::new()));
        runtime.block_on(page::<It, _>(paris, radius, 20, None, &asker)).unwrap();
        let asked = asker.0.into_inner().unwrap();
        let dense: Vec<&String> = asked.iter().filter(|p| is_dense(p)).collect();
        bad.push((radius, dense.len()));
    }
    assert!(bad.iter().all(|(_, n)| *n == 0), "queries of partitions may_hold says are empty, by radius: {bad:?}");
}
