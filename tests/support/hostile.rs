//! Hostile data, made through the real API (the in-process handlers) so it
//! is data the API accepts: the longest texts it takes, in 4-byte
//! characters (UTF-8's widest), titles whose words expand under the search
//! index's folding, thousands of listings at one spot, points at the poles
//! and on the antimeridian, and many orders, reviews, messages and
//! favorites on one user or order. For the cost bounds of issue 33
//! (`tests/integration/bounds.rs`); each builder makes what its routes read.
//!
//! The derived keys (browse, price, search and geohash indexes) are the
//! stream processor's: [`Hostile::index`] runs it on the records not yet
//! processed.

use std::collections::HashSet;

use domain::geo::Location;
use futures_util::stream::{self, StreamExt};
use serde_json::{json, Value};

use crate::{catalog, listings, orders, req, reviews, sign_up, users, As, Reply, Req, TestTable};

/// A 4-byte character (U+1F388 BALLOON): the widest UTF-8 has.
pub const WIDE: char = '\u{1F388}';
/// Six words no title of [`Hostile::never_meeting_listings`] holds all of.
pub const NEVER_MEETING: [&str; 6] = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
/// Longest title or name (`api::validate::Name`), in characters.
pub const NAME_CHARS: usize = 200;
/// Longest description (`api::validate::Description`), in characters.
pub const DESCRIPTION_CHARS: usize = 4000;
/// Longest review or message body, in characters.
pub const BODY_CHARS: usize = domain::model::Review::MAX_BODY_CHARS;
/// `㌖` (SQUARE KIROMEETORU): one character the index folds into six
/// (`キロメートル`, 18 bytes).
pub const EXPANDING: char = '\u{3316}';
/// The order status index's shards in `template.yaml` (`OrderShardCount`,
/// default 10; at most 100).
pub const ORDER_SHARDS: u16 = 10;
/// Requests of a builder in flight at once.
const AT_ONCE: usize = 8;

/// `n` wide characters.
pub fn wide(n: usize) -> String {
    std::iter::repeat_n(WIDE, n).collect()
}

/// The longest title: `word`, a space, then wide characters up to 200
/// characters in all (the wide ones are not letters: `word` is what search
/// finds).
pub fn longest_title(word: &str) -> String {
    format!("{word} {}", wide(NAME_CHARS - word.chars().count() - 1))
}

/// A title of 16 words that expand: `s㌖㌖` then `b㌖㌖`, `c㌖㌖`... (each folds
/// to 37 bytes, cut to 32); `q=s` finds it.
pub fn expanding_title() -> String {
    let word = |first: char| format!("{first}{EXPANDING}{EXPANDING}");
    let words: Vec<String> = "sbcdefghjkmnpqrt".chars().map(word).collect();
    words.join(" ")
}

/// A listing body for `POST /listings`.
pub fn listing_body(title: &str, category: &str, description: Option<&str>, at: Option<Location>) -> Value {
    let mut body = json!({ "title": title, "price": 12.5, "categoryId": category });
    if let Some(d) = description {
        body["description"] = json!(d);
    }
    if let Some(at) = at {
        body["location"] = json!({ "lat": at.lat, "lon": at.lon });
    }
    body
}

/// The builder: a table, and the stream records already processed.
pub struct Hostile<'a> {
    /// The table written to.
    pub t: &'a TestTable,
    processed: HashSet<String>,
}

fn ok(r: Reply, want: u16, what: &str) -> Value {
    assert_eq!(r.status, want, "{what}: {:?}", r.body);
    r.body
}

fn id(body: &Value, field: &str) -> String {
    body[field].as_str().unwrap_or_else(|| panic!("{field} in {body}")).to_owned()
}

/// Orders' handler with the template's shard count.
pub async fn order_route(t: &TestTable, r: Req) -> Reply {
    orders(&t.deps, ORDER_SHARDS, r).await
}

impl<'a> Hostile<'a> {
    /// Builds on `t`.
    pub fn on(t: &'a TestTable) -> Self {
        Hostile { t, processed: HashSet::new() }
    }

    /// Runs the stream processor on every record not yet processed, as
    /// Lambda would deliver them (in batches of at most 1,000).
    pub async fn index(&mut self) {
        let records = crate::stream_records(self.t).await;
        let fresh: Vec<_> = records
            .into_iter()
            .filter(|r| r.change.sequence_number.as_ref().is_some_and(|s| !self.processed.contains(s)))
            .collect();
        for batch in fresh.chunks(100) {
            let failed = crate::process_stream(self.t, batch.to_vec()).await;
            assert!(failed.is_empty(), "{} records failed", failed.len());
        }
        self.processed.extend(fresh.into_iter().filter_map(|r| r.change.sequence_number));
    }

    /// Signs `subs` up (through `POST /users`).
    pub async fn users(&self, subs: &[&'static str]) {
        for sub in subs {
            let status = sign_up(&self.t.deps, sub).await;
            assert!(status == 201 || status == 409, "sign-up of {sub}: {status}");
        }
    }

    /// A category with the longest name and `shards` browse shards (admin).
    pub async fn category(&self, category: &str, shards: u16) {
        let body = json!({ "name": wide(NAME_CHARS), "id": category, "listingShards": shards });
        ok(catalog(&self.t.deps, req("POST /categories").by(As::Admin).json(body)).await, 201, "category");
    }

    /// `n` categories and `n` brands (`c-<i>`, `b-<i>`) of the longest names.
    pub async fn groupings(&self, n: usize) {
        let deps = &self.t.deps;
        run(0..n, |i| async move {
            for (route, prefix) in [("POST /categories", "c"), ("POST /brands", "b")] {
                let body = json!({ "name": wide(NAME_CHARS), "id": format!("{prefix}-{i:04}") });
                ok(catalog(deps, req(route).by(As::Admin).json(body)).await, 201, route);
            }
        })
        .await;
    }

    /// Listings by `seller` in `category`, one per body; their ids.
    pub async fn listings(&self, seller: &'static str, bodies: Vec<Value>) -> Vec<String> {
        let deps = &self.t.deps;
        run_collect(bodies, |body| async move {
            let r = listings(deps, req("POST /listings").by(As::User(seller)).json(body)).await;
            id(&ok(r, 201, "listing"), "listingId")
        })
        .await
    }

    /// `n` listings of the longest title (`lamp` and wide characters) and
    /// description (a 17 KB item), spread over `spread_km` around `around`.
    pub async fn long_listings(
        &self,
        seller: &'static str,
        category: &str,
        n: usize,
        around: Location,
        spread_km: f64,
    ) -> Vec<String> {
        let (title, description) = (longest_title("lamp"), wide(DESCRIPTION_CHARS));
        let bodies = (0..n)
            .map(|i| {
                let at = around.toward(spread_km * (i % 97) as f64 / 97.0, (i * 37 % 360) as f64);
                listing_body(&title, category, Some(&description), Some(at))
            })
            .collect();
        self.listings(seller, bodies).await
    }

    /// `n` listings at one spot, of short titles.
    pub async fn spot_listings(&self, seller: &'static str, category: &str, n: usize, at: Location) -> Vec<String> {
        let bodies = (0..n).map(|i| listing_body(&format!("Spot {i}"), category, None, Some(at))).collect();
        self.listings(seller, bodies).await
    }

    /// `n` listings titled [`expanding_title`].
    pub async fn expanding_listings(&self, seller: &'static str, category: &str, n: usize) -> Vec<String> {
        let bodies = (0..n).map(|_| listing_body(&expanding_title(), category, None, None)).collect();
        self.listings(seller, bodies).await
    }

    /// `n` listings whose titles hold five of [`NEVER_MEETING`] each (the
    /// `i`th leaves out word `i` mod 6) and words of 32 letters up to 200
    /// bytes of indexed words: posting lists of the largest postings, each
    /// long, that never meet.
    pub async fn never_meeting_listings(&self, seller: &'static str, category: &str, n: usize) -> Vec<String> {
        let filler: Vec<String> =
            (b'a'..=b'e').map(|c| format!("zzz{}", char::from(c).to_string().repeat(29))).collect();
        let bodies = (0..n)
            .map(|i| {
                let five = NEVER_MEETING.iter().enumerate().filter(|(k, _)| *k != i % 6).map(|(_, w)| *w);
                let title: Vec<&str> = five.chain(filler.iter().map(String::as_str)).collect();
                listing_body(&title.join(" "), category, None, None)
            })
            .collect();
        self.listings(seller, bodies).await
    }

    /// `n` products of the longest name and description (admin), stock
    /// 1,000,000, in a new brand and category of their own; their ids.
    pub async fn products(&self, brand: &str, category: &str, n: usize) -> Vec<String> {
        let deps = &self.t.deps;
        let body = json!({ "name": wide(NAME_CHARS), "id": brand });
        ok(catalog(deps, req("POST /brands").by(As::Admin).json(body)).await, 201, "brand");
        self.category(category, 1).await;
        let product = json!({
            "name": wide(NAME_CHARS), "brandId": brand, "categoryId": category, "price": 99.99,
            "stockLevel": 1_000_000, "description": wide(DESCRIPTION_CHARS),
        });
        run_collect(vec![product; n], |body| async move {
            let r = catalog(deps, req("POST /products").by(As::Admin).json(body)).await;
            id(&ok(r, 201, "product"), "productId")
        })
        .await
    }

    /// `buyer` buys each listing (`POST /orders`); the order ids.
    pub async fn buy_listings(&self, buyer: &'static str, listing_ids: &[String]) -> Vec<String> {
        let t = self.t;
        run_collect(listing_ids.to_vec(), |listing| async move {
            let r = order_route(t, place(buyer, &listing, json!({ "listingId": listing }))).await;
            id(&ok(r, 201, "listing order"), "orderId")
        })
        .await
    }

    /// `n` catalog orders by `buyer` of 25 lines each (the most an order
    /// takes), the lines cycling over `products`; the order ids.
    pub async fn catalog_orders(&self, buyer: &'static str, products: &[String], n: usize) -> Vec<String> {
        let t = self.t;
        let bodies: Vec<(String, Value)> = (0..n)
            .map(|i| {
                let lines: Vec<Value> =
                    (0..25).map(|k| json!({ "productId": products[(i + k) % products.len()], "qty": 1 })).collect();
                (format!("catalog-{i}"), json!({ "items": lines }))
            })
            .collect();
        run_collect(bodies, |(key, body)| async move {
            id(&ok(order_route(t, place(buyer, &key, body)).await, 201, "catalog order"), "orderId")
        })
        .await
    }

    /// `seller` moves each order to `delivered`.
    pub async fn deliver(&self, seller: &'static str, order_ids: &[String]) {
        let t = self.t;
        run(order_ids.to_vec(), |order| async move {
            for status in ["confirmed", "shipped", "delivered"] {
                let r = req("PATCH /orders/{orderId}").path("orderId", &order).by(As::User(seller));
                ok(order_route(t, r.json(json!({ "status": status }))).await, 200, status);
            }
        })
        .await;
    }

    /// `author` reviews the other party of each (delivered) order, with the
    /// longest body.
    pub async fn reviews(&self, author: &'static str, order_ids: &[String]) {
        let deps = &self.t.deps;
        run(order_ids.to_vec(), |order| async move {
            let body = json!({ "rating": 4, "body": wide(BODY_CHARS) });
            let r = req("POST /orders/{orderId}/reviews").path("orderId", &order).by(As::User(author)).json(body);
            ok(reviews(deps, r).await, 201, "review");
        })
        .await;
    }

    /// `n` messages of the longest body on one order, by its parties in turn.
    pub async fn messages(&self, order: &str, parties: [&'static str; 2], n: usize) {
        for i in 0..n {
            let r = req("POST /orders/{orderId}/messages").path("orderId", order).by(As::User(parties[i % 2]));
            ok(order_route(self.t, r.json(json!({ "body": wide(BODY_CHARS) }))).await, 201, "message");
        }
    }

    /// `user` favorites each listing.
    pub async fn favorites(&self, user: &'static str, listing_ids: &[String]) {
        let deps = &self.t.deps;
        run(listing_ids.to_vec(), |listing| async move {
            let r = req("PUT /users/me/favorites/{listingId}").path("listingId", &listing).by(As::User(user));
            ok(users(deps, r).await, 201, "favorite");
        })
        .await;
    }
}

fn place(buyer: &'static str, key: &str, body: Value) -> Req {
    req("POST /orders").by(As::User(buyer)).header("Idempotency-Key", key).json(body)
}

async fn run<I, F, Fut>(items: I, f: F)
where
    I: IntoIterator,
    F: Fn(I::Item) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    stream::iter(items).for_each_concurrent(AT_ONCE, f).await;
}

async fn run_collect<T, F, Fut>(items: Vec<T>, f: F) -> Vec<String>
where
    F: Fn(T) -> Fut,
    Fut: std::future::Future<Output = String>,
{
    stream::iter(items).map(f).buffered(AT_ONCE).collect().await
}
