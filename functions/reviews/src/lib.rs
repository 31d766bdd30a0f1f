//! Reviews function (marketplace AP10-11): once an order of a listing is
//! delivered, its buyer reviews the seller and its seller the buyer, once
//! each; reviews about a user (public, newest first) and by a user (the
//! author or an admin); admin moderation. A review lives in the reviewed
//! user's partition; the stream processor keeps that user's `ratingSum` and
//! `reviewCount` from review inserts and removals.

use api::validate::Text;
use api::{ApiError, Deps, Request, Response};
use domain::ids::{CategoryId, OrderId, ReviewId, UserId};
use domain::model::{Order, OrderStatus, Party, Review};
use domain::time::{now_ms, rfc3339};
use keyschema::access;
use keyschema::keys;
use keyschema::write;
use keyschema::Cond;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use store::item::from_item;

api::routes! {
    app: Deps;
    "POST /orders/{orderId}/reviews" => write_review,
    "GET /users/{userId}/reviews" => reviews_about,
    "GET /users/{userId}/reviews/written" => reviews_written,
    "DELETE /users/{userId}/reviews/{reviewId}" => moderate,
}

/// A rating: a JSON integer from 1 to 5 (not `4.5`, not `"5"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rating(u8);

impl<'de> Deserialize<'de> for Rating {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let range = Review::MIN_RATING..=Review::MAX_RATING;
        let out_of_range =
            || de::Error::custom(format!("must be an integer from {} to {}", range.start(), range.end()));
        let n = u64::deserialize(d).map_err(|_| out_of_range())?;
        u8::try_from(n).ok().filter(|r| range.contains(r)).map(Rating).ok_or_else(out_of_range)
    }
}

/// Body of `POST /orders/{orderId}/reviews`. Everything else (ids, author,
/// the reviewed user, dates) is the server's.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewReview {
    rating: Rating,
    body: Text<{ Review::MAX_BODY_CHARS }>,
}

/// The category a buyer's review of `order` rates: the order's listing's,
/// as recorded at placement (or, for an order placed before categories
/// were rated, read from the listing: one `GetItem`).
async fn category_of(app: &Deps, order: &Order) -> Result<Option<CategoryId>, ApiError> {
    if order.category_id.is_some() {
        return Ok(order.category_id.clone());
    }
    let Some(listing) = order.listing_id else { return Ok(None) };
    // Only the category is read from it (a listing that no longer decodes
    // as a whole does not stop the review).
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Of {
        category_id: CategoryId,
    }
    impl keyschema::ReadAs<domain::model::Listing> for Of {}
    Ok(app.store.get::<Of, _>(&keys::listing(&listing)?).await?.map(|l| l.category_id))
}

/// Writes a review of the other party of a delivered listing order. One
/// `TransactWriteItems`: the review put if absent and the order marked as
/// reviewed by the caller's party only if still delivered and not yet
/// reviewed by that party (so "once per party per order" holds under
/// concurrency); the reviewed user read before, to exist.
async fn write_review(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let order_id: OrderId = req.path("orderId")?;
    let NewReview { rating, body } = req.json()?;
    // As its home has it: the home's state decides (docs/regions.md).
    let (order, home) = app
        .order_at_home(&order_id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("order `{order_id}` does not exist")))?;
    let (party, reviewed) = if caller.is(&order.buyer_id) {
        let seller = order.seller_id.clone().ok_or_else(|| {
            ApiError::conflict(format!("order `{order_id}` is a catalog order: it has no seller to review"))
        })?;
        (Party::Buyer, seller)
    } else if order.seller_id.as_ref().is_some_and(|s| caller.is(s)) {
        (Party::Seller, order.buyer_id.clone())
    } else {
        return Err(ApiError::forbidden("only the buyer or the seller of an order may review it"));
    };
    check_reviewable(&order, party)?;
    // Read, not checked in the transaction: users are never deleted, and a
    // mega-seller's item in every review's transaction would be held by
    // them (docs/capacity.md).
    if app.signed_up(&reviewed).await?.is_none() {
        return Err(ApiError::conflict(format!(
            "user `{reviewed}` has not signed up, so there is no profile to review"
        )));
    }
    let category_id = match party {
        Party::Buyer => category_of(app, &order).await?,
        Party::Seller => None,
    };
    let now = rfc3339(now_ms());
    let review = Review {
        review_id: ReviewId::generate(),
        reviewed_user_id: reviewed,
        author_id: caller.user_id,
        order_id,
        category_id,
        rating: rating.0,
        body: body.into_string(),
        home: order.home.clone(),
        created_at: now.clone(),
    };
    // With its order, at the order's home (docs/regions.md).
    let mut tx = home.transaction().with_token(review.review_id.to_string());
    tx.put_new("review", &review)?;
    tx.update("order", &write::review::record_on_order(&order_id, party, &review.review_id, &now)?)?;
    match tx.send().await {
        Ok(()) => Response::created(&Review { home: None, ..review }),
        Err(e) if e.failed("order") => {
            let current = e.failed_item("order").cloned().map(from_item::<Order>).transpose()?;
            match current {
                Some(order) => check_reviewable(&order, party).and(Err(ApiError::conflict("order changed; retry"))),
                None => Err(ApiError::not_found(format!("order `{order_id}` does not exist"))),
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// 409 unless the order is delivered and `party` has not reviewed it yet.
fn check_reviewable(order: &Order, party: Party) -> Result<(), ApiError> {
    if order.status != OrderStatus::Delivered {
        return Err(ApiError::conflict(format!(
            "order `{}` is {}: reviews open once it is delivered",
            order.order_id, order.status
        )));
    }
    if order.review_by(party).is_some() {
        return Err(ApiError::conflict(format!("you have already reviewed order `{}`", order.order_id)));
    }
    Ok(())
}

/// A review as its author reads it: all of it but where it is stored.
#[derive(Serialize)]
#[serde(transparent)]
struct WrittenReview(Review);

impl From<Review> for WrittenReview {
    fn from(review: Review) -> Self {
        WrittenReview(Review { home: None, ..review })
    }
}

/// A review as the public sees it: signed by its author, without the order
/// it is about (the parties' own views keep that).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PublicReview {
    review_id: ReviewId,
    reviewed_user_id: UserId,
    author_id: UserId,
    rating: u8,
    body: String,
    created_at: String,
}

impl From<Review> for PublicReview {
    fn from(r: Review) -> Self {
        PublicReview {
            review_id: r.review_id,
            reviewed_user_id: r.reviewed_user_id,
            author_id: r.author_id,
            rating: r.rating,
            body: r.body,
            created_at: r.created_at,
        }
    }
}

/// Marketplace AP10: reviews about a user, newest first (public, without
/// order ids). `Query pk = USER#<userId>, begins_with(sk, REVIEW#)`, descending.
async fn reviews_about(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let user: UserId = req.path("userId")?;
    let (items, next_cursor) = app.page::<Review, _>(&access::reviews_about(&user)?, &req.page(&[])?).await?;
    let items: Vec<PublicReview> = items.into_iter().map(PublicReview::from).collect();
    Response::ok(&api::ListBody { items, next_cursor })
}

/// Marketplace AP11: reviews a user wrote, newest first (the author or an
/// admin). `Query GSI6 gsi1pk = AUTHOR#<authorId>, begins_with(gsi1sk, REVIEW#)`, descending.
async fn reviews_written(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let author: UserId = req.path("userId")?;
    caller.require_self_or_admin(&author)?;
    app.list_as::<Review, _, WrittenReview>(&access::reviews_by(&author)?, &req.page(&[])?).await
}

/// Admin moderation: deletes a review (204). The stream processor takes it
/// out of the user's aggregates. A one-action transaction, for its token: an
/// SDK retry of a delete that applied is not a false 404.
async fn moderate(app: &Deps, req: Request) -> Result<Response, ApiError> {
    req.admin()?;
    let user: UserId = req.path("userId")?;
    let id: ReviewId = req.path("reviewId")?;
    // At its home: in a global table read here first to learn it.
    let key = keys::review(&user, &id)?;
    let home = match app.store.is_global() {
        true => app.store.get::<Review, _>(&key).await?.and_then(|r| r.home),
        false => None,
    };
    let mut tx = app.store.at(home.as_deref())?.transaction();
    tx.delete("review", &key, &[Cond::ItemExists])?;
    match tx.send().await {
        Ok(()) => Ok(Response::no_content()),
        Err(e) if e.failed("review") => Err(ApiError::not_found(format!("user `{user}` has no review `{id}`"))),
        Err(e) => Err(e.into()),
    }
}
