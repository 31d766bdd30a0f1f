//! State changes: each carries exactly the key moves its entity's
//! declaration says, every attribute it touches is a field of its entity,
//! and stock never leaves its bounds.

use std::collections::BTreeMap;

use domain::ids::{CategoryId, Email, ListingId, OrderId, ProductId, ReviewId, UserId};
use domain::model::{ListingStatus, Money, OrderStatus, Party, Product};
use domain::shard::order_shard;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use ulid::Ulid;

use super::records::any_record;
use crate::change::{Change, Cond, UPDATED_AT};
use crate::entities::{self, ALL};
use crate::table::{EntityType, Index};
use crate::template;
use crate::value::{Attrs, Value};
use crate::write::{self, attr};

const NOW: &str = "2026-11-22T00:00:00.000Z";

/// A stored item: fields and the keys the declaration gives them (`all`:
/// with the stream-kept ones too).
/// The item of `fields` with every key its declaration gives it (`all`),
/// or those a change by a write leaves it with (the stream processor moves
/// and adds back the others: a listing's browse keys).
fn stored(entity: EntityType, fields: Attrs, all: bool) -> Attrs {
    let decl = entities::of(entity).unwrap();
    let mut keys = decl.item_keys(&fields).unwrap();
    if !all {
        let by_stream: Vec<_> = decl.indexes.iter().filter(|i| !i.kept.moves.by_write()).map(|i| i.key.index).collect();
        keys.keys.retain(|index, _| !by_stream.contains(index));
    }
    let mut item = fields;
    item.extend(keys.attributes().map(|(a, v)| (a.to_owned(), Value::s(v))));
    item
}

fn keys_of(item: &Attrs) -> BTreeMap<String, Value> {
    Index::all_key_attributes().filter_map(|a| item.get(a).map(|v| (a.to_owned(), v.clone()))).collect()
}

fn listing_status() -> impl Strategy<Value = ListingStatus> {
    proptest::sample::select(ListingStatus::ALL.to_vec())
}
fn user_id() -> impl Strategy<Value = UserId> {
    "[A-Za-z0-9._:@|+-]{1,40}".prop_map(|s| s.parse().unwrap())
}
fn email() -> impl Strategy<Value = Email> {
    "[a-z0-9._+-]{1,20}@[a-z0-9-]{1,10}\\.[a-z]{2,4}".prop_map(|s| s.parse().unwrap())
}
fn allowed_order_moves() -> impl Strategy<Value = (OrderStatus, OrderStatus)> {
    let all = OrderStatus::ALL.iter().flat_map(|a| OrderStatus::ALL.iter().map(move |b| (*a, *b)));
    proptest::sample::select(all.filter(|(a, b)| a.can_become(*b)).collect::<Vec<_>>())
}

proptest! {
    /// A listing in any status (its browse keys added by the stream or not
    /// yet), moved by any change: afterwards its written keys are exactly
    /// those of its new status, and browse keys only if active (then the
    /// right ones) - the write removes them when it leaves active.
    #[test]
    fn listing_status_changes_carry_their_keys(
        id in any::<u128>(), seller in user_id(), category in "[a-z0-9-]{1,20}",
        from in listing_status(), to in listing_status(), indexed in any::<bool>(), how in 0..3u8,
    ) {
        let (id, category): (ListingId, CategoryId) = (ListingId::from_ulid(Ulid(id)), category.parse().unwrap());
        let price = Money::from_cents(2800);
        let fields = write::listing::image(&id, &seller, &category, from, price);
        let mut item = stored(EntityType::Listing, fields, indexed);
        let change = match how {
            0 if to != ListingStatus::Sold => write::listing::set_status(&id, &seller, to, NOW).unwrap()
                .only_if(Cond::Ne(attr::STATUS, Value::s("sold"))),
            0 => return Ok(()),
            1 => write::listing::move_status(&id, &seller, from, to, NOW).unwrap(),
            _ => write::listing::sell(&id, &seller, price, NOW).unwrap(),
        };
        let applied = change.apply(&mut item);
        prop_assert_eq!(applied, match how { 0 => from != ListingStatus::Sold, 1 => true, _ => from == ListingStatus::Active });
        let now = item["status"].text().parse::<ListingStatus>().unwrap();
        let expected_written = stored(EntityType::Listing, write::listing::image(&id, &seller, &category, now, price), false);
        let browse = |a: &String| a.starts_with("gsi2") || a.starts_with("gsi3");
        let have = keys_of(&item);
        let written: BTreeMap<_, _> = have.iter().filter(|(a, _)| !browse(a)).map(|(a, v)| (a.clone(), v.clone())).collect();
        prop_assert_eq!(written, keys_of(&expected_written));
        let browsed: Vec<_> = have.keys().filter(|a| browse(a)).collect();
        if now == ListingStatus::Active && !browsed.is_empty() {
            let all = stored(EntityType::Listing, write::listing::image(&id, &seller, &category, now, price), true);
            prop_assert_eq!(have, keys_of(&all));
        } else {
            prop_assert!(browsed.is_empty() || now == ListingStatus::Active, "a {} listing left in browse", now);
        }
    }

    /// A seller's edit with a price, from any status (its browse keys
    /// added by the stream or not yet), with or without a status: the write
    /// moves the price's sort key itself, so an active listing in the index
    /// is at its new price at once and the stream processor has nothing to
    /// write; one out of it stays out (a sort key alone joins nothing), and
    /// the stream's repair adds both keys if it is active.
    #[test]
    fn a_price_edit_moves_the_price_key_in_its_write(
        id in any::<u128>(), seller in user_id(), category in "[a-z0-9-]{1,20}",
        from in listing_status(), to in proptest::option::of(listing_status()), indexed in any::<bool>(),
        cents in 1u64..=9_999_999_999,
    ) {
        use crate::decl::Keeper;
        let (id, category): (ListingId, CategoryId) = (ListingId::from_ulid(Ulid(id)), category.parse().unwrap());
        let (old, new) = (Money::from_cents(2800), Money::from_cents(cents));
        let decl = &entities::listing::ENTITY;
        let mut item = stored(EntityType::Listing, write::listing::image(&id, &seller, &category, from, old), indexed);
        let edit = write::listing::edit(&id, &seller, to, Some("A pot"), Some(new), NOW).unwrap();
        prop_assert!(edit.apply(&mut item));
        let now = to.unwrap_or(from);
        let right = stored(EntityType::Listing, write::listing::image(&id, &seller, &category, now, new), true);
        let in_index = now == ListingStatus::Active && item.contains_key("gsi3pk");
        if in_index {
            prop_assert_eq!(keys_of(&item), keys_of(&right));
            prop_assert_eq!(decl.repair(&item, Keeper::Stream).unwrap(), None, "nothing left to the stream");
        } else {
            prop_assert!(!item.contains_key("gsi3pk"), "out of the index, it stays out");
            if let Some(repair) = decl.repair(&item, Keeper::Stream).unwrap() {
                prop_assert!(repair.apply(&mut item));
            }
            prop_assert_eq!(item.get("gsi3pk"), right.get("gsi3pk"));
            if now == ListingStatus::Active {
                prop_assert_eq!(keys_of(&item), keys_of(&right), "the stream adds both keys");
            }
            prop_assert_eq!(decl.repair(&item, Keeper::Both).unwrap(), None, "and then nothing churns");
        }
    }

    /// An order moved along any allowed transition carries exactly the
    /// keys of its new status (by_status in the shard it was placed in).
    #[test]
    fn order_status_changes_carry_their_keys(
        id in any::<u128>(), buyer in user_id(), seller in proptest::option::of(user_id()),
        (from, to) in allowed_order_moves(), shards in 1u16..=100,
    ) {
        let id = OrderId::from_ulid(Ulid(id));
        let shard = order_shard(&id, shards);
        let fields = |status: OrderStatus| {
            let mut f: Attrs = [("orderId", id.to_string()), ("buyerId", buyer.to_string()), ("status", status.to_string())]
                .into_iter().map(|(k, v)| (k.to_owned(), Value::s(v))).collect();
            f.insert("shard".into(), Value::n(shard));
            if let Some(s) = &seller { f.insert("sellerId".into(), Value::s(s.to_string())); }
            f
        };
        let mut item = stored(EntityType::Order, fields(from), false);
        prop_assert!(write::order::move_status(&id, shard, from, to, NOW).unwrap().apply(&mut item));
        prop_assert_eq!(keys_of(&item), keys_of(&stored(EntityType::Order, fields(to), false)));
        prop_assert!(!write::order::move_status(&id, shard, from, to, NOW).unwrap().apply(&mut item), "a stale second application");
    }

    /// An email change moves the user's by_email key and nothing else.
    #[test]
    fn email_changes_carry_their_keys(id in user_id(), old in email(), new in email()) {
        let fields = |e: &Email| -> Attrs { [("userId", Value::s(id.to_string())), ("email", Value::s(e.to_string()))].into_iter().map(|(k, v)| (k.to_owned(), v)).collect() };
        let mut item = stored(EntityType::User, fields(&old), false);
        prop_assert!(write::user::change_email(&id, &old, &new, NOW).unwrap().apply(&mut item));
        prop_assert_eq!(keys_of(&item), keys_of(&stored(EntityType::User, fields(&new), false)));
    }

    /// Stock never leaves `0..=MAX_STOCK`, whatever the delta.
    #[test]
    fn stock_stays_in_bounds(stock in 0..=Product::MAX_STOCK, delta in any::<i64>(), small in -2000i64..2000) {
        let id = ProductId::from_ulid(Ulid(7));
        for delta in [delta, small] {
            let item = || -> Attrs { [("pk".to_owned(), Value::s("P")), (attr::STOCK_LEVEL.to_owned(), Value::n(stock))].into() };
            let mut stored = item();
            match write::product::change_stock(&id, delta).unwrap() {
                Some(change) => {
                    let after = i128::from(stock) + i128::from(delta);
                    prop_assert_eq!(change.apply(&mut stored), (0..=i128::from(Product::MAX_STOCK)).contains(&after));
                }
                None => prop_assert!(delta.unsigned_abs() > u64::from(Product::MAX_STOCK)),
            }
            let mut restocked = item();
            let qty = u32::try_from(small.unsigned_abs()).unwrap();
            prop_assert_eq!(write::product::restock(&id, qty).unwrap().apply(&mut restocked), stock + qty <= Product::MAX_STOCK);
        }
    }
}

#[test]
fn selling_needs_the_price_read_and_an_active_listing() {
    let (id, seller, category) =
        (ListingId::from_ulid(Ulid(1)), "alice".parse::<UserId>().unwrap(), "pots".parse().unwrap());
    let mut item = stored(
        EntityType::Listing,
        write::listing::image(&id, &seller, &category, ListingStatus::Active, Money::from_cents(2800)),
        true,
    );
    assert!(!write::listing::sell(&id, &seller, Money::from_cents(2700), NOW).unwrap().apply(&mut item));
    assert!(write::listing::sell(&id, &seller, Money::from_cents(2800), NOW).unwrap().apply(&mut item));
    assert!(!item.contains_key("gsi2pk") && !item.contains_key("gsi3sk"), "the sale removed the browse keys");
    assert!(!write::listing::sell(&id, &seller, Money::from_cents(2800), NOW).unwrap().apply(&mut item), "sold once");
}

/// Every business change, with the entity it writes to.
fn every_change() -> Vec<(EntityType, Change)> {
    let (l, o, p, r) = (
        ListingId::from_ulid(Ulid(1)),
        OrderId::from_ulid(Ulid(2)),
        ProductId::from_ulid(Ulid(3)),
        ReviewId::from_ulid(Ulid(4)),
    );
    let (u, e): (UserId, Email) = ("u".parse().unwrap(), "a@b.co".parse().unwrap());
    let m = Money::from_cents(100);
    let mut out = vec![];
    for to in ListingStatus::ALL {
        out.push((EntityType::Listing, write::listing::set_status(&l, &u, *to, NOW).unwrap()));
    }
    out.push((EntityType::Listing, write::listing::sell(&l, &u, m, NOW).unwrap()));
    for to in [None, Some(ListingStatus::Active), Some(ListingStatus::Removed)] {
        out.push((EntityType::Listing, write::listing::edit(&l, &u, to, Some("T"), Some(m), NOW).unwrap()));
    }
    for from in OrderStatus::ALL {
        for to in OrderStatus::ALL {
            out.push((EntityType::Order, write::order::move_status(&o, 3, *from, *to, NOW).unwrap()));
        }
    }
    out.push((EntityType::Order, write::review::record_on_order(&o, Party::Buyer, &r, NOW).unwrap()));
    out.push((EntityType::Order, write::review::record_on_order(&o, Party::Seller, &r, NOW).unwrap()));
    out.push((EntityType::User, write::user::change_email(&u, &e, &e, NOW).unwrap()));
    out.push((EntityType::User, write::user::rename(&u, "N", NOW).unwrap()));
    out.push((EntityType::User, write::user::become_seller(&u, NOW).unwrap()));
    out.push((EntityType::Product, write::product::change_stock(&p, -3).unwrap().unwrap()));
    out.push((EntityType::Product, write::product::take_for_order(&p, 2, m).unwrap()));
    out.push((EntityType::Product, write::product::restock(&p, 2).unwrap()));
    out
}

/// Every attribute a change sets, removes, adds or conditions on is a
/// field of the entity it writes to (its serde name), a key attribute of
/// an index the entity joins, or `updatedAt`: a misspelled attribute fails
/// here, not in an integration test.
#[test]
fn every_change_touches_only_fields_of_its_entity() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut fields: BTreeMap<EntityType, std::collections::BTreeSet<String>> = BTreeMap::new();
    for _ in 0..300 {
        let r = any_record().new_tree(&mut runner).unwrap().current();
        fields.entry(r.entity).or_default().extend(r.attrs.into_keys());
    }
    for (entity, change) in every_change() {
        let decl = entities::of(entity).unwrap();
        assert!(template::matches(decl.key.pk, &change.key.pk).is_some(), "{entity:?}: {:?}", change.key);
        let indexes: Vec<&str> = decl.indexes.iter().flat_map(|i| [i.key.index.pk(), i.key.index.sk()]).collect();
        for a in change.attributes() {
            let ok = fields[&entity].contains(a) || indexes.contains(&a) || a == UPDATED_AT;
            assert!(ok, "{entity:?}: a change touches `{a}`, which is not one of its fields");
        }
    }
    assert!(ALL.len() > 10);
}

/// A change that sets part of an index's fields without knowing the rest
/// is refused, and so is one that changes the primary key.
#[test]
fn incomplete_changes_are_refused() {
    use crate::decl::SchemaError;
    let decl = &entities::listing::ENTITY;
    let known: Attrs = [("listingId".to_owned(), Value::s("L"))].into();
    let change = Change::of(crate::key::Key::new("LISTING#L", "#METADATA"), NOW).set(attr::STATUS, Value::s("sold"));
    let refused = decl.with_key_moves(change.clone(), &known);
    assert!(
        matches!(refused, Err(SchemaError::Incomplete { index: "by_seller", missing: "sellerId", .. })),
        "{refused:?}"
    );
    let mut known = known;
    known.insert("sellerId".into(), Value::s("s"));
    let moved = decl.with_key_moves(change, &known).unwrap();
    assert_eq!(
        moved.remove,
        ["gsi2pk", "gsi2sk", "gsi3pk", "gsi3sk", "gsi4pk", "gsi4sk"],
        "leaving active drops the browse and near keys"
    );
    assert!(moved.set.iter().any(|(a, v)| *a == "gsi1sk" && v.text() == "LISTING#sold#L"));
    let rekey = Change::of(crate::key::Key::new("LISTING#L", "#METADATA"), NOW).set("listingId", Value::s("M"));
    assert!(matches!(decl.with_key_moves(rekey, &known), Err(SchemaError::PrimaryKeyChange { .. })));
    // Relisting: the stream adds the browse keys, so the change needs no category.
    let relist = Change::of(crate::key::Key::new("LISTING#L", "#METADATA"), NOW).set(attr::STATUS, Value::s("active"));
    let moved = decl.with_key_moves(relist, &known).unwrap();
    assert!(moved.remove.is_empty() && !moved.set.iter().any(|(a, _)| a.starts_with("gsi2")));
}

/// The stream processor's repairs, derived from the declaration: an active
/// listing gets its browse keys (conditioned on the fields as in the
/// image), a sold one loses them, a right one is left alone, and a stale
/// image changes nothing once applied to the newer item.
#[test]
fn repairs_bring_the_stream_kept_keys_in_line() {
    use crate::decl::Keeper;
    let (id, seller, category) =
        (ListingId::from_ulid(Ulid(9)), "s".parse::<UserId>().unwrap(), "pots".parse().unwrap());
    let decl = &entities::listing::ENTITY;
    let active = stored(
        EntityType::Listing,
        write::listing::image(&id, &seller, &category, ListingStatus::Active, Money::from_cents(500)),
        false,
    );
    let repair = decl.repair(&active, Keeper::Stream).unwrap().expect("an active listing without browse keys");
    let mut item = active.clone();
    assert!(repair.apply(&mut item));
    assert_eq!(
        keys_of(&item),
        keys_of(&stored(
            EntityType::Listing,
            write::listing::image(&id, &seller, &category, ListingStatus::Active, Money::from_cents(500)),
            true
        ))
    );
    assert_eq!(decl.repair(&item, Keeper::Stream).unwrap(), None, "right already");
    assert!(!repair.apply(&mut item), "a replay of the repair finds the keys right");
    // Sold in the meantime: the stale image's repair does not apply.
    let mut sold = item.clone();
    assert!(write::listing::sell(&id, &seller, Money::from_cents(500), NOW).unwrap().apply(&mut sold));
    assert!(!repair.apply(&mut sold), "a stale active image never puts a sold listing back");
    // A repriced listing moves its price key.
    let mut repriced = item.clone();
    repriced.insert("price".into(), Value::n(700));
    let mv = decl.repair(&repriced, Keeper::Stream).unwrap().unwrap();
    assert!(mv.apply(&mut repriced));
    assert!(repriced["gsi3sk"].text().starts_with("LISTING#0000070000#"), "700.00 in cents");
    // A sold listing carrying browse keys (drift) loses them.
    let mut drifted = item;
    drifted.insert("status".into(), Value::s("sold"));
    let drop = decl.repair(&drifted, Keeper::Stream).unwrap().unwrap();
    assert!(drop.apply(&mut drifted));
    assert!(!drifted.contains_key("gsi2pk") && !drifted.contains_key("gsi3pk"));
}

/// A listing written before the browse keys were sharded (no `shard`, keys
/// `CATEGORY#<categoryId>` and `PRICE#<categoryId>`) is in shard 0 by its
/// declared default: the repair moves its keys there, conditioned on the
/// field still missing, and a listing with a shard keeps its own.
#[test]
fn listings_without_a_shard_move_to_shard_zero() {
    use crate::decl::Keeper;
    let decl = &entities::listing::ENTITY;
    let mut old: Attrs = [
        ("pk", "LISTING#L"),
        ("sk", "#METADATA"),
        ("listingId", "L"),
        ("sellerId", "s"),
        ("categoryId", "pots"),
        ("status", "active"),
        ("gsi1pk", "SELLER#s"),
        ("gsi1sk", "LISTING#active#L"),
        ("gsi2pk", "CATEGORY#pots"),
        ("gsi2sk", "LISTING#L"),
        ("gsi3pk", "PRICE#pots"),
        ("gsi3sk", "LISTING#0000000500#L"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), Value::s(v)))
    .collect();
    old.insert("price".into(), Value::n(5));
    let keys = decl.item_keys(&old).unwrap();
    assert_eq!(keys.keys[&Index::Gsi7].pk, "CATEGORY#pots#0");
    assert_eq!(keys.keys[&Index::Gsi8].pk, "PRICE#pots#0");
    let repair = decl.repair(&old, Keeper::Both).unwrap().expect("old keys move");
    assert!(repair.condition.contains(&Cond::NotExists("shard")), "{:?}", repair.condition);
    let mut item = old.clone();
    assert!(repair.apply(&mut item));
    assert_eq!((item["gsi2pk"].text(), item["gsi3pk"].text()), ("CATEGORY#pots#0", "PRICE#pots#0"));
    assert_eq!(decl.repair(&item, Keeper::Both).unwrap(), None, "moved once");
    // A shard given meanwhile wins: the repair of the old image does not apply.
    let mut sharded = old.clone();
    sharded.insert("shard".into(), Value::n(3));
    assert!(!repair.apply(&mut sharded));
    assert_eq!(decl.item_keys(&sharded).unwrap().keys[&Index::Gsi7].pk, "CATEGORY#pots#3");
}
