//! What is derived from the base items, recomputed from a consistent scan
//! of the whole table, and compared with what the table holds: every
//! item's index keys (its declaration), every user's rating aggregates (the
//! first review of each author about them in each ISO week), every
//! category's rating (the same of the reviews naming it),
//! every listing's favorite count (its favorites), every search posting
//! (the titles of the active listings), and
//! every marker (counted with the base item's weight and version while the
//! base item exists, not counted after).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use aws_sdk_dynamodb::types::AttributeValue;
use domain::model::{Favorite, Listing, ListingStatus, Review, User};
use keyschema::decl::Keeper;
use keyschema::entities;
use keyschema::records::{CategoryRating, CategoryRatingSlot, FavoriteMarker, MarkerState, Posting, RatingSlot, Slot};
use keyschema::table::EntityType;
use store::Store;

/// A raw item.
pub type Item = HashMap<String, AttributeValue>;

/// The store's client gives an operation 5 s; DynamoDB Local can take
/// longer over a table update, a large batch or a scan page when the
/// machine is loaded (all tests share its 2 cores), so the tests' own
/// setup and scans get a minute.
pub fn setup_timeout() -> aws_sdk_dynamodb::config::Builder {
    let timeouts = aws_sdk_dynamodb::config::timeout::TimeoutConfig::builder()
        .operation_timeout(std::time::Duration::from_secs(60))
        .build();
    aws_sdk_dynamodb::config::Builder::default().timeout_config(timeouts)
}

/// Every item of the table, read consistently.
pub async fn scan(store: &Store) -> Vec<Item> {
    let (mut items, mut start) = (Vec::new(), None);
    loop {
        let page = store
            .client()
            .scan()
            .table_name(store.table())
            .consistent_read(true)
            .set_exclusive_start_key(start)
            .customize()
            .config_override(setup_timeout())
            .send()
            .await
            .expect("scan");
        items.extend(page.items.unwrap_or_default());
        start = page.last_evaluated_key;
        if start.is_none() {
            return items;
        }
    }
}

/// A string attribute of `item`, or "" if it has none.
pub fn s(item: &Item, name: &str) -> String {
    match item.get(name) {
        Some(AttributeValue::S(v)) => v.clone(),
        _ => String::new(),
    }
}

fn of<T: serde::de::DeserializeOwned>(item: &Item) -> T {
    serde_dynamo::from_item(item.clone()).expect("a readable item")
}

/// Every way the derived data differs from the base items (empty: exact),
/// as the stream processor keeps it: a sold listing keeps its postings
/// only while its order is pending.
pub async fn differences(store: &Store) -> Vec<String> {
    differences_of(store, false).await
}

/// The same as reconcile alone leaves it: it reads no orders, so a sold
/// listing may also keep its postings while it was sold within
/// reconcile's window (`sold_postings_for`).
pub async fn differences_after_reconcile(store: &Store) -> Vec<String> {
    differences_of(store, true).await
}

async fn differences_of(store: &Store, reconciled: bool) -> Vec<String> {
    let items = scan(store).await;
    let mut out = Vec::new();
    let by_type = |t: EntityType| items.iter().filter(move |i| s(i, "entityType") == t.as_str());
    // Index keys, from each item's declaration.
    for item in &items {
        let Some(decl) = entities::ALL.iter().find(|d| d.entity.as_str() == s(item, "entityType")) else { continue };
        if let Some(change) = decl.repair(&store::item::attrs(item), Keeper::Both).expect("keys render") {
            out.push(format!(
                "index keys of {} {}: {:?} {:?}",
                s(item, "pk"),
                s(item, "sk"),
                change.set,
                change.remove
            ));
        }
    }
    // What each aggregate should hold, and each slot: of one author's
    // reviews of one user in one ISO week (and, for a category, in it), the
    // first counts.
    type Slots = BTreeMap<(String, String, String, String), BTreeMap<String, u32>>;
    let mut user_slots: Slots = BTreeMap::new();
    let mut category_slots: Slots = BTreeMap::new();
    for review in by_type(EntityType::Review).map(of::<Review>) {
        let week = derived::aggregates::week_of(&review.review_id);
        let (reviewed, author) = (review.reviewed_user_id.to_string(), review.author_id.to_string());
        let (id, rating) = (review.review_id.to_string(), u32::from(review.rating));
        let key = (String::new(), reviewed.clone(), author.clone(), week.clone());
        user_slots.entry(key).or_default().insert(id.clone(), rating);
        if let Some(category) = &review.category_id {
            category_slots.entry((category.to_string(), reviewed, author, week)).or_default().insert(id, rating);
        }
    }
    let sums = |slots: &Slots, by_category: bool| {
        let mut out: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        for ((category, reviewed, _, _), reviews) in slots {
            let (_, first) = reviews.iter().next().expect("a slot of reviews");
            let e = out.entry(if by_category { category.clone() } else { reviewed.clone() }).or_default();
            *e = (e.0 + i64::from(*first), e.1 + 1);
        }
        out
    };
    let (ratings, category_ratings) = (sums(&user_slots, false), sums(&category_slots, true));
    let mut held_categories = BTreeSet::new();
    for rating in by_type(EntityType::CategoryRating).map(of::<CategoryRating>) {
        held_categories.insert(rating.category_id.to_string());
        let want = category_ratings.get(rating.category_id.as_str()).copied().unwrap_or_default();
        let held = (
            i64::try_from(rating.rating_sum).unwrap_or(i64::MAX),
            i64::try_from(rating.review_count).unwrap_or(i64::MAX),
        );
        if held != want {
            out.push(format!("category {} holds rating {held:?}, its reviews make {want:?}", rating.category_id));
        }
    }
    out.extend(
        category_ratings
            .keys()
            .filter(|c| !held_categories.contains(*c))
            .map(|c| format!("category {c} has no rating item")),
    );
    // Each slot holds exactly the reviews of its pair and week still there.
    let reviews_of = |slot: &Slot| slot.reviews.iter().map(|(id, w)| (id.to_string(), *w)).collect::<BTreeMap<_, _>>();
    let mut seen = BTreeSet::new();
    for m in by_type(EntityType::RatingSlot).map(of::<RatingSlot>) {
        let key = (String::new(), m.reviewed_user_id.to_string(), m.author_id.to_string(), m.week.clone());
        let want = user_slots.get(&key).cloned().unwrap_or_default();
        if reviews_of(&m.slot) != want {
            out.push(format!("rating slot {key:?} holds {:?}, its reviews are {want:?}", m.slot.reviews));
        }
        seen.insert(key);
    }
    out.extend(user_slots.keys().filter(|k| !seen.contains(*k)).map(|k| format!("reviews {k:?} have no slot")));
    let mut seen = BTreeSet::new();
    for m in by_type(EntityType::CategoryRatingSlot).map(of::<CategoryRatingSlot>) {
        let p = &m.pair;
        let key = (m.category_id.to_string(), p.reviewed_user_id.to_string(), p.author_id.to_string(), p.week.clone());
        let want = category_slots.get(&key).cloned().unwrap_or_default();
        if reviews_of(&p.slot) != want {
            out.push(format!("category rating slot {key:?} holds {:?}, its reviews are {want:?}", p.slot.reviews));
        }
        seen.insert(key);
    }
    out.extend(
        category_slots.keys().filter(|k| !seen.contains(*k)).map(|k| format!("category reviews {k:?} have no slot")),
    );
    for retired in [EntityType::RatingMarker, EntityType::CategoryRatingMarker] {
        out.extend(by_type(retired).map(|i| format!("a retired marker is left: {} {}", s(i, "pk"), s(i, "sk"))));
    }
    let mut favorites: BTreeMap<String, i64> = BTreeMap::new();
    let mut favorite_markers: BTreeMap<(String, String), String> = BTreeMap::new();
    for favorite in by_type(EntityType::Favorite).map(of::<Favorite>) {
        *favorites.entry(favorite.listing_id.to_string()).or_default() += 1;
        favorite_markers
            .insert((favorite.user_id.to_string(), favorite.listing_id.to_string()), favorite.favorite_id.to_string());
    }
    for user in by_type(EntityType::User).map(of::<User>) {
        let want = ratings.get(user.user_id.as_str()).copied().unwrap_or_default();
        let held = (i64::try_from(user.rating_sum).unwrap_or(i64::MAX), i64::from(user.review_count));
        if held != want {
            out.push(format!("user {} holds ratings {held:?}, its reviews make {want:?}", user.user_id));
        }
    }
    for listing in by_type(EntityType::Listing).map(of::<Listing>) {
        let want = favorites.get(&listing.listing_id.to_string()).copied().unwrap_or_default();
        if i64::from(listing.favorite_count) != want {
            out.push(format!("listing {} holds {} favorites, has {want}", listing.listing_id, listing.favorite_count));
        }
    }
    let mut seen = BTreeSet::new();
    for m in by_type(EntityType::FavoriteMarker).map(of::<FavoriteMarker>) {
        let key = (m.user_id.to_string(), m.listing_id.to_string());
        seen.insert(key.clone());
        match favorite_markers.get(&key) {
            Some(v) if m.state != MarkerState::Counted || m.version.to_string() != *v => {
                out.push(format!("favorite marker {key:?} is {:?} at {}, the favorite is {v}", m.state, m.version))
            }
            None if m.state == MarkerState::Counted => {
                out.push(format!("favorite marker {key:?} counts a gone favorite"))
            }
            _ => {}
        }
    }
    out.extend(favorite_markers.keys().filter(|k| !seen.contains(*k)).map(|k| format!("favorite {k:?} has no marker")));
    out.extend(postings(&items, reconciled));
    out
}

/// Search postings missing, extra or holding other than their listing's
/// current words and category: an active listing has its title's, a sold
/// one may keep them while its order is pending (and, `reconciled`, while
/// it was sold within reconcile's window), and any other has none
/// (`derived::postings`).
fn postings(items: &[Item], reconciled: bool) -> Vec<String> {
    let by_type = |t: EntityType| items.iter().filter(move |i| s(i, "entityType") == t.as_str());
    let pending_sales: BTreeSet<String> = by_type(EntityType::Order)
        .map(of::<domain::model::Order>)
        .filter(|o| o.status == domain::model::OrderStatus::Pending)
        .filter_map(|o| o.listing_id.map(|l| l.to_string()))
        .collect();
    let window = maintenance::reconcile::Options::default().sold_postings_for;
    let recent = domain::time::rfc3339(domain::time::now_ms().saturating_sub(window.as_millis() as u64));
    let may_keep =
        |l: &Listing| pending_sales.contains(&l.listing_id.to_string()) || (reconciled && l.updated_at >= recent);
    let keyed = |p: Posting| ((p.term.clone(), p.listing_id.to_string()), p);
    let listings: Vec<Listing> = by_type(EntityType::Listing).map(of::<Listing>).collect();
    let want: BTreeMap<(String, String), Posting> = listings.iter().flat_map(Posting::of_listing).map(keyed).collect();
    let kept: BTreeMap<(String, String), Posting> = listings
        .iter()
        .filter(|l| l.status == ListingStatus::Sold && may_keep(l))
        .flat_map(Posting::of_title)
        .map(keyed)
        .collect();
    let held: BTreeMap<(String, String), Posting> =
        by_type(EntityType::Posting).map(of::<Posting>).map(keyed).collect();
    let mut out = Vec::new();
    for (key, p) in &want {
        match held.get(key) {
            None => out.push(format!("posting {key:?} missing")),
            Some(h) if h != p => out.push(format!("posting {key:?} holds {h:?}, its listing makes {p:?}")),
            Some(_) => {}
        }
    }
    for (key, h) in held.iter().filter(|(k, _)| !want.contains_key(*k)) {
        match kept.get(key) {
            Some(p) if p == h => {}
            Some(p) => out.push(format!("posting {key:?} holds {h:?}, its sold listing makes {p:?}")),
            None => out.push(format!("posting {key:?} of no active title or sale that may be pending")),
        }
    }
    out
}

/// Sets and removes attributes of the item with `key` straight in the
/// table, nothing else (not its index keys), as a lost or stray write
/// would; returns what they were.
pub async fn set_raw(store: &Store, key: &keyschema::Key, set: &[(&str, AttributeValue)], remove: &[&str]) -> Item {
    let mut req = store.client().update_item().table_name(store.table());
    req = req.key("pk", AttributeValue::S(key.pk.clone())).key("sk", AttributeValue::S(key.sk.clone()));
    let mut expr = Vec::new();
    for (i, (name, value)) in set.iter().enumerate() {
        req = req
            .expression_attribute_names(format!("#s{i}"), *name)
            .expression_attribute_values(format!(":s{i}"), value.clone());
        expr.push(format!("#s{i} = :s{i}"));
    }
    let mut text = if expr.is_empty() { String::new() } else { format!("SET {}", expr.join(", ")) };
    if !remove.is_empty() {
        let names: Vec<String> = (0..remove.len()).map(|i| format!("#r{i}")).collect();
        for (i, name) in remove.iter().enumerate() {
            req = req.expression_attribute_names(format!("#r{i}"), *name);
        }
        text = format!("{text} REMOVE {}", names.join(", "));
    }
    let req = req.update_expression(text).return_values(aws_sdk_dynamodb::types::ReturnValue::UpdatedOld);
    req.send().await.unwrap().attributes.unwrap_or_default()
}
