//! One cell's answer from two partitions: while a dense cell's listings
//! move to its own partitions (`domain::geo::partition`), a cell of it is
//! queried in both, and the two answers are one.

use super::{CellAnswer, Placed};

/// The answer of two queries of one cell (each in sort-key order, each of
/// at most `limit`): what either read up to the lower of the last keys of
/// those that had more (beyond it, that one may hold keys not read), one of
/// each key (an item moving between the two can be read in both), at most
/// `limit`, in sort-key order; more to give if either had or some were
/// left out.
pub fn merged<T: Placed>(a: CellAnswer<T>, b: CellAnswer<T>, limit: usize) -> CellAnswer<T> {
    let last = |x: &CellAnswer<T>| x.items.last().filter(|_| x.more).map(Placed::sort_key);
    let cut = match (last(&a), last(&b)) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    let (more, units) = (a.more || b.more, a.units + b.units);
    let mut items: Vec<(String, T)> = a.items.into_iter().chain(b.items).map(|i| (i.sort_key(), i)).collect();
    items.sort_by(|x, y| x.0.cmp(&y.0));
    items.dedup_by(|x, y| x.0 == y.0);
    let read = items.len();
    items.retain(|(key, _)| cut.as_ref().is_none_or(|c| key <= c));
    items.truncate(limit);
    CellAnswer { more: more || items.len() < read, items: items.into_iter().map(|(_, i)| i).collect(), units }
}

#[cfg(test)]
mod tests {
    use domain::geo::Location;
    use ulid::Ulid;

    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct K(&'static str);
    impl Placed for K {
        fn location(&self) -> Option<Location> {
            None
        }
        fn id(&self) -> Ulid {
            Ulid(0)
        }
        fn sort_key(&self) -> String {
            self.0.to_owned()
        }
    }
    fn answer(keys: &[&'static str], more: bool) -> CellAnswer<K> {
        CellAnswer { items: keys.iter().map(|k| K(k)).collect(), more, units: 1 }
    }
    fn keys(a: &CellAnswer<K>) -> Vec<&'static str> {
        a.items.iter().map(|k| k.0).collect()
    }

    #[test]
    fn both_whole_answers_are_one_in_order() {
        let m = merged(answer(&["a", "c"], false), answer(&["b", "d"], false), 10);
        assert_eq!((keys(&m), m.more), (vec!["a", "b", "c", "d"], false));
    }

    #[test]
    fn what_lies_beyond_a_partial_answer_waits_for_the_next_query() {
        // The first stopped at "c": its "d" may exist, so "e" cannot come yet.
        let m = merged(answer(&["a", "c"], true), answer(&["b", "e"], false), 10);
        assert_eq!((keys(&m), m.more), (vec!["a", "b", "c"], true));
        let m = merged(answer(&["b", "e"], true), answer(&["a", "c"], true), 10);
        assert_eq!((keys(&m), m.more), (vec!["a", "b", "c"], true), "the lower of the two ends");
    }

    #[test]
    fn at_most_the_limit_and_each_key_once() {
        let m = merged(answer(&["a", "b"], false), answer(&["b", "c"], false), 2);
        assert_eq!((keys(&m), m.more), (vec!["a", "b"], true));
        let m = merged(answer(&["a", "b"], false), answer(&["b"], false), 5);
        assert_eq!((keys(&m), m.more), (vec!["a", "b"], false));
    }
}
