//! What the indexes hold: every attribute a list answers, nothing that
//! changes without changing what a list answers, within DynamoDB's limit.

use domain::answers::{ListingCard, ProductCard};

use crate::entities;
use crate::table::{Index, Projection};
use crate::write::attr;

/// The GSIs holding listing cards, and those holding product cards.
const LISTING_CARDS: [Index; 4] = [Index::Gsi5, Index::Gsi6, Index::Gsi7, Index::Gsi8];
const PRODUCT_CARDS: [Index; 2] = [Index::Gsi6, Index::Gsi7];

#[test]
fn card_indexes_hold_the_cards_and_no_counter() {
    for index in LISTING_CARDS {
        let p = index.projection();
        assert!(ListingCard::ATTRIBUTES.iter().all(|a| p.holds(a)), "{index}: a listing card");
    }
    for index in PRODUCT_CARDS {
        assert!(ProductCard::ATTRIBUTES.iter().all(|a| index.projection().holds(a)), "{index}: a product card");
    }
    let changing = [
        attr::FAVORITE_COUNT,
        attr::STOCK_LEVEL,
        attr::COUNT_VERSION,
        attr::FAVORITES_FOLDED.rev,
        attr::FAVORITES_FOLDED.count,
        attr::RATINGS_FOLDED.rev,
        attr::RATINGS_FOLDED.count,
        "description",
        "geohash",
    ];
    for index in [Index::Gsi6, Index::Gsi7, Index::Gsi8] {
        let p = index.projection();
        assert!(matches!(p, Projection::Include(_)), "{index}");
        for a in changing {
            assert!(!p.holds(a), "{index} holds {a}");
        }
        // Nor another index's keys (kept by the stream: their moves).
        for other in Index::GSIS.iter().filter(|o| o.keys_from() != index.keys_from()) {
            assert!(!p.holds(other.pk()) && !p.holds(other.sk()), "{index} holds {other}'s keys");
        }
    }
}

/// DynamoDB takes at most 100 projected attributes over all a table's
/// indexes (an attribute in two counts twice), and 20 GSIs; this design
/// keeps at most 5.
#[test]
fn projections_within_dynamodb_s_limits() {
    let projected: usize = Index::GSIS.iter().map(|i| i.projection().attributes().len()).sum();
    assert!(projected <= 100, "{projected} projected attributes");
    assert!(Index::GSIS.len() <= 5);
    // Every index the declarations use is one of the table's.
    for decl in entities::ALL {
        for i in decl.indexes {
            assert!(Index::GSIS.contains(&i.key.index), "{:?}: {}", decl.entity, i.key.index);
        }
    }
}
