//! A page of word search over posting lists, newest first, within its
//! page's [`Budget`] whatever the corpus.
//!
//! Every list a query names ([`domain::words::Query::lists`]) holds every
//! match, and each posting carries the title's indexed words, so reading
//! any one list and filtering its postings finds them all, in its order
//! (newest first). The cost is the length of the list read, so a page reads
//! the rarest: round 1 reads the heads of at most [`HEAD_LISTS`] lists at
//! once: of its terms of two or three characters the first two (the
//! longest words', which are likely the rarest) and the last (the prefix's);
//! when it names only one-character terms, the first one's
//! [`domain::words::PREFIX_SPLITS`] lists, read together and merged. A list
//! that ended there is complete (the shortest such
//! one answers the page); else the *driver* is the list whose head reaches
//! furthest back in time (the sparsest), read on until the page is full,
//! the list ends, [`MAX_QUERIES`] are sent or the budget is spent. A rare
//! word AND a common word reads the rare word's list, never the common
//! one's beyond its head.
//!
//! The budget: the caller reads the listings a page answers in one
//! `BatchGetItem`, which bills each as at least one 4 KB unit, so a page
//! answers at most as many listings as the units its posting reads left
//! ([`SearchPage::found`]: at most the budget's units less those read), and
//! asks a posting list for no more postings than half of what is left (a
//! unit per list of a split prefix when half is less) holds at
//! [`MAX_POSTING_BYTES`] each (a bound, not an estimate: what a list
//! holds further on can be larger than what it held so far). Round 1 asks
//! each head for the page's limit and one, which fits any page's budget
//! ([`HEAD_LISTS`] heads, or the four of a split prefix, of postings of the
//! largest size). A page stopped
//! by its budget or its queries says so (`stopped_early`) and its cursor
//! resumes after the last listing it answers or, if it answers none more,
//! after the last posting it read, so every page moves the walk on.

use std::collections::BTreeSet;

use domain::words::{Query, Term};
use ulid::Ulid;

use crate::budget::UNIT_BYTES;
use crate::Budget;

/// Most queries one page sends (round 1 sends one per list: at most
/// [`HEAD_LISTS`], or a one-character prefix's [`domain::words::PREFIX_SPLITS`]).
pub const MAX_QUERIES: usize = 10;
/// Most postings asked for per query after round 1.
pub const DRIVER_LIMIT: usize = 200;
/// Most terms round 1 reads the heads of (`heads`; a split term's four
/// lists count as one here). Any list holds every match, so which are read
/// changes the cost, never the answer.
pub const HEAD_LISTS: usize = 3;
/// The most a posting item weighs as DynamoDB sizes it: its keys, a term of
/// at most 14 bytes (three characters, `*` and a split's digit), at most
/// [`domain::words::MAX_INDEXED_BYTES`] of words,
/// the listing and category ids, and the attribute names (the integration
/// tests hold the largest to it).
pub const MAX_POSTING_BYTES: usize = 512;

/// One posting as read: the listing, its title's indexed words, its category.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Posted {
    /// The listing's id.
    pub id: Ulid,
    /// The title's indexed words.
    pub words: BTreeSet<String>,
    /// The listing's category.
    pub category: String,
}

/// One query of a posting list: up to `limit` postings older than `before`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListAsk {
    /// The list ([`Term::list_keys`]).
    pub term: String,
    /// Only postings of listings older than this one.
    pub before: Option<Ulid>,
    /// Most postings to read.
    pub limit: usize,
}

/// What a list query read, newest first; `more`: the list may go on.
#[derive(Clone, Debug, Default)]
pub struct ListAnswer {
    /// The postings read.
    pub postings: Vec<Posted>,
    /// Whether the list may hold more after them: never of an answer
    /// without postings (DynamoDB's Query without a filter returns an item
    /// before it says there are more; the page takes an empty answer's end
    /// as the list's).
    pub more: bool,
    /// The 4 KB units the query was billed (at least one).
    pub units: usize,
}

/// Answers list queries (DynamoDB, or memory in the tests).
pub trait ListAsker {
    /// What a failed query is.
    type Error;
    /// Sends the asks (answers in the order asked).
    fn ask(&self, asks: Vec<ListAsk>) -> impl std::future::Future<Output = Result<Vec<ListAnswer>, Self::Error>>;
}

/// A page of matches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchPage {
    /// The matching listings, newest first.
    pub found: Vec<Ulid>,
    /// Where the next page starts (listings older than this), if any.
    pub next: Option<Ulid>,
    /// The page stopped at its budget or [`MAX_QUERIES`] before it was full.
    pub stopped_early: bool,
    /// Queries sent.
    pub queries: usize,
    /// Postings read.
    pub postings_read: usize,
    /// The 4 KB units the queries were billed.
    pub units: usize,
    /// The list the page read on (its driver), for [`read_on`].
    pub driver: Option<Term>,
}

/// Whether a posting matches the query (and the category, if given).
pub fn matches(query: &Query, category: Option<&str>, posted: &Posted) -> bool {
    category.is_none_or(|c| c == posted.category) && query.matches(&posted.words)
}

/// The lists round 1 reads: of `lists` (the longest words' first, the
/// prefix's last), a one-character prefix's split lists only if the query
/// names no other kind (one holds up to a quarter of all titles: never the
/// sparsest; then the first alone), and of the others the first
/// [`HEAD_LISTS`] - 1 and the last.
fn heads(lists: Vec<Term>) -> Vec<Term> {
    if lists.iter().all(Term::is_split) {
        return lists.into_iter().take(1).collect();
    }
    let mut lists: Vec<Term> = lists.into_iter().filter(|t| !t.is_split()).collect();
    if lists.len() > HEAD_LISTS {
        let prefix = lists.pop();
        lists.truncate(HEAD_LISTS - 1);
        lists.extend(prefix);
    }
    lists
}

/// Reads `lists` on from `before`, `limit` postings from each list it is
/// kept in, each term's lists merged; and the postings read.
async fn read<A: ListAsker>(
    asker: &A,
    lists: &[&Term],
    before: Option<Ulid>,
    limit: usize,
) -> Result<(Vec<ListAnswer>, usize), A::Error> {
    let keys: Vec<Vec<String>> = lists.iter().map(|t| t.list_keys()).collect();
    let asks = keys.iter().flatten().map(|term| ListAsk { term: term.clone(), before, limit }).collect();
    let answers = asker.ask(asks).await?;
    let read = answers.iter().map(|a| a.postings.len()).sum();
    let mut answers = answers.into_iter();
    Ok((keys.iter().map(|k| merge(answers.by_ref().take(k.len()).collect())).collect(), read))
}

/// One term's answer from the answers of the lists it is split over,
/// newest first: exact down to the newest of the last postings of the lists
/// that go on (a list that ended holds no more).
fn merge(mut parts: Vec<ListAnswer>) -> ListAnswer {
    if parts.len() == 1 {
        return parts.pop().unwrap_or_default();
    }
    let units = parts.iter().map(|a| a.units.max(1)).sum();
    let more = parts.iter().any(|a| a.more);
    let cut = parts.iter().filter(|a| a.more).filter_map(|a| a.postings.last().map(|p| p.id)).max();
    let mut postings: Vec<Posted> =
        parts.into_iter().flat_map(|a| a.postings).filter(|p| cut.is_none_or(|c| p.id >= c)).collect();
    postings.sort_by_key(|p| std::cmp::Reverse(p.id));
    ListAnswer { postings, more, units }
}

/// One page of up to `limit` matches older than `before`, within `budget`
/// with a unit left per listing found and a request for their read.
pub async fn page<A: ListAsker>(
    query: &Query,
    category: Option<&str>,
    limit: usize,
    before: Option<Ulid>,
    budget: Budget,
    asker: &A,
) -> Result<SearchPage, A::Error> {
    let limit = limit.max(1);
    let lists = heads(query.lists());
    let (heads, read_first) = read(asker, &lists.iter().collect::<Vec<_>>(), before, limit + 1).await?;
    let queries = lists.iter().map(Term::list_count).sum();
    let mut out = SearchPage { queries, postings_read: read_first, ..SearchPage::default() };
    out.units = heads.iter().map(|a| a.units.max(1)).sum();
    // The driver: the shortest complete list, else the sparsest head.
    let complete = heads.iter().enumerate().filter(|(_, a)| !a.more).min_by_key(|(_, a)| a.postings.len());
    let driver = match complete {
        Some((i, _)) => i,
        None => {
            let reach = |a: &ListAnswer| a.postings.last().map(|p| p.id);
            let sparsest = heads.iter().enumerate().min_by_key(|(_, a)| reach(a));
            sparsest.map_or(0, |(i, _)| i)
        }
    };
    let Some(answer) = heads.into_iter().nth(driver) else { return Ok(out) };
    out.driver = lists.get(driver).cloned();
    let walk = Walk { query, category, limit, budget, sent: 0 };
    walk.drive(asker, &lists[driver], answer, None, out).await
}

/// Matches of the page's driver list (`page.driver`) older than `after`,
/// up to `limit`, within what is left of the page's `budget` once `page`
/// and the listings it found are read: for a page that found listings no
/// longer active (a sold one keeps its postings while its order is pending)
/// and reads on to fill itself. No head is read again; the page's queries
/// count toward [`MAX_QUERIES`].
pub async fn read_on<A: ListAsker>(
    query: &Query,
    category: Option<&str>,
    page: &SearchPage,
    limit: usize,
    after: Ulid,
    budget: Budget,
    asker: &A,
) -> Result<SearchPage, A::Error> {
    let out = SearchPage { driver: page.driver.clone(), ..SearchPage::default() };
    let Some(driver) = &page.driver else { return Ok(out) };
    let walk = Walk { query, category, limit: limit.max(1), budget, sent: page.queries };
    walk.drive(asker, driver, ListAnswer { more: true, ..ListAnswer::default() }, Some(after), out).await
}

/// A page's walk down its driver list.
struct Walk<'a> {
    query: &'a Query,
    category: Option<&'a str>,
    limit: usize,
    budget: Budget,
    /// Queries the page sent before this walk.
    sent: usize,
}

impl Walk<'_> {
    /// Takes the matches of `answer` (the driver's postings after
    /// `last_read`) and reads the driver on until the page is full, the
    /// list ends, [`MAX_QUERIES`] are sent or the budget is spent.
    async fn drive<A: ListAsker>(
        &self,
        asker: &A,
        driver: &Term,
        mut answer: ListAnswer,
        mut last_read: Option<Ulid>,
        mut out: SearchPage,
    ) -> Result<SearchPage, A::Error> {
        let (query, category, limit, budget) = (self.query, self.category, self.limit, self.budget);
        loop {
            // The listings the units left can still read (one at least: every
            // page moves the walk on).
            let room = budget.units.saturating_sub(out.units).max(1).min(limit);
            for (k, posted) in answer.postings.iter().enumerate() {
                if !matches(query, category, posted) {
                    last_read = Some(posted.id);
                    continue;
                }
                if out.found.len() >= room {
                    // Out of units: the next page starts after the last found.
                    out.stopped_early = true;
                    out.next = out.found.last().copied();
                    return Ok(out);
                }
                last_read = Some(posted.id);
                out.found.push(posted.id);
                if out.found.len() == limit {
                    // Full: a cursor if a match follows or the list goes on
                    // (then the next page may be empty: no read to find out).
                    let rest = answer.postings[k + 1..].iter().any(|p| matches(query, category, p));
                    out.next = (rest || answer.more).then_some(posted.id);
                    return Ok(out);
                }
            }
            if !answer.more {
                return Ok(out);
            }
            // What is left once the listings found are read: a query takes a
            // unit at least and an answer another.
            let left = budget.units.saturating_sub(out.units + out.found.len());
            let requests_left = budget.requests.saturating_sub(out.queries + 1);
            let Some(from) = last_read else { return Ok(out) };
            let splits = driver.list_count();
            if self.sent + out.queries + splits > MAX_QUERIES || requests_left < splits || left < splits + 1 {
                out.stopped_early = true;
                out.next = Some(from);
                return Ok(out);
            }
            let holds = (left / 2).max(splits) * UNIT_BYTES / MAX_POSTING_BYTES / splits;
            let (mut answers, read_on) = read(asker, &[driver], Some(from), holds.min(DRIVER_LIMIT)).await?;
            answer = answers.pop().unwrap_or_default();
            out.queries += splits;
            out.postings_read += read_on;
            out.units += answer.units.max(1);
        }
    }
}

#[cfg(test)]
#[path = "tests/search.rs"]
mod tests;
