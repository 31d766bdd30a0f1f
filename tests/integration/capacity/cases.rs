//! Each operation's cases: its budgets and the requests it sends on the
//! demo data.

use integration_tests::{req, As, Req};
use keyschema::patterns::Op;
use local_stack::demo::{DELIVERED_ORDER_ID, LISTING_IDS, ORDER_ID, PRODUCT_IDS};
use serde_json::json;

/// One measured request of an operation, and its budget.
pub struct Case {
    /// The operation's id in docs/key-schema.md (its name for a write),
    /// with what sets this case apart after a comma if it has several.
    pub pattern: &'static str,
    /// Its route key.
    pub route: &'static str,
    /// The requests it sends, in order.
    pub requests: &'static [&'static str],
    /// The most read capacity units it may consume on the demo data.
    pub rcu: f64,
    /// The most write capacity units it may consume on the demo data.
    pub wcu: f64,
    /// A request sent first, as set-up (not measured).
    pub before: Option<fn() -> Req>,
    /// The request it sends on the demo data.
    pub request: fn() -> Req,
}

const fn case(
    pattern: &'static str,
    route: &'static str,
    requests: &'static [&'static str],
    rcu: f64,
    wcu: f64,
    before: Option<fn() -> Req>,
    request: fn() -> Req,
) -> Case {
    Case { pattern, route, requests, rcu, wcu, before, request }
}

const Q: &[&str] = &["Query"];
const G: &[&str] = &["GetItem"];
const SHARDS: usize = 10;
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
        Op::CatalogAp1 => vec![case("catalog AP1", "GET /brands", Q, 0.5, 0.0, None, || req("GET /brands"))],
        Op::CatalogAp2 => vec![case("catalog AP2", "GET /categories", Q, 0.5, 0.0, None, || req("GET /categories"))],
        Op::CatalogAp3 => vec![case("catalog AP3", "GET /products/{productId}", Q, 0.5, 0.0, None, || {
            req("GET /products/{productId}").path("productId", PRODUCT_IDS[0])
        })],
        Op::ChangeStock => vec![case(
            "catalog AP4-5",
            "POST /products/{productId}/stock",
            &["TransactWriteItems", "Query"],
            1.0,
            // The stock alone: no index copy holds it (12 while GSI1-2 held every attribute).
            4.0,
            None,
            || {
                req("POST /products/{productId}/stock")
                    .path("productId", PRODUCT_IDS[0])
                    .by(As::Admin)
                    .json(json!({ "delta": -1 }))
            },
        )],
        Op::CatalogAp6 => vec![case("catalog AP6", "GET /brands/{brandId}/products", Q, 0.5, 0.0, None, || {
            req("GET /brands/{brandId}/products").path("brandId", "acme")
        })],
        Op::CatalogAp7 => {
            vec![case("catalog AP7", "GET /brands/{brandId}/products?categoryId=", Q, 0.5, 0.0, None, || {
                req("GET /brands/{brandId}/products").path("brandId", "acme").query("categoryId", "pottery")
            })]
        }
        Op::CatalogAp8 => vec![case("catalog AP8", "GET /categories/{categoryId}/products", Q, 0.5, 0.0, None, || {
            req("GET /categories/{categoryId}/products").path("categoryId", "pottery")
        })],
        Op::CatalogAp9 => {
            vec![case("catalog AP9", "GET /categories/{categoryId}/products?brandId=", Q, 0.5, 0.0, None, || {
                req("GET /categories/{categoryId}/products").path("categoryId", "pottery").query("brandId", "acme")
            })]
        }
        Op::CreateProduct => vec![case(
            "create product",
            "POST /products",
            &["GetItem", "GetItem", "TransactWriteItems"],
            1.0,
            12.0,
            None,
            || {
                req("POST /products").by(As::Admin).json(json!({
                    "name": "Bowl", "brandId": "acme", "categoryId": "pottery", "price": 42.5, "stockLevel": 10
                }))
            },
        )],
        Op::MarketplaceAp1 => {
            vec![case("marketplace AP1, e-commerce AP6", "GET /users/{userId}", G, 0.5, 0.0, None, || {
                req("GET /users/{userId}").path("userId", "alice")
            })]
        }
        Op::MarketplaceAp2 => vec![case("marketplace AP2", "GET /users?email=", Q, 0.5, 0.0, None, || {
            req("GET /users").by(As::Admin).query("email", "alice@example.com")
        })],
        Op::SignUp => vec![case("sign-up", "POST /users", &["TransactWriteItems"], 0.0, 12.0, None, || {
            req("POST /users").by(As::User("dave")).json(json!({ "name": "Dave", "email": "dave@example.com" }))
        })],
        Op::MarketplaceAp3 => vec![case("marketplace AP3", "GET /listings/{listingId}", Q, 0.5, 0.0, None, || {
            req("GET /listings/{listingId}").path("listingId", LISTING_IDS[0])
        })],
        Op::MarketplaceAp4 => {
            vec![case("marketplace AP4", "GET /sellers/{sellerId}/listings", Q, 0.5, 0.0, None, || {
                req("GET /sellers/{sellerId}/listings").path("sellerId", "alice").by(As::User("alice"))
            })]
        }
        Op::MarketplaceAp5 => {
            vec![case("marketplace AP5", "GET /sellers/{sellerId}/listings/active", Q, 0.5, 0.0, None, || {
                req("GET /sellers/{sellerId}/listings/active").path("sellerId", "alice")
            })]
        }
        Op::MarketplaceAp6 => vec![
            case(
                "marketplace AP6",
                "GET /categories/{categoryId}/listings",
                &["GetItem", "Query"],
                1.0,
                0.0,
                None,
                || req("GET /categories/{categoryId}/listings").path("categoryId", "pottery"),
            ),
            case(
                "marketplace AP6, 4 shards",
                "GET /categories/{categoryId}/listings",
                &["GetItem", "Query", "Query", "Query", "Query"],
                2.5,
                0.0,
                None,
                || req("GET /categories/{categoryId}/listings").path("categoryId", "books"),
            ),
        ],
        Op::BeyondAp2 => vec![case(
            "beyond AP2",
            "GET /categories/{categoryId}/listings?sort=price",
            &["GetItem", "Query"],
            1.0,
            0.0,
            None,
            || {
                req("GET /categories/{categoryId}/listings")
                    .path("categoryId", "pottery")
                    .query("sort", "price")
                    .query("minPrice", 10)
                    .query("maxPrice", 100)
            },
        )],
        Op::BeyondAp4 => vec![
            // Which partitions of Paris's two dense cells hold listings (a query
            // each: the mug's), then the one of them the circle meets that holds
            // one, the mug's (no other cell within 5 km is outside the dense ones;
            // DynamoDB Local reports nothing for an empty query).
            case("beyond AP4", "GET /listings/near?lat=&lon=&radiusKm=", NEAR, 1.0, 0.0, None, || {
                req("GET /listings/near").query("lat", 48.8566).query("lon", 2.3522).query("radiusKm", 5)
            }),
        ],
        Op::BeyondAp5 => vec![
            // The heads of both words' lists, then the mug from the table.
            case("beyond AP5", "GET /search/listings?q=", &["Query", "Query", "BatchGetItem"], 1.5, 0.0, None, || {
                req("GET /search/listings").query("q", "blue mug")
            }),
        ],
        Op::CategoryRating => vec![
            // The category (remembered five minutes after) and its rating item.
            case("category rating", "GET /categories/{categoryId}", &["GetItem", "GetItem"], 1.0, 0.0, None, || {
                req("GET /categories/{categoryId}").path("categoryId", "pottery")
            }),
        ],
        Op::CreateListing => vec![case(
            "create listing",
            "POST /listings",
            &["GetItem", "GetItem", "TransactWriteItems"],
            1.0,
            8.0,
            None,
            || {
                req("POST /listings")
                    .by(As::User("alice"))
                    .json(json!({ "title": "Jug", "price": 12, "categoryId": "books" }))
            },
        )],
        Op::UpdateListing => vec![
            // 5: the table and GSI6-7 (the card has the price), GSI8 in place, GSI5.
            case("update listing", "PATCH /listings/{listingId}", &["UpdateItem", "GetItem"], 1.0, 5.0, None, || {
                req("PATCH /listings/{listingId}")
                    .path("listingId", LISTING_IDS[0])
                    .by(As::User("alice"))
                    .json(json!({ "price": 30 }))
            }),
        ],
        Op::BeyondAp1 => {
            vec![case("beyond AP1", "GET /users/me/favorites", Q, 0.5, 0.0, Some(|| favorite(LISTING_IDS[1])), || {
                req("GET /users/me/favorites").by(As::User("bob"))
            })]
        }
        Op::AddFavorite => vec![case(
            "add favorite",
            "PUT /users/me/favorites/{listingId}",
            &["BatchGetItem", "PutItem"],
            1.0,
            2.0,
            None,
            || favorite(LISTING_IDS[0]),
        )],
        Op::MarketplaceAp7 => {
            vec![case("marketplace AP7, e-commerce AP1", "GET /orders/{orderId}", G, 0.5, 0.0, None, || {
                req("GET /orders/{orderId}").path("orderId", ORDER_ID).by(As::User("bob"))
            })]
        }
        Op::MarketplaceAp8 => {
            vec![case("marketplace AP8, e-commerce AP2", "GET /buyers/{buyerId}/orders", Q, 0.5, 0.0, None, || {
                req("GET /buyers/{buyerId}/orders").path("buyerId", "bob").by(As::User("bob"))
            })]
        }
        Op::MarketplaceAp9 => {
            vec![case("marketplace AP9", "GET /sellers/{sellerId}/orders", Q, 0.5, 0.0, None, || {
                req("GET /sellers/{sellerId}/orders").path("sellerId", "alice").by(As::User("alice"))
            })]
        }
        Op::EcommerceAp4 => vec![case("e-commerce AP4", "GET /orders/{orderId}/items", Q, 0.5, 0.0, None, || {
            req("GET /orders/{orderId}/items").path("orderId", ORDER_ID).by(As::User("bob"))
        })],
        Op::EcommerceAp5 => {
            vec![case("e-commerce AP5", "GET /orders/{orderId}/items/{itemId}", G, 0.5, 0.0, None, || {
                req("GET /orders/{orderId}/items/{itemId}")
                    .path("orderId", ORDER_ID)
                    .path("itemId", LISTING_IDS[2])
                    .by(As::User("bob"))
            })]
        }
        Op::EcommerceAp3 => {
            vec![case("e-commerce AP3", "GET /orders?status=", &["Query"; SHARDS], 5.0, 0.0, None, || {
                req("GET /orders").by(As::Admin).query("status", "confirmed")
            })]
        }
        Op::EcommerceAp7 => {
            vec![case("e-commerce AP7", "GET /orders", &["Query"; SHARDS * 5 + 2], 26.0, 0.0, None, || {
                req("GET /orders").by(As::Admin)
            })]
        }
        Op::EcommerceAp8 => {
            vec![case("e-commerce AP8", "GET /orders?status=&from=&to=", &["Query"; SHARDS], 5.0, 0.0, None, || {
                req("GET /orders")
                    .by(As::Admin)
                    .query("status", "confirmed")
                    .query("from", "2020-01-01")
                    .query("to", "2030-01-01")
            })]
        }
        Op::PlaceListingOrder => vec![case(
            "place listing order",
            "POST /orders",
            &["GetItem", "BatchGetItem", "TransactWriteItems"],
            2.0,
            // The sold listing leaves GSI5 (48 measured while GSI4 also held it).
            44.0,
            None,
            || {
                req("POST /orders")
                    .by(As::User("bob"))
                    .header("Idempotency-Key", "capacity-listing")
                    .json(json!({ "listingId": LISTING_IDS[1] }))
            },
        )],
        Op::PlaceCatalogOrder => vec![case(
            "place catalog order",
            "POST /orders {items}",
            &["GetItem", "BatchGetItem", "TransactWriteItems"],
            2.5,
            16.0,
            None,
            || {
                req("POST /orders").by(As::User("bob")).header("Idempotency-Key", "capacity-catalog").json(json!({
                    "items": [{ "productId": PRODUCT_IDS[0], "qty": 1 }, { "productId": PRODUCT_IDS[1], "qty": 2 }]
                }))
            },
        )],
        Op::CancelOrder => vec![case(
            "cancel order",
            "PATCH /orders/{orderId}",
            &["GetItem", "TransactWriteItems"],
            0.5,
            32.0,
            None,
            || {
                req("PATCH /orders/{orderId}")
                    .path("orderId", ORDER_ID)
                    .by(As::User("bob"))
                    .json(json!({ "status": "cancelled" }))
            },
        )],
        Op::BeyondAp3 => vec![case("beyond AP3", "GET /orders/{orderId}/messages", Q, 0.5, 0.0, None, || {
            req("GET /orders/{orderId}/messages").path("orderId", DELIVERED_ORDER_ID).by(As::User("bob"))
        })],
        Op::SendMessage => vec![case(
            "send message",
            "POST /orders/{orderId}/messages",
            &["GetItem", "PutItem"],
            0.5,
            1.0,
            None,
            || {
                req("POST /orders/{orderId}/messages")
                    .path("orderId", ORDER_ID)
                    .by(As::User("bob"))
                    .json(json!({ "body": "Ships Monday?" }))
            },
        )],
        Op::MarketplaceAp10 => vec![case("marketplace AP10", "GET /users/{userId}/reviews", Q, 0.5, 0.0, None, || {
            req("GET /users/{userId}/reviews").path("userId", "erin")
        })],
        Op::MarketplaceAp11 => {
            vec![case("marketplace AP11", "GET /users/{userId}/reviews/written", Q, 0.5, 0.0, None, || {
                req("GET /users/{userId}/reviews/written").path("userId", "bob").by(As::User("bob"))
            })]
        }
        Op::WriteReview => vec![case(
            "write review",
            "POST /orders/{orderId}/reviews",
            &["GetItem", "GetItem", "TransactWriteItems"],
            1.0,
            24.0,
            None,
            || {
                req("POST /orders/{orderId}/reviews")
                    .path("orderId", DELIVERED_ORDER_ID)
                    .by(As::User("erin"))
                    .json(json!({ "rating": 5, "body": "Prompt payment." }))
            },
        )],
        // The same request as marketplace AP1, measured there (the case names both).
        Op::EcommerceAp6 => vec![],
        Op::GetMe => {
            vec![case("get me", "GET /users/me", G, 0.5, 0.0, None, || req("GET /users/me").by(As::User("bob")))]
        }
        Op::UpdateUser => vec![
            case("update user, a name", "PATCH /users/{userId}", &["UpdateItem"], 0.0, UPDATE_USER_WCU, None, || {
                req("PATCH /users/{userId}").path("userId", "bob").by(As::User("bob")).json(json!({ "name": "Robert" }))
            }),
            case(
                "update user, an email",
                "PATCH /users/{userId}",
                &["GetItem", "TransactWriteItems"],
                1.0,
                MOVE_EMAIL_WCU,
                None,
                || {
                    req("PATCH /users/{userId}")
                        .path("userId", "bob")
                        .by(As::User("bob"))
                        .json(json!({ "email": "robert@example.com" }))
                },
            ),
        ],
        Op::CreateBrand => vec![case("create brand", "POST /brands", &["PutItem"], 0.0, 1.0, None, || {
            req("POST /brands").by(As::Admin).json(json!({ "name": "Umbrella", "id": "umbrella" }))
        })],
        Op::CreateCategory => vec![case("create category", "POST /categories", &["PutItem"], 0.0, 1.0, None, || {
            req("POST /categories").by(As::Admin).json(json!({ "name": "Lamps", "id": "lamps" }))
        })],
        Op::RaiseListingShards => vec![case(
            "raise listing shards",
            "PATCH /categories/{categoryId}",
            &["GetItem", "UpdateItem"],
            1.0,
            1.0,
            None,
            || {
                req("PATCH /categories/{categoryId}")
                    .path("categoryId", "pottery")
                    .by(As::Admin)
                    .json(json!({ "listingShards": 2 }))
            },
        )],
        Op::RaiseStockShards => vec![case(
            "raise stock shards",
            "PATCH /products/{productId}",
            &["Query", "TransactWriteItems", "Query"],
            2.0,
            RAISE_STOCK_SHARDS_WCU,
            None,
            || {
                req("PATCH /products/{productId}")
                    .path("productId", PRODUCT_IDS[0])
                    .by(As::Admin)
                    .json(json!({ "stockShards": 2 }))
            },
        )],
        Op::ModerateReview => vec![case(
            "moderate review",
            "DELETE /users/{userId}/reviews/{reviewId}",
            &["TransactWriteItems"],
            0.0,
            MODERATE_WCU,
            None,
            || {
                req("DELETE /users/{userId}/reviews/{reviewId}")
                    .path("userId", "erin")
                    .path("reviewId", local_stack::demo::REVIEW_ID)
                    .by(As::Admin)
            },
        )],
        Op::RemoveFavorite => vec![case(
            "remove favorite",
            "DELETE /users/me/favorites/{listingId}",
            &["TransactWriteItems"],
            0.0,
            REMOVE_FAVORITE_WCU,
            Some(|| favorite(LISTING_IDS[0])),
            || req("DELETE /users/me/favorites/{listingId}").path("listingId", LISTING_IDS[0]).by(As::User("bob")),
        )],
        // The demo order is confirmed: its seller ships it (the same move).
        Op::ConfirmOrder => vec![case(
            "confirm order",
            "PATCH /orders/{orderId}",
            &["GetItem", "UpdateItem"],
            0.5,
            CONFIRM_ORDER_WCU,
            None,
            || {
                req("PATCH /orders/{orderId}")
                    .path("orderId", ORDER_ID)
                    .by(As::User("alice"))
                    .json(json!({ "status": "shipped" }))
            },
        )],
    }
}

/// Every case, in the registry's order.
pub fn all_cases() -> Vec<(Op, Case)> {
    Op::ALL.iter().flat_map(|op| cases(*op).into_iter().map(move |c| (*op, c))).collect()
}

fn favorite(listing: &str) -> Req {
    req("PUT /users/me/favorites/{listingId}").path("listingId", listing).by(As::User("bob"))
}
