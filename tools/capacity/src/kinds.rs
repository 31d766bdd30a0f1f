//! The request kinds of the mix (tools/capacity/mix.json), parsed once at
//! the boundary into [`Kind`], and the table actions of each. A read kind
//! names the registered access pattern it prices
//! (`keyschema::patterns::PATTERNS`; a test checks each exists).

use domain::model::{ListingDetails, ListingStatus, Money, OrderStatus, Party, UserRole};
use keyschema::decl::EntityDecl;
use keyschema::entities;
use keyschema::table::Index;
use keyschema::value::{Attrs, Value};
use keyschema::{access, keys, write, Change};

use crate::requests::*;

/// One kind of request of the mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Deserialize)]
pub enum Kind {
    /// `browse category` (marketplace AP6).
    #[serde(rename = "browse category")]
    BrowseCategory,
    /// `browse by price` (beyond AP2).
    #[serde(rename = "browse by price")]
    BrowseByPrice,
    /// `get listing` (marketplace AP3).
    #[serde(rename = "get listing")]
    GetListing,
    /// `listings near me` (beyond AP4).
    #[serde(rename = "listings near me")]
    ListingsNearMe,
    /// `seller listings` (marketplace AP4).
    #[serde(rename = "seller listings")]
    SellerListings,
    /// `get product` (catalog AP3).
    #[serde(rename = "get product")]
    GetProduct,
    /// `products by category` (catalog AP8).
    #[serde(rename = "products by category")]
    ProductsByCategory,
    /// `products by brand` (catalog AP6).
    #[serde(rename = "products by brand")]
    ProductsByBrand,
    /// `list categories` (catalog AP2).
    #[serde(rename = "list categories")]
    ListCategories,
    /// `list brands` (catalog AP1).
    #[serde(rename = "list brands")]
    ListBrands,
    /// `get category`.
    #[serde(rename = "get category")]
    GetCategory,
    /// `create listing`.
    #[serde(rename = "create listing")]
    CreateListing,
    /// `search listings` (beyond AP5).
    #[serde(rename = "search listings")]
    SearchListings,
    /// `update listing price`.
    #[serde(rename = "update listing price")]
    UpdateListingPrice,
    /// `add favorite`.
    #[serde(rename = "add favorite")]
    AddFavorite,
    /// `remove favorite`.
    #[serde(rename = "remove favorite")]
    RemoveFavorite,
    /// `place listing order`.
    #[serde(rename = "place listing order")]
    PlaceListingOrder,
    /// `place catalog order`.
    #[serde(rename = "place catalog order")]
    PlaceCatalogOrder,
    /// `confirm order`.
    #[serde(rename = "confirm order")]
    ConfirmOrder,
    /// `cancel order`.
    #[serde(rename = "cancel order")]
    CancelOrder,
    /// `write review`.
    #[serde(rename = "write review")]
    WriteReview,
}

#[cfg(test)]
impl Kind {
    /// Every kind.
    pub const ALL: &'static [Kind] = &[
        Kind::BrowseCategory,
        Kind::BrowseByPrice,
        Kind::GetListing,
        Kind::ListingsNearMe,
        Kind::SellerListings,
        Kind::GetProduct,
        Kind::ProductsByCategory,
        Kind::ProductsByBrand,
        Kind::ListCategories,
        Kind::ListBrands,
        Kind::GetCategory,
        Kind::CreateListing,
        Kind::SearchListings,
        Kind::UpdateListingPrice,
        Kind::AddFavorite,
        Kind::RemoveFavorite,
        Kind::PlaceListingOrder,
        Kind::PlaceCatalogOrder,
        Kind::ConfirmOrder,
        Kind::CancelOrder,
        Kind::WriteReview,
    ];

    /// The registered access pattern a read kind prices.
    pub fn pattern(self) -> Option<&'static str> {
        match self {
            Kind::BrowseCategory => Some("marketplace AP6"),
            Kind::BrowseByPrice => Some("beyond AP2"),
            Kind::GetListing => Some("marketplace AP3"),
            Kind::ListingsNearMe => Some("beyond AP4"),
            Kind::SellerListings => Some("marketplace AP4"),
            Kind::GetProduct => Some("catalog AP3"),
            Kind::ProductsByCategory => Some("catalog AP8"),
            Kind::ProductsByBrand => Some("catalog AP6"),
            Kind::ListCategories => Some("catalog AP2"),
            Kind::ListBrands => Some("catalog AP1"),
            Kind::GetCategory => None,
            Kind::CreateListing => None,
            Kind::SearchListings => Some("beyond AP5"),
            Kind::UpdateListingPrice => None,
            Kind::AddFavorite => None,
            Kind::RemoveFavorite => None,
            Kind::PlaceListingOrder => None,
            Kind::PlaceCatalogOrder => None,
            Kind::ConfirmOrder => None,
            Kind::CancelOrder => None,
            Kind::WriteReview => None,
        }
    }
}

impl Kind {
    /// The actions of one request of this kind.
    pub fn actions(self, ids: &Ids, kb: Sizes, page: f64) -> R {
        actions(self, ids, kb, page)
    }
}

fn actions(kind: Kind, ids: &Ids, kb: Sizes, page: f64) -> R {
    let listing_decl = &entities::listing::ENTITY;
    let active = attrs(&listing(ids, &ids.listing, ListingStatus::Active));
    Ok(match kind {
        Kind::BrowseCategory => {
            sharded(ids, page, kb.listing, |shard| access::category_listings(&ids.category, shard, None))?
        }
        Kind::BrowseByPrice => {
            let (from, to) = ((0, ids.listing), (Money::MAX.cents(), ids.listing));
            sharded(ids, page, kb.listing, |shard| access::listings_by_price(&ids.category, shard, from, to))?
        }
        // The listing and its details in one Query: the bytes of the whole
        // listing (mix.json's `listing` size is a listing with its text).
        Kind::GetListing => vec![read(access::listing_with_details(&ids.listing)?, 1.0, kb.listing)],
        Kind::ListingsNearMe => {
            // The cells a first page queries (as measured in the city:
            // `fanout_reads::near_page`), each of the partition it reads
            // there (the city's dense cells are many), or elsewhere of the
            // place's own: of GSI5, the cards are the page.
            // In the city, which partitions of its dense cells hold
            // listings first (a query per dense cell: a page meets both).
            let own = ids.place.geohash(domain::geo::HASH_LEN);
            let (queries, held) = crate::fanout_reads::near_page(page as usize);
            let mut reads = Vec::new();
            for (dense, n) in held.iter().filter(|_| ids.in_city) {
                reads.push(read(access::near_cells(dense)?, *n as f64, kb.near_cell));
            }
            for (cell, items, times) in queries {
                let at = if ids.in_city { cell.as_str() } else { own.as_str() };
                let q = access::listings_near(at, None, None)?;
                reads.push(Action::Read {
                    index: q.index,
                    pk: q.pk.clone(),
                    items,
                    kb: kb.card,
                    consistent: false,
                    ttl: None,
                    times,
                });
            }
            reads
        }
        Kind::SellerListings => vec![read(access::seller_listings(&ids.seller, None)?, page, kb.listing)],
        // The product, its details and its other shares of stock in one
        // Query (a Query sums its items' sizes before rounding).
        Kind::GetProduct => {
            let shares = f64::from(ids.product_shards.saturating_sub(1));
            let kb_all = kb.product + shares * kb.share;
            vec![read(access::product_with_details(&ids.product)?, 1.0, kb_all)]
        }
        Kind::ProductsByCategory => vec![read(access::products_by_category(&ids.category)?, page, kb.product)],
        Kind::ProductsByBrand => vec![read(access::products_by_brand(&ids.brand)?, page, kb.product)],
        // First pages from memory for a minute (catalog's FIRST_PAGES).
        Kind::ListCategories => vec![cached(read(access::categories()?, page, kb.small), 60.0)],
        Kind::ListBrands => vec![cached(read(access::brands()?, page, kb.small), 60.0)],
        Kind::CreateListing => {
            let new = listing(ids, &ids.new_listing, ListingStatus::Active);
            // The category read (remembered five minutes), the seller read
            // (already a seller: not rewritten), the listing put.
            let mut out = vec![
                cached(get(keys::category(&ids.category)?, kb.small, false), 300.0),
                get(keys::user(&ids.seller)?, kb.user, false),
                put(&new, kb.listing, true)?,
                // Its description beside it, in the same transaction.
                put(&ListingDetails { listing_id: ids.new_listing, description: String::new() }, kb.small, true)?,
            ];
            // The stream processor adds its browse, price and near keys: one
            // more write of the item, a copy in every index it is then in.
            let none = Change::of(keys::listing(&ids.new_listing)?, NOW);
            let put_keys = listing_decl.written_keys(&attrs(&new))?.keys;
            out.push(update_from(listing_decl, put_keys, &attrs(&new), &none, kb.listing, false)?);
            // And its search postings: the listing read, then its terms put
            // in one BatchWriteItem (11.2 per title of the corpus: one on
            // the drawn term, 10 on cold ones).
            out.push(get(keys::listing(&ids.new_listing)?, kb.listing, true));
            for k in 0..POSTINGS_PER_LISTING {
                let term = if k == 0 { ids.term.clone() } else { format!("w{}-{k}", ids.new_listing) };
                let key = keys::posting(&term, &ids.new_listing)?.into_key();
                out.push(small_write(key, kb.posting, false));
            }
            out
        }
        Kind::SearchListings => {
            // The heads of two lists (the median page; 21 postings each),
            // then the listings returned, in one BatchGetItem.
            let mut out = Vec::new();
            for term in [ids.term.clone(), format!("w{}", ids.new_listing)] {
                out.push(read(access::postings(&term)?, page + 1.0, kb.posting));
            }
            out.push(Action::Read {
                index: Index::Table,
                pk: keys::listing(&ids.new_listing)?.pk.clone(),
                items: page,
                kb: kb.listing,
                consistent: false,
                ttl: None,
                times: 1.0,
            });
            out
        }
        Kind::UpdateListingPrice => {
            let key = keys::listing(&ids.listing)?;
            let price = Value::n(Money::from_cents(2600));
            let change = Change::of(key.clone(), NOW).set(write::attr::PRICE, price.clone());
            let mut priced = active.clone();
            priced.insert(write::attr::PRICE.to_owned(), price);
            let (old_keys, new_keys) = (listing_decl.item_keys(&active)?.keys, listing_decl.item_keys(&priced)?.keys);
            // The API's write leaves the price key to the stream processor
            // (every copy that holds the price rewritten in place), which
            // then moves it: the old entry deleted, the new one put.
            let api = update_from(listing_decl, new_keys, &priced, &change, kb.listing, false)?;
            let stream = update_from(listing_decl, old_keys, &priced, &Change::of(key, NOW), kb.listing, false)?;
            // The answer's details, read after the change.
            let details = get(keys::listing_details(&ids.listing)?, kb.small, true);
            vec![api, details, stream]
        }
        Kind::AddFavorite | Kind::RemoveFavorite => {
            let adding = kind == Kind::AddFavorite;
            let mut out = if adding {
                vec![get(keys::listing(&ids.listing)?, kb.listing, false), get(keys::user(&ids.buyer)?, kb.user, false)]
            } else {
                Vec::new()
            };
            let favorite = domain::model::Favorite {
                listing_home: None,
                user_id: ids.buyer.clone(),
                listing_id: ids.listing,
                favorite_id: domain::ids::FavoriteId::generate(),
                created_at: NOW.into(),
            };
            let mut w = put(&favorite, kb.small, !adding)?;
            if let Action::Write { tx, .. } = &mut w {
                *tx = !adding;
            }
            out.push(w);
            let count = Change::of(keys::listing(&ids.listing)?, NOW).add(write::attr::FAVORITE_COUNT, 1);
            let aggregate = update(listing_decl, &active, &count, kb.listing, true)?;
            let of = derived::aggregates::ListingFavorites::of(&ids.listing, None)?;
            out.extend(counted(keys::favorite_marker(&ids.buyer, &ids.listing)?, aggregate, &of)?);
            out
        }
        Kind::PlaceListingOrder => {
            let sell = write::listing::sell(&ids.sold_listing, &ids.seller, Money::from_cents(2500), NOW)?;
            let before = attrs(&listing(ids, &ids.sold_listing, ListingStatus::Active));
            let bought = (keys::listing(&ids.sold_listing)?.into(), ids.sold_listing.to_string(), kb.listing);
            placement(ids, kb, true, bought, update(listing_decl, &before, &sell, kb.listing, true)?)?
        }
        Kind::PlaceCatalogOrder => {
            // One share of the stock (the product item, or a share beside
            // it), after the other shares' consistent Query if it has any.
            let (price, shard) = (Money::from_cents(1999), ids.stock_shard);
            let take = write::product::take_from_share(&ids.product, shard, 1, price, NOW)?;
            let bought = (keys::product(&ids.product)?.into(), ids.product.to_string(), kb.product);
            let stock = if shard == 0 {
                update(&entities::product::ENTITY, &attrs(&product(ids)), &take, kb.product, true)?
            } else {
                let share = domain::stock::ProductStock {
                    product_id: ids.product,
                    shard,
                    stock_level: 10,
                    price,
                    updated_at: NOW.into(),
                };
                update(&entities::product::STOCK, &attrs(&share), &take, kb.share, true)?
            };
            // One share of the product's at random (docs/api.md "Stock that scales").
            let mut stock = stock;
            if let Action::Write { spread, .. } = &mut stock {
                *spread = ids.product_shards;
            }
            let mut out = placement(ids, kb, false, bought, stock)?;
            if ids.product_shards > 1 {
                // A first attempt reads one share at random (all of them
                // only on a retry, or when that one is short).
                out.push(get(keys::product_stock(&ids.product, &1)?, kb.share, true));
            }
            out
        }
        Kind::ConfirmOrder | Kind::CancelOrder => {
            let o = order(ids, true, OrderStatus::Pending);
            let mut out = vec![get(keys::order(&ids.order)?, kb.order, false)];
            let changes = if kind == Kind::CancelOrder {
                write::order::cancel(&o, NOW)?
            } else {
                vec![(
                    String::new(),
                    write::order::move_status(&ids.order, o.shard, OrderStatus::Pending, OrderStatus::Confirmed, NOW)?,
                )]
            };
            let sold = attrs(&listing(ids, &ids.sold_listing, ListingStatus::Sold));
            for (_, change) in changes {
                let (decl, before, size): (&EntityDecl, Attrs, f64) = if change.key.pk.starts_with("ORDER#") {
                    (&entities::order::ENTITY, attrs(&o), kb.order)
                } else {
                    (listing_decl, sold.clone(), kb.listing)
                };
                // A confirm is one item, written without a transaction.
                out.push(update(decl, &before, &change, size, kind == Kind::CancelOrder)?);
            }
            out
        }
        Kind::WriteReview => {
            let o = order(ids, true, OrderStatus::Delivered);
            let review = domain::model::Review {
                home: None,
                review_id: ids.review,
                reviewed_user_id: ids.seller.clone(),
                author_id: ids.buyer.clone(),
                order_id: ids.order,
                category_id: Some(ids.category.clone()),
                rating: 5,
                body: "Good".into(),
                created_at: NOW.into(),
            };
            let on_order = write::review::record_on_order(&ids.order, Party::Buyer, &ids.review, NOW)?;
            let rated = Change::of(keys::user(&ids.seller)?, NOW).add(write::attr::RATING_SUM, 5);
            let aggregate =
                update(&entities::user::ENTITY, &attrs(&user(&ids.seller, UserRole::Both)), &rated, kb.user, true)?;
            let mut out = vec![
                get(keys::order(&ids.order)?, kb.order, false),
                put(&review, kb.small, true)?,
                update(&entities::order::ENTITY, &attrs(&o), &on_order, kb.order, true)?,
                // The reviewed user read first (no condition check: it
                // would hold a mega-seller's item in every review).
                get(keys::user(&ids.seller)?, kb.user, false),
            ];
            // The review's slot (its author's reviews of the seller this week).
            let week = domain::time::iso_week(ids.review.ulid().timestamp_ms());
            let of = derived::aggregates::UserRatings::of(&ids.seller)?;
            out.extend(counted(keys::rating_slot(&ids.seller, &ids.buyer, &week)?, aggregate, &of)?);
            // The category's rating: its marker in one of the category's
            // marker shards, the aggregate in its own item (coalesced).
            let category_rating = small_write(keys::category_rating(&ids.category)?, kb.small, true);
            let slot = keys::category_rating_slot(&ids.category, &ids.buyer, &ids.seller, &week)?;
            let of = derived::aggregates::CategoryRatings::of(&ids.category)?;
            out.extend(counted(slot, category_rating, &of)?);
            out
        }
        Kind::GetCategory => vec![
            cached(get(keys::category(&ids.category)?, kb.small, false), 300.0),
            get(keys::category_rating(&ids.category)?, kb.small, false),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_kinds_price_registered_patterns() {
        for kind in Kind::ALL {
            if let Some(id) = kind.pattern() {
                assert!(keyschema::patterns::PATTERNS.iter().any(|p| p.id == id), "{kind:?}: {id} is not registered");
            }
        }
    }
}
