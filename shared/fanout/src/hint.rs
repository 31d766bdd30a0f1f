//! What a page of a sharded view asks of each partition in its first
//! round: an even share of the page plus a measured slack, or, after a page
//! that left a [`Hint`] in its cursor, about what each partition is expected
//! to give. Only arithmetic: a hint can make a page cheaper or dearer, never
//! wrong (see [`crate::page_planner`]). Written for the orders' status
//! views, so the docs below say "orders" and "milliseconds": for any walk,
//! read "items" and the key's position ([`crate::PageKey::position`]: cents
//! for a cheapest-first walk).

/// The most live partitions a cursor carries a [`Hint`] for: about ten
/// bytes each, so that a cursor stays under 1 KiB. Beyond that the first
/// round shares evenly (where there are about as many partitions as orders
/// on a page, each is asked for one or two anyway).
pub const HINT_PARTITIONS: usize = 32;

/// What one page learned of the orders below it, so the next page's first
/// round can ask each partition for about what it will give rather than an
/// even share. Only a hint: every live partition is still asked for at
/// least one order, and the page is exact whatever the hint says (it only
/// sets the first round's limits; see [`crate::page_planner`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Hint {
    /// Orders per millisecond of ULID time per live partition, smoothed
    /// over the pages so far.
    pub rate: f64,
    /// For each live partition, in order.
    pub parts: Vec<Known>,
}

/// What a page knows of one partition below its oldest order returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    /// Orders it read there but did not return (the next page's newest of
    /// this partition: every order of it above `unknown_below_ms` was read).
    pub read: usize,
    /// How far below the page's oldest order (in ms) its unread orders
    /// begin; `None`: it has no unread order left.
    pub unknown_below_ms: Option<u64>,
}

impl Hint {
    /// How much a new observation moves the rate.
    const WEIGHT: f64 = 0.3;

    /// `rate` then each partition as `read.gap` (`read.-` when nothing is
    /// unread), e.g. `2.778e-8/2.7200000,0.3600000,1.-`.
    pub fn encode(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|k| match k.unknown_below_ms {
                Some(gap) => format!("{}.{gap}", k.read),
                None => format!("{}.-", k.read),
            })
            .collect();
        format!("{:.3e}/{}", self.rate, parts.join(","))
    }

    /// The hint for `partitions` live partitions, or `None` for anything
    /// else (a hint is never worth an error).
    pub fn decode(text: &str, partitions: usize) -> Option<Hint> {
        let (rate, parts) = text.split_once('/')?;
        let rate: f64 = rate.parse().ok().filter(|r: &f64| r.is_finite() && *r > 0.0)?;
        let parts = parts
            .split(',')
            .map(|p| {
                let (read, gap) = p.split_once('.')?;
                let unknown_below_ms = if gap == "-" { None } else { Some(gap.parse().ok()?) };
                Some(Known { read: read.parse().ok()?, unknown_below_ms })
            })
            .collect::<Option<Vec<Known>>>()?;
        (parts.len() == partitions).then_some(Hint { rate, parts })
    }

    /// The rate after a page of `returned` orders over `span_ms` ms of ULID
    /// time across `partitions` partitions, from the previous estimate.
    pub fn next_rate(previous: Option<f64>, returned: usize, span_ms: u64, partitions: usize) -> Option<f64> {
        let observed = (span_ms > 0 && returned > 0 && partitions > 0)
            .then(|| returned as f64 / span_ms as f64 / partitions as f64)
            .filter(|r| r.is_finite() && *r > 0.0);
        match (previous, observed) {
            (Some(p), Some(o)) => Some(p * (1.0 - Self::WEIGHT) + o * Self::WEIGHT),
            (p, o) => o.or(p),
        }
    }
}

/// How many orders more than `limit` the first round asks of `n` live
/// partitions: `sqrt(limit * (n - 1)) / 2` rounded down, at least one,
/// tuned by measurement. Less leaves the first round's lower bound loose,
/// so the second round reads more; more reads orders the page does not
/// need.
pub fn slack(limit: usize, n: usize) -> usize {
    (limit.saturating_mul(n.saturating_sub(1)).isqrt() / 2).max(1)
}

/// How many orders the first round asks of each of `n` live partitions for
/// a page of `limit`: `limit` plus a slack, spread evenly (the remainder
/// going to partitions chosen by `rotate`), at least one each, and never
/// more than `limit + 1` of one partition (see [`slack`]). The one extra
/// order means a first round that read no more than `limit` has met an
/// exhausted partition (see [`crate::page_planner`] on the last page).
pub fn first_round_shares(limit: usize, n: usize, rotate: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let budget = (limit + slack(limit, n)).max(n);
    let (base, extra) = (budget / n, budget % n);
    (0..n).map(|j| (base + usize::from((j + rotate) % n < extra)).min(limit + 1)).collect()
}

/// How many orders the first round asks of each live partition when the
/// previous page left a [`Hint`]: its orders already known to lie below the
/// cursor, plus those expected in its unread range down to the depth where
/// all partitions together are expected to hold `limit` plus the same
/// [`slack`] as an even first round; at least one each, one more than the
/// known ones of a partition with nothing unread (so that it answers
/// exhausted), at most `limit + 1`, and more than `limit` in all (topped up
/// where rounding lost most), as [`first_round_shares`] asks. Measured over
/// steady, random, daily-cycle and bursty arrivals at 10 shards and limit
/// 20: a slack of `sqrt(limit)` (4) read up to 1.69 orders per order
/// returned, 5 to 7 read 1.44-1.50 (6 is [`slack`]'s).
pub fn hinted_shares(limit: usize, hint: &Hint) -> Vec<usize> {
    let most = limit.saturating_add(1);
    let target = limit.saturating_add(slack(limit, hint.parts.len())) as f64;
    let known = hint.parts.iter().fold(0usize, |n, k| n.saturating_add(k.read));
    // The depth `d` (ms below the cursor) where the unread ranges, each
    // starting at its gap, are expected to hold what the known orders lack:
    // rate * sum over gaps below d of (d - gap) = target - known.
    let mut gaps: Vec<f64> = hint.parts.iter().filter_map(|k| k.unknown_below_ms).map(|g| g as f64).collect();
    gaps.sort_by(f64::total_cmp);
    let lacking = (target - known as f64).max(0.0) / hint.rate;
    let mut depth = None;
    let mut sum = 0.0;
    for (i, gap) in gaps.iter().enumerate() {
        sum += gap;
        let count = (i + 1) as f64;
        // With the first i+1 ranges open, d = (lacking + sum) / count; it
        // holds if no further range would open above it.
        let d = (lacking + sum) / count;
        if gaps.get(i + 1).is_none_or(|next| d <= *next) {
            depth = Some(d);
            break;
        }
    }
    let expected: Vec<f64> = hint
        .parts
        .iter()
        .map(|k| match (depth, k.unknown_below_ms) {
            (Some(d), Some(gap)) if lacking > 0.0 => (hint.rate * (d - gap as f64).max(0.0)).min(most as f64),
            _ => 0.0,
        })
        .collect();
    let mut shares: Vec<usize> = hint
        .parts
        .iter()
        .zip(&expected)
        .map(|(k, e)| {
            let exhausted = usize::from(k.unknown_below_ms.is_none());
            // A saturating float-to-int cast of a value within 0..=most.
            k.read.saturating_add(e.round() as usize).saturating_add(exhausted).clamp(1, most)
        })
        .collect();
    // Rounding many small expectations down can leave the round at `limit`
    // or less, and then no `L`: add one at a time where the most was lost.
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|a, b| (expected[*b] - expected[*b].round()).total_cmp(&(expected[*a] - expected[*a].round())));
    let mut total = shares.iter().fold(0usize, |n, k| n.saturating_add(*k));
    for i in order.iter().cycle().take(most.saturating_mul(shares.len())) {
        if total > limit {
            break;
        }
        if shares[*i] < most {
            shares[*i] += 1;
            total += 1;
        }
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn known(read: usize, gap: Option<u64>) -> Known {
        Known { read, unknown_below_ms: gap }
    }

    #[test]
    fn hints_round_trip_and_anything_else_is_no_hint() {
        let hint = Hint { rate: 2.7777e-8, parts: vec![known(2, Some(7_200_000)), known(0, Some(0)), known(1, None)] };
        let text = hint.encode();
        assert_eq!(text, "2.778e-8/2.7200000,0.0,1.-");
        let back = Hint::decode(&text, 3).unwrap();
        assert_eq!(back.parts, hint.parts);
        assert!((back.rate - 2.778e-8).abs() < 1e-12);
        assert_eq!(Hint::decode(&text, 2), None, "another partition count");
        for bad in ["", "/", "0/1.2", "-1e-3/1.2", "NaN/1.2", "inf/1.2", "1e-3/1", "1e-3/x.2", "1e-3/1.y", "1e-3/1.2,"]
        {
            assert_eq!(Hint::decode(bad, 1), None, "{bad:?}");
        }
    }

    #[test]
    fn the_rate_follows_pages_smoothly() {
        assert_eq!(Hint::next_rate(None, 20, 0, 10), None, "twenty orders in one millisecond say nothing");
        assert_eq!(Hint::next_rate(None, 20, 1_000, 10), Some(0.002));
        assert_eq!(Hint::next_rate(Some(0.001), 0, 1_000, 10), Some(0.001));
        let r = Hint::next_rate(Some(0.001), 20, 1_000, 10).unwrap();
        assert!((r - 0.0013).abs() < 1e-12, "{r}");
    }

    #[test]
    fn hinted_shares_ask_what_each_partition_is_expected_to_give() {
        // Ten partitions, nothing known, all unread from the cursor down,
        // 2 orders each per 1,000 ms: 26 orders (20 + 6 slack) lie within
        // 1,300 ms, 2.6 each, rounded to 3.
        let even = Hint { rate: 0.002, parts: vec![known(0, Some(0)); 10] };
        assert_eq!(hinted_shares(20, &even), vec![3; 10]);
        // Each expects 0.4 more than its one known order: rounded down, the
        // round would read only the page; topped up to one order more.
        let small = Hint { rate: 0.0004, parts: vec![known(1, Some(0)); 10] };
        assert_eq!(hinted_shares(10, &small).iter().sum::<usize>(), 11);
        // Known orders are asked for again; a partition whose unread orders
        // start deeper than the others gets fewer new ones.
        let mut parts = vec![known(0, Some(0)); 10];
        parts[0] = known(4, Some(1_000));
        parts[1] = known(1, None);
        let shares = hinted_shares(20, &Hint { rate: 0.002, parts });
        assert_eq!(shares[1], 2, "its one order left, and one more to find it exhausted: {shares:?}");
        assert!(shares[0] >= 4 && shares[0] < 4 + shares[2], "{shares:?}");
        // Enough known: each partition is asked for what it is known to hold.
        let parts = vec![known(30, Some(5)), known(0, Some(0)), known(0, None)];
        assert_eq!(hinted_shares(20, &Hint { rate: 1.0, parts }), vec![21, 1, 1]);
        assert_eq!(hinted_shares(1, &Hint { rate: 1e-9, parts: vec![known(0, Some(9))] }), vec![2]);
    }

    proptest! {
        #[test]
        fn hinted_shares_stay_within_bounds(
            limit in 1usize..=100,
            rate in prop_oneof![Just(f64::MIN_POSITIVE), 1e-12f64..1e3, Just(f64::MAX)],
            parts in proptest::collection::vec((0usize..=101, proptest::option::of(0u64..=u64::MAX >> 16)), 1..=HINT_PARTITIONS),
        ) {
            let hint = Hint { rate, parts: parts.iter().map(|(r, g)| known(*r, *g)).collect() };
            let shares = hinted_shares(limit, &hint);
            prop_assert_eq!(shares.len(), hint.parts.len());
            for (share, k) in shares.iter().zip(&hint.parts) {
                prop_assert!((1..=limit + 1).contains(share), "{} of {:?}", share, k);
                prop_assert!(*share >= k.read.clamp(1, limit + 1), "{} of {:?}", share, k);
            }
            prop_assert!(shares.iter().sum::<usize>() > limit, "{:?}", shares);
            if rate < 1e300 {
                prop_assert_eq!(Hint::decode(&hint.encode(), hint.parts.len()).map(|h| h.parts), Some(hint.parts));
            }
        }
    }

    #[test]
    fn first_round_shares_ask_a_little_more_than_the_page() {
        assert_eq!(first_round_shares(20, 0, 0), Vec::<usize>::new());
        assert_eq!(first_round_shares(20, 1, 5), vec![21], "one partition: the page and one look-ahead order");
        assert_eq!(first_round_shares(20, 10, 0).iter().sum::<usize>(), 26);
        assert_eq!(slack(20, 10), 6);
        assert_eq!(slack(20, 1), 1);
        for limit in [1usize, 2, 7, 20, 50, 100] {
            for n in [1usize, 2, 3, 10, 50, 100, 500] {
                for rotate in [0usize, 3, 1_000_002] {
                    let shares = first_round_shares(limit, n, rotate);
                    assert_eq!(shares.len(), n);
                    assert!(shares.iter().all(|k| (1..=limit + 1).contains(k)), "{limit} {n}: {shares:?}");
                    let (least, most) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
                    assert!(most - least <= 1, "spread evenly: {shares:?}");
                    assert!(shares.iter().sum::<usize>() > limit, "more than the page: {shares:?}");
                }
            }
        }
    }
}
