//! Word search against posting lists held in memory, built from the test
//! corpus (`tests/data/search-titles.txt`: 3,000 titles drawn from
//! wordfreq's English and French word frequencies): every walk of random
//! queries is exact against a brute-force filter of all titles, each page
//! within [`MAX_QUERIES`]; and what a page reads per listing returned.

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;

use domain::words::{indexed, terms, Query};
use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use ulid::Ulid;

use super::*;

const CORPUS: &str = include_str!("../../../../tests/data/search-titles.txt");

struct Title {
    id: Ulid,
    words: BTreeSet<String>,
    category: String,
}

/// The corpus as listings (newer down the file, five categories) and their
/// posting lists, newest first.
struct Memory {
    titles: Vec<Title>,
    lists: BTreeMap<String, Vec<Posted>>,
    /// Bytes added to every posting's size (0: as the table sizes it).
    pad: usize,
}

/// A posting's bytes about as DynamoDB sizes it: its keys and attribute
/// names, the term, the listing id, the words and the category.
fn posting_bytes(term: &str, p: &Posted) -> usize {
    let words: usize = p.words.iter().map(|w| w.len() + 1).sum();
    2 * term.len() + 2 * 26 + words + p.category.len() + 70
}

fn memory() -> Memory {
    let titles: Vec<Title> = CORPUS
        .lines()
        .enumerate()
        .map(|(i, line)| Title {
            id: Ulid::from_parts(1_790_000_000_000 + i as u64 * 1000, i as u128),
            words: indexed(line),
            category: format!("cat-{}", i % 5),
        })
        .collect();
    Memory::of(titles)
}

impl Memory {
    /// `titles` (oldest first) and their posting lists, newest first.
    fn of(titles: Vec<Title>) -> Memory {
        let mut lists: BTreeMap<String, Vec<Posted>> = BTreeMap::new();
        for t in titles.iter().rev() {
            for term in terms(&t.words) {
                let posted = Posted { id: t.id, words: t.words.clone(), category: t.category.clone() };
                lists.entry(term.key_for(t.id)).or_default().push(posted);
            }
        }
        Memory { titles, lists, pad: 0 }
    }
}

impl ListAsker for Memory {
    type Error = Infallible;
    async fn ask(&self, asks: Vec<ListAsk>) -> Result<Vec<ListAnswer>, Infallible> {
        Ok(asks
            .iter()
            .map(|ask| {
                let list = self.lists.get(&ask.term).map_or(&[][..], Vec::as_slice);
                let from = ask.before.map_or(0, |b| list.partition_point(|p| p.id >= b));
                let postings: Vec<Posted> = list[from..].iter().take(ask.limit).cloned().collect();
                // As DynamoDB: a page that stops at its limit may go on; a
                // query billed its items' bytes in 4 KB units, one at least.
                let more = postings.len() == ask.limit;
                let bytes: usize = postings.iter().map(|p| posting_bytes(&ask.term, p) + self.pad).sum();
                ListAnswer { postings, more, units: bytes.div_ceil(4096).max(1) }
            })
            .collect())
    }
}

fn rng(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

fn brute(m: &Memory, q: &Query, category: Option<&str>) -> Vec<Ulid> {
    let mut want: Vec<Ulid> = m
        .titles
        .iter()
        .filter(|t| category.is_none_or(|c| c == t.category) && q.matches(&t.words))
        .map(|t| t.id)
        .collect();
    want.sort_by(|a, b| b.cmp(a));
    want
}

/// Every page of a walk, and each page's cost.
fn walk(m: &Memory, q: &Query, category: Option<&str>, limit: usize) -> (Vec<Ulid>, Vec<SearchPage>) {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let (mut got, mut pages, mut before) = (Vec::new(), Vec::new(), None);
    loop {
        let budget = Budget::page(limit);
        let p = runtime.block_on(page(q, category, limit, before, budget, m)).unwrap();
        assert!(p.found.len() <= limit && p.queries <= MAX_QUERIES, "{p:?}");
        // Within the page's bound with the listings found read (a unit each).
        assert!(p.units + p.found.len() <= budget.units && p.queries < budget.requests, "{p:?}");
        assert!(p.next.is_none() || p.next != before, "every page moves the walk on: {p:?}");
        assert!(!p.stopped_early || p.next.is_some());
        got.extend(p.found.iter().copied());
        before = p.next;
        pages.push(p);
        if before.is_none() {
            return (got, pages);
        }
        assert!(pages.len() < 10_000, "the walk ends");
    }
}

/// Queries a user would type: some words of a title (a stop word among
/// them at times), the last cut to a prefix; words of two titles; a rare
/// word with the commonest; with a category or without.
fn queries(m: &Memory, n: usize, seed: u64) -> Vec<(String, Option<String>)> {
    let mut rng = rng(seed);
    let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
    for w in m.titles.iter().flat_map(|t| t.words.iter()) {
        *counts.entry(w).or_default() += 1;
    }
    let common = counts.iter().max_by_key(|(_, n)| **n).map(|(w, _)| (*w).clone()).unwrap_or_default();
    let mut out = Vec::new();
    while out.len() < n {
        let t = &m.titles[rng.random_range(0..m.titles.len())];
        let words: Vec<&String> = t.words.iter().collect();
        if words.is_empty() {
            continue;
        }
        let mut q: Vec<String> =
            (0..rng.random_range(1..4)).map(|_| words[rng.random_range(0..words.len())].clone()).collect();
        match rng.random_range(0..6) {
            0 => q.insert(0, "the".into()),
            1 => {
                let other = &m.titles[rng.random_range(0..m.titles.len())];
                q.extend(other.words.iter().next().cloned());
            }
            2 => q.insert(0, common.clone()),
            _ => {}
        }
        let last = q.pop().unwrap_or_default();
        let keep = rng.random_range(1..=last.chars().count().max(1));
        q.push(last.chars().take(keep).collect());
        let category = (rng.random_range(0..4) == 0).then(|| format!("cat-{}", rng.random_range(0..5)));
        out.push((q.join(" "), category));
    }
    out
}

#[test]
fn every_walk_is_exact_against_a_brute_force_filter() {
    let m = memory();
    let mut walked = 0;
    for (i, (q, category)) in queries(&m, 600, 1).iter().enumerate() {
        let Ok(query) = Query::parse(q) else { continue };
        let limit = [1, 7, 20, 100][i % 4];
        let (got, pages) = walk(&m, &query, category.as_deref(), limit);
        assert_eq!(got, brute(&m, &query, category.as_deref()), "{q:?} in {category:?}, limit {limit}: {pages:?}");
        walked += 1;
    }
    assert!(walked > 400, "most queries parse: {walked}");
}

/// A rarer word AND a word of the commonest list reads the rarer word's
/// list, and of the common list its head only: whether the rarer list ends
/// in its head (then it is complete) or not (then it reaches further back).
/// Seen failing with the driver chosen as the list reaching least far back.
#[test]
fn a_rare_word_and_a_common_word_read_the_rare_list() {
    let m = memory();
    // The lists of three characters, and a word of each (its first posting's).
    let lists = || m.lists.iter().filter(|(k, _)| k.ends_with('*') && k.chars().count() == 4);
    let word_of = |k: &str, l: &[Posted]| {
        let prefix = k.trim_end_matches('*').to_owned();
        l[0].words.iter().find(|w| w.starts_with(&prefix)).cloned().unwrap()
    };
    let (common_key, long) = lists().max_by_key(|(_, l)| l.len()).unwrap();
    let common = word_of(common_key, long);
    const LIMIT: usize = 5;
    assert!(long.len() > 4 * (LIMIT + 1), "the commonest list fills heads: {} titles", long.len());
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    for size in [1, 2 * (LIMIT + 1)] {
        let (rare_key, list) = lists().find(|(_, l)| l.len() == size).unwrap();
        let rare = word_of(rare_key, list);
        // The common word in the middle (a one-character last word: its
        // split lists are not read when others are), and last.
        for q in [format!("{common} {rare} x"), format!("{rare} {common}")] {
            let query = Query::parse(&q).unwrap();
            let p = runtime.block_on(page(&query, None, LIMIT, None, Budget::page(LIMIT), &m)).unwrap();
            let want = list.iter().filter(|p| query.matches(&p.words)).take(LIMIT).count();
            assert_eq!(p.found.len(), want, "{q}");
            let heads = (LIMIT + 1) * 2;
            assert!(p.postings_read <= heads + list.len(), "{q}: {p:?}");
        }
    }
}

/// What the first page of a query reads per listing it returns, over the
/// corpus's queries (printed for docs/search.md); bounded by the queries a
/// page may send.
#[test]
fn what_a_first_page_reads_per_listing_returned() {
    let m = memory();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let (mut ratios, mut queries_sent, mut early, mut empty) = (Vec::new(), Vec::new(), 0, 0);
    let mut units = Vec::new();
    for (q, category) in queries(&m, 2000, 2) {
        let Ok(query) = Query::parse(&q) else { continue };
        let p = runtime.block_on(page(&query, category.as_deref(), 20, None, Budget::page(20), &m)).unwrap();
        queries_sent.push(p.queries);
        // In 4 KB units: the posting reads and a unit per listing read.
        units.push(p.units + p.found.len());
        early += usize::from(p.stopped_early);
        if p.found.is_empty() {
            empty += 1;
            continue;
        }
        // The postings read, and one listing read per listing returned.
        ratios.push((p.postings_read + p.found.len()) as f64 / p.found.len() as f64);
    }
    ratios.sort_by(f64::total_cmp);
    queries_sent.sort_unstable();
    let at = |v: &[f64], q: f64| v[((v.len() - 1) as f64 * q) as usize];
    let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
    println!(
        "search, first pages of 20 over {} queries with matches ({empty} without): items read per item returned mean {mean:.1}, median {:.1}, p95 {:.1}, max {:.1}; queries per page median {}, max {}; stopped early {early}; RCU a page mean {:.2}, max {:.1}",
        ratios.len(),
        at(&ratios, 0.5),
        at(&ratios, 0.95),
        ratios[ratios.len() - 1],
        queries_sent[queries_sent.len() / 2],
        queries_sent[queries_sent.len() - 1],
        units.iter().sum::<usize>() as f64 / units.len() as f64 / 2.0,
        *units.iter().max().unwrap() as f64 / 2.0,
    );
    assert!(*queries_sent.last().unwrap() <= MAX_QUERIES);
    let bound = (MAX_QUERIES * DRIVER_LIMIT + 1) as f64;
    assert!(ratios.iter().all(|r| *r <= bound));
}

/// A long list whose matches are rare (one word in 3,000 titles, a category
/// only the oldest few have): pages stop at the bound with a cursor (often
/// empty), and the walk still finds exactly the matches, newest first.
#[test]
fn pages_stopped_at_the_bound_resume_and_the_walk_is_exact() {
    let titles = (0..3000u64).map(|i| Title {
        id: Ulid::from_parts(1_790_000_000_000 + i, u128::from(i)),
        words: indexed("Blue mug"),
        category: if i % 997 == 0 { "rare" } else { "common" }.to_owned(),
    });
    let m = Memory::of(titles.collect());
    let query = Query::parse("mug").unwrap();
    let (got, pages) = walk(&m, &query, Some("rare"), 20);
    assert_eq!(got, brute(&m, &query, Some("rare")));
    assert_eq!(got.len(), 4);
    let early = pages.iter().filter(|p| p.stopped_early).count();
    assert!(early >= 1, "{pages:?}");
    println!("a rare category in a list of 3,000: {} pages, {early} stopped early", pages.len());
}

/// Round 1 fits any page's budget: [`HEAD_LISTS`] heads of the limit and
/// one, each posting of the largest size, leave units for a listing.
#[test]
fn the_heads_of_round_one_fit_every_page_s_budget() {
    for limit in 1..=100 {
        let lists = HEAD_LISTS.max(usize::from(domain::words::PREFIX_SPLITS));
        let heads = lists * ((limit + 1) * MAX_POSTING_BYTES).div_ceil(4096);
        assert!(heads < Budget::page(limit).units, "limit {limit}: {heads} units of heads");
    }
}

/// Issue 33: lists of the largest postings, each long, that never meet (six
/// words, each title holding five of them): a page reads the heads, then
/// the driver only as far as its budget holds, and answers only what the
/// units its reads left can read; walks stay exact. Seen failing before
/// the budget: round 1 read six heads and the driver 200 postings a query,
/// 21 units of 24 on heads alone.
#[test]
fn lists_of_the_largest_postings_that_never_meet_keep_each_page_within_its_budget() {
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
    let titles = (0..1200u64).map(|i| {
        // Five of the six, and from the 1,100th on all six (a few matches,
        // newest first, behind the pages that find none).
        let skip = if i >= 1100 && i % 7 == 0 { usize::MAX } else { (i % 6) as usize };
        let title: Vec<&str> = words.iter().enumerate().filter(|(k, _)| *k != skip).map(|(_, w)| *w).collect();
        let id = Ulid::from_parts(1_790_000_000_000 + i, u128::from(i));
        Title { id, words: indexed(&title.join(" ")), category: "c".into() }
    });
    let mut m = Memory::of(titles.collect());
    // Every posting weighs the most a posting can.
    let widest = m.lists.iter().flat_map(|(t, l)| l.iter().map(move |p| posting_bytes(t, p))).max().unwrap();
    m.pad = MAX_POSTING_BYTES - widest;
    for (q, limit) in
        [("alpha bravo charlie delta echo fox", 20), ("alpha bravo charlie delta echo fox", 100), ("bravo a", 20)]
    {
        let query = Query::parse(q).unwrap();
        let (got, pages) = walk(&m, &query, None, limit);
        assert_eq!(got, brute(&m, &query, None), "{q}, limit {limit}");
        let most = pages.iter().map(|p| p.units + p.found.len()).max().unwrap();
        let early = pages.iter().filter(|p| p.stopped_early).count();
        println!("{q:?}, limit {limit}: {} pages ({early} stopped early), at most {most} units a page", pages.len());
    }
}

/// What a title of the corpus is posted under: its words' first 1, 2 and 3
/// characters, 8.2 on average (11.2 with a posting per whole word too):
/// the capacity model's `POSTINGS_PER_LISTING` (tools/capacity).
#[test]
fn a_title_of_the_corpus_has_eight_postings() {
    let m = memory();
    let postings: usize = m.titles.iter().map(|t| terms(&t.words).len()).sum();
    let mean = postings as f64 / m.titles.len() as f64;
    println!("postings per title of the corpus: {mean:.2}");
    assert!((8.0..9.0).contains(&mean), "{mean}");
}

/// A query of one-character words reads a one-character prefix's four
/// lists, merged newest first: every walk exact at every limit, each page
/// within its bound (checked by `walk`), and a page of 20 reads four heads.
#[test]
fn one_character_queries_read_their_four_lists_merged_exactly() {
    let m = memory();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    for q in ["s", "c", "z", "5", "s m", "q x"] {
        let query = Query::parse(q).unwrap();
        for limit in [1, 7, 20, 100] {
            let (got, _) = walk(&m, &query, None, limit);
            assert_eq!(got, brute(&m, &query, None), "{q:?}, limit {limit}");
        }
        let p = runtime.block_on(page(&query, None, 20, None, Budget::page(20), &m)).unwrap();
        assert_eq!(p.queries.min(4), 4, "{q:?}: the four lists of one prefix: {p:?}");
    }
}

/// Walks as the search route pages them when one listing in `of` is no
/// longer active (a sold one keeps its postings): a page looks for one
/// match more than it answers, drops those, and reads on once
/// ([`read_on`]) within what is left of its bound. Exact against brute force, each page within its
/// bound. Seen failing with `read_on` given a fresh page's budget, not what was left.
#[test]
fn pages_that_drop_listings_read_on_and_the_walk_is_exact() {
    let m = memory();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let (mut short, mut filled, mut pages, mut walked) = ([0; 4], [0; 4], [0; 4], 0);
    for (i, (q, category)) in queries(&m, 300, 7).iter().enumerate() {
        let Ok(query) = Query::parse(q) else { continue };
        let (limit, of) = ([7, 20, 20, 50][i % 4], [10, 10, 40, 40][i % 4]);
        let gone = |id: &Ulid| id.random().is_multiple_of(of);
        let category = category.as_deref();
        let (mut got, mut before) = (Vec::new(), None);
        loop {
            let mut budget = Budget::page(limit);
            let first = runtime.block_on(page(&query, category, limit + 1, before, budget, &m)).unwrap();
            let mut p = first.clone();
            let mut answered: Vec<Ulid> = p.found.iter().copied().filter(|id| !gone(id)).collect();
            budget = budget.less(p.queries + 1, p.units + p.found.len());
            let dropped = answered.len() < p.found.len();
            if let Some(after) = p.next.filter(|_| dropped && answered.len() < limit && !p.stopped_early) {
                p = runtime
                    .block_on(read_on(&query, category, &first, limit - answered.len(), after, budget, &m))
                    .unwrap();
                assert!(p.units + p.found.len() <= budget.units && p.queries < budget.requests, "{q}: {p:?}");
                assert!(first.queries + p.queries <= MAX_QUERIES, "{q}: {first:?} {p:?}");
                answered.extend(p.found.iter().copied().filter(|id| !gone(id)));
                filled[i % 4] += usize::from(answered.len() == limit);
            }
            let spare_answered = answered.len() > limit;
            answered.truncate(limit);
            let next = if spare_answered { answered.last().copied() } else { p.next };
            short[i % 4] += usize::from(answered.len() < limit && next.is_some());
            pages[i % 4] += 1;
            got.extend(answered);
            assert!(next.is_none() || next != before, "every page moves the walk on");
            before = next;
            if before.is_none() {
                break;
            }
        }
        let want: Vec<Ulid> = brute(&m, &query, category).into_iter().filter(|id| !gone(id)).collect();
        assert_eq!(got, want, "{q:?} in {category:?}, limit {limit}, one in {of} gone");
        walked += 1;
    }
    // Limits 7, 20, 20, 50, one in 10, 10, 40, 40 gone (none: short [11, 1, 4, 72] of [236, 137, 148, 147]).
    println!("{walked} walks; of {pages:?} pages, filled by reading on {filled:?}, short and not last {short:?}");
    assert!(walked > 200 && filled[0] > 0 && short[0] * 10 < pages[0], "{pages:?} {filled:?} {short:?}");
}
