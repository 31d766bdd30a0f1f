//! What each request of the mix does to the table, item by item: its reads
//! (which index, which partition), its writes (which item, in a transaction
//! or not, which index copies they rewrite) and what the stream processor
//! then writes for it. The steps per request mirror the handlers; every key,
//! every query and every index a write touches comes from the key design
//! itself (`keyschema`: the declarations, their access functions and the
//! changes of `write`), so a key change shows up here without an edit.

use std::collections::BTreeMap;

use domain::ids::{BrandId, CategoryId, ListingId, OrderId, ProductId, ReviewId, UserId};
use domain::model::{ListingStatus, Money, OrderStatus, Party, UserRole};
use keyschema::decl::{EntityDecl, SchemaError};
use keyschema::entities::{self, Entity};
use keyschema::table::Index;
use keyschema::value::{Attrs, Value};
use keyschema::{access, keys, write, Change, Key, KeyQuery};

/// The entities one evaluation uses: the hot ones of each skew dimension,
/// and fresh ids (new listings, orders, buyers) that spread over the table.
pub struct Ids {
    pub category: CategoryId,
    /// The category's `listingShards`.
    pub category_shards: u16,
    pub brand: BrandId,
    pub seller: UserId,
    pub listing: ListingId,
    pub product: ProductId,
    pub buyer: UserId,
    pub new_listing: ListingId,
    /// The listing an order buys: each is sold once, so never a hot one.
    pub sold_listing: ListingId,
    pub order: OrderId,
    pub review: ReviewId,
    /// A search term: the hottest (`s*`, in a quarter of the corpus's
    /// titles) in its share, a cold one otherwise.
    pub term: String,
    /// Where listings are made and looked for near: the hot city in its
    /// share, a place of its own otherwise.
    pub place: domain::geo::Location,
}

/// One item-level action.
#[derive(Clone, Debug)]
pub enum Action {
    /// A read of `items` items of `kb` each from one partition, `times`
    /// per request on average (a sharded page's second round: sometimes);
    /// `ttl`: the seconds a function instance keeps the answer (`api::cache`).
    Read { index: Index, pk: String, items: f64, kb: f64, consistent: bool, ttl: Option<f64>, times: f64 },
    /// A write (or a transaction's condition check) of one table item, with
    /// the index copies it rewrites (every index the item is in, before or
    /// after, unless the index holds none of what changed).
    Write { key: Key, kb: f64, tx: bool, check: bool, copies: Vec<(Index, String)>, stream: bool, coalesced: bool },
}

/// Item sizes (KB) by kind, from the mix file.
#[derive(Clone, Copy, Debug, serde::Deserialize)]
pub struct Sizes {
    pub listing: f64,
    pub product: f64,
    pub user: f64,
    pub order: f64,
    pub small: f64,
    /// A search posting.
    pub posting: f64,
    /// A listing's copy in the near index (its projection: keys, id,
    /// location, geohash, category).
    pub spot: f64,
}

type R = Result<Vec<Action>, SchemaError>;

/// Search postings per new listing (the corpus's mean, rounded down).
const POSTINGS_PER_LISTING: usize = 11;

fn read(q: KeyQuery, items: f64, kb: f64) -> Action {
    Action::Read { index: q.index, pk: q.pk, items, kb, consistent: false, ttl: None, times: 1.0 }
}

fn get(key: impl Into<Key>, kb: f64, consistent: bool) -> Action {
    let key: Key = key.into();
    Action::Read { index: Index::Table, pk: key.pk, items: 1.0, kb, consistent, ttl: None, times: 1.0 }
}

/// A first page over a category's shards, each shard's query built by
/// `query`: round 1 on every shard, round 2 on some (as the page planner
/// does, measured by [`crate::fanout_reads`]).
fn sharded(ids: &Ids, page: f64, kb: f64, query: impl Fn(u16) -> Result<KeyQuery, SchemaError>) -> R {
    let rounds = crate::fanout_reads::first_page(ids.category_shards, page as usize);
    let mut out = Vec::new();
    for shard in 0..ids.category_shards {
        for (times, items) in rounds.iter().filter(|(times, _)| *times > 0.0) {
            let q = query(shard)?;
            out.push(Action::Read {
                index: q.index,
                pk: q.pk,
                items: *items,
                kb,
                consistent: false,
                ttl: None,
                times: *times,
            });
        }
    }
    Ok(out)
}

/// A new item put with the keys its write adds.
fn put<E: Entity>(record: &E, kb: f64, tx: bool) -> Result<Action, SchemaError> {
    let keys = record.item_keys()?;
    let copies = keys.keys.iter().filter(|(i, _)| **i != Index::Table).map(|(i, k)| (*i, k.pk.clone())).collect();
    Ok(Action::Write { key: keys.table().clone(), kb, tx, check: false, copies, stream: true, coalesced: false })
}

/// A change of an item whose fields were `before`: the index writes it
/// makes, in every index it is in before or after (a key moved is two), but
/// for an index that holds none of the attributes changed and whose key stays.
fn update(decl: &EntityDecl, before: &Attrs, change: &Change, kb: f64, tx: bool) -> Result<Action, SchemaError> {
    update_from(decl, decl.item_keys(before)?.keys, before, change, kb, tx)
}

/// [`update`] of an item whose index keys are `was` (a new item has only
/// those its write put: the stream processor adds the others).
fn update_from(
    decl: &EntityDecl,
    was: BTreeMap<Index, Key>,
    before: &Attrs,
    change: &Change,
    kb: f64,
    tx: bool,
) -> Result<Action, SchemaError> {
    let mut after = before.clone();
    for (name, value) in &change.set {
        after.insert((*name).to_owned(), value.clone());
    }
    for name in &change.remove {
        after.remove(*name);
    }
    let now = decl.item_keys(&after)?.keys;
    let changed: Vec<&str> =
        change.set.iter().chain(&change.add).map(|(name, _)| *name).chain(change.remove.iter().copied()).collect();
    // As DynamoDB writes an index: a key that moves is a delete of the old
    // entry and a put of the new (two writes, even in one partition); one
    // that stays is rewritten if the change touches what the index holds.
    let mut copies = Vec::new();
    for index in Index::GSIS {
        match (was.get(&index), now.get(&index)) {
            (Some(old), Some(new)) if old == new => {
                if changed.iter().any(|name| index.projection().holds(name)) {
                    copies.push((index, new.pk.clone()));
                }
            }
            (old, new) => copies.extend([old, new].into_iter().flatten().map(|k| (index, k.pk.clone()))),
        }
    }
    Ok(Action::Write { key: change.key.clone(), kb, tx, check: false, copies, stream: true, coalesced: false })
}

/// A read answered from the function's memory for `ttl` seconds.
fn cached(action: Action, seconds: f64) -> Action {
    match action {
        Action::Read { index, pk, items, kb, consistent, times, .. } => {
            Action::Read { index, pk, items, kb, consistent, ttl: Some(seconds), times }
        }
        write => write,
    }
}

#[allow(dead_code)]
fn check(key: impl Into<Key>, kb: f64) -> Action {
    let key: Key = key.into();
    Action::Write { key, kb, tx: true, check: true, copies: Vec::new(), stream: false, coalesced: false }
}

fn attrs<E: serde::Serialize>(record: &E) -> Attrs {
    keyschema::value::attrs_of(record).unwrap_or_default()
}

const NOW: &str = "2026-11-23T00:00:00.000Z";

fn listing(ids: &Ids, id: &ListingId, status: ListingStatus) -> domain::model::Listing {
    domain::model::Listing {
        listing_id: *id,
        seller_id: ids.seller.clone(),
        title: "A title".into(),
        price: Money::from_cents(2500),
        category_id: ids.category.clone(),
        shard: domain::shard::listing_shard(id, ids.category_shards),
        description: None,
        location: None,
        geohash: None,
        status,
        favorite_count: 3,
        created_at: NOW.into(),
        updated_at: NOW.into(),
    }
    .locate(Some(ids.place))
}

fn user(id: &UserId, role: UserRole) -> domain::model::User {
    domain::model::User {
        user_id: id.clone(),
        name: "A name".into(),
        email: format!("{id}@example.com").parse().unwrap_or_else(|_| "x@example.com".parse().expect("an email")),
        role,
        rating_sum: 40,
        review_count: 10,
        created_at: NOW.into(),
        updated_at: NOW.into(),
    }
}

fn product(ids: &Ids) -> domain::model::Product {
    domain::model::Product {
        product_id: ids.product,
        name: "A product".into(),
        brand_id: ids.brand.clone(),
        category_id: ids.category.clone(),
        price: Money::from_cents(1999),
        stock_level: 500,
        description: None,
        created_at: NOW.into(),
        updated_at: NOW.into(),
    }
}

fn order(ids: &Ids, listing: bool, status: OrderStatus) -> domain::model::Order {
    domain::model::Order {
        order_id: ids.order,
        buyer_id: ids.buyer.clone(),
        seller_id: listing.then(|| ids.seller.clone()),
        listing_id: listing.then_some(ids.sold_listing),
        category_id: listing.then(|| ids.category.clone()),
        lines: if listing {
            Vec::new()
        } else {
            vec![domain::model::OrderLine { item_id: ids.product.to_string(), qty: 1 }]
        },
        status,
        total: Money::from_cents(2500),
        shard: domain::shard::order_shard(&ids.order, domain::shard::DEFAULT_SHARD_COUNT),
        buyer_review_id: None,
        seller_review_id: None,
        created_at: NOW.into(),
        updated_at: NOW.into(),
    }
}

/// The stream processor's aggregate write for a counted instance: the
/// marker (its own partition) and the aggregate, one transaction per batch
/// and aggregate (coalesced).
fn counted(marker: impl Into<Key>, aggregate: Action) -> Vec<Action> {
    let marker: Key = marker.into();
    let marker =
        Action::Write { key: marker, kb: 0.2, tx: true, check: false, copies: vec![], stream: false, coalesced: false };
    let aggregate = match aggregate {
        Action::Write { key, kb, copies, .. } => {
            Action::Write { key, kb, tx: true, check: false, copies, stream: false, coalesced: true }
        }
        read => read,
    };
    vec![marker, aggregate]
}

/// A plain (not indexed, not coalesced) write of a small item.
fn small_write(key: impl Into<Key>, kb: f64, tx: bool) -> Action {
    let key: Key = key.into();
    Action::Write { key, kb, tx, check: false, copies: vec![], stream: true, coalesced: false }
}

/// An order's placement (`orders::place`): the idempotency record read, what
/// is bought and the buyer read; one transaction with the record, the
/// order, its item and `take` (the listing sold, the stock taken).
fn placement(ids: &Ids, kb: Sizes, of_listing: bool, bought: (Key, String, f64), take: Action) -> R {
    let (bought_key, item_id, bought_kb) = bought;
    let record: Key = keys::idempotency(&ids.buyer, "POST /orders", "k")?.into();
    Ok(vec![
        get(record.clone(), kb.small, true),
        get(bought_key, bought_kb, false),
        get(keys::user(&ids.buyer)?, kb.user, false),
        small_write(record, kb.small, true),
        put(&order(ids, of_listing, OrderStatus::Pending), kb.order, true)?,
        small_write(keys::order_item(&ids.order, &item_id)?, kb.small, true),
        take,
    ])
}

/// The actions of one request of `kind`.
pub fn actions(kind: &str, ids: &Ids, kb: Sizes, page: f64) -> R {
    let listing_decl = &entities::listing::ENTITY;
    let active = attrs(&listing(ids, &ids.listing, ListingStatus::Active));
    Ok(match kind {
        "browse category" => {
            sharded(ids, page, kb.listing, |shard| access::category_listings(&ids.category, shard, None))?
        }
        "browse by price" => {
            let (from, to) = ((0, ids.listing), (Money::MAX.cents(), ids.listing));
            sharded(ids, page, kb.listing, |shard| access::listings_by_price(&ids.category, shard, from, to))?
        }
        "get listing" => vec![get(keys::listing(&ids.listing)?, kb.listing, false)],
        "listings near me" => {
            // The cells of the place's partition a first page queries (as
            // measured in a city: `fanout_reads::near_page`), then the
            // page's listings from the table (spread over it, priced per item).
            let cell = ids.place.geohash(domain::geo::CELL_LEN);
            let q = access::listings_near(&cell, None)?;
            let returned = keys::listing(&ids.new_listing)?;
            let queries =
                crate::fanout_reads::near_page(page as usize).into_iter().map(|(items, times)| Action::Read {
                    index: q.index,
                    pk: q.pk.clone(),
                    items,
                    kb: kb.spot,
                    consistent: false,
                    ttl: None,
                    times,
                });
            let listings = Action::Read {
                index: Index::Table,
                pk: returned.pk.clone(),
                items: 1.0,
                kb: kb.listing,
                consistent: false,
                ttl: None,
                times: page,
            };
            queries.chain([listings]).collect()
        }
        "seller listings" => vec![read(access::seller_listings(&ids.seller, None)?, page, kb.listing)],
        "get product" => vec![get(keys::product(&ids.product)?, kb.product, false)],
        "products by category" => vec![read(access::products_by_category(&ids.category)?, page, kb.product)],
        "products by brand" => vec![read(access::products_by_brand(&ids.brand)?, page, kb.product)],
        // First pages from memory for a minute (catalog's FIRST_PAGES).
        "list categories" => vec![cached(read(access::categories()?, page, kb.small), 60.0)],
        "list brands" => vec![cached(read(access::brands()?, page, kb.small), 60.0)],
        "create listing" => {
            let new = listing(ids, &ids.new_listing, ListingStatus::Active);
            let seller = attrs(&user(&ids.seller, UserRole::Both));
            let to_seller = write::user::become_seller(&ids.seller, NOW)?;
            let _ = (seller, to_seller);
            // The category read (remembered five minutes), the seller read
            // (already a seller: not rewritten), the listing put.
            let mut out = vec![
                cached(get(keys::category(&ids.category)?, kb.small, false), 300.0),
                get(keys::user(&ids.seller)?, kb.user, false),
                put(&new, kb.listing, true)?,
            ];
            // The stream processor adds its browse, price and near keys: one
            // more write of the item, a copy in every index it is then in.
            let none = Change::of(keys::listing(&ids.new_listing)?, NOW);
            let put_keys = listing_decl.written_keys(&attrs(&new))?.keys;
            out.push(update_from(listing_decl, put_keys, &attrs(&new), &none, kb.listing, false)?);
            // And its search postings: the listing read, then its terms put
            // in one BatchWriteItem (11.2 per title of the corpus: one on
            // the drawn term, 10 on cold ones).
            out.push(get(keys::listing(&ids.new_listing)?, kb.listing, true));
            for k in 0..POSTINGS_PER_LISTING {
                let term = if k == 0 { ids.term.clone() } else { format!("w{}-{k}", ids.new_listing) };
                let key = keys::posting(&term, &ids.new_listing)?.into_key();
                let write = Action::Write {
                    key,
                    kb: kb.posting,
                    tx: false,
                    check: false,
                    copies: Vec::new(),
                    stream: true,
                    coalesced: false,
                };
                out.push(write);
            }
            out
        }
        "search listings" => {
            // The heads of two lists (the median page; 21 postings each),
            // then the listings returned, in one BatchGetItem.
            let mut out = Vec::new();
            for term in [ids.term.clone(), format!("w{}", ids.new_listing)] {
                out.push(read(access::postings(&term)?, page + 1.0, kb.posting));
            }
            out.push(Action::Read {
                index: Index::Table,
                pk: keys::listing(&ids.new_listing)?.pk.clone(),
                items: page,
                kb: kb.listing,
                consistent: false,
                ttl: None,
                times: 1.0,
            });
            out
        }
        "update listing price" => {
            let key = keys::listing(&ids.listing)?;
            let price = Value::n(Money::from_cents(2600));
            let change = Change::of(key.clone(), NOW).set(write::attr::PRICE, price.clone());
            let mut priced = active.clone();
            priced.insert(write::attr::PRICE.to_owned(), price);
            let (old_keys, new_keys) = (listing_decl.item_keys(&active)?.keys, listing_decl.item_keys(&priced)?.keys);
            // The API's write leaves the price key to the stream processor
            // (every copy that holds the price rewritten in place), which
            // then moves it: the old entry deleted, the new one put.
            let api = update_from(listing_decl, new_keys, &priced, &change, kb.listing, false)?;
            let stream = update_from(listing_decl, old_keys, &priced, &Change::of(key, NOW), kb.listing, false)?;
            vec![api, stream]
        }
        "add favorite" | "remove favorite" => {
            let adding = kind == "add favorite";
            let mut out = if adding {
                vec![get(keys::listing(&ids.listing)?, kb.listing, false), get(keys::user(&ids.buyer)?, kb.user, false)]
            } else {
                Vec::new()
            };
            let favorite = domain::model::Favorite {
                user_id: ids.buyer.clone(),
                listing_id: ids.listing,
                favorite_id: domain::ids::FavoriteId::generate(),
                created_at: NOW.into(),
            };
            let mut w = put(&favorite, kb.small, !adding)?;
            if let Action::Write { tx, .. } = &mut w {
                *tx = !adding;
            }
            out.push(w);
            let count = Change::of(keys::listing(&ids.listing)?, NOW).add(write::attr::FAVORITE_COUNT, 1);
            let aggregate = update(listing_decl, &active, &count, kb.listing, true)?;
            out.extend(counted(keys::favorite_marker(&ids.buyer, &ids.listing)?, aggregate));
            out
        }
        "place listing order" => {
            let sell = write::listing::sell(&ids.sold_listing, &ids.seller, Money::from_cents(2500), NOW)?;
            let before = attrs(&listing(ids, &ids.sold_listing, ListingStatus::Active));
            let bought = (keys::listing(&ids.sold_listing)?.into(), ids.sold_listing.to_string(), kb.listing);
            placement(ids, kb, true, bought, update(listing_decl, &before, &sell, kb.listing, true)?)?
        }
        "place catalog order" => {
            let take = write::product::take_for_order(&ids.product, 1, Money::from_cents(1999), NOW)?;
            let bought = (keys::product(&ids.product)?.into(), ids.product.to_string(), kb.product);
            let stock = update(&entities::product::ENTITY, &attrs(&product(ids)), &take, kb.product, true)?;
            placement(ids, kb, false, bought, stock)?
        }
        "confirm order" | "cancel order" => {
            let o = order(ids, true, OrderStatus::Pending);
            let mut out = vec![get(keys::order(&ids.order)?, kb.order, false)];
            let changes = if kind == "cancel order" {
                write::order::cancel(&o, NOW)?
            } else {
                vec![(
                    String::new(),
                    write::order::move_status(&ids.order, o.shard, OrderStatus::Pending, OrderStatus::Confirmed, NOW)?,
                )]
            };
            let sold = attrs(&listing(ids, &ids.sold_listing, ListingStatus::Sold));
            for (_, change) in changes {
                let (decl, before, size): (&EntityDecl, Attrs, f64) = if change.key.pk.starts_with("ORDER#") {
                    (&entities::order::ENTITY, attrs(&o), kb.order)
                } else {
                    (listing_decl, sold.clone(), kb.listing)
                };
                out.push(update(decl, &before, &change, size, true)?);
            }
            out
        }
        "write review" => {
            let o = order(ids, true, OrderStatus::Delivered);
            let review = domain::model::Review {
                review_id: ids.review,
                reviewed_user_id: ids.seller.clone(),
                author_id: ids.buyer.clone(),
                order_id: ids.order,
                category_id: Some(ids.category.clone()),
                rating: 5,
                body: "Good".into(),
                created_at: NOW.into(),
            };
            let on_order = write::review::record_on_order(&ids.order, Party::Buyer, &ids.review, NOW)?;
            let rated = Change::of(keys::user(&ids.seller)?, NOW).add(write::attr::RATING_SUM, 5);
            let aggregate =
                update(&entities::user::ENTITY, &attrs(&user(&ids.seller, UserRole::Both)), &rated, kb.user, true)?;
            let mut out = vec![
                get(keys::order(&ids.order)?, kb.order, false),
                put(&review, kb.small, true)?,
                update(&entities::order::ENTITY, &attrs(&o), &on_order, kb.order, true)?,
                check(keys::user(&ids.seller)?, kb.user),
            ];
            out.extend(counted(keys::rating_marker(&ids.seller, &ids.review)?, aggregate));
            // The category's rating: its marker in one of the category's
            // marker shards, the aggregate in its own item (coalesced).
            let category_rating = small_write(keys::category_rating(&ids.category)?, kb.small, true);
            out.extend(counted(keys::category_rating_marker(&ids.category, &ids.review)?, category_rating));
            out
        }
        "get category" => vec![
            cached(get(keys::category(&ids.category)?, kb.small, false), 300.0),
            get(keys::category_rating(&ids.category)?, kb.small, false),
        ],
        other => {
            return Err(SchemaError::Field {
                entity: keyschema::table::EntityType::Listing,
                field: "request kind",
                value: other.to_owned(),
            })
        }
    })
}
