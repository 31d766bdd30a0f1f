//! Each operation's cases: its budgets and the requests it sends on the
//! demo data. A case's name and route are its operation's (the registry's):
//! only what sets a case apart, its budgets and its request are written here.

use integration_tests::{req, As, Req};
use keyschema::patterns::Op;
use local_stack::demo::{DELIVERED_ORDER_ID, LISTING_IDS, ORDER_ID, PRODUCT_IDS, REVIEW_ID};
use serde_json::json;

/// One measured request of an operation, and its budget.
pub struct Case {
    /// What sets the case apart, after a comma in its name: the data it
    /// runs on, or another operation's id that it measures too.
    pub also: Option<&'static str>,
    /// The requests it sends, in order.
    pub requests: &'static [&'static str],
    /// The most read capacity units it may consume on the demo data.
    pub rcu: f64,
    /// The most write capacity units it may consume on the demo data.
    pub wcu: f64,
    /// A request sent first, as set-up (not measured).
    pub before: Option<fn() -> Req>,
    /// Its request: parameters, caller and body on its operation's route.
    pub request: fn(Req) -> Req,
}

impl Case {
    /// The case's name: its operation's id, then what sets it apart.
    pub fn name(&self, op: Op) -> String {
        match self.also {
            Some(also) => format!("{}, {also}", op.id()),
            None => op.id().to_owned(),
        }
    }

    /// The request it sends, on its operation's route.
    pub fn request(&self, op: Op) -> Req {
        (self.request)(req(op.route().split('?').next().unwrap_or_default()))
    }

    fn also(self, also: &'static str) -> Self {
        Case { also: Some(also), ..self }
    }

    fn after(self, before: fn() -> Req) -> Self {
        Case { before: Some(before), ..self }
    }
}

const fn case(requests: &'static [&'static str], rcu: f64, wcu: f64, request: fn(Req) -> Req) -> Case {
    Case { also: None, requests, rcu, wcu, before: None, request }
}

const Q: &[&str] = &["Query"];
const G: &[&str] = &["GetItem"];
const TX: &[&str] = &["TransactWriteItems"];
const SHARDS: usize = 10;
/// A create: the caller (or the brand), the category, then the transaction.
const CREATE: &[&str] = &["GetItem", "GetItem", "TransactWriteItems"];
/// An order: the caller, what it buys, then the transaction.
const ORDER: &[&str] = &["GetItem", "BatchGetItem", "TransactWriteItems"];
/// Near me: 12 cell queries of GSI5 (the cards: nothing more to read).
const NEAR: &[&str] = &["Query"; 3];
/// A removal: the favorite out (in GSI6), in a transaction with its token.
const REMOVE_FAVORITE_WCU: f64 = 8.0;
/// A name: the user and its GSI6 copy (by email: the name is listed).
const UPDATE_USER_WCU: f64 = 2.0;
/// An email: the user and its GSI6 key moved, the guards moved, in a transaction.
const MOVE_EMAIL_WCU: f64 = 16.0;
/// The product's count and a new share, in a transaction.
const RAISE_STOCK_SHARDS_WCU: f64 = 4.0;
/// The review deleted and its order marked, in a transaction.
const MODERATE_WCU: f64 = 8.0;
/// A status move: the order and its GSI6-8 copies (the GSI8 key moved).
const CONFIRM_ORDER_WCU: f64 = 5.0;

/// The cases of an operation of the registry: its budgets and the requests
/// it sends on the demo data. An exhaustive `match`, so an operation added
/// to the registry does not compile until it has its cases here (or says
/// why it has none).
fn cases(op: Op) -> Vec<Case> {
    match op {
        Op::CatalogAp1 | Op::CatalogAp2 => vec![case(Q, 0.5, 0.0, |r| r)],
        Op::CatalogAp3 => vec![case(Q, 0.5, 0.0, |r| r.path("productId", PRODUCT_IDS[0]))],
        // The stock alone: no index copy holds it (12 while GSI1-2 held every attribute).
        Op::ChangeStock => vec![case(&["TransactWriteItems", "Query"], 1.0, 4.0, |r| {
            r.path("productId", PRODUCT_IDS[0]).by(As::Admin).json(json!({ "delta": -1 }))
        })],
        Op::CatalogAp6 => vec![case(Q, 0.5, 0.0, |r| r.path("brandId", "acme"))],
        Op::CatalogAp7 => vec![case(Q, 0.5, 0.0, |r| r.path("brandId", "acme").query("categoryId", "pottery"))],
        Op::CatalogAp8 => vec![case(Q, 0.5, 0.0, |r| r.path("categoryId", "pottery"))],
        Op::CatalogAp9 => vec![case(Q, 0.5, 0.0, |r| r.path("categoryId", "pottery").query("brandId", "acme"))],
        Op::CreateProduct => vec![case(CREATE, 1.0, 12.0, |r| {
            r.by(As::Admin).json(json!({
                "name": "Bowl", "brandId": "acme", "categoryId": "pottery", "price": 42.5, "stockLevel": 10
            }))
        })],
        Op::MarketplaceAp1 => vec![case(G, 0.5, 0.0, |r| r.path("userId", "alice")).also("e-commerce AP6")],
        Op::MarketplaceAp2 => vec![case(Q, 0.5, 0.0, |r| r.by(As::Admin).query("email", "alice@example.com"))],
        Op::SignUp => vec![case(TX, 0.0, 12.0, |r| {
            r.by(As::User("dave")).json(json!({ "name": "Dave", "email": "dave@example.com" }))
        })],
        Op::MarketplaceAp3 => vec![case(Q, 0.5, 0.0, |r| r.path("listingId", LISTING_IDS[0]))],
        Op::MarketplaceAp4 => vec![case(Q, 0.5, 0.0, |r| r.path("sellerId", "alice").by(As::User("alice")))],
        Op::MarketplaceAp5 => vec![case(Q, 0.5, 0.0, |r| r.path("sellerId", "alice"))],
        Op::MarketplaceAp6 => vec![
            case(&["GetItem", "Query"], 1.0, 0.0, |r| r.path("categoryId", "pottery")),
            case(&["GetItem", "Query", "Query", "Query", "Query"], 2.5, 0.0, |r| r.path("categoryId", "books"))
                .also("4 shards"),
        ],
        Op::BeyondAp2 => vec![case(&["GetItem", "Query"], 1.0, 0.0, |r| {
            r.path("categoryId", "pottery").query("sort", "price").query("minPrice", 10).query("maxPrice", 100)
        })],
        // Which partitions of Paris's two dense cells hold listings (a query
        // each: the mug's), then the one of them the circle meets that holds
        // one, the mug's (no other cell within 5 km is outside the dense ones;
        // DynamoDB Local reports nothing for an empty query).
        Op::BeyondAp4 => {
            vec![case(NEAR, 1.0, 0.0, |r| r.query("lat", 48.8566).query("lon", 2.3522).query("radiusKm", 5))]
        }
        // The heads of both words' lists, then the mug from the table.
        Op::BeyondAp5 => vec![case(&["Query", "Query", "BatchGetItem"], 1.5, 0.0, |r| r.query("q", "blue mug"))],
        // The category (remembered five minutes after) and its rating item.
        Op::CategoryRating => vec![case(&["GetItem", "GetItem"], 1.0, 0.0, |r| r.path("categoryId", "pottery"))],
        // The caller and the category, then the listing, its text within
        // it, in one put: the table, GSI6 and its browse and price keys in
        // GSI7-8 (a longer text, or a key: a transaction,
        // `details::a_long_listing_description_...`).
        Op::CreateListing => vec![case(&["GetItem", "GetItem", "PutItem"], 1.0, 4.0, |r| {
            let body = json!({ "title": "Jug", "price": 12, "categoryId": "books", "description": "Stoneware, 1 l" });
            r.by(As::User("alice")).json(body)
        })],
        // 6: the table, GSI6-7 and GSI5 (the card has the price), GSI8's
        // entry moved (its old entry deleted, the new one put).
        Op::UpdateListing => vec![case(&["UpdateItem", "GetItem"], 1.0, 6.0, |r| {
            r.path("listingId", LISTING_IDS[0]).by(As::User("alice")).json(json!({ "price": 30 }))
        })],
        Op::BeyondAp1 => vec![case(Q, 0.5, 0.0, |r| r.by(As::User("bob"))).after(|| favorite(LISTING_IDS[1]))],
        Op::AddFavorite => {
            vec![case(&["BatchGetItem", "PutItem"], 1.0, 2.0, |r| as_bob(r, "listingId", LISTING_IDS[0]))]
        }
        Op::MarketplaceAp7 => vec![case(G, 0.5, 0.0, |r| as_bob(r, "orderId", ORDER_ID))],
        Op::MarketplaceAp8 => vec![case(Q, 0.5, 0.0, |r| as_bob(r, "buyerId", "bob"))],
        Op::MarketplaceAp9 => vec![case(Q, 0.5, 0.0, |r| r.path("sellerId", "alice").by(As::User("alice")))],
        Op::EcommerceAp4 => vec![case(Q, 0.5, 0.0, |r| as_bob(r, "orderId", ORDER_ID))],
        // The order (which may hold the item) and the item beside it.
        Op::EcommerceAp5 => {
            vec![case(&["BatchGetItem"], 1.0, 0.0, |r| as_bob(r, "orderId", ORDER_ID).path("itemId", LISTING_IDS[2]))]
        }
        Op::EcommerceAp3 => {
            vec![case(&["Query"; SHARDS], 5.0, 0.0, |r| r.by(As::Admin).query("status", "confirmed"))]
        }
        Op::EcommerceAp7 => vec![case(&["Query"; SHARDS * 5 + 2], 26.0, 0.0, |r| r.by(As::Admin))],
        Op::EcommerceAp8 => vec![case(&["Query"; SHARDS], 5.0, 0.0, |r| {
            r.by(As::Admin).query("status", "confirmed").query("from", "2020-01-01").query("to", "2030-01-01")
        })],
        // The sold listing leaves GSI5 (48 measured while GSI4 also held it).
        Op::PlaceListingOrder => vec![case(ORDER, 2.0, 44.0, |r| {
            r.by(As::User("bob"))
                .header("Idempotency-Key", "capacity-listing")
                .json(json!({ "listingId": LISTING_IDS[1] }))
        })],
        Op::PlaceCatalogOrder => vec![case(ORDER, 2.5, 16.0, |r| {
            r.by(As::User("bob")).header("Idempotency-Key", "capacity-catalog").json(json!({
                "items": [{ "productId": PRODUCT_IDS[0], "qty": 1 }, { "productId": PRODUCT_IDS[1], "qty": 2 }]
            }))
        })],
        Op::CancelOrder => vec![case(&["GetItem", "TransactWriteItems"], 0.5, 32.0, |r| {
            as_bob(r, "orderId", ORDER_ID).json(json!({ "status": "cancelled" }))
        })],
        Op::BeyondAp3 => vec![case(Q, 0.5, 0.0, |r| as_bob(r, "orderId", DELIVERED_ORDER_ID))],
        Op::SendMessage => vec![case(&["GetItem", "PutItem"], 0.5, 1.0, |r| {
            as_bob(r, "orderId", ORDER_ID).json(json!({ "body": "Ships Monday?" }))
        })],
        Op::MarketplaceAp10 => vec![case(Q, 0.5, 0.0, |r| r.path("userId", "erin"))],
        Op::MarketplaceAp11 => vec![case(Q, 0.5, 0.0, |r| as_bob(r, "userId", "bob"))],
        Op::WriteReview => vec![case(CREATE, 1.0, 24.0, |r| {
            r.path("orderId", DELIVERED_ORDER_ID)
                .by(As::User("erin"))
                .json(json!({ "rating": 5, "body": "Prompt payment." }))
        })],
        // The same request as marketplace AP1, measured there (the case names both).
        Op::EcommerceAp6 => vec![],
        Op::GetMe => vec![case(G, 0.5, 0.0, |r| r.by(As::User("bob")))],
        Op::UpdateUser => vec![
            case(&["UpdateItem"], 0.0, UPDATE_USER_WCU, |r| {
                as_bob(r, "userId", "bob").json(json!({ "name": "Robert" }))
            })
            .also("a name"),
            case(&["GetItem", "TransactWriteItems"], 1.0, MOVE_EMAIL_WCU, |r| {
                as_bob(r, "userId", "bob").json(json!({ "email": "robert@example.com" }))
            })
            .also("an email"),
        ],
        Op::CreateBrand => {
            vec![case(&["PutItem"], 0.0, 1.0, |r| {
                r.by(As::Admin).json(json!({ "name": "Umbrella", "id": "umbrella" }))
            })]
        }
        Op::CreateCategory => {
            vec![case(&["PutItem"], 0.0, 1.0, |r| r.by(As::Admin).json(json!({ "name": "Lamps", "id": "lamps" })))]
        }
        Op::RaiseListingShards => vec![case(&["GetItem", "UpdateItem"], 1.0, 1.0, |r| {
            r.path("categoryId", "pottery").by(As::Admin).json(json!({ "listingShards": 2 }))
        })],
        Op::RaiseStockShards => {
            vec![case(&["Query", "TransactWriteItems", "Query"], 2.0, RAISE_STOCK_SHARDS_WCU, |r| {
                r.path("productId", PRODUCT_IDS[0]).by(As::Admin).json(json!({ "stockShards": 2 }))
            })]
        }
        Op::ModerateReview => {
            vec![case(TX, 0.0, MODERATE_WCU, |r| r.path("userId", "erin").path("reviewId", REVIEW_ID).by(As::Admin))]
        }
        Op::RemoveFavorite => {
            vec![case(TX, 0.0, REMOVE_FAVORITE_WCU, |r| as_bob(r, "listingId", LISTING_IDS[0]))
                .after(|| favorite(LISTING_IDS[0]))]
        }
        // The demo order is confirmed: its seller ships it (the same move).
        Op::ConfirmOrder => vec![case(&["GetItem", "UpdateItem"], 0.5, CONFIRM_ORDER_WCU, |r| {
            r.path("orderId", ORDER_ID).by(As::User("alice")).json(json!({ "status": "shipped" }))
        })],
    }
}

/// Every case, in the registry's order.
pub fn all_cases() -> Vec<(Op, Case)> {
    Op::ALL.iter().flat_map(|op| cases(*op).into_iter().map(move |c| (*op, c))).collect()
}

/// A request of bob's with one path parameter.
fn as_bob(r: Req, name: &str, value: &str) -> Req {
    r.path(name, value).by(As::User("bob"))
}

fn favorite(listing: &str) -> Req {
    as_bob(req("PUT /users/me/favorites/{listingId}"), "listingId", listing)
}
