//! Aggregates kept exactly once with markers: a review counts its rating
//! into its user's `ratingSum`/`reviewCount` and, when it names a category
//! (a buyer's review of a listing order), into the category's rating item,
//! if it is the first of its author's reviews of that user in its ISO week
//! (the others are shown, not counted: one pair of accounts cannot move a
//! rating by more than one review a week); a favorite counts 1 into its
//! listing's `favoriteCount`.
//!
//! Each kind of aggregate is one line of `aggregate_kinds!` (its name and
//! doc) and one [`Counted`] implementation (in `kinds.rs`): which base
//! items count into it (and with what marker, weight and version), which
//! marker items belong to it, and which items hold it; nothing else lists
//! the kinds. The stream processor asks [`counts`] of each record's image;
//! reconcile asks [`counts_of`], [`marker_of`] and [`held_by`] of each
//! scanned item. How a count moves
//! an aggregate is [`markers`] (both drivers); how reconcile brings
//! markers and aggregates back in line is [`settle`].

pub mod fold;
mod kinds;
pub mod marker;
pub mod markers;
pub mod settle;

use std::fmt;

use domain::ids::ReviewId;
use keyschema::write::attr;
use keyschema::{Change, Key, KeyQuery, Value};
use store::Item;
use ulid::Ulid;

use crate::image::{Event, Image, Record};
use crate::DerivedError;

pub use kinds::*;

/// Declares the kinds of aggregate, once: each line a [`Counted`] type
/// (the kind's derivation, in `kinds.rs`), its name in reports and its doc.
/// From it come [`AggregateKind`] (a variant per kind, named as the type),
/// [`AggregateKind::ALL`], [`AggregateKind::name`] and the table of
/// derivations [`counts_of`], [`marker_of`] and [`held_by`] fold over.
macro_rules! aggregate_kinds {
    ($($(#[doc = $doc:literal])* $kind:ident => $name:literal, $tag:literal,)+) => {
        /// The kinds of aggregate.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum AggregateKind {
            $($(#[doc = $doc])* $kind,)+
        }

        impl AggregateKind {
            /// Every kind.
            pub const ALL: &'static [AggregateKind] = &[$(AggregateKind::$kind,)+];

            /// Its name in reports.
            pub const fn name(self) -> &'static str {
                match self {
                    $(AggregateKind::$kind => $name,)+
                }
            }

            /// Its tag in its parts' keys.
            pub const fn tag(self) -> &'static str {
                match self {
                    $(AggregateKind::$kind => $tag,)+
                }
            }
        }

        /// Each kind's derivation, in declaration order.
        const KINDS: &[Derivation] = &[$(Derivation::of::<$kind>(),)+];
    };
}

aggregate_kinds! {
    /// A user's `ratingSum` and `reviewCount` over the reviews about them.
    UserRatings => "user ratings", "ratings",
    /// A category's `ratingSum` and `reviewCount` over the buyers' reviews
    /// of its listings' orders, in an item of its own.
    CategoryRatings => "category ratings", "categoryRatings",
    /// A listing's `favoriteCount`.
    ListingFavorites => "listing favorites", "favorites",
}

impl AggregateKind {
    /// How many parts each aggregate of this kind spreads its counts over.
    pub const fn parts(self) -> u16 {
        match self {
            AggregateKind::UserRatings => USER_RATING_PARTS,
            AggregateKind::CategoryRatings => CATEGORY_RATING_PARTS,
            AggregateKind::ListingFavorites => LISTING_FAVORITE_PARTS,
        }
    }
}

impl fmt::Display for AggregateKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An aggregate: the item it lives on, the number attributes it adds to,
/// the parts its counts are added to ([`fold`]), and the queries that read
/// all its markers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aggregate {
    /// Which kind.
    pub kind: AggregateKind,
    /// The item holding it (a user, a listing, a category's rating item).
    pub key: Key,
    /// The attribute summing the weights, if any (`ratingSum`).
    pub sum: Option<&'static str>,
    /// The attribute counting the instances (`reviewCount`, `favoriteCount`).
    pub count: &'static str,
    /// Every marker of the aggregate is in one of these.
    pub markers: Vec<KeyQuery>,
    /// The home region of the item holding it (docs/regions.md), where it
    /// is kept: a listing's count at the listing's; none: the primary (the
    /// users' and the categories' ratings).
    pub home: Option<String>,
    /// Attributes set with every change of it, so that its first fold
    /// creates its item (an aggregate in an item of its own: a category's
    /// rating); empty: the item must exist (a user, a listing).
    pub init: Vec<(&'static str, Value)>,
    /// Its holder's id, which names its parts (`PARTS#<aggregate>#<of>`).
    pub of: String,
    /// How many parts its counts are spread over.
    pub parts: u16,
    /// Where its holder records what of its parts it has folded in.
    pub folded: keyschema::write::Folded,
}

impl Aggregate {
    /// The `ADD` of `sum` and `count` (and 1 to its `rev`) to one of its
    /// parts, chosen at random (creating it if it is the first).
    pub(crate) fn add_to_part(&self, sum: i64, count: i64) -> Result<Change, DerivedError> {
        let part = (ulid::Ulid::generate().random() % u128::from(self.parts.max(1))) as u16;
        let tag = self.kind.tag();
        let change = Change::untimed(keyschema::keys::aggregate_part(tag, &self.of, &part)?)
            .add(attr::PART_SUM, sum)
            .add(attr::PART_COUNT, count)
            .add(attr::REV, 1)
            .set(keyschema::table::ENTITY_TYPE, Value::s(keyschema::table::EntityType::AggregatePart.as_str()))
            .set("aggregate", Value::s(tag))
            .set("of", Value::s(&self.of))
            .set("part", Value::n(i64::from(part)));
        Ok(match &self.home {
            Some(home) => change.set(keyschema::homes::HOME, Value::s(home)),
            None => change,
        })
    }

    /// The query of its parts.
    pub fn parts_query(&self) -> Result<KeyQuery, DerivedError> {
        Ok(keyschema::access::aggregate_parts(self.kind.tag(), &self.of)?)
    }
}

/// One instance's effect on an aggregate: a base item (a review, a
/// favorite) inserted or removed.
#[derive(Clone, Debug)]
pub struct Count {
    /// Whose aggregate.
    pub aggregate: Aggregate,
    /// The marker's key.
    pub marker: Key,
    /// The marker item as first written, without its state, version and
    /// weight (its keys, entity type and the ids it is about).
    pub marker_item: Item,
    /// The instance's version where one marker serves successive instances
    /// (a favoriting); `None` where the marker is the instance's own.
    pub version: Option<Ulid>,
    /// The review, where the marker is a slot of reviews of which the
    /// first counts (a pair's reviews in a week); `None` otherwise.
    pub member: Option<ReviewId>,
    /// What it adds to the sum while counted (a review's rating; 1 for a favorite).
    pub weight: u32,
    /// Inserted (`true`) or removed.
    pub inserted: bool,
}

/// A marker to settle: its key and the base item it counts.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instance {
    /// The marker's key.
    pub marker: Key,
    /// The base item's key (a review, a favorite).
    pub base: Key,
    /// The review, where the marker is a slot ([`Count::member`]).
    pub member: Option<ReviewId>,
}

/// A marker's aggregate and the instances it records.
pub type Marked = (Aggregate, Vec<Instance>);

/// One kind of aggregate: what counts into it, its markers, its holders
/// (declared in `aggregate_kinds!`).
pub trait Counted {
    /// The count a base item makes into this kind of aggregate, if it
    /// counts into one (`inserted`: the item was added; else removed).
    fn count(image: &Image, inserted: bool) -> Result<Option<Count>, DerivedError>;

    /// For a marker of this kind: its aggregate and the instances it records.
    fn marker(image: &Image) -> Result<Option<Marked>, DerivedError>;

    /// For an item holding an aggregate of this kind: the aggregate.
    fn held(image: &Image) -> Result<Option<Aggregate>, DerivedError>;

    /// The aggregate of a holder's id (`of`) homed in `home`: what a part names.
    fn of_id(of: &str, home: Option<&str>) -> Result<Aggregate, DerivedError>;
}

/// A kind's [`Counted`] functions: what [`counts_of`], [`marker_of`] and
/// [`held_by`] fold over.
struct Derivation {
    count: fn(&Image, bool) -> Result<Option<Count>, DerivedError>,
    marker: fn(&Image) -> Result<Option<Marked>, DerivedError>,
    held: fn(&Image) -> Result<Option<Aggregate>, DerivedError>,
    of_id: fn(&str, Option<&str>) -> Result<Aggregate, DerivedError>,
}

impl Derivation {
    const fn of<C: Counted>() -> Derivation {
        Derivation { count: C::count, marker: C::marker, held: C::held, of_id: C::of_id }
    }
}

/// Every count a base item makes (a review: its user's and, naming one,
/// its category's; a favorite: its listing's); none for other entities.
pub fn counts_of(image: &Image, inserted: bool) -> Result<Vec<Count>, DerivedError> {
    KINDS.iter().filter_map(|k| (k.count)(image, inserted).transpose()).collect()
}

/// The counts a stream record changes: an insert counts its new image, a
/// removal uncounts its old one; a modification changes no count.
pub fn counts(record: &Record) -> Result<Vec<Count>, DerivedError> {
    match (record.event, &record.new, &record.old) {
        (Event::Insert, Some(image), _) => counts_of(image, true),
        (Event::Remove, _, Some(image)) => counts_of(image, false),
        _ => Ok(Vec::new()),
    }
}

/// For a marker item: its aggregate and the instances it records (the
/// first kind's that has it).
pub fn marker_of(image: &Image) -> Result<Option<Marked>, DerivedError> {
    KINDS.iter().try_fold(None, |found, k| Ok(found.or((k.marker)(image)?)))
}

/// For an item holding aggregates (a user, a listing, a category's
/// rating): every kind's it holds (a listing may hold several).
pub fn held_by(image: &Image) -> Result<Vec<Aggregate>, DerivedError> {
    KINDS.iter().filter_map(|k| (k.held)(image).transpose()).collect()
}

/// For an aggregate part: the aggregate it is part of (`None`: a tag the
/// design does not have).
pub fn of_part(image: &Image) -> Result<Option<Aggregate>, DerivedError> {
    let crate::Body::AggregatePart(part) = &image.body else {
        return match image.entity {
            keyschema::table::EntityType::AggregatePart => {
                Err(image.unreadable().unwrap_or(DerivedError::malformed("aggregate part")))
            }
            _ => Ok(None),
        };
    };
    let Some(i) = AggregateKind::ALL.iter().position(|k| k.tag() == part.aggregate) else {
        return Err(DerivedError::malformed(format!("aggregate part of unknown kind `{}`", part.aggregate)));
    };
    Ok(Some((KINDS[i].of_id)(&part.of, part.home.as_deref())?))
}
