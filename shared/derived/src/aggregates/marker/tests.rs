//! The marker state machines: every order of a count's records ends the same.

use super::*;
use crate::aggregates::{Aggregate, AggregateKind, Count};
use keyschema::Key;
use store::Item;

fn change(version: Option<u128>, weight: u32, inserted: bool) -> Count {
    Count {
        aggregate: Aggregate {
            home: None,
            kind: AggregateKind::ListingFavorites,
            key: Key { pk: "A".into(), sk: "A".into() },
            sum: None,
            count: "n",
            markers: vec![],
            init: vec![],
            of: "A".into(),
            parts: 1,
            folded: keyschema::write::attr::FAVORITES_FOLDED,
        },
        marker: Key { pk: "M".into(), sk: "M".into() },
        marker_item: Item::new(),
        version: version.map(Ulid),
        member: None,
        weight,
        inserted,
    }
}

fn review(id: u128, weight: u32, inserted: bool) -> Count {
    Count { member: Some(ReviewId::from_ulid(Ulid(id))), ..change(None, weight, inserted) }
}

fn marker(state: MarkerState, weight: u32, version: Option<u128>) -> Marker {
    Marker::One { state, weight, version: version.map(Ulid) }
}

/// Applies changes in the given order; the contribution at the end.
fn run(order: &[Count]) -> (i64, i64) {
    let mut m: Option<Marker> = None;
    for c in order {
        if let Some(after) = next(m.as_ref(), c) {
            m = Some(after);
        }
    }
    m.map_or((0, 0), |m| m.counted())
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, n - 1);
            out.push(q);
        }
    }
    out
}

#[test]
fn a_removal_takes_away_what_was_counted() {
    use MarkerState::*;
    let counted = marker(Counted, 5, None);
    assert_eq!(next(Some(&counted), &change(None, 1, false)), Some(marker(Removed, 5, None)));
    assert_eq!(next(Some(&counted), &change(None, 5, true)), None, "a replayed insert");
    assert_eq!(next(Some(&marker(Removed, 5, None)), &change(None, 5, true)), None, "removed before inserted");
    assert_eq!(next(None, &change(None, 4, false)), Some(marker(Removed, 4, None)));
}

#[test]
fn versions_order_successive_instances() {
    use MarkerState::*;
    let at = |v| marker(Counted, 1, Some(v));
    assert_eq!(next(Some(&at(5)), &change(Some(4), 1, false)), None, "an older removal");
    assert_eq!(next(Some(&at(5)), &change(Some(6), 1, true)), Some(marker(Counted, 1, Some(6))), "a newer add");
    assert_eq!(next(Some(&at(5)), &change(Some(6), 1, false)), Some(marker(Removed, 1, Some(6))));
    // Every order of add(1) remove(1) add(2) ends counted once; of add(1)
    // remove(1) add(2) remove(2), uncounted.
    let cycle = [change(Some(1), 1, true), change(Some(1), 1, false), change(Some(2), 1, true)];
    for p in permutations(3) {
        let order: Vec<_> = p.iter().map(|i| cycle[*i].clone()).collect();
        assert_eq!(run(&order), (1, 1), "{p:?}");
    }
    let mut ended = cycle.to_vec();
    ended.push(change(Some(2), 1, false));
    assert_eq!(run(&ended), (0, 0));
    ended.reverse();
    assert_eq!(run(&ended), (0, 0));
}

/// Issue 31: of one slot (an author's reviews of a user in a week) the
/// first counts; its removal lets the next count; any order of the records,
/// replayed, ends the same.
#[test]
fn a_slot_counts_its_first_review_whatever_the_order() {
    // Reviews 1 (rating 5), 2 (rating 1), 3 (rating 3); review 1 moderated away.
    let records = [review(1, 5, true), review(2, 1, true), review(3, 3, true), review(1, 5, false)];
    for p in permutations(records.len()) {
        let order: Vec<_> = p.iter().map(|i| records[*i].clone()).collect();
        assert_eq!(run(&order), (1, 1), "the next one counts after the first is gone: {p:?}");
        let twice: Vec<_> = order.iter().chain(order.iter().rev()).cloned().collect();
        assert_eq!(run(&twice), (1, 1), "replayed: {p:?}");
    }
    assert_eq!(run(&records[..3]), (5, 1), "one counts, not three");
    assert_eq!(run(&[review(2, 1, true), review(1, 5, true)]), (5, 1), "the first by id, whatever came first");
    let all_gone = [review(1, 5, true), review(1, 5, false), review(2, 1, false), review(2, 1, true)];
    assert_eq!(run(&all_gone), (0, 0), "a removal seen before its insert");
}
