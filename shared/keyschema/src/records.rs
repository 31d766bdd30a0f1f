//! Random records of every entity, for the property tests of the key
//! design: each with the ids it was made of, its attributes and, for the
//! comparison with the key functions the declarations replaced, the keys
//! those gave. Test-only.

use domain::ids::{BrandId, CategoryId, Email, FavoriteId, ListingId, MessageId, OrderId, ProductId, ReviewId, UserId};
use domain::model::*;
use domain::shard::order_shard;
use proptest::prelude::*;
use ulid::Ulid;

use crate::entities::Entity;
use crate::legacy;
use crate::table::{EntityType, Index};
use crate::value::Attrs;

/// One random record.
#[derive(Clone, Debug)]
pub struct Record {
    /// Which entity.
    pub entity: EntityType,
    /// Its stored fields.
    pub attrs: Attrs,
    /// The ids its keys were made of.
    pub ids: Vec<String>,
    /// The keys the old functions gave it with every index it is in.
    pub legacy_all: Vec<(&'static str, String)>,
    /// The keys the old functions gave a write of it.
    pub legacy_written: Vec<(&'static str, String)>,
}

fn attrs_of_legacy(keys: &legacy::ItemKeys) -> Vec<(&'static str, String)> {
    Index::ALL
        .into_iter()
        .filter_map(|i| keys.on(i).map(|k| (i, k)))
        .flat_map(|(i, k)| [(i.pk(), k.pk.clone()), (i.sk(), k.sk.clone())])
        .collect()
}

fn record<E: Entity>(e: E, ids: Vec<String>, all: legacy::ItemKeys, written: legacy::ItemKeys) -> Record {
    Record {
        entity: E::DECL.entity,
        attrs: e.attrs().expect("records are objects"),
        ids,
        legacy_all: attrs_of_legacy(&all),
        legacy_written: attrs_of_legacy(&written),
    }
}

fn same<E: Entity>(e: E, ids: Vec<String>, keys: legacy::ItemKeys) -> Record {
    record(e, ids, keys.clone(), keys)
}

fn ulid() -> impl Strategy<Value = Ulid> {
    (0u64..(1 << 48), any::<u128>()).prop_map(|(t, r)| Ulid::from_parts(t, r))
}
fn slug() -> impl Strategy<Value = String> {
    "[a-z0-9-]{1,64}"
}
fn user() -> impl Strategy<Value = UserId> {
    "[A-Za-z0-9._:@|+-]{1,128}".prop_map(|s| s.parse().unwrap())
}
fn email() -> impl Strategy<Value = Email> {
    "[a-z0-9._+-]{1,30}@[a-z0-9-]{1,20}\\.[a-z]{2,6}".prop_map(|s| s.parse().unwrap())
}
fn money() -> impl Strategy<Value = Money> {
    (0..=Money::MAX_CENTS).prop_map(Money::from_cents)
}
fn listing_status() -> impl Strategy<Value = ListingStatus> {
    proptest::sample::select(ListingStatus::ALL.to_vec())
}
fn order_status() -> impl Strategy<Value = OrderStatus> {
    proptest::sample::select(OrderStatus::ALL.to_vec())
}
const T: &str = "2026-11-23T00:00:00.000Z";

/// Any record of any entity.
pub fn any_record() -> impl Strategy<Value = Record> {
    prop_oneof![
        (user(), email(), 0u64..100, 0u32..20).prop_map(|(u, e, sum, count)| {
            let keys = legacy::user::item_keys(&u, &e);
            let r = User {
                user_id: u.clone(),
                name: "N".into(),
                email: e.clone(),
                role: UserRole::Both,
                rating_sum: sum,
                review_count: count,
                created_at: T.into(),
                updated_at: T.into(),
            };
            same(r, vec![u.to_string(), e.to_string()], keys)
        }),
        (email(), user()).prop_map(|(e, u)| {
            let keys = legacy::ItemKeys::table_only(EntityType::EmailGuard, legacy::email_guard::key(&e));
            same(EmailGuard { email: e.clone(), user_id: u }, vec![e.to_string()], keys)
        }),
        (ulid(), user(), listing_status(), slug(), money()).prop_map(|(l, s, st, c, p)| {
            let (l, c): (ListingId, CategoryId) = (ListingId::from_ulid(l), c.parse().unwrap());
            let all = legacy::listing::browse_keys(&l, &s, st, &c, p);
            let written = legacy::listing::item_keys(&l, &s, st);
            let r = Listing {
                listing_id: l,
                seller_id: s.clone(),
                title: "T".into(),
                price: p,
                category_id: c.clone(),
                description: None,
                status: st,
                favorite_count: 0,
                created_at: T.into(),
                updated_at: T.into(),
            };
            record(
                r,
                vec![l.to_string(), s.to_string(), st.to_string(), c.to_string(), format!("{:010}", p.cents())],
                all,
                written,
            )
        }),
        (ulid(), user(), proptest::option::of(user()), order_status(), 1u16..=64, proptest::option::of(ulid()))
            .prop_map(|(o, b, s, st, n, r)| {
                let o = OrderId::from_ulid(o);
                let keys = legacy::order::item_keys(&o, &b, s.as_ref(), st, n);
                let mut ids = vec![o.to_string(), b.to_string(), st.to_string(), order_shard(&o, n).to_string()];
                ids.extend(s.as_ref().map(|s| s.to_string()));
                let (review, listing) = (r.map(ReviewId::from_ulid), r.map(ListingId::from_ulid));
                let r = Order {
                    order_id: o,
                    buyer_id: b,
                    seller_id: s,
                    listing_id: listing,
                    status: st,
                    total: Money::from_cents(1),
                    lines: vec![],
                    shard: order_shard(&o, n),
                    buyer_review_id: review,
                    seller_review_id: review,
                    created_at: T.into(),
                    updated_at: T.into(),
                };
                same(r, ids, keys)
            }),
        (ulid(), ulid(), user()).prop_map(|(o, p, b)| {
            let (o, p) = (OrderId::from_ulid(o), ProductId::from_ulid(p));
            let keys = legacy::ItemKeys::table_only(EntityType::OrderItem, legacy::order_item::key(&o, &p.to_string()));
            let r = OrderItem {
                order_id: o,
                item_id: p.to_string(),
                name: "N".into(),
                qty: 1,
                price: Money::from_cents(1),
                buyer_id: b,
                seller_id: None,
            };
            same(r, vec![o.to_string(), p.to_string()], keys)
        }),
        (user(), user(), ulid(), ulid()).prop_map(|(r, a, id, o)| {
            let id = ReviewId::from_ulid(id);
            let keys = legacy::review::item_keys(&r, &a, &id);
            let rec = Review {
                review_id: id,
                reviewed_user_id: r.clone(),
                author_id: a.clone(),
                order_id: OrderId::from_ulid(o),
                rating: 4,
                body: "B".into(),
                created_at: T.into(),
            };
            same(rec, vec![r.to_string(), a.to_string(), id.to_string()], keys)
        }),
        (user(), ulid(), ulid()).prop_map(|(u, l, f)| {
            let (l, f) = (ListingId::from_ulid(l), FavoriteId::from_ulid(f));
            let keys = legacy::favorite::item_keys(&u, &l, &f);
            same(
                Favorite { user_id: u.clone(), listing_id: l, favorite_id: f, created_at: T.into() },
                vec![u.to_string(), l.to_string(), f.to_string()],
                keys,
            )
        }),
        (user(), ulid(), ulid()).prop_map(|(u, l, f)| {
            let (l, f) = (ListingId::from_ulid(l), FavoriteId::from_ulid(f));
            let keys = legacy::ItemKeys::table_only(EntityType::FavoriteMarker, legacy::favorite_marker::key(&u, &l));
            let r = FavoriteMarker {
                user_id: u.clone(),
                listing_id: l,
                version: f,
                state: MarkerState::Counted,
                weight: 1,
            };
            same(r, vec![u.to_string(), l.to_string()], keys)
        }),
        (ulid(), ulid(), user(), user()).prop_map(|(o, m, b, s)| {
            let (o, m) = (OrderId::from_ulid(o), MessageId::from_ulid(m));
            let keys = legacy::ItemKeys::table_only(EntityType::OrderMessage, legacy::order_message::key(&o, &m));
            let r = OrderMessage {
                message_id: m,
                order_id: o,
                author_id: b.clone(),
                body: "B".into(),
                buyer_id: b,
                seller_id: s,
                created_at: T.into(),
            };
            same(r, vec![o.to_string(), m.to_string()], keys)
        }),
        (user(), ulid()).prop_map(|(u, r)| {
            let r = ReviewId::from_ulid(r);
            let keys = legacy::ItemKeys::table_only(EntityType::RatingMarker, legacy::rating_marker::key(&u, &r));
            same(
                RatingMarker { review_id: r, reviewed_user_id: u.clone(), state: MarkerState::Counted, weight: 3 },
                vec![u.to_string(), r.to_string()],
                keys,
            )
        }),
        (user(), "[a-z]{1,10}", "[A-Za-z0-9_-]{1,64}").prop_map(|(u, route, k)| {
            let keys = legacy::ItemKeys::table_only(EntityType::Idempotency, legacy::idempotency::key(&u, &route, &k));
            let r = IdempotencyRecord {
                caller_id: u.clone(),
                route: route.clone(),
                key: k.clone(),
                request_hash: "h".into(),
                order_id: None,
                expires_at: 1,
            };
            same(r, vec![u.to_string(), route, k], keys)
        }),
        slug().prop_map(|b| {
            let b: BrandId = b.parse().unwrap();
            let keys = legacy::ItemKeys::table_only(EntityType::Brand, legacy::brand::key(&b));
            same(Brand { brand_id: b.clone(), name: "N".into(), created_at: T.into() }, vec![b.to_string()], keys)
        }),
        slug().prop_map(|c| {
            let c: CategoryId = c.parse().unwrap();
            let keys = legacy::ItemKeys::table_only(EntityType::Category, legacy::category::key(&c));
            same(Category { category_id: c.clone(), name: "N".into(), created_at: T.into() }, vec![c.to_string()], keys)
        }),
        (ulid(), slug(), slug(), money()).prop_map(|(p, b, c, price)| {
            let (p, b, c): (ProductId, BrandId, CategoryId) =
                (ProductId::from_ulid(p), b.parse().unwrap(), c.parse().unwrap());
            let keys = legacy::product::item_keys(&p, &b, &c);
            let r = Product {
                product_id: p,
                name: "N".into(),
                brand_id: b.clone(),
                category_id: c.clone(),
                price,
                stock_level: 3,
                description: None,
                created_at: T.into(),
                updated_at: T.into(),
            };
            same(r, vec![p.to_string(), b.to_string(), c.to_string()], keys)
        }),
    ]
}
