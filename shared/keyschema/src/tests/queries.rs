//! Access patterns, from the registry ([`PATTERNS`]): ids unique, routes
//! in the contract, each query selects only its entity, renders from its own
//! request, and binds cursors to itself.

use proptest::prelude::*;

use super::records::any_record;
use crate::entities;
use crate::patterns::{Op, Request, PATTERNS, WRITES};
use crate::query::KeyQuery;
use crate::table::EntityType;

/// Every pattern's query as the registry builds it (with its samples),
/// with the entity it must return; a pattern that is a `GetItem` has none.
fn queries() -> Vec<(&'static str, KeyQuery, EntityType)> {
    PATTERNS
        .iter()
        .filter_map(|p| match (p.request)().unwrap() {
            Request::Query(q) => Some((p.id, q, p.entity)),
            Request::Get(_) => None,
        })
        .collect()
}

#[test]
fn ids_and_names_are_unique_and_routes_are_the_contracts() {
    let openapi = include_str!("../../../../openapi.yaml");
    let mut seen = std::collections::BTreeSet::new();
    for op in Op::ALL {
        assert!(seen.insert(op.id()), "{} is declared twice", op.id());
        assert!(op.name() == op.id() || seen.insert(op.name()), "{}: its name {} is taken", op.id(), op.name());
        assert_eq!(Op::named(op.name()), Some(*op), "{op:?}");
        assert_eq!(op.id().parse::<Op>(), Ok(*op), "{op:?}");
        let route = op.route();
        let (method, path) = route.split_once(' ').unwrap();
        let path = path.split('?').next().unwrap();
        let at = openapi.find(&format!("\n  {path}:\n")).unwrap_or_else(|| panic!("{}: no path {path}", op.id()));
        let next = openapi[at + 1..].find("\n  /").map_or(openapi.len(), |n| at + 1 + n);
        let method = format!("\n    {}:", method.to_lowercase());
        assert!(openapi[at..next].contains(&method), "{}: openapi.yaml has no {method} {path}", op.id());
    }
    // Each operation is one entry, a read or a write.
    assert_eq!(PATTERNS.len() + WRITES.len(), Op::ALL.len());
    assert!(Op::ALL.iter().all(|op| op.pattern().is_some() != WRITES.iter().any(|w| w.op == *op)));
    assert!("browse categories".parse::<Op>().is_err());
}

/// Every pattern renders from its own request: no sample id is left in its
/// key condition, and three renderings (a GSI1 prefix, a sharded status
/// range, a price range) are exactly as documented.
#[test]
fn patterns_render_from_their_requests() {
    for pattern in PATTERNS {
        let condition = pattern.condition().unwrap();
        assert!(!condition.contains("sample"), "{}: {condition}", pattern.id);
        assert!(!condition.contains("0000000"), "{}: {condition}", pattern.id);
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
        // Two patterns served by one query (all statuses' first shard) share it.
        for (b, qb, _) in qs[i + 1..].iter().filter(|(_, qb, _)| qb != qa) {
            assert_ne!(qa.fingerprint(), qb.fingerprint(), "{a} vs {b}");
        }
    }
}
