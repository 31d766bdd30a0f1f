//! A load run as the API writes it (users, listings, reviews, favorites,
//! price changes, removals, moderation), for the tests that need a table
//! with some of everything: the stream processor's throughput and the
//! maintenance jobs.

use std::sync::OnceLock;

use aws_lambda_events::dynamodb::EventRecord;
use domain::ids::{OrderId, ReviewId};
use domain::model::{Review, User, UserRole};
use serde_json::json;
use ulid::Ulid;

use crate::{listings, req, stream_records, users, As, Reply, Req, TestTable};

/// The name of user `i` (0 to 99), as `As::User` wants it.
pub fn trader(i: usize) -> &'static str {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    &NAMES.get_or_init(|| (0..100).map(|i| format!("trader-{i:03}")).collect())[i]
}

pub fn id_of(body: &serde_json::Value, field: &str) -> String {
    body[field].as_str().unwrap_or_else(|| panic!("{field} in {body}")).to_owned()
}

/// `n` users (written before the stream is read from), then, as the API
/// writes them: 2 listings per user (two listing inserts and the seller's
/// update to role `both`, made by the first only), 3 reviews about each user, 4 favorites on each of n/2 listings,
/// then, interleaved, 0.2n price changes, 0.2n listing removals and as
/// many relistings of those at a new price, 0.2n reviews deleted by
/// moderation and 0.2n favorites removed: 9n records when 10 divides n
/// (n/2 and n/5 round: 6n + 4 * ceil(n/2) + 5 * floor(n/5)); n = 5 is the
/// smallest with some of everything.
/// Every user's and every favorited listing's aggregate changes; every
/// relisting gets its browse, price and near keys from the stream processor
/// (a new listing's are put with it, a price change moves its own).
pub async fn workload(t: &TestTable, n: usize) -> Vec<EventRecord> {
    for i in 0..n {
        let user = User {
            home: None,
            user_id: trader(i).parse().unwrap(),
            name: format!("Trader {i}"),
            email: format!("trader{i}@example.com").parse().unwrap(),
            role: UserRole::Buyer,
            rating_sum: 0,
            review_count: 0,
            created_at: "2026-11-22T00:00:00.000Z".into(),
            updated_at: "2026-11-22T00:00:00.000Z".into(),
        };
        t.deps.store.put_new(&user).await.unwrap();
    }
    let already = stream_records(t).await.len();
    let categories = ["books", "pottery", "electronics"];
    let (mut listing_ids, mut review_keys) = (Vec::new(), Vec::new());
    for i in 0..n {
        for j in 0..2 {
            let body = json!({
                "title": format!("Item {i}-{j}"),
                "price": 5 + (i * 7 + j * 3) % 90,
                "categoryId": categories[(i + j) % 3],
            });
            let r = listings(&t.deps, req("POST /listings").by(As::User(trader(i))).json(body)).await;
            assert_eq!(r.status, 201, "{:?}", r.body);
            listing_ids.push((id_of(&r.body, "listingId"), i));
        }
        for k in 0..3 {
            let at = (i * 3 + k) as u64;
            let review = Review {
                home: None,
                review_id: ReviewId::from_ulid(Ulid::from_parts(1_790_000_000_000 + at, u128::from(at))),
                reviewed_user_id: trader(i).parse().unwrap(),
                author_id: trader((i + k + 1) % n).parse().unwrap(),
                order_id: OrderId::from_ulid(Ulid::from_parts(1_790_000_000_000, u128::from(at))),
                // Two of three name a category (a buyer's review of a listing order).
                category_id: (k < 2).then(|| categories[(i + k) % 3].parse().unwrap()),
                rating: 1 + ((i + k * 2) % 5) as u8,
                body: format!("review {at}"),
                created_at: "2026-11-22T00:00:00.000Z".into(),
            };
            t.deps.store.put_new(&review).await.unwrap();
            review_keys.push((trader(i), review.review_id.to_string()));
        }
    }
    // Favorites: 4 users on each of n/2 listings (every 4th listing).
    let favorited: Vec<&(String, usize)> = listing_ids.iter().step_by(4).collect();
    let mut favorites = Vec::new();
    for (l, (listing, _)) in favorited.iter().enumerate() {
        for f in 0..4 {
            let by = trader((l * 4 + f + 1) % n);
            let r = users(&t.deps, favorite("PUT", listing, by)).await;
            assert_eq!(r.status, 201, "{:?}", r.body);
            favorites.push((listing.clone(), by));
        }
    }
    // Interleaved: a price change, a removal and its relisting at a new
    // price, a review and a favorite deleted.
    for k in 0..n / 5 {
        let ((repriced, seller), (removed, owner)) = (&listing_ids[k * 10 + 1], &listing_ids[k * 10 + 5]);
        for (listing, seller, change) in [
            (repriced, seller, json!({ "price": 100 + k })),
            (removed, owner, json!({ "status": "removed" })),
            (removed, owner, json!({ "status": "active", "price": 200 + k })),
        ] {
            let r = listings(
                &t.deps,
                req("PATCH /listings/{listingId}")
                    .path("listingId", listing)
                    .by(As::User(trader(*seller)))
                    .json(change),
            )
            .await;
            assert_eq!(r.status, 200, "{:?}", r.body);
        }
        let (user, review) = &review_keys[k * 15 + 1];
        let r = reviews(
            t,
            req("DELETE /users/{userId}/reviews/{reviewId}")
                .path("userId", user)
                .path("reviewId", review)
                .by(As::Admin),
        )
        .await;
        assert_eq!(r.status, 204, "{:?}", r.body);
        let (listing, by) = &favorites[k * 10 + 2];
        assert_eq!(users(&t.deps, favorite("DELETE", listing, by)).await.status, 204);
    }
    let records = stream_records(t).await.split_off(already);
    let favorited = n.div_ceil(2);
    assert_eq!(records.len(), 6 * n + 4 * favorited + 5 * (n / 5), "the workload's records on the stream");
    records
}

pub fn favorite(method: &str, listing: &str, by: &'static str) -> Req {
    req(&format!("{method} /users/me/favorites/{{listingId}}")).path("listingId", listing).by(As::User(by))
}

pub async fn reviews(t: &TestTable, r: Req) -> Reply {
    Reply::from_event(reviews::handler(&t.deps, crate::lambda_event(r.event())).await.unwrap())
}
