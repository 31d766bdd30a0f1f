//! The marker state machine: every order of a count's records ends the same.

use super::*;
use crate::aggregates::{Aggregate, AggregateKind, Count};
use keyschema::Key;
use store::Item;

fn change(version: Option<u128>, weight: u32, inserted: bool) -> Count {
    Count {
        aggregate: Aggregate {
            kind: AggregateKind::ListingFavorites,
            key: Key { pk: "A".into(), sk: "A".into() },
            sum: None,
            count: "n",
            markers: vec![],
            init: vec![],
        },
        marker: Key { pk: "M".into(), sk: "M".into() },
        marker_item: Item::new(),
        version: version.map(Ulid),
        weight,
        inserted,
    }
}

fn marker(state: MarkerState, weight: u32, version: Option<u128>) -> Marker {
    Marker { state, weight, version: version.map(Ulid) }
}

/// Applies changes in the given order; the contribution at the end.
fn run(order: &[Count]) -> (i64, i64) {
    let mut m = None;
    for c in order {
        if let Some(after) = next(m, c) {
            m = Some(after);
        }
    }
    m.map_or((0, 0), Marker::counted)
}

#[test]
fn a_removal_takes_away_what_was_counted() {
    use MarkerState::*;
    let counted = marker(Counted, 5, None);
    assert_eq!(next(Some(counted), &change(None, 1, false)), Some(marker(Removed, 5, None)));
    assert_eq!(next(Some(counted), &change(None, 5, true)), None, "a replayed insert");
    assert_eq!(next(Some(marker(Removed, 5, None)), &change(None, 5, true)), None, "removed before inserted");
    assert_eq!(next(None, &change(None, 4, false)), Some(marker(Removed, 4, None)));
}

#[test]
fn versions_order_successive_instances() {
    use MarkerState::*;
    let at = |v| Some(marker(Counted, 1, Some(v)));
    assert_eq!(next(at(5), &change(Some(4), 1, false)), None, "an older removal");
    assert_eq!(next(at(5), &change(Some(6), 1, true)), Some(marker(Counted, 1, Some(6))), "a newer add");
    assert_eq!(next(at(5), &change(Some(6), 1, false)), Some(marker(Removed, 1, Some(6))));
    // Every order of add(1) remove(1) add(2) ends counted once; of add(1)
    // remove(1) add(2) remove(2), uncounted.
    let cycle = [change(Some(1), 1, true), change(Some(1), 1, false), change(Some(2), 1, true)];
    let perms = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
    for p in perms {
        let order: Vec<_> = p.iter().map(|i| cycle[*i].clone()).collect();
        assert_eq!(run(&order), (1, 1), "{p:?}");
    }
    let mut ended = cycle.to_vec();
    ended.push(change(Some(2), 1, false));
    assert_eq!(run(&ended), (0, 0));
    ended.reverse();
    assert_eq!(run(&ended), (0, 0));
}
