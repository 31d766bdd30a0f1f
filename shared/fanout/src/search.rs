//! A page of word search over posting lists, newest first, in a bounded
//! number of queries whatever the corpus.
//!
//! Every list a query names ([`domain::words::Query::lists`]) holds every
//! match, and each posting carries the title's indexed words, so reading
//! any one list and filtering its postings finds them all, in its order
//! (newest first). The cost is the length of the list read, so a page reads
//! the rarest: round 1 reads the head of every list at once; a list that
//! ended there is complete (the shortest such one answers the page); else
//! the *driver* is the list whose head reaches furthest back in time (the
//! sparsest), read on in larger queries until the page is full, the list
//! ends, or [`MAX_QUERIES`] is reached. A page stopped by the bound says so
//! (`stopped_early`) and its cursor resumes after the last posting read: a
//! rare word AND a common word reads the rare word's list, never the common
//! one's beyond its head.

use std::collections::BTreeSet;

use domain::words::Query;
use ulid::Ulid;

/// Most queries one page sends (round 1 sends one per list: at most 6).
pub const MAX_QUERIES: usize = 10;
/// Postings asked for per query after round 1.
pub const DRIVER_LIMIT: usize = 200;

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
    /// The term ([`domain::words::Term::key`]).
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
    /// Whether the list may hold more after them.
    pub more: bool,
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
    /// The page stopped at [`MAX_QUERIES`] before it was full.
    pub stopped_early: bool,
    /// Queries sent.
    pub queries: usize,
    /// Postings read.
    pub postings_read: usize,
}

/// Whether a posting matches the query (and the category, if given).
pub fn matches(query: &Query, category: Option<&str>, posted: &Posted) -> bool {
    category.is_none_or(|c| c == posted.category) && query.matches(&posted.words)
}

/// One page of up to `limit` matches older than `before`.
pub async fn page<A: ListAsker>(
    query: &Query,
    category: Option<&str>,
    limit: usize,
    before: Option<Ulid>,
    asker: &A,
) -> Result<SearchPage, A::Error> {
    let limit = limit.max(1);
    let lists: Vec<String> = query.lists().iter().map(|t| t.key()).collect();
    let head = limit + 1;
    let asks = lists.iter().map(|term| ListAsk { term: term.clone(), before, limit: head }).collect();
    let heads = asker.ask(asks).await?;
    let mut out = SearchPage { queries: lists.len(), ..SearchPage::default() };
    out.postings_read = heads.iter().map(|a| a.postings.len()).sum();
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
    let Some(mut answer) = heads.into_iter().nth(driver) else { return Ok(out) };
    loop {
        let mut last_read = None;
        for (k, posted) in answer.postings.iter().enumerate() {
            last_read = Some(posted.id);
            if matches(query, category, posted) {
                out.found.push(posted.id);
                if out.found.len() == limit {
                    // Full: a cursor if a match follows or the list goes on
                    // (then the next page may be empty: no read to find out).
                    let rest = answer.postings[k + 1..].iter().any(|p| matches(query, category, p));
                    out.next = (rest || answer.more).then_some(posted.id);
                    return Ok(out);
                }
            }
        }
        if !answer.more {
            return Ok(out);
        }
        if out.queries >= MAX_QUERIES {
            out.stopped_early = true;
            out.next = last_read;
            return Ok(out);
        }
        let Some(from) = last_read else { return Ok(out) };
        let ask = ListAsk { term: lists[driver].clone(), before: Some(from), limit: DRIVER_LIMIT };
        answer = asker.ask(vec![ask]).await?.pop().unwrap_or_default();
        out.queries += 1;
        out.postings_read += answer.postings.len();
    }
}

#[cfg(test)]
#[path = "tests/search.rs"]
mod tests;
