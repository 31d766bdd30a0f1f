//! Access patterns: each selects only its entity, renders from its own
//! request, and binds cursors to itself.

use domain::ids::{BrandId, CategoryId, Email, OrderId, UserId};
use domain::values::{ListingStatus, OrderStatus};
use proptest::prelude::*;

use super::records::any_record;
use crate::access::*;
use crate::entities;
use crate::patterns::{Request, PATTERNS};
use crate::query::KeyQuery;
use crate::table::EntityType;

fn ids() -> (BrandId, CategoryId, UserId, Email, OrderId) {
    (
        "acme".parse().unwrap(),
        "pottery".parse().unwrap(),
        "u1".parse().unwrap(),
        "a@b.co".parse().unwrap(),
        OrderId::generate(),
    )
}

/// Each query function paired with the entity it must return.
fn queries() -> Vec<(&'static str, KeyQuery, EntityType)> {
    let (b, c, u, e, o) = ids();
    let l = domain::ids::ListingId::generate();
    let q = |r: Result<KeyQuery, crate::SchemaError>| r.unwrap();
    vec![
        ("catalog AP1", q(brands()), EntityType::Brand),
        ("catalog AP2", q(categories()), EntityType::Category),
        ("catalog AP6", q(products_by_brand(&b)), EntityType::Product),
        ("catalog AP7", q(products_by_brand_and_category(&b, &c)), EntityType::Product),
        ("catalog AP8", q(products_by_category(&c)), EntityType::Product),
        ("catalog AP9", q(products_by_category_and_brand(&c, &b)), EntityType::Product),
        ("marketplace AP2", q(user_by_email(&e)), EntityType::User),
        ("marketplace AP4", q(seller_listings(&u, None)), EntityType::Listing),
        ("marketplace AP5", q(seller_listings(&u, Some(ListingStatus::Active))), EntityType::Listing),
        ("marketplace AP6", q(category_listings(&c, 2, Some((l, l)))), EntityType::Listing),
        ("beyond AP2", q(listings_by_price(&c, 1, (0, l), (100_000_000, l))), EntityType::Listing),
        ("marketplace AP8, e-commerce AP2", q(buyer_orders(&u)), EntityType::Order),
        ("marketplace AP9", q(seller_orders(&u)), EntityType::Order),
        ("marketplace AP10", q(reviews_about(&u)), EntityType::Review),
        ("marketplace AP11", q(reviews_by(&u)), EntityType::Review),
        ("e-commerce AP3", q(orders_by_status_shard(OrderStatus::Pending, 3, None)), EntityType::Order),
        ("e-commerce AP4", q(order_items(&o)), EntityType::OrderItem),
        ("beyond AP3", q(order_messages(&o)), EntityType::OrderMessage),
        ("beyond AP1", q(favorites_of(&u)), EntityType::Favorite),
        ("beyond AP4", q(listings_near("u4pr", None)), EntityType::Listing),
        ("e-commerce AP8", q(orders_by_status_shard(OrderStatus::Pending, 3, Some((o, o)))), EntityType::Order),
    ]
}

/// Every documented pattern renders from its own request: no sample is
/// left unreplaced, the index and entity agree with the query functions
/// the handlers call, and every query function is documented.
#[test]
fn patterns_render_from_their_requests() {
    for pattern in PATTERNS {
        let condition = pattern.condition().unwrap();
        assert!(!condition.contains("sample"), "{}: {condition}", pattern.id);
        assert!(!condition.contains("0000000"), "{}: {condition}", pattern.id);
    }
    for (id, q, entity) in queries() {
        let doc = PATTERNS.iter().find(|p| p.id == id).unwrap_or_else(|| panic!("{id} undocumented"));
        assert_eq!((doc.index().unwrap(), doc.entity), (q.index, entity), "{id}");
        let Request::Query(documented) = (doc.request)().unwrap() else { panic!("{id} is documented as a GetItem") };
        let shape = |q: &KeyQuery| {
            let kind = matches!(q.sk, SortKey::Between(..));
            (q.index, q.pk.split('#').next().map(str::to_owned), kind, q.newest_first)
        };
        assert_eq!(shape(&q), shape(&documented), "{id}");
    }
    let ap6 = PATTERNS.iter().find(|p| p.id == "catalog AP6").unwrap();
    assert_eq!(ap6.condition().unwrap(), "gsi1pk = BRAND#<brandId>, begins_with(gsi1sk, CATEGORY#)");
    let ap8 = PATTERNS.iter().find(|p| p.id == "e-commerce AP8").unwrap();
    assert_eq!(
        ap8.condition().unwrap(),
        "gsi3pk = STATUS#<status>#<shard>, gsi3sk BETWEEN ORDER#<low> AND ORDER#<high>, descending"
    );
    let price = PATTERNS.iter().find(|p| p.id == "beyond AP2").unwrap();
    assert_eq!(
        price.condition().unwrap(),
        "gsi3pk = PRICE#<categoryId>#<shard>, gsi3sk BETWEEN LISTING#<minCents>#<low> AND LISTING#<maxCents>#<high>"
    );
}

proptest! {
    /// A query never selects an item of another entity: a shared partition
    /// (such as GSI2's `CATEGORY#`) is split by sort-key prefix.
    #[test]
    fn queries_select_only_their_entity(r in any_record()) {
        let item = entities::of(r.entity).unwrap().item_keys(&r.attrs).unwrap();
        for (id, q, entity) in queries() {
            if item.entity != entity {
                prop_assert!(!q.selects(&item), "{id} selects a {:?}", item.entity);
            }
        }
    }
}

#[test]
fn fingerprints_differ_between_queries() {
    let qs = queries();
    for (i, (a, qa, _)) in qs.iter().enumerate() {
        for (b, qb, _) in &qs[i + 1..] {
            assert_ne!(qa.fingerprint(), qb.fingerprint(), "{a} vs {b}");
        }
    }
}
