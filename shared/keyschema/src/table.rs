//! The table: attribute names, the table and its indexes, and the entity
//! types its items hold.

use std::fmt;

/// Partition key attribute of the table.
pub const PK: &str = "pk";
/// Sort key attribute of the table.
pub const SK: &str = "sk";
/// Attribute naming the entity an item holds; every item has it.
pub const ENTITY_TYPE: &str = "entityType";
/// Time-to-live attribute (epoch seconds) for items that expire.
pub const TTL: &str = "expiresAt";
/// The table's stream view (the stream processor needs both images).
pub const STREAM_VIEW: &str = "NEW_AND_OLD_IMAGES";

/// The table and its global secondary indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Index {
    /// The base table (`pk`, `sk`).
    Table,
    /// `GSI1` (`gsi1pk`, `gsi1sk`), every attribute: moving to GSI6, which
    /// holds only what lists answer ([`card_move`]). Declared for the move's
    /// steps: in the final list of the table's indexes no more.
    Gsi1,
    /// `GSI2` (`gsi2pk`, `gsi2sk`), every attribute: moving to GSI7.
    Gsi2,
    /// `GSI3` (`gsi3pk`, `gsi3sk`), every attribute: moving to GSI8.
    Gsi3,
    /// `GSI4`: dropped. It held what a page near me chooses by (GSI5's
    /// keys); its reads moved to GSI5 and the index went, a deploy each
    /// (docs/operations.md, "Moving an index"). Declared only so that a test
    /// replays the move (`tests/integration/index_move.rs`): in no list of
    /// the table's indexes.
    Gsi4,
    /// `GSI5` (`gsi4pk`, `gsi4sk`): the listings near me, their cards.
    Gsi5,
    /// `GSI6` (`gsi1pk`, `gsi1sk`, GSI1's keys): users by email, a
    /// seller's listings, a buyer's orders, an author's reviews, a user's
    /// favorites, a brand's products; what their lists answer.
    Gsi6,
    /// `GSI7` (`gsi2pk`, `gsi2sk`, GSI2's keys): a category's listings
    /// and products, a seller's sales; what their lists answer.
    Gsi7,
    /// `GSI8` (`gsi3pk`, `gsi3sk`, GSI3's keys): a category's listings by
    /// price, the orders by status; what their lists answer.
    Gsi8,
}

impl Index {
    /// The table followed by every GSI (the table's indexes once the move
    /// of [`card_move`] is done).
    pub const ALL: [Index; 5] = [Index::Table, Index::Gsi6, Index::Gsi7, Index::Gsi8, Index::Gsi5];
    /// The global secondary indexes.
    pub const GSIS: [Index; 4] = [Index::Gsi6, Index::Gsi7, Index::Gsi8, Index::Gsi5];

    /// The index name for a `Query`; `None` for the base table.
    pub const fn name(self) -> Option<&'static str> {
        match self {
            Index::Table => None,
            Index::Gsi1 => Some("GSI1"),
            Index::Gsi2 => Some("GSI2"),
            Index::Gsi3 => Some("GSI3"),
            Index::Gsi4 => Some("GSI4"),
            Index::Gsi5 => Some("GSI5"),
            Index::Gsi6 => Some("GSI6"),
            Index::Gsi7 => Some("GSI7"),
            Index::Gsi8 => Some("GSI8"),
        }
    }

    /// Its key attributes: partition, sort (two indexes on one pair: a
    /// move's old and new).
    const fn key_attributes(self) -> (&'static str, &'static str) {
        match self {
            Index::Table => (PK, SK),
            Index::Gsi1 | Index::Gsi6 => ("gsi1pk", "gsi1sk"),
            Index::Gsi2 | Index::Gsi7 => ("gsi2pk", "gsi2sk"),
            Index::Gsi3 | Index::Gsi8 => ("gsi3pk", "gsi3sk"),
            Index::Gsi4 | Index::Gsi5 => ("gsi4pk", "gsi4sk"),
        }
    }

    /// Partition key attribute.
    pub const fn pk(self) -> &'static str {
        self.key_attributes().0
    }

    /// Sort key attribute.
    pub const fn sk(self) -> &'static str {
        self.key_attributes().1
    }

    /// What the index holds of each item besides the keys (the table's and
    /// its own). `GSI5` holds the listings' cards, so a page near me is read
    /// from it alone; GSI6-8 what the lists of their entities answer
    /// (listing and product cards, orders, users, reviews, favorites), so
    /// that nothing a list does not show (a counter, the stock, a fold's
    /// record, another index's keys, a description) rewrites a copy when it
    /// changes. The retired GSI1-3 held every attribute.
    pub const fn projection(self) -> Projection {
        match self {
            Index::Gsi4 => Projection::Include(&["listingId", "location", "geohash", "categoryId"]),
            Index::Gsi5 => Projection::Include(&[
                "listingId",
                "sellerId",
                "title",
                "price",
                "categoryId",
                "status",
                "location",
                "createdAt",
                "geohash",
            ]),
            Index::Gsi6 => Projection::Include(&GSI6),
            Index::Gsi7 => Projection::Include(&GSI7),
            Index::Gsi8 => Projection::Include(&GSI8),
            Index::Table | Index::Gsi1 | Index::Gsi2 | Index::Gsi3 => Projection::All,
        }
    }

    /// The index whose declarations write this one's keys: itself, but a
    /// retired index, whose keys are its successor's (the dropped GSI4's
    /// GSI5's; GSI1-3's GSI6-8's).
    pub const fn keys_from(self) -> Index {
        match self {
            Index::Gsi4 => Index::Gsi5,
            Index::Gsi1 => Index::Gsi6,
            Index::Gsi2 => Index::Gsi7,
            Index::Gsi3 => Index::Gsi8,
            other => other,
        }
    }

    /// The retired index on the same keys that a read of this one goes to
    /// while the move has not moved the reads yet ([`card_move`]).
    pub const fn moved_from(self) -> Option<Index> {
        match self {
            Index::Gsi6 => Some(Index::Gsi1),
            Index::Gsi7 => Some(Index::Gsi2),
            Index::Gsi8 => Some(Index::Gsi3),
            _ => None,
        }
    }

    /// Every key attribute of the table (all strings), each once.
    pub fn all_key_attributes() -> impl Iterator<Item = &'static str> {
        let mut seen = Vec::new();
        Index::ALL.into_iter().flat_map(|i| [i.pk(), i.sk()]).filter(move |a| {
            let new = !seen.contains(a);
            seen.push(*a);
            new
        })
    }
}

/// What every item of GSI6-8 is, and what a list of listings answers of
/// each (`domain::answers::ListingCard`).
const CARD: [&str; 9] =
    ["entityType", "listingId", "sellerId", "title", "price", "categoryId", "status", "location", "createdAt"];
/// An order as its lists answer it (`OrderAnswer`), beyond a card's.
const ORDER: [&str; 9] =
    ["updatedAt", "home", "orderId", "buyerId", "total", "lines", "shard", "buyerReviewId", "sellerReviewId"];
/// A product's card (`domain::answers::ProductCard`), beyond those.
const PRODUCT: [&str; 3] = ["productId", "name", "brandId"];
/// A user (by email), a review and a favorite as their lists answer them,
/// beyond those.
const PEOPLE: [&str; 12] = [
    "userId",
    "email",
    "role",
    "ratingSum",
    "reviewCount",
    "reviewId",
    "reviewedUserId",
    "authorId",
    "rating",
    "body",
    "favoriteId",
    "listingHome",
];
/// GSI6: listings' cards (a seller's), users, orders (a buyer's), reviews
/// (an author's), favorites, products' cards (a brand's).
const GSI6: [&str; 33] = concat(concat::<9, 9, 18>(CARD, ORDER), concat::<3, 12, 15>(PRODUCT, PEOPLE));
/// GSI7: listings' cards (browse), orders (a seller's sales), products' cards.
const GSI7: [&str; 21] = concat(concat::<9, 9, 18>(CARD, ORDER), PRODUCT);
/// GSI8: listings' cards (by price), orders (by status).
const GSI8: [&str; 18] = concat(CARD, ORDER);

/// `a` then `b`.
const fn concat<const A: usize, const B: usize, const C: usize>(
    a: [&'static str; A],
    b: [&'static str; B],
) -> [&'static str; C] {
    assert!(A + B == C, "the lengths add up");
    let mut out = [""; C];
    let mut i = 0;
    while i < C {
        out[i] = if i < A { a[i] } else { b[i - A] };
        i += 1;
    }
    out
}

/// What a GSI holds of each item it has (the keys always).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Projection {
    /// Every attribute.
    All,
    /// These attributes besides the keys.
    Include(&'static [&'static str]),
}

impl Projection {
    /// The `ProjectionType` of the table's definition.
    pub const fn kind(self) -> &'static str {
        match self {
            Projection::All => "ALL",
            Projection::Include(_) => "INCLUDE",
        }
    }

    /// The attributes besides the keys, for `INCLUDE`.
    pub const fn attributes(self) -> &'static [&'static str] {
        match self {
            Projection::All => &[],
            Projection::Include(attrs) => attrs,
        }
    }

    /// Whether a change of `attribute` rewrites the item's copy in the
    /// index (its keys unchanged).
    pub fn holds(self, attribute: &str) -> bool {
        match self {
            Projection::All => true,
            Projection::Include(attrs) => attrs.contains(&attribute),
        }
    }
}

impl fmt::Display for Index {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name().unwrap_or("table"))
    }
}

/// A stored `entityType` that names no entity of the design.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown entity type `{0}`")]
pub struct UnknownEntity(pub String);

/// Defines [`EntityType`]: the value of [`ENTITY_TYPE`] on each kind of item.
macro_rules! entity_types {
    ($($(#[$doc:meta])* $name:ident),+ $(,)?) => {
        /// The value of [`ENTITY_TYPE`] on each kind of item.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EntityType { $($(#[$doc])* $name),+ }

        impl EntityType {
            /// Every entity type.
            pub const ALL: &'static [EntityType] = &[$(EntityType::$name),+];
            /// The stored name.
            pub const fn as_str(self) -> &'static str {
                match self { $(EntityType::$name => stringify!($name)),+ }
            }
        }

        impl std::str::FromStr for EntityType {
            type Err = UnknownEntity;
            /// The entity a stored `entityType` names: the one parse of it
            /// (everything after matches on the enum).
            fn from_str(s: &str) -> Result<Self, UnknownEntity> {
                match s {
                    $(stringify!($name) => Ok(EntityType::$name),)+
                    other => Err(UnknownEntity(other.to_owned())),
                }
            }
        }
    };
}

entity_types!(
    /// A marketplace user (buyer, seller or both).
    User,
    /// Claims an email for one user; a GSI cannot enforce uniqueness.
    EmailGuard,
    /// A one-off item for sale by a user.
    Listing,
    /// A listing's description, beside it (never in an index copy).
    ListingDetails,
    /// An order of a listing or of catalog products.
    Order,
    /// One line of an order.
    OrderItem,
    /// A review of one party of a delivered order by the other.
    Review,
    /// A catalog brand.
    Brand,
    /// A category (catalog products and listings).
    Category,
    /// A catalog product with a stock level.
    Product,
    /// A product's description, beside it (never in an index copy).
    ProductDetails,
    /// A share of a product's stock beyond the first, beside it.
    ProductStock,
    /// A listing a user marked as a favorite.
    Favorite,
    /// Records whether a user's favorite of a listing is counted in its
    /// `favoriteCount`.
    FavoriteMarker,
    /// A message between the buyer and the seller of an order.
    OrderMessage,
    /// Retired (reconcile deletes them): one review's marker in its user's
    /// aggregates, before ratings counted one review per pair and week.
    RatingMarker,
    /// A category's rating over the buyers' reviews of its listings' orders.
    CategoryRating,
    /// Retired (reconcile deletes them): one review's marker in its
    /// category's rating, before the pair and week rule.
    CategoryRatingMarker,
    /// The reviews one author wrote of one user in one ISO week, of which
    /// the first counts in the user's rating: what makes it exactly once.
    RatingSlot,
    /// The same in a category's rating (the author's buyer reviews of one
    /// seller in one week, in one category).
    CategoryRatingSlot,
    /// A listing under one search term (a word of its title, or the
    /// beginning of one).
    Posting,
    /// Remembers an `Idempotency-Key` and the request it came with (expires by TTL).
    Idempotency,
    /// Where a maintenance job's scan segment got to.
    Checkpoint,
    /// One part of an aggregate's numbers, folded into the item people read.
    AggregatePart,
    /// A partition of a dense cell of the near index that holds, or held,
    /// a listing (a search reads no other of the cell's partitions).
    NearCell,
);

/// The move of GSI1-3 to GSI6-8, step by step.
pub mod card_move;
