//! The table: attribute names, indexes, entity types, and each entity's key
//! templates. This is the one source of truth: the store creates the table
//! from it, a test checks `template.yaml` against it, and `docs/key-schema.md`
//! is generated from it.

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
    /// `GSI1` (`gsi1pk`, `gsi1sk`).
    Gsi1,
    /// `GSI2` (`gsi2pk`, `gsi2sk`).
    Gsi2,
    /// `GSI3` (`gsi3pk`, `gsi3sk`).
    Gsi3,
}

impl Index {
    /// The table followed by every GSI.
    pub const ALL: [Index; 4] = [Index::Table, Index::Gsi1, Index::Gsi2, Index::Gsi3];
    /// The global secondary indexes (projection `ALL`).
    pub const GSIS: [Index; 3] = [Index::Gsi1, Index::Gsi2, Index::Gsi3];

    /// The index name for a `Query`; `None` for the base table.
    pub const fn name(self) -> Option<&'static str> {
        match self {
            Index::Table => None,
            Index::Gsi1 => Some("GSI1"),
            Index::Gsi2 => Some("GSI2"),
            Index::Gsi3 => Some("GSI3"),
        }
    }

    /// Partition key attribute.
    pub const fn pk(self) -> &'static str {
        match self {
            Index::Table => PK,
            Index::Gsi1 => "gsi1pk",
            Index::Gsi2 => "gsi2pk",
            Index::Gsi3 => "gsi3pk",
        }
    }

    /// Sort key attribute.
    pub const fn sk(self) -> &'static str {
        match self {
            Index::Table => SK,
            Index::Gsi1 => "gsi1sk",
            Index::Gsi2 => "gsi2sk",
            Index::Gsi3 => "gsi3sk",
        }
    }

    /// Every key attribute of the table (all strings).
    pub fn all_key_attributes() -> impl Iterator<Item = &'static str> {
        Index::ALL.into_iter().flat_map(|i| [i.pk(), i.sk()])
    }
}

impl fmt::Display for Index {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name().unwrap_or("table"))
    }
}

/// The value of [`ENTITY_TYPE`] on each kind of item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntityType {
    /// A marketplace user (buyer, seller or both).
    User,
    /// Claims an email for one user; a GSI cannot enforce uniqueness.
    EmailGuard,
    /// A one-off item for sale by a user.
    Listing,
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
    /// Remembers an `Idempotency-Key` and the order it created (expires by TTL).
    Idempotency,
    /// A message between the buyer and the seller of an order.
    OrderMessage,
    /// A listing a user marked as a favorite.
    Favorite,
    /// Records that one favorite is counted in (or removed from) its
    /// listing's `favoriteCount`.
    FavoriteMarker,
    /// Records that one review's rating is counted in (or removed from) its
    /// user's aggregates: what makes the stream processor exactly once.
    RatingMarker,
}

impl EntityType {
    /// The stored name.
    pub const fn as_str(self) -> &'static str {
        match self {
            EntityType::User => "User",
            EntityType::EmailGuard => "EmailGuard",
            EntityType::Listing => "Listing",
            EntityType::Order => "Order",
            EntityType::OrderItem => "OrderItem",
            EntityType::Review => "Review",
            EntityType::Brand => "Brand",
            EntityType::Category => "Category",
            EntityType::Product => "Product",
            EntityType::Idempotency => "Idempotency",
            EntityType::RatingMarker => "RatingMarker",
            EntityType::OrderMessage => "OrderMessage",
            EntityType::Favorite => "Favorite",
            EntityType::FavoriteMarker => "FavoriteMarker",
        }
    }
}

/// A key pair written as a template: literal segments and `<name>`
/// placeholders, separated by `#`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyTemplate {
    /// Partition key template.
    pub pk: &'static str,
    /// Sort key template.
    pub sk: &'static str,
}

/// The key templates of one entity on each index it is written to.
#[derive(Clone, Copy, Debug)]
pub struct EntitySchema {
    /// Which entity.
    pub entity: EntityType,
    /// Key template on the table.
    pub table: Option<KeyTemplate>,
    /// Key template on GSI1, if written to it.
    pub gsi1: Option<KeyTemplate>,
    /// Key template on GSI2, if written to it.
    pub gsi2: Option<KeyTemplate>,
    /// Key template on GSI3, if written to it.
    pub gsi3: Option<KeyTemplate>,
    /// When an index key is conditional (sparse) or other remarks.
    pub note: &'static str,
}

impl EntitySchema {
    /// The template on one index, if the entity is written to it.
    pub fn on(&self, index: Index) -> Option<KeyTemplate> {
        match index {
            Index::Table => self.table,
            Index::Gsi1 => self.gsi1,
            Index::Gsi2 => self.gsi2,
            Index::Gsi3 => self.gsi3,
        }
    }
}

const fn t(pk: &'static str, sk: &'static str) -> Option<KeyTemplate> {
    Some(KeyTemplate { pk, sk })
}

/// An entity's schema from its templates on `[table, GSI1, GSI2, GSI3]`.
const fn entity(entity: EntityType, keys: [Option<KeyTemplate>; 4], note: &'static str) -> EntitySchema {
    let [table, gsi1, gsi2, gsi3] = keys;
    EntitySchema { entity, table, gsi1, gsi2, gsi3, note }
}

/// Every entity of the table with its key templates.
pub const ENTITIES: &[EntitySchema] = &[
    entity(EntityType::User, [t("USER#<userId>", "#METADATA"), t("USER_EMAIL#<email>", "USER#<userId>"), None, None], "customer and seller are one entity with a role"),
    entity(EntityType::EmailGuard, [t("USER_EMAIL#<email>", "#UNIQUE"), None, None, None], "written in the same transaction as the user; keeps emails unique"),
    entity(EntityType::Listing, [t("LISTING#<listingId>", "#METADATA"), t("SELLER#<sellerId>", "LISTING#<status>#<listingId>"), t("CATEGORY#<categoryId>", "LISTING#<listingId>"), t("PRICE#<categoryId>", "LISTING#<priceCents>#<listingId>")], "GSI2 and GSI3 keys only while active (sparse: removed by the write that takes it out of active, added by the stream processor; GSI3 price in zero-padded cents)"),
    entity(EntityType::Order, [t("ORDER#<orderId>", "#METADATA"), t("BUYER#<buyerId>", "ORDER#<orderId>"), t("SELLER#<sellerId>", "ORDER#<orderId>"), t("STATUS#<status>#<shard>", "ORDER#<orderId>")], "GSI2 for listing orders only; shard = order id mod shard count"),
    entity(EntityType::OrderItem, [t("ORDER#<orderId>", "ITEM#<itemId>"), None, None, None], "itemId is the productId or listingId"),
    entity(EntityType::Review, [t("USER#<reviewedUserId>", "REVIEW#<reviewId>"), t("AUTHOR#<authorId>", "REVIEW#<reviewId>"), None, None], "lives in the reviewed user's partition"),
    entity(EntityType::Brand, [t("BRANDS", "BRAND#<brandId>"), None, None, None], ""),
    entity(EntityType::Category, [t("CATEGORIES", "CATEGORY#<categoryId>"), None, None, None], ""),
    entity(EntityType::Product, [t("PRODUCT#<productId>", "#METADATA"), t("BRAND#<brandId>", "CATEGORY#<categoryId>#PRODUCT#<productId>"), t("CATEGORY#<categoryId>", "BRAND#<brandId>#PRODUCT#<productId>"), None], ""),
    entity(EntityType::Favorite, [t("USER#<userId>", "FAVORITE#<listingId>"), t("FAVORITES#<userId>", "FAVORITE#<favoriteId>"), None, None], "in the user's partition, one per listing (PUT and DELETE are idempotent); GSI1 orders them newest first"),
    entity(EntityType::FavoriteMarker, [t("USER#<userId>", "FAVED#<listingId>"), None, None, None], "one per user and listing (bounded whatever the add/remove cycles), outside the listing's partition; written by the stream processor with the listing's favoriteCount; the latest favoriteId seen, counted or removed, and the weight counted"),
    entity(EntityType::OrderMessage, [t("ORDER#<orderId>", "MESSAGE#<messageId>"), None, None, None], "in the order's own partition, beside its items; carries the parties"),
    entity(EntityType::RatingMarker, [t("USER#<reviewedUserId>", "RATED#<reviewId>"), None, None, None], "written by the stream processor in the transaction that changes the user's rating sum and count; counted or removed, and the rating (weight) it counted"),
    entity(EntityType::Idempotency, [t("IDEMPOTENCY#<callerId>#<route>#<key>", "#IDEMPOTENCY"), None, None, None], "per caller and route; written in the transaction of the request it remembers; expires (TTL expiresAt) after 24 h"),
];

/// The schema of one entity.
pub fn schema_of(entity: EntityType) -> &'static EntitySchema {
    // ENTITIES lists every variant; a test checks it.
    ENTITIES.iter().find(|e| e.entity == entity).unwrap_or(&ENTITIES[0])
}

/// Matches a key value against a template; on success returns the
/// placeholder values in order. Placeholder values are non-empty and never
/// contain `#` (the id types guarantee it).
pub fn match_template<'a>(template: &str, value: &'a str) -> Option<Vec<&'a str>> {
    let (mut ts, mut vs) = (template.split('#'), value.split('#'));
    let mut captured = Vec::new();
    loop {
        match (ts.next(), vs.next()) {
            (None, None) => return Some(captured),
            (Some(t), Some(v)) if t.starts_with('<') && t.ends_with('>') => {
                if v.is_empty() {
                    return None;
                }
                captured.push(v);
            }
            (Some(t), Some(v)) if t == v => {}
            _ => return None,
        }
    }
}

/// Whether some key value could match both templates.
pub fn templates_overlap(a: &str, b: &str) -> bool {
    let (sa, sb): (Vec<_>, Vec<_>) = (a.split('#').collect(), b.split('#').collect());
    let placeholder = |s: &str| s.starts_with('<') && s.ends_with('>');
    sa.len() == sb.len()
        && sa.iter().zip(&sb).all(|(x, y)| match (placeholder(x), placeholder(y)) {
            (true, true) => true,
            (true, false) => !y.is_empty(),
            (false, true) => !x.is_empty(),
            (false, false) => x == y,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entity_has_a_table_key_and_one_schema() {
        for (i, e) in ENTITIES.iter().enumerate() {
            assert!(e.on(Index::Table).is_some(), "{:?}", e.entity);
            assert!(ENTITIES[i + 1..].iter().all(|o| o.entity != e.entity));
            assert_eq!(schema_of(e.entity).entity, e.entity);
        }
        assert_eq!(ENTITIES.len(), 14);
    }

    /// No key pair of one entity can be read as another's on the same index.
    #[test]
    fn no_two_entities_collide_within_an_index() {
        for index in Index::ALL {
            let on: Vec<_> = ENTITIES.iter().filter_map(|e| e.on(index).map(|k| (e.entity, k))).collect();
            for (i, (ea, ka)) in on.iter().enumerate() {
                for (eb, kb) in &on[i + 1..] {
                    let both = templates_overlap(ka.pk, kb.pk) && templates_overlap(ka.sk, kb.sk);
                    assert!(!both, "{ea:?} and {eb:?} collide on {index}");
                }
            }
        }
    }

    #[test]
    fn templates_match_and_capture() {
        assert_eq!(match_template("USER#<userId>", "USER#u1"), Some(vec!["u1"]));
        assert_eq!(match_template("USER#<userId>", "USER#"), None);
        assert_eq!(match_template("USER#<userId>", "USER_EMAIL#a@b.c"), None);
        assert_eq!(match_template("#METADATA", "#METADATA"), Some(vec![]));
        assert_eq!(match_template("LISTING#<status>#<id>", "LISTING#active#01"), Some(vec!["active", "01"]));
        assert!(templates_overlap("USER#<a>", "USER#<b>"));
        assert!(!templates_overlap("#METADATA", "REVIEW#<id>"));
        assert!(!templates_overlap("USER#<a>", "USER_EMAIL#<b>"));
    }
}
