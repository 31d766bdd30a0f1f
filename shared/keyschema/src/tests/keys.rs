//! Keys derived from the declarations: each matching its template and no
//! other entity's, parsing back into its ids, each composite a field of its
//! entity.

use proptest::prelude::*;
use proptest::strategy::ValueTree;

use super::records::{any_record, Record};
use crate::entities::{self, ALL};
use crate::table::{EntityType, Index};
use crate::template;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Every key matches its own template, no other entity's template on
    /// that index, and parses back into the ids it was made of.
    #[test]
    fn keys_follow_templates_and_round_trip(r in any_record()) {
        let Record { entity, attrs, ids, .. } = r;
        let decl = entities::of(entity).expect("declared");
        let keys = decl.item_keys(&attrs).unwrap();
        for (index, key) in &keys.keys {
            let declared = if *index == Index::Table { decl.key } else { decl.indexes.iter().find(|i| i.key.index == *index).unwrap().key };
            let mut captured = template::matches(declared.pk, &key.pk).expect("pk matches its template");
            captured.extend(template::matches(declared.sk, &key.sk).expect("sk matches its template"));
            for c in &captured {
                prop_assert!(ids.iter().any(|id| id == c), "{c} is not one of {ids:?}");
            }
            for other in ALL.iter().filter(|o| o.entity != entity) {
                let on = std::iter::once(other.key).chain(other.indexes.iter().map(|i| i.key)).filter(|k| k.index == *index);
                for k in on {
                    let both = template::matches(k.pk, &key.pk).is_some() && template::matches(k.sk, &key.sk).is_some();
                    prop_assert!(!both, "{entity:?} key {key:?} reads as {:?}", other.entity);
                }
            }
        }
    }
}

#[test]
fn every_entity_is_declared_once() {
    for entity in EntityType::ALL {
        assert_eq!(ALL.iter().filter(|d| d.entity == *entity).count(), 1, "{entity:?}");
    }
    assert_eq!(ALL.len(), EntityType::ALL.len());
}

/// No key pair of one entity can be read as another's on the same index,
/// and no entity joins one index twice.
#[test]
fn no_two_entities_collide_within_an_index() {
    for index in Index::ALL {
        let on: Vec<_> = ALL
            .iter()
            .flat_map(|d| std::iter::once(d.key).chain(d.indexes.iter().map(|i| i.key)).map(move |k| (d.entity, k)))
            .filter(|(_, k)| k.index == index)
            .collect();
        for (i, (ea, ka)) in on.iter().enumerate() {
            for (eb, kb) in &on[i + 1..] {
                let both = template::overlap(ka.pk, kb.pk) && template::overlap(ka.sk, kb.sk);
                assert!(!both, "{ea:?} and {eb:?} collide on {index}");
            }
        }
    }
}

/// Every composite and sparse condition names a field its entity is
/// stored with (the serde name), so no template can read a field that is
/// not there.
#[test]
fn every_composite_is_a_field_of_its_entity() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for decl in ALL {
        let fields: std::collections::BTreeSet<String> = (0..200)
            .filter_map(|_| {
                let r = any_record().new_tree(&mut runner).unwrap().current();
                (r.entity == decl.entity).then_some(r.attrs.into_keys())
            })
            .flatten()
            .collect();
        let mut used = decl.key.fields();
        for index in decl.indexes {
            used.extend(index.fields());
        }
        for field in used {
            assert!(fields.contains(field), "{:?} has no field `{field}` (it has {fields:?})", decl.entity);
        }
    }
}
