//! Beyond the seeds, "listings near me": `GET /listings/near?lat=&lon=&radiusKm=`,
//! the active listings with a location within the radius, nearest first
//! by ring (within 100 m, then rings each a quarter farther out: within a
//! ring by geohash), each with its `distanceKm`. The near index (GSI5)
//! holds their cards by geohash: a partition per 3-character cell (per
//! 5-character one in a dense cell: `domain::geo::partition`), the full
//! hash in the sort key, so a page is what its queries read. A page reads
//! which partitions of the dense cells it meets hold listings (a query per
//! such cell, none elsewhere), then sweeps each ring's cells in key order
//! ([`fanout::nearest`]), a round of queries at a time (a cell, and up to
//! two it will read whole next; a cell of a dense cell still splitting in
//! both partitions that may hold it, `NEAR_SPLITTING`).
//! The signed cursor carries the ring and the last sort key the page read.

use std::collections::BTreeSet;

use api::{ApiError, Deps, Request, Response};
use domain::answers::ListingCard;
use domain::geo::partition::DENSE;
use domain::geo::{Cell, Location, CELL_LEN, HASH_LEN};
use domain::ids::CategoryId;
use domain::model::{Listing, ListingStatus};
use fanout::nearest::{self, After, Budget, CellAnswer, CellAsk, CellAsker, Cost, Found, Placed, Rings};
use futures_util::stream::{self, StreamExt};
use keyschema::access;
use keyschema::records::NearCell;
use serde::{Deserialize, Serialize};
use telemetry::tracing::warn;
use ulid::Ulid;

/// The widest radius, in km.
pub const MAX_RADIUS_KM: f64 = 50.0;
/// The most cells a search may cover: cells narrow toward the poles, where
/// a radius covers up to 256 of them (a query each); 16 allow 50 km up to
/// about 80 degrees of latitude, and keep a page within its bound.
pub const MAX_CELLS: usize = 16;
/// Queries in flight at once: a round asks a cell and up to two read
/// ahead (`fanout::nearest`), each in two partitions where a dense cell is
/// still splitting.
const QUERIES_AT_ONCE: usize = 6;

/// A listing as GSI5 holds it: its card.
#[derive(Deserialize)]
struct Card {
    #[serde(flatten)]
    card: ListingCard,
    #[serde(rename = "gsi4sk")]
    sort_key: String,
}

impl keyschema::ReadAs<Listing> for Card {}

impl Placed for Card {
    fn location(&self) -> Option<Location> {
        self.card.location
    }
    fn id(&self) -> Ulid {
        self.card.listing_id.ulid()
    }
    fn sort_key(&self) -> String {
        self.sort_key.clone()
    }
}

/// Answers cell queries from a near index, in the handler's task; knows
/// which partitions of the dense cells the circle meets hold listings.
struct Cells<'a> {
    app: &'a Deps,
    /// Those partitions ([`keyschema::records::NearCell`]).
    held: BTreeSet<String>,
    /// What reading them cost: requests and 4 KB units.
    spent: (usize, usize),
}

impl<'a> Cells<'a> {
    /// Reads which partitions of the dense cells within `radius` of `at`
    /// hold listings: a query per such cell, at once (none elsewhere).
    /// Eventually consistent, as the index is: a listing keyed a moment
    /// before in a partition that held none can be missed, as it can be
    /// by the index.
    async fn near(app: &'a Deps, at: &Location, radius: f64) -> Result<Self, ApiError> {
        let meets = |cell: &&'static str| Cell::of(cell).is_some_and(|c| c.distance_bounds_km(at).0 <= radius);
        let dense: Vec<&'static str> = DENSE.iter().copied().filter(meets).collect();
        let pages = futures_util::future::try_join_all(dense.into_iter().map(|cell| held_in(app, cell))).await?;
        let spent = (pages.len(), pages.iter().map(|p| p.read_units).sum());
        Ok(Cells { app, held: pages.into_iter().flat_map(|p| p.items).map(|c| c.cell).collect(), spent })
    }
}

impl Cells<'_> {
    /// Whether `prefix` is within a dense cell still splitting (its
    /// listings keyed before may be in any of its partitions, and in the
    /// one that held it before).
    fn splitting(&self, prefix: &str) -> bool {
        self.app.near_splitting.iter().any(|cell| prefix.starts_with(cell.as_str()))
    }
}

/// The partitions of dense cell `cell` that hold listings: at most 32,
/// about 70 bytes each, so one page.
async fn held_in(app: &Deps, cell: &'static str) -> Result<store::Page<NearCell>, ApiError> {
    Ok(app.store.query_exact::<NearCell, _>(&access::near_cells(cell)?, 32, None).await?)
}

impl CellAsker<Card> for Cells<'_> {
    type Error = ApiError;

    /// Recorded as holding a listing, or in a dense cell still splitting.
    fn may_hold(&self, cell: &str) -> bool {
        self.held.contains(cell) || self.splitting(cell)
    }

    /// The largest card (a query's limit keeps what it reads within the
    /// page's bound).
    fn most_item_bytes(&self) -> usize {
        ListingCard::MAX_STORED_BYTES
    }

    /// Two in a dense cell still splitting.
    fn queries(&self, prefix: &str) -> usize {
        1 + usize::from(self.splitting(prefix))
    }

    async fn ask(&self, asks: Vec<CellAsk>) -> Result<Vec<(CellAsk, CellAnswer<Card>)>, ApiError> {
        // A cell of a dense cell still splitting is also queried in the
        // partition that held it before (docs/operations.md, "A dense cell").
        let queries: Vec<(usize, _)> = asks
            .iter()
            .enumerate()
            .flat_map(|(i, ask)| {
                let (after, before) = (ask.after.as_deref(), ask.before.as_deref());
                let now = access::listings_near(&ask.prefix, after, before);
                let then =
                    self.splitting(&ask.prefix).then(|| access::listings_near_before_dense(&ask.prefix, after, before));
                std::iter::once((i, now)).chain(then.map(|q| (i, q)))
            })
            .collect();
        let asks_ref = &asks;
        let answers: Vec<(usize, Result<CellAnswer<Card>, ApiError>)> = stream::iter(queries)
            .map(|(i, query)| async move {
                let limit = asks_ref.get(i).map_or(0, |ask| u16::try_from(ask.limit).unwrap_or(u16::MAX));
                let page =
                    async { Ok::<_, ApiError>(self.app.store.query_exact::<Card, _>(&query?, limit, None).await?) };
                let answer =
                    page.await.map(|p| CellAnswer { more: p.next.is_some(), units: p.read_units, items: p.items });
                (i, answer)
            })
            .buffer_unordered(QUERIES_AT_ONCE)
            .collect()
            .await;
        // A cell's two answers as one. The first ask's failure fails the
        // page; a cell read ahead whose query failed is left out (the page
        // asks it again when it reaches it).
        let mut one: Vec<Option<CellAnswer<Card>>> = asks.iter().map(|_| None).collect();
        let mut failed = vec![false; asks.len()];
        for (i, answer) in answers {
            let answer = match answer {
                Ok(answer) => answer,
                Err(e) if i == 0 => return Err(e),
                Err(e) => {
                    warn!(error = %e, "a cell read ahead failed: left out");
                    if let Some(f) = failed.get_mut(i) {
                        *f = true;
                    }
                    continue;
                }
            };
            if let (Some(slot), Some(ask)) = (one.get_mut(i), asks.get(i)) {
                *slot = Some(match slot.take() {
                    Some(first) => nearest::merged(first, answer, ask.limit),
                    None => answer,
                });
            }
        }
        let kept = one.into_iter().zip(failed).map(|(answer, failed)| answer.filter(|_| !failed));
        Ok(asks.into_iter().zip(kept).filter_map(|(ask, answer)| Some((ask, answer?))).collect())
    }
}

/// A listing with its distance.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Near {
    #[serde(flatten)]
    card: ListingCard,
    /// Kilometres from the point (haversine), to the metre.
    distance_km: f64,
}

/// Where the next page starts: the ring and the last sort key the page
/// read in it ([`After`]).
#[derive(Serialize, Deserialize)]
struct Cursor {
    #[serde(rename = "r")]
    ring: usize,
    #[serde(rename = "k", default, skip_serializing_if = "Option::is_none")]
    key: Option<String>,
}

/// The longest sort key a cursor carries: a geohash, `#` and an id.
const MAX_KEY: usize = HASH_LEN + 1 + 26;

fn number(req: &Request, name: &str, range: std::ops::RangeInclusive<f64>) -> Result<f64, ApiError> {
    let bad = || ApiError::bad_request(format!("{name}: must be a number from {} to {}", range.start(), range.end()));
    let raw = req.query::<String>(name)?.ok_or_else(|| ApiError::bad_request(format!("{name}: required")))?;
    let value: f64 = raw.trim().parse().map_err(|_| bad())?;
    (value.is_finite() && range.contains(&value)).then_some(value).ok_or_else(bad)
}

/// A page of listings near a point.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NearBody {
    items: Vec<Near>,
    /// Cursor of the next page; `null` on the last.
    next_cursor: Option<String>,
    /// The page reached its bound of what it may read before it was full
    /// (a category filter, listings of long titles, cells that hold little
    /// of a ring); the cursor goes on after the last listing it read. A
    /// page can also be short because listings it found were sold a moment
    /// before: only a `null` cursor ends the walk.
    stopped_early: bool,
    /// The radius searched: the one asked, but near a pole the widest whose
    /// circle covers at most [`MAX_CELLS`] cells.
    radius_km: f64,
}

/// `GET /listings/near?lat=&lon=&radiusKm=[&categoryId=][&limit=][&cursor=]`
/// (public). `Query GSI5 gsi4pk = GEO#<geohash:cell>, gsi4sk BETWEEN <key
/// read> AND <cell>~` (or `begins_with`) per cell read (a category is a
/// filter; a page stops when its next query would take it past the
/// contract's bound, [`Budget::page`]), keeping the cards still active.
pub(crate) async fn listings_near(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let page = req.page(&["lat", "lon", "radiusKm", "categoryId"])?;
    let lat = number(&req, "lat", -90.0..=90.0)?;
    let lon = number(&req, "lon", -180.0..=180.0)?;
    let radius = number(&req, "radiusKm", 0.0..=MAX_RADIUS_KM)?;
    let category = req.query::<CategoryId>("categoryId")?;
    let at = Location::new(lat, lon).ok_or_else(|| ApiError::bad_request("lat and lon: out of range"))?;
    let asked = radius;
    // Near a pole the widest radius whose circle covers at most MAX_CELLS
    // cells (to 10 m), answered as `radiusKm`.
    let radius = match Cell::widest_radius(&at, radius, MAX_CELLS, CELL_LEN) {
        Some(km) if km < radius => (km * 100.0).floor() / 100.0,
        Some(_) => radius,
        None => 0.0,
    };
    // `near-ring`: a cursor of the walk by ring (those of the exact walk
    // before it do not open).
    let scope = format!("near-ring|{lat:?}|{lon:?}|{asked:?}|{:?}", category.as_ref().map(|c| c.to_string()));
    let after = match &page.cursor {
        None => None,
        Some(c) => {
            let cursor: Cursor = app.cursors.open(&scope, c)?;
            let key_ok = |k: &String| {
                k.len() <= MAX_KEY && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'#' || b == b'~')
            };
            if cursor.ring >= Rings::new(radius).count() || !cursor.key.as_ref().is_none_or(key_ok) {
                return Err(ApiError::bad_request("invalid cursor"));
            }
            Some(After { ring: cursor.ring, key: cursor.key })
        }
    };
    let search = Search { at, radius, limit: usize::from(page.limit), after, category: category.as_ref() };
    let (found, next, cost) = search.run(app).await?;
    // Still active: an index copy lags its listing a moment.
    let items: Vec<Near> = found
        .into_iter()
        .filter(|f| f.item.card.status == ListingStatus::Active)
        .map(|f| Near { distance_km: metres(f.km), card: f.item.card })
        .collect();
    let next_cursor = next.map(|n| app.cursors.seal(&scope, &Cursor { ring: n.ring, key: n.key }));
    Response::ok(&NearBody { items, next_cursor, stopped_early: cost.stopped_early, radius_km: radius })
}

/// One page's search.
struct Search<'a> {
    at: Location,
    radius: f64,
    limit: usize,
    after: Option<After>,
    category: Option<&'a CategoryId>,
}

impl Search<'_> {
    async fn run(self, app: &Deps) -> Result<(Vec<Found<Card>>, Option<After>, Cost), ApiError> {
        let keep = |t: &Card| self.category.is_none_or(|c| *c == t.card.category_id);
        let cells = Cells::near(app, &self.at, self.radius).await?;
        let budget = Budget::page(self.limit).less(cells.spent.0, cells.spent.1);
        nearest::page_where(self.at, self.radius, self.limit, self.after, &keep, &cells, budget).await
    }
}

/// Kilometres to the metre.
fn metres(km: f64) -> f64 {
    (km * 1000.0).round() / 1000.0
}
