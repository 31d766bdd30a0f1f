//! Users function: sign-up with a unique email, profiles, lookup by email
//! (marketplace AP1-2, e-commerce AP6). The user id is always the caller's
//! verified `sub`; emails are kept unique by a guard item written in the
//! same transaction as the user.

use api::validate::Name;
use api::{ApiError, Caller, Deps, ListBody, Request, Response};
use domain::ids::{Email, FavoriteId, ListingId, UserId};
use domain::model::{Favorite, Listing, ListingStatus, User, UserRole};
use domain::time::{now_ms, rfc3339};
use keyschema::access;
use keyschema::keys;
use keyschema::records::EmailGuard;
use keyschema::table::EntityType;
use keyschema::write::{self, attr};
use keyschema::Value;
use serde::{Deserialize, Serialize};
use store::item::from_item;
use store::StoreError;

api::routes! {
    app: Deps;
    "POST /users" => sign_up,
    "GET /users" => find_by_email,
    "GET /users/me" => get_me,
    "GET /users/me/favorites" => favorites,
    "PUT /users/me/favorites/{listingId}" => add_favorite,
    "DELETE /users/me/favorites/{listingId}" => remove_favorite,
    "GET /users/{userId}" => get_user,
    "PATCH /users/{userId}" => update_user,
}

/// A user as the API shows it. The public profile has no email and no
/// `updatedAt`; the user's own view and an admin's have both.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile<'a> {
    user_id: &'a UserId,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    email: Option<&'a Email>,
    role: UserRole,
    rating: Option<f64>,
    review_count: u32,
    created_at: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_at: Option<&'a str>,
}

/// The view of `user` for `caller`: the full record for the user and
/// admins, the public profile for anyone else (or nobody).
pub fn profile<'a>(user: &'a User, caller: Option<&Caller>) -> Profile<'a> {
    let full = caller.is_some_and(|c| c.is(&user.user_id) || c.admin);
    Profile {
        user_id: &user.user_id,
        name: &user.name,
        email: full.then_some(&user.email),
        role: user.role,
        rating: user.rating(),
        review_count: user.review_count,
        created_at: &user.created_at,
        updated_at: full.then_some(user.updated_at.as_str()),
    }
}

/// Body of `POST /users`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignUp {
    name: Name,
    email: Email,
}

/// Sign-up: the caller's `sub` becomes the user id. One `TransactWriteItems`:
/// the user put if absent and the email guard `USER_EMAIL#<email>` / `#UNIQUE`
/// put if absent, so two sign-ups with one email never both succeed.
async fn sign_up(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let body: SignUp = req.json()?;
    let now = rfc3339(now_ms());
    let user = User {
        home: app.store.home_tag(),
        user_id: caller.user_id.clone(),
        name: body.name.into_string(),
        email: body.email,
        role: UserRole::Buyer,
        rating_sum: 0,
        review_count: 0,
        created_at: now.clone(),
        updated_at: now,
    };
    let guard = EmailGuard { email: user.email.clone(), user_id: user.user_id.clone() };
    // The user and the guard live in the primary region (one account per
    // email needs one place); what the user sells, in this one.
    let mut tx = app.store.at_primary()?.transaction();
    tx.put_new("user", &user)?;
    tx.put_new("guard", &guard)?;
    match tx.send().await {
        Ok(()) => Response::created(&profile(&user, Some(&caller))),
        Err(e) if e.failed("user") => Err(ApiError::conflict(format!("user `{}` has already signed up", user.user_id))),
        Err(e) if e.failed("guard") => Err(ApiError::conflict(format!("email `{}` is already in use", user.email))),
        Err(e) => Err(e.into()),
    }
}

/// Marketplace AP1 / e-commerce AP6: a user's public profile (no token;
/// never the email). `GetItem USER#<userId> / #METADATA`.
async fn get_user(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let id: UserId = req.path("userId")?;
    let user = app.get_or_404::<User, _>(&keys::user(&id)?, || format!("user `{id}`")).await?;
    Response::ok(&profile(&user, None))
}

/// The caller's own profile, with the email. `GetItem USER#<userId> / #METADATA` (the caller's `sub`).
async fn get_me(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let id = &caller.user_id;
    let user = app.get_or_404::<User, _>(&keys::user(id)?, || format!("user `{id}` (sign up first)")).await?;
    Response::ok(&profile(&user, Some(&caller)))
}

/// Marketplace AP2: a user by email (admin), as a list of at most one.
/// `Query GSI6 gsi1pk = USER_EMAIL#<email>, begins_with(gsi1sk, USER#)`.
async fn find_by_email(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.admin()?;
    let page = req.page(&["email"])?;
    let email: Email =
        req.query("email")?.ok_or_else(|| ApiError::bad_request("the `email` query parameter is required"))?;
    let (users, next_cursor) = app.page::<User, _>(&access::user_by_email(&email)?, &page).await?;
    let items: Vec<Profile> = users.iter().map(|u| profile(u, Some(&caller))).collect();
    Response::ok(&ListBody { items, next_cursor })
}

/// Body of `PATCH /users/{userId}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileChange {
    name: Option<Name>,
    email: Option<Email>,
}

/// Updates the caller's own profile. A name change is one conditional
/// `UpdateItem`. An email change reads the user, then moves the guard in one
/// `TransactWriteItems`: the user updated only if its email is still the one
/// read, the old guard deleted only if it is the user's, the new guard put
/// only if absent.
async fn update_user(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let id: UserId = req.path("userId")?;
    if !caller.is(&id) {
        return Err(ApiError::forbidden("only the user may change their profile"));
    }
    let change: ProfileChange = req.json()?;
    if change.name.is_none() && change.email.is_none() {
        return Err(ApiError::bad_request("invalid body: give `name`, `email` or both"));
    }
    let now = rfc3339(now_ms());
    let not_found = || ApiError::not_found(format!("user `{id}` does not exist"));
    if let Some(new_email) = &change.email {
        // Strongly consistent: the guard to release is the one of the email
        // the user has now, not of one a moment ago.
        let current =
            app.store.at_primary()?.get_consistent::<User, _>(&keys::user(&id)?).await?.ok_or_else(not_found)?;
        if &current.email != new_email {
            return change_email(app, &caller, current, new_email, change.name.map(Name::into_string), now).await;
        }
        if change.name.is_none() {
            return Response::ok(&profile(&current, Some(&caller)));
        }
    }
    let Some(name) = change.name else {
        return Err(ApiError::bad_request("invalid body: give `name`, `email` or both"));
    };
    match app.store.at_primary()?.update(&write::user::rename(&id, name.as_str(), &now)?).await {
        Ok(item) => Response::ok(&profile(&from_item::<User>(item)?, Some(&caller))),
        Err(e) if e.is_conditional_check_failed() => Err(not_found()),
        Err(e) => Err(e.into()),
    }
}

async fn change_email(
    app: &Deps,
    caller: &Caller,
    mut user: User,
    new_email: &Email,
    name: Option<String>,
    now: String,
) -> Result<Response, ApiError> {
    let mut change = write::user::change_email(&user.user_id, &user.email, new_email, &now)?;
    if let Some(name) = &name {
        change = change.set(attr::NAME, Value::s(name));
    }
    let guard = EmailGuard { email: new_email.clone(), user_id: user.user_id.clone() };
    let mut tx = app.store.at_primary()?.transaction();
    tx.update("user", &change)?;
    tx.delete("old guard", &keys::email_guard(&user.email)?, &[write::email_guard::held_by(&user.user_id)])?;
    tx.put_new("new guard", &guard)?;
    match tx.send().await {
        Ok(()) => {
            user.email = new_email.clone();
            user.name = name.unwrap_or(user.name);
            user.updated_at = now;
            Response::ok(&profile(&user, Some(caller)))
        }
        Err(e) if e.failed("new guard") => Err(ApiError::conflict(format!("email `{new_email}` is already in use"))),
        Err(e) => Err(e.into()),
    }
}

/// Beyond the seeds: marks a listing as the caller's favorite. One
/// `BatchGetItem` reads the listing and the caller's user item: only a
/// signed-up user (403) favorites, and only a listing that is active (404 if
/// missing or removed, 409 if sold; a favorite racing a sale may land).
/// Then one `PutItem` of `USER#<userId> / FAVORITE#<listingId>` if absent
/// (201); if it is already a favorite, the answer is the one stored (200).
/// Nothing is written to the listing, which many users may favorite at
/// once: the stream processor counts it into the listing's `favoriteCount`.
async fn add_favorite(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let listing_id: ListingId = req.path("listingId")?;
    let read = app
        .store
        .batch_get_items(&[keys::listing(&listing_id)?.into(), keys::user(&caller.user_id)?.into()], false)
        .await?;
    let of = |entity: EntityType| read.iter().find(|i| store::item::entity_type(i) == Some(entity.as_str()));
    let signed_up =
        of(EntityType::User).is_some() || (app.store.is_global() && app.signed_up(&caller.user_id).await?.is_some());
    if !signed_up {
        return Err(ApiError::forbidden("sign up (POST /users) before adding favorites"));
    }
    let listing = of(EntityType::Listing).cloned().map(from_item::<Listing>).transpose()?;
    let listing_home = listing.as_ref().and_then(|l| l.home.clone());
    match listing.map(|l| l.status) {
        None | Some(ListingStatus::Removed) => {
            return Err(ApiError::not_found(format!("listing `{listing_id}` does not exist")));
        }
        Some(ListingStatus::Sold) => return Err(ApiError::conflict(format!("listing `{listing_id}` is sold"))),
        Some(ListingStatus::Active) => {}
    }
    let favorite = Favorite {
        listing_home,
        user_id: caller.user_id,
        listing_id,
        favorite_id: FavoriteId::generate(),
        created_at: rfc3339(now_ms()),
    };
    // With its user, in the primary region; counted at the listing's home.
    match app.store.at_primary()?.put_new(&favorite).await {
        Ok(()) => Response::created(&FavoriteAnswer::from(favorite)),
        Err(StoreError::ConditionFailed(Some(item))) => {
            Response::ok(&FavoriteAnswer::from(from_item::<Favorite>(item)?))
        }
        Err(e) => Err(e.into()),
    }
}

/// Beyond the seeds: removes a favorite (204, also if it was not one).
/// `DeleteItem USER#<userId> / FAVORITE#<listingId>` in a tokened transaction.
async fn remove_favorite(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    let listing: ListingId = req.path("listingId")?;
    let mut tx = app.store.at_primary()?.transaction();
    tx.delete("favorite", &keys::favorite(&caller.user_id, &listing)?, &[])?;
    tx.send().await?;
    Ok(Response::no_content())
}

/// Beyond the seeds: the caller's favorites, newest first.
/// `Query GSI6 gsi1pk = FAVORITES#<userId>, begins_with(gsi1sk, FAVORITE#)`, descending.
async fn favorites(app: &Deps, req: Request) -> Result<Response, ApiError> {
    let caller = req.caller()?;
    app.list_as::<Favorite, _, FavoriteAnswer>(&access::favorites_of(&caller.user_id)?, &req.page(&[])?).await
}

/// A favorite as answered: all of it but where its listing lives.
#[derive(serde::Serialize)]
#[serde(transparent)]
struct FavoriteAnswer(Favorite);

impl From<Favorite> for FavoriteAnswer {
    fn from(favorite: Favorite) -> Self {
        FavoriteAnswer(Favorite { listing_home: None, ..favorite })
    }
}
