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
    let mut lists: BTreeMap<String, Vec<Posted>> = BTreeMap::new();
    for t in titles.iter().rev() {
        for term in terms(&t.words) {
            let posted = Posted { id: t.id, words: t.words.clone(), category: t.category.clone() };
            lists.entry(term.key()).or_default().push(posted);
        }
    }
    Memory { titles, lists }
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
                // As DynamoDB: a page that stops at its limit may go on.
                let more = postings.len() == ask.limit;
                ListAnswer { postings, more }
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
        let p = runtime.block_on(page(q, category, limit, before, m)).unwrap();
        assert!(p.found.len() <= limit && p.queries <= MAX_QUERIES, "{p:?}");
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
    let common = m.lists.iter().filter(|(k, _)| !k.ends_with('*')).max_by_key(|(_, l)| l.len()).unwrap().0.clone();
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

/// A rarer word AND the commonest indexed word reads the rarer word's list,
/// and of the common list its head only: whether the rarer list ends in its
/// head (then it is complete) or not (then it reaches further back). Seen
/// failing with the driver chosen as the list reaching least far back.
#[test]
fn a_rare_word_and_a_common_word_read_the_rare_list() {
    let m = memory();
    let words = || m.lists.iter().filter(|(k, _)| !k.ends_with('*') && k.chars().count() >= 3);
    let (common, long) = words().max_by_key(|(_, l)| l.len()).unwrap();
    const LIMIT: usize = 5;
    assert!(long.len() > 4 * (LIMIT + 1), "the commonest indexed word fills heads: {} titles", long.len());
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    for size in [1, 2 * (LIMIT + 1)] {
        let (rare, list) = words().find(|(_, l)| l.len() == size).unwrap();
        // The common word in the middle (a short last word: no prefix list), and last.
        for q in [format!("{common} {rare} x"), format!("{rare} {common}")] {
            let query = Query::parse(&q).unwrap();
            let p = runtime.block_on(page(&query, None, LIMIT, None, &m)).unwrap();
            let want = list.iter().filter(|p| query.matches(&p.words)).take(LIMIT).count();
            assert_eq!(p.found.len(), want, "{q}");
            let heads = (LIMIT + 1) * query.lists().len();
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
    for (q, category) in queries(&m, 2000, 2) {
        let Ok(query) = Query::parse(&q) else { continue };
        let p = runtime.block_on(page(&query, category.as_deref(), 20, None, &m)).unwrap();
        queries_sent.push(p.queries);
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
        "search, first pages of 20 over {} queries with matches ({empty} without): items read per item returned mean {mean:.1}, median {:.1}, p95 {:.1}, max {:.1}; queries per page median {}, max {}; stopped early {early}",
        ratios.len(),
        at(&ratios, 0.5),
        at(&ratios, 0.95),
        ratios[ratios.len() - 1],
        queries_sent[queries_sent.len() / 2],
        queries_sent[queries_sent.len() - 1],
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
    let mut titles = Vec::new();
    let mut lists: BTreeMap<String, Vec<Posted>> = BTreeMap::new();
    for i in 0..3000u64 {
        let id = Ulid::from_parts(1_790_000_000_000 + i, u128::from(i));
        let category = if i % 997 == 0 { "rare" } else { "common" }.to_owned();
        let words = indexed("Blue mug");
        for term in terms(&words) {
            lists.entry(term.key()).or_default().push(Posted { id, words: words.clone(), category: category.clone() });
        }
        titles.push(Title { id, words, category });
    }
    for list in lists.values_mut() {
        list.reverse();
    }
    let m = Memory { titles, lists };
    let query = Query::parse("mug").unwrap();
    let (got, pages) = walk(&m, &query, Some("rare"), 20);
    assert_eq!(got, brute(&m, &query, Some("rare")));
    assert_eq!(got.len(), 4);
    let early = pages.iter().filter(|p| p.stopped_early).count();
    assert!(early >= 1, "{pages:?}");
    println!("a rare category in a list of 3,000: {} pages, {early} stopped early", pages.len());
}
