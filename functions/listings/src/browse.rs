//! Marketplace AP6 and the price browse, over a category's write-sharded
//! keys: `browse` (GSI7, `CATEGORY#<categoryId>#<shard>`, newest first) and
//! `by_price` (GSI8, `PRICE#<categoryId>#<shard>`, cheapest first). A
//! category has `listingShards` shards (1 unless it was created for heavy
//! traffic, raised later; read through `api::cache`); each listing records
//! its shard. A page is at most two rounds of queries over the shards,
//! planned by [`fanout::page_planner`] and exact whatever the shards hold;
//! the signed cursor carries the last key returned, the shard count read,
//! the exhausted shards and a hint. A page keeps to the contract's bound
//! ([`fanout::Budget::page`]): its second round reads what the first left,
//! each card counted at the largest a card can be
//! ([`ListingCard::MAX_STORED_BYTES`]); a page it cut short says
//! `stoppedEarly` (its cursor goes on after its last listing).

use std::marker::PhantomData;

use api::{ApiError, Deps, PageParams, Request, Response};
use domain::answers::ListingCard;
use domain::ids::{CategoryId, ListingId};
use domain::model::{Category, Listing, Money};
use fanout::hint::Hint;
use fanout::{bitmap, Answer, Ask, Asker, Bounded, Budget, Cheapest, Keyed, Position, Walk};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use keyschema::entities::listing;
use keyschema::write::attr;
use keyschema::{access, keys, EntityQuery, ReadAs, SchemaError};
use serde::Deserialize;
use ulid::Ulid;

/// The most shard queries in flight at once.
const QUERIES_AT_ONCE: usize = 16;

/// One way of walking a category's listings.
trait View: Keyed + Sized + ReadAs<Listing> {
    /// One shard's query for an ask.
    fn query(category: &CategoryId, shard: u16, ask: &Ask<Self::Key>) -> Result<EntityQuery<Listing>, SchemaError>;
    /// The key as a cursor carries it, and back.
    fn encode(key: Self::Key) -> String;
    /// See [`View::encode`].
    fn decode(text: &str) -> Option<Self::Key>;
    /// The listing's card.
    fn card(self) -> ListingCard;
}

/// Newest first: by id (a listing's `browse` sort key never changes).
#[derive(Deserialize)]
#[serde(transparent)]
struct Newest(ListingCard);

impl ReadAs<Listing> for Newest {}

impl Keyed for Newest {
    type Key = Ulid;
    fn key(&self) -> Ulid {
        self.0.listing_id.ulid()
    }
}

impl View for Newest {
    fn query(category: &CategoryId, shard: u16, ask: &Ask<Ulid>) -> Result<EntityQuery<Listing>, SchemaError> {
        access::category_listings(
            category,
            shard,
            Some((ListingId::from_ulid(ask.low), ListingId::from_ulid(ask.high))),
        )
    }
    fn encode(key: Ulid) -> String {
        key.to_string()
    }
    fn decode(text: &str) -> Option<Ulid> {
        Ulid::from_string(text).ok()
    }
    fn card(self) -> ListingCard {
        self.0
    }
}

/// Cheapest first: by the price key as the index holds it (`gsi3sk`, which
/// the price change's own write moves; a key written before that rule, or
/// repaired by the stream processor, may lag: then the listing is where
/// its old price put it, showing its new price).
#[derive(Deserialize)]
struct ByPrice {
    #[serde(flatten)]
    card: ListingCard,
    gsi3sk: String,
}

impl ReadAs<Listing> for ByPrice {}

impl Keyed for ByPrice {
    type Key = Cheapest;
    fn key(&self) -> Cheapest {
        let indexed = listing::BY_PRICE
            .key
            .sk_value(&self.gsi3sk, attr::PRICE)
            .and_then(|v| serde_json::from_str::<Money>(v.text()).ok());
        Cheapest { cents: indexed.unwrap_or(self.card.price).cents(), id: self.card.listing_id.ulid() }
    }
}

impl View for ByPrice {
    fn query(category: &CategoryId, shard: u16, ask: &Ask<Cheapest>) -> Result<EntityQuery<Listing>, SchemaError> {
        // The ask's greatest key is the cheapest.
        let (from, to) = (ask.high, ask.low);
        let end = |k: Cheapest| (k.cents, ListingId::from_ulid(k.id));
        access::listings_by_price(category, shard, end(from), end(to))
    }
    fn encode(key: Cheapest) -> String {
        key.encode()
    }
    fn decode(text: &str) -> Option<Cheapest> {
        Cheapest::decode(text)
    }
    fn card(self) -> ListingCard {
        self.card
    }
}

/// Answers a page's asks with queries of the live shards, at most
/// [`QUERIES_AT_ONCE`] in flight, in the handler's own task.
struct Shards<'a, V> {
    app: &'a Deps,
    category: &'a CategoryId,
    /// The live shards, in the planner's order.
    live: Vec<u16>,
    view: PhantomData<V>,
}

impl<V: View> Asker<V> for Shards<'_, V> {
    type Error = ApiError;

    async fn ask(&self, asks: Vec<Ask<V::Key>>) -> Result<Vec<(Ask<V::Key>, Answer<V>)>, ApiError> {
        stream::iter(asks)
            .map(|ask| async move {
                let query = V::query(self.category, self.live[ask.part], &ask)?;
                let limit = u16::try_from(ask.limit).unwrap_or(u16::MAX);
                let page = self.app.store.query_exact::<V, _>(&query, limit, None).await?;
                let (more, units) = (page.next.is_some(), page.read_units);
                Ok::<_, ApiError>((ask, Answer { items: page.items, more, units }))
            })
            .buffer_unordered(QUERIES_AT_ONCE)
            .try_collect()
            .await
    }
}

/// A page of a category's listings.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct BrowseBody {
    items: Vec<ListingCard>,
    next_cursor: Option<String>,
    /// The page kept to its bound before it was full (`nextCursor` goes on).
    stopped_early: bool,
}

/// Where the next page starts (see [`Position`]).
#[derive(serde::Serialize, Deserialize)]
struct Cursor {
    /// The last key returned.
    #[serde(rename = "b")]
    before: String,
    /// Exhausted shards, as a bitmap in lowercase hex.
    #[serde(rename = "d")]
    done: String,
    /// What the page learned, for the next one's first round.
    #[serde(rename = "h", default, skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    /// The shard count the walk read: a later page reads at least as many,
    /// whatever its instance's cached copy of the category says (a raise
    /// reaches instances at different times).
    #[serde(rename = "n")]
    shards: u16,
}

/// One page of a walk of `category`'s shards between `low` and `high`.
async fn walk<V: View>(
    app: &Deps,
    page: &PageParams,
    category: &CategoryId,
    (low, high): (V::Key, V::Key),
    scope: &str,
) -> Result<Response, ApiError> {
    let cached = match api::cache::found::<Category, _>(&app.store, &keys::category(category)?).await? {
        Some(c) => c.listing_shards.clamp(1, domain::shard::MAX_LISTING_SHARDS),
        // No such category: no listings, and nothing to query.
        None => return Response::ok(&BrowseBody { items: Vec::new(), next_cursor: None, stopped_early: false }),
    };
    let (shards, at) = match &page.cursor {
        None => (cached, None),
        Some(c) => {
            let cursor: Cursor = app.cursors.open(scope, c)?;
            let invalid = || ApiError::bad_request("invalid cursor");
            if !(1..=domain::shard::MAX_LISTING_SHARDS).contains(&cursor.shards) {
                return Err(invalid());
            }
            let mut done = bitmap::decode(&cursor.done, usize::from(cursor.shards)).ok_or_else(invalid)?;
            // Shards this instance knows of and the walk did not: not done.
            let shards = cursor.shards.max(cached);
            done.resize(usize::from(shards), false);
            let before = V::decode(&cursor.before).ok_or_else(invalid)?;
            let live = done.iter().filter(|d| !**d).count();
            let hint = cursor.hint.as_deref().and_then(|h| Hint::decode(h, live));
            (shards, Some(Position { before, done, hint }))
        }
    };
    let partitions = usize::from(shards);
    let live: Vec<u16> = (0..shards).filter(|s| at.as_ref().is_none_or(|p| !p.done[usize::from(*s)])).collect();
    let at_least = domain::shard::browse_first_round(live.len());
    let asker = Shards::<V> { app, category, live, view: PhantomData };
    let limit = usize::from(page.limit);
    // The category's read (a `GetItem` when this instance has no copy) comes
    // out of the page's bound.
    let budget = Budget::page(limit).less(1, 1);
    let bounded = Bounded { budget, item_bytes: ListingCard::MAX_STORED_BYTES };
    let walk = Walk { partitions, low, high, limit };
    let (items, next) = fanout::page_reading_at_least(walk, at_least, at.as_ref(), Some(bounded), &asker).await?;
    let stopped_early = items.len() < limit && next.is_some();
    let next_cursor = next.map(|p| {
        let cursor = Cursor {
            before: V::encode(p.before),
            done: bitmap::encode(&p.done),
            hint: p.hint.as_ref().map(Hint::encode),
            shards,
        };
        app.cursors.seal(scope, &cursor)
    });
    // A price changed between the two rounds (its key moved by the
    // change's write) could show a listing twice: once is enough.
    let mut seen = std::collections::HashSet::new();
    let items: Vec<ListingCard> = items.into_iter().map(View::card).filter(|l| seen.insert(l.listing_id)).collect();
    Response::ok(&BrowseBody { items, next_cursor, stopped_early })
}

/// Marketplace AP6: a category's active listings, newest first (public).
/// `browse` (GSI7) holds a listing only while it is active.
/// `Query GSI7 gsi2pk = CATEGORY#<categoryId>#<shard>, gsi2sk BETWEEN
/// LISTING#<low> AND LISTING#<high>`, descending, per shard.
///
/// Beyond the seeds, `?sort=price[&minPrice=][&maxPrice=]`: cheapest first
/// (ties oldest first), bounds inclusive, on the sparse GSI8 of active
/// listings by price. `Query GSI8 gsi3pk = PRICE#<categoryId>#<shard>,
/// gsi3sk BETWEEN LISTING#<min>#<id> AND LISTING#<max>#<id>` per shard
/// (prices in zero-padded cents).
pub(crate) async fn category_listings(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let category: CategoryId = req.path("categoryId")?;
    let page = req.page(&["sort", "minPrice", "maxPrice"])?;
    let (min, max) = (price_param(&req, "minPrice")?, price_param(&req, "maxPrice")?);
    match req.query::<String>("sort")?.as_deref() {
        None if min.is_none() && max.is_none() => {
            let scope = format!("browse|{category}");
            walk::<Newest>(app, &page, &category, (Ulid(0), Ulid(u128::MAX)), &scope).await
        }
        None => Err(ApiError::bad_request("minPrice and maxPrice go with sort=price")),
        Some("price") => {
            let (min, max) = (min.unwrap_or_default(), max.unwrap_or(Money::MAX));
            if min > max {
                return Err(ApiError::bad_request("minPrice must not be above maxPrice"));
            }
            let scope = format!("by_price|{category}|{}|{}", min.cents(), max.cents());
            let range = (Cheapest::to_cents(max.cents()), Cheapest::from_cents(min.cents()));
            walk::<ByPrice>(app, &page, &category, range, &scope).await
        }
        Some(_) => Err(ApiError::bad_request("sort: must be `price` (leave it out for newest first)")),
    }
}

/// A price query parameter: a JSON number such as `12` or `12.5`, 0 to 1000000.
fn price_param(req: &Request, name: &str) -> Result<Option<Money>, ApiError> {
    match req.query::<String>(name)? {
        None => Ok(None),
        Some(raw) => raw.parse::<Money>().map(Some).map_err(|why| ApiError::bad_request(format!("{name}: {why}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fanout::PageKey;

    #[test]
    fn a_price_key_is_read_from_the_index_sort_key() {
        let id = ListingId::generate();
        let card: ListingCard = serde_json::from_value(serde_json::json!({
            "listingId": id.to_string(), "sellerId": "s", "title": "T", "price": 9.5, "categoryId": "c",
            "status": "active", "createdAt": "t"
        }))
        .unwrap();
        let item = ByPrice { card, gsi3sk: format!("LISTING#0000000700#{id}") };
        assert_eq!(item.key(), Cheapest { cents: 700, id: id.ulid() }, "where the index has it, not its new price");
        assert!(item.key().pred().is_some());
    }
}
