//! Random records of every entity, for the property tests of the key
//! design: each with the ids it was made of and its attributes. Test-only.

use crate::records::*;
use domain::ids::{BrandId, CategoryId, Email, FavoriteId, ListingId, MessageId, OrderId, ProductId, ReviewId, UserId};
use domain::model::*;
use domain::shard::order_shard;
use domain::stock::ProductStock;
use proptest::prelude::*;
use ulid::Ulid;

use crate::entity::Entity;
use crate::table::EntityType;
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
}

fn same<E: Entity>(e: E, ids: Vec<String>) -> Record {
    Record { entity: E::DECL.entity, attrs: e.attrs().expect("records are objects"), ids }
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
            let r = User {
                home: None,
                user_id: u.clone(),
                name: "N".into(),
                email: e.clone(),
                role: UserRole::Both,
                rating_sum: sum,
                review_count: count,
                created_at: T.into(),
                updated_at: T.into(),
            };
            same(r, vec![u.to_string(), e.to_string()])
        }),
        (email(), user()).prop_map(|(e, u)| { same(EmailGuard { email: e.clone(), user_id: u }, vec![e.to_string()]) }),
        (ulid(), user(), listing_status(), slug(), money(), 0u16..16, (-90.0f64..=90.0, -180.0f64..=180.0)).prop_map(
            |(l, s, st, c, p, n, (lat, lon))| {
                let at = domain::geo::Location::new(lat, lon).unwrap();
                let hash = at.geohash(domain::geo::HASH_LEN);
                let (l, c): (ListingId, CategoryId) = (ListingId::from_ulid(l), c.parse().unwrap());
                let r = Listing {
                    home: None,
                    listing_id: l,
                    seller_id: s.clone(),
                    title: "T".into(),
                    price: p,
                    category_id: c.clone(),
                    shard: n,
                    description: None,
                    location: None,
                    geohash: None,
                    status: st,
                    favorite_count: 0,
                    created_at: T.into(),
                    updated_at: T.into(),
                }
                .locate(Some(at));
                let ids =
                    vec![l.to_string(), s.to_string(), st.to_string(), c.to_string(), format!("{:010}", p.cents())];
                same(r, [ids, vec![n.to_string(), hash.clone(), hash[..3].to_owned()]].concat())
            }
        ),
        (ulid(), user(), proptest::option::of(user()), order_status(), 1u16..=64, proptest::option::of(ulid()))
            .prop_map(|(o, b, s, st, n, r)| {
                let o = OrderId::from_ulid(o);
                let mut ids = vec![o.to_string(), b.to_string(), st.to_string(), order_shard(&o, n).to_string()];
                ids.extend(s.as_ref().map(|s| s.to_string()));
                let (review, listing) = (r.map(ReviewId::from_ulid), r.map(ListingId::from_ulid));
                let r = Order {
                    home: None,
                    order_id: o,
                    buyer_id: b,
                    seller_id: s,
                    listing_id: listing,
                    category_id: None,
                    status: st,
                    total: Money::from_cents(1),
                    lines: vec![],
                    shard: order_shard(&o, n),
                    buyer_review_id: review,
                    seller_review_id: review,
                    held_items: Vec::new(),
                    created_at: T.into(),
                    updated_at: T.into(),
                };
                same(r, ids)
            }),
        (ulid(), ulid(), user()).prop_map(|(o, p, b)| {
            let (o, p) = (OrderId::from_ulid(o), ProductId::from_ulid(p));
            let r = OrderItem {
                order_id: o,
                item_id: p.to_string(),
                name: "N".into(),
                qty: 1,
                price: Money::from_cents(1),
                buyer_id: b,
                seller_id: None,
            };
            same(r, vec![o.to_string(), p.to_string()])
        }),
        (user(), user(), ulid(), ulid()).prop_map(|(r, a, id, o)| {
            let id = ReviewId::from_ulid(id);
            let rec = Review {
                home: None,
                review_id: id,
                reviewed_user_id: r.clone(),
                author_id: a.clone(),
                order_id: OrderId::from_ulid(o),
                category_id: None,
                rating: 4,
                body: "B".into(),
                created_at: T.into(),
            };
            same(rec, vec![r.to_string(), a.to_string(), id.to_string()])
        }),
        (user(), ulid(), ulid()).prop_map(|(u, l, f)| {
            let (l, f) = (ListingId::from_ulid(l), FavoriteId::from_ulid(f));
            same(
                Favorite {
                    user_id: u.clone(),
                    listing_id: l,
                    favorite_id: f,
                    listing_home: None,
                    created_at: T.into(),
                },
                vec![u.to_string(), l.to_string(), f.to_string()],
            )
        }),
        (user(), ulid(), ulid()).prop_map(|(u, l, f)| {
            let (l, f) = (ListingId::from_ulid(l), FavoriteId::from_ulid(f));
            let shard = domain::shard::favorite_marker_shard(&u);
            let r = FavoriteMarker {
                user_id: u.clone(),
                listing_id: l,
                shard,
                version: f,
                state: MarkerState::Counted,
                weight: 1,
            };
            same(r, vec![u.to_string(), l.to_string(), shard.to_string()])
        }),
        (ulid(), ulid(), user(), user()).prop_map(|(o, m, b, s)| {
            let (o, m) = (OrderId::from_ulid(o), MessageId::from_ulid(m));
            let r = OrderMessage {
                message_id: m,
                order_id: o,
                author_id: b.clone(),
                body: "B".into(),
                buyer_id: b,
                seller_id: s,
                created_at: T.into(),
            };
            same(r, vec![o.to_string(), m.to_string()])
        }),
        (user(), ulid()).prop_map(|(u, r)| {
            let r = ReviewId::from_ulid(r);
            same(
                RatingMarker { review_id: r, reviewed_user_id: u.clone(), state: MarkerState::Counted, weight: 3 },
                vec![u.to_string(), r.to_string()],
            )
        }),
        (slug(), 0u64..1000).prop_map(|(c, sum)| {
            let c: CategoryId = c.parse().unwrap();
            same(CategoryRating { category_id: c.clone(), rating_sum: sum, review_count: 1 }, vec![c.to_string()])
        }),
        (slug(), user(), ulid()).prop_map(|(c, u, r)| {
            let (c, r): (CategoryId, ReviewId) = (c.parse().unwrap(), ReviewId::from_ulid(r));
            let shard = domain::shard::category_rating_marker_shard(&r);
            let m = CategoryRatingMarker {
                review_id: r,
                reviewed_user_id: u,
                category_id: c.clone(),
                shard,
                state: MarkerState::Counted,
                weight: 3,
            };
            same(m, vec![c.to_string(), r.to_string(), shard.to_string()])
        }),
        (user(), user(), ulid()).prop_map(|(u, a, r)| {
            let week = domain::time::iso_week(r.timestamp_ms());
            let slot = Slot { reviews: [(ReviewId::from_ulid(r), 4)].into(), gone: Default::default(), rev: 1 };
            let s = RatingSlot { reviewed_user_id: u.clone(), author_id: a.clone(), week: week.clone(), slot };
            same(s, vec![u.to_string(), a.to_string(), week])
        }),
        (slug(), user(), user(), ulid()).prop_map(|(c, u, a, r)| {
            let c: CategoryId = c.parse().unwrap();
            let week = domain::time::iso_week(r.timestamp_ms());
            let shard = domain::shard::category_rating_slot_shard(&a);
            let pair = RatingSlot {
                reviewed_user_id: u.clone(),
                author_id: a.clone(),
                week: week.clone(),
                slot: Slot::default(),
            };
            let s = CategoryRatingSlot { category_id: c.clone(), shard, pair };
            same(s, vec![c.to_string(), shard.to_string(), a.to_string(), u.to_string(), week])
        }),
        (slug(), "[a-zà-ÿ0-9]{1,12}\\*?", ulid()).prop_map(|(c, term, l)| {
            let (c, l): (CategoryId, ListingId) = (c.parse().unwrap(), ListingId::from_ulid(l));
            let p = Posting { term: term.clone(), listing_id: l, words: "blue mug".into(), category_id: c };
            same(p, vec![term, l.to_string()])
        }),
        (user(), "[a-z]{1,10}", "[A-Za-z0-9_-]{1,64}").prop_map(|(u, route, k)| {
            let r = IdempotencyRecord {
                caller_id: u.clone(),
                route: route.clone(),
                key: k.clone(),
                request_hash: "h".into(),
                order_id: None,
                listing_id: None,
                expires_at: 1,
            };
            same(r, vec![u.to_string(), route, k])
        }),
        (slug(), 0u16..128, -5i64..5).prop_map(|(of, part, count)| {
            let r = AggregatePart {
                aggregate: "favorites".into(),
                of: of.clone(),
                part,
                sum: 0,
                count,
                rev: 1,
                home: None,
            };
            same(r, vec!["favorites".into(), of, part.to_string()])
        }),
        ("[0-9b-hjkmnp-z]{4}", "[0-9b-hjkmnp-z]").prop_map(|(dense, rest)| {
            let cell = format!("{dense}{rest}");
            same(NearCell { dense: dense.clone(), cell: cell.clone() }, vec![dense, cell])
        }),
        ("[a-z]{1,10}", 0u16..64, proptest::option::of("[a-z]{1,10}")).prop_map(|(job, segment, after)| {
            let r = Checkpoint { job: job.clone(), segment, segments: 64, after, updated_at: T.into() };
            same(r, vec![job, segment.to_string()])
        }),
        slug().prop_map(|b| {
            let b: BrandId = b.parse().unwrap();
            same(Brand { brand_id: b.clone(), name: "N".into(), created_at: T.into() }, vec![b.to_string()])
        }),
        slug().prop_map(|c| {
            let c: CategoryId = c.parse().unwrap();
            let r = Category {
                category_id: c.clone(),
                name: "N".into(),
                listing_shards: 1,
                listing_shards_before: None,
                listing_shards_from: None,
                created_at: T.into(),
            };
            same(r, vec![c.to_string()])
        }),
        (ulid(), slug(), slug(), money()).prop_map(|(p, b, c, price)| {
            let (p, b, c): (ProductId, BrandId, CategoryId) =
                (ProductId::from_ulid(p), b.parse().unwrap(), c.parse().unwrap());
            let r = Product {
                product_id: p,
                name: "N".into(),
                brand_id: b.clone(),
                category_id: c.clone(),
                price,
                stock_level: 3,
                stock_shards: 4,
                description: None,
                created_at: T.into(),
                updated_at: T.into(),
            };
            same(r, vec![p.to_string(), b.to_string(), c.to_string()])
        }),
        (ulid(), 1u16..=64, money()).prop_map(|(p, shard, price)| {
            let product_id = ProductId::from_ulid(p);
            let r = ProductStock { product_id, shard, stock_level: 7, price, updated_at: T.into() };
            same(r, vec![p.to_string(), shard.to_string()])
        }),
        (ulid(), "\\PC{0,40}").prop_map(|(l, d)| {
            let listing_id = ListingId::from_ulid(l);
            same(ListingDetails { listing_id, description: d }, vec![l.to_string()])
        }),
        (ulid(), "\\PC{0,40}").prop_map(|(p, d)| {
            let product_id = ProductId::from_ulid(p);
            same(ProductDetails { product_id, description: d }, vec![p.to_string()])
        }),
    ]
}
