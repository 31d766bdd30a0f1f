//! Beyond the seeds, search: `GET /search/listings?q=[&categoryId=]`, the
//! active listings whose title holds every word of `q` (the last also as
//! the beginning of a word), newest first. The stream processor keeps a
//! posting per listing and term (`SEARCH#<term>` / `LISTING#<listingId>`,
//! carrying the title's words and category); a page reads the rarest of
//! the query's posting lists and filters ([`fanout::search`]), at most
//! [`fanout::search::MAX_QUERIES`] queries, then reads the listings it
//! returns in one `BatchGetItem` (two when it reads on) and keeps those
//! still active and matching (a posting lags its listing by the stream's
//! delay, and a sold listing keeps its postings while its order is
//! pending). A page looks for one match more than it answers where its
//! bound holds it, so one such listing costs it no place; a page that
//! dropped more reads on once within what is left of its bound
//! ([`fanout::search::read_on`]); a page still short says `stoppedEarly`.

use std::collections::BTreeMap;

use api::{ApiError, Deps, Request, Response};
use domain::answers::ListingCard;
use domain::ids::{CategoryId, ListingId};
use domain::model::{Listing, ListingStatus};
use domain::words::Query;
use fanout::search::{self, ListAnswer, ListAsk, ListAsker, Posted};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use keyschema::records::Posting;
use keyschema::{access, keys, table};
use serde::{Deserialize, Serialize};

/// The most listings a page answers (a larger `limit` is taken as this):
/// the page's listings are read by `BatchGetItem`, which prices each at
/// least one 4 KB unit (0.5 RCU), so 50 keep a page of 100 within 40 RCU
/// with its posting lists; a page answers fewer where its posting reads
/// leave less ([`fanout::search`], docs/capacity.md, the worst case per
/// route).
pub const MAX_PAGE: u16 = 50;

/// Answers posting-list queries from the table, in the handler's task.
struct Lists<'a>(&'a Deps);

impl ListAsker for Lists<'_> {
    type Error = ApiError;
    async fn ask(&self, asks: Vec<ListAsk>) -> Result<Vec<ListAnswer>, ApiError> {
        stream::iter(asks)
            .map(|ask| async move {
                let query = access::postings(&ask.term)?;
                let start = match ask.before {
                    None => None,
                    Some(before) => {
                        let key = keys::posting(&ask.term, &ListingId::from_ulid(before))?.into_key();
                        Some(BTreeMap::from([(table::PK.to_owned(), key.pk), (table::SK.to_owned(), key.sk)]))
                    }
                };
                let limit = u16::try_from(ask.limit).unwrap_or(u16::MAX);
                let page = self.0.store.query_exact::<Posting, _>(&query, limit, start).await?;
                let postings = page
                    .items
                    .iter()
                    .map(|p| Posted {
                        id: p.listing_id.ulid(),
                        words: p.word_set(),
                        category: p.category_id.to_string(),
                    })
                    .collect();
                // No filter: a query says there are more only after an item.
                let more = page.next.is_some() && !page.items.is_empty();
                Ok::<_, ApiError>(ListAnswer { postings, more, units: page.read_units })
            })
            .buffered(8)
            .try_collect()
            .await
    }
}

/// Where the next page starts: listings older than this one.
#[derive(Serialize, Deserialize)]
struct Cursor {
    #[serde(rename = "b")]
    before: ListingId,
}

/// A page of results.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchBody {
    items: Vec<ListingCard>,
    /// Cursor of the next page; `null` on the last.
    next_cursor: Option<String>,
    /// The page is short but not the last: it stopped at its bound of
    /// queries or read units before it was full, or a listing its postings
    /// named was no longer active and reading on once within the bound did
    /// not fill it; the cursor goes on after the last listing answered or
    /// looked at.
    stopped_early: bool,
}

/// `GET /search/listings?q=[&categoryId=][&limit=][&cursor=]` (public), at
/// most [`MAX_PAGE`] a page. `Query pk = SEARCH#<term>, begins_with(sk,
/// LISTING#), descending` per list read, then `BatchGetItem` of the
/// listings returned.
pub(crate) async fn search_listings(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let page = req.page(&["q", "categoryId"])?;
    let q = req.query::<String>("q")?.ok_or_else(|| ApiError::bad_request("q: required"))?;
    let query = Query::parse(&q).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let category = req.query::<CategoryId>("categoryId")?;
    let scope = format!("search|{:?}|{}|{:?}", query.words, query.prefix, category.as_ref().map(|c| c.to_string()));
    let before = match &page.cursor {
        None => None,
        Some(c) => Some(app.cursors.open::<Cursor>(&scope, c)?.before.ulid()),
    };
    let category_key = category.as_ref().map(|c| c.to_string());
    let limit = usize::from(page.limit.min(MAX_PAGE));
    // The bound of the page asked for (a page of 100 answers at most 50).
    let budget = fanout::Budget::page(usize::from(page.limit));
    // One match more than the page answers where the bound holds it: a
    // listing no longer active among them then costs the page no place.
    let category_key = category_key.as_deref();
    let first = search::page(&query, category_key, limit + 1, before, budget, &Lists(app)).await?;
    let mut items = answerable(app, &first.found, &query, category.as_ref()).await?;
    // A listing its postings named is no longer active (a sold one keeps
    // its postings while its order is pending): read on once after the
    // last one found, within what is left of the bound.
    let want = limit.saturating_sub(items.len());
    let short = items.len() < first.found.len();
    let found = match first.next.filter(|_| short && want > 0 && !first.stopped_early) {
        Some(after) => {
            let left = budget.less(first.queries + 1, first.units + first.found.len());
            let more = search::read_on(&query, category_key, &first, want, after, left, &Lists(app)).await?;
            items.extend(answerable(app, &more.found, &query, category.as_ref()).await?);
            more
        }
        None => first,
    };
    // The spare answered: the next page starts after the last one answered.
    let next = if items.len() > limit {
        items.truncate(limit);
        items.last().map(|l| l.listing_id.ulid())
    } else {
        found.next
    };
    let next_cursor = next.map(|b| app.cursors.seal(&scope, &Cursor { before: ListingId::from_ulid(b) }));
    // Short but not the last: said, whatever made it short.
    let stopped_early = items.len() < limit && next_cursor.is_some();
    Response::ok(&SearchBody { items, next_cursor, stopped_early })
}

/// The cards of the listings still active and matching, in the order
/// given: one `BatchGetItem` (a posting lags its listing, and a sold
/// listing keeps its postings while its order is pending).
async fn answerable(
    app: &Deps,
    found: &[ulid::Ulid],
    query: &Query,
    category: Option<&CategoryId>,
) -> Result<Vec<ListingCard>, ApiError> {
    if found.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<ListingId> = found.iter().map(|id| ListingId::from_ulid(*id)).collect();
    let keys = ids.iter().map(keys::listing).collect::<Result<Vec<_>, _>>()?;
    let mut listings: BTreeMap<ListingId, Listing> =
        app.store.batch_get::<Listing, _>(&keys, false).await?.into_iter().map(|l| (l.listing_id, l)).collect();
    Ok(ids
        .iter()
        .filter_map(|id| listings.remove(id))
        .filter(|l| l.status == ListingStatus::Active && query.matches(&domain::words::indexed(&l.title)))
        .filter(|l| category.is_none_or(|c| *c == l.category_id))
        .map(|l| ListingCard::from(&l))
        .collect())
}
