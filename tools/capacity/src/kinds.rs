//! The request kinds of the mix (tools/capacity/mix.json): operations of
//! the registry ([`Op`], `keyschema::patterns`), named there by their short
//! names and parsed once at the boundary; and the table actions of each, an
//! exhaustive `match` on [`Op`] (a new operation does not compile until it
//! is priced here or said not to be modeled).

use domain::model::{ListingStatus, Money, OrderStatus, Party, UserRole};
use keyschema::entities;
use keyschema::patterns::Op;
use keyschema::table::Index;
use keyschema::{access, keys, write, Change};

use crate::requests::*;

/// The operation of the registry a kind of the mix is.
pub type Kind = Op;

/// The actions of one request of this kind.
pub fn actions(kind: Kind, ids: &Ids, kb: Sizes, page: f64) -> R {
    let listing_decl = &entities::listing::ENTITY;
    let active = attrs(&listing(ids, &ids.listing, ListingStatus::Active));
    Ok(match kind {
        Op::MarketplaceAp6 => {
            // Of GSI7, the cards: a page reads the cards alone.
            sharded(ids, page, kb.card, |shard| access::category_listings(&ids.category, shard, None))?
        }
        Op::BeyondAp2 => {
            let (from, to) = ((0, ids.listing), (Money::MAX.cents(), ids.listing));
            sharded(ids, page, kb.card, |shard| access::listings_by_price(&ids.category, shard, from, to))?
        }
        // The listing and its details in one Query: the bytes of the whole
        // listing (mix.json's `listing` size is a listing with its text).
        Op::MarketplaceAp3 => vec![read(access::listing_with_details(&ids.listing)?, 1.0, kb.listing)],
        Op::BeyondAp4 => {
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
        Op::MarketplaceAp4 => vec![read(access::seller_listings(&ids.seller, None)?, page, kb.card)],
        // The product, its details and its other shares of stock in one
        // Query (a Query sums its items' sizes before rounding).
        Op::CatalogAp3 => {
            let shares = f64::from(ids.product_shards.saturating_sub(1));
            let kb_all = kb.product + shares * kb.share;
            vec![read(access::product_with_details(&ids.product)?, 1.0, kb_all)]
        }
        // Of GSI7 and GSI6, the products' cards (a listing card's size).
        Op::CatalogAp8 => vec![read(access::products_by_category(&ids.category)?, page, kb.card)],
        Op::CatalogAp6 => vec![read(access::products_by_brand(&ids.brand)?, page, kb.card)],
        // First pages from memory for a minute (catalog's FIRST_PAGES).
        Op::CatalogAp2 => vec![cached(read(access::categories()?, page, kb.small), 60.0)],
        Op::CatalogAp1 => vec![cached(read(access::brands()?, page, kb.small), 60.0)],
        Op::CreateListing => {
            let new = listing(ids, &ids.new_listing, ListingStatus::Active);
            // The category read (remembered five minutes), the seller read
            // (already a seller: not rewritten), the listing put: with its
            // description (mix.json's listing holds its text and fits a
            // write unit), so no details beside it and no transaction.
            let mut out = vec![
                cached(get(keys::category(&ids.category)?, kb.small, false), 300.0),
                get(keys::user(&ids.seller)?, kb.user, false),
                put(&new, kb.listing, false)?,
            ];
            // Its browse, price and near keys are in the put: the stream
            // processor's repair finds them right and writes nothing (were
            // any left to it, one more write of the item, a copy in every
            // index it is then in).
            let put_keys = listing_decl.written_keys(&attrs(&new))?.keys;
            if put_keys != listing_decl.item_keys(&attrs(&new))?.keys {
                let none = Change::untimed(keys::listing(&ids.new_listing)?);
                out.push(update_from(listing_decl, put_keys, &attrs(&new), &none, kb.listing, false)?);
            }
            // And its search postings, put.
            out.extend(postings(ids, &ids.new_listing, kb)?);
            out
        }
        Op::BeyondAp5 => {
            // The heads of the draw's lists (21 postings each), then the
            // listings returned and the spare (one match more than the
            // page answers), in one BatchGetItem, which bills each item
            // its own units (a 4 KB unit at least: 0.5 RRU a listing).
            let mut out = Vec::new();
            for term in &ids.searched {
                out.push(read(access::postings(term)?, page + 1.0, kb.posting));
            }
            out.push(Action::Read {
                index: Index::Table,
                pk: keys::listing(&ids.new_listing)?.pk.clone(),
                items: 1.0,
                kb: kb.listing,
                consistent: false,
                ttl: None,
                times: page + 1.0,
            });
            out
        }
        Op::UpdateListing => {
            // The API's write moves the price's sort key itself (the old
            // entry deleted, the new one put) and rewrites every other copy
            // that holds the price; the stream processor's repair finds the
            // keys right and writes nothing.
            let price = Money::from_cents(2600);
            let change = write::listing::edit(&ids.listing, &ids.seller, None, None, Some(price), NOW)?;
            let api = update(listing_decl, &active, &change, kb.listing, false)?;
            // The answer's description is in the item the update returns
            // (no details read).
            vec![api]
        }
        Op::AddFavorite | Op::RemoveFavorite => {
            let adding = kind == Op::AddFavorite;
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
            let count = Change::untimed(keys::listing(&ids.listing)?).add(write::attr::FAVORITE_COUNT, 1);
            let aggregate = update(listing_decl, &active, &count, kb.listing, true)?;
            let of = derived::aggregates::ListingFavorites::of(&ids.listing, None)?;
            out.extend(counted(keys::favorite_marker(&ids.buyer, &ids.listing)?, aggregate, &of)?);
            out
        }
        Op::PlaceListingOrder => {
            let sell = write::listing::sell(&ids.sold_listing, &ids.seller, Money::from_cents(2500), NOW)?;
            let before = attrs(&listing(ids, &ids.sold_listing, ListingStatus::Active));
            let bought = (keys::listing(&ids.sold_listing)?.into(), ids.sold_listing.to_string(), kb.listing);
            let mut out = placement(ids, kb, true, bought, update(listing_decl, &before, &sell, kb.listing, true)?)?;
            // The sold listing keeps its postings while its order is
            // pending (a cancel then relists it); the seller's confirm has
            // the stream processor read the listing and delete them: in
            // the share of the draws whose sale is not cancelled (each
            // cancel of the mix is of a pending listing order).
            if ids.sale_accepted {
                out.extend(postings(ids, &ids.sold_listing, kb)?);
            }
            out
        }
        Op::PlaceCatalogOrder => {
            // One share of the stock (the product item, or a share beside
            // it), after the other shares' consistent Query if it has any.
            let (price, shard) = (Money::from_cents(1999), ids.stock_shard);
            let take = write::product::take_from_share(&ids.product, shard, 1, price)?;
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
        Op::ConfirmOrder | Op::CancelOrder => {
            let o = order(ids, true, OrderStatus::Pending);
            let mut out = vec![get(keys::order(&ids.order)?, kb.order, false)];
            let changes = if kind == Op::CancelOrder {
                write::order::cancel(&o, NOW)?
            } else {
                vec![(
                    String::new(),
                    write::order::move_status(&ids.order, o.shard, OrderStatus::Pending, OrderStatus::Confirmed, NOW)?,
                )]
            };
            let sold = attrs(&listing(ids, &ids.sold_listing, ListingStatus::Sold));
            for (_, change) in changes {
                if change.key.pk.starts_with("ORDER#") {
                    // A confirm is one item, written without a transaction.
                    let tx = kind == Op::CancelOrder;
                    out.push(update(&entities::order::ENTITY, &attrs(&o), &change, kb.order, tx)?);
                } else {
                    // The listing active again: the stream processor then
                    // adds its browse, price and near keys (a write of the
                    // item) and reads its postings, kept through the sale
                    // (one strongly consistent read of each: none to put).
                    out.extend(update_then_stream(listing_decl, &sold, &change, kb.listing, true)?);
                    out.push(get(keys::listing(&ids.sold_listing)?, kb.listing, true));
                    for term in posting_terms(ids, &ids.sold_listing) {
                        out.push(get(keys::posting(&term, &ids.sold_listing)?.into_key(), kb.posting, true));
                    }
                }
            }
            out
        }
        Op::WriteReview => {
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
            let rated = Change::untimed(keys::user(&ids.seller)?).add(write::attr::RATING_SUM, 5);
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
        Op::CategoryRating => vec![
            cached(get(keys::category(&ids.category)?, kb.small, false), 300.0),
            get(keys::category_rating(&ids.category)?, kb.small, false),
        ],
        // Not in the mix: a mix naming one fails here, not silently.
        Op::CatalogAp7
        | Op::CatalogAp9
        | Op::ChangeStock
        | Op::MarketplaceAp1
        | Op::MarketplaceAp2
        | Op::MarketplaceAp5
        | Op::BeyondAp1
        | Op::MarketplaceAp7
        | Op::MarketplaceAp8
        | Op::MarketplaceAp9
        | Op::MarketplaceAp10
        | Op::MarketplaceAp11
        | Op::BeyondAp3
        | Op::EcommerceAp3
        | Op::EcommerceAp4
        | Op::EcommerceAp5
        | Op::EcommerceAp6
        | Op::EcommerceAp7
        | Op::EcommerceAp8
        | Op::CreateProduct
        | Op::SignUp
        | Op::SendMessage
        | Op::GetMe
        | Op::UpdateUser
        | Op::CreateBrand
        | Op::CreateCategory
        | Op::RaiseListingShards
        | Op::RaiseStockShards
        | Op::ModerateReview => {
            return Err(format!("`{}` is not in the capacity model (tools/capacity/src/kinds.rs)", kind.name()).into())
        }
    })
}

/// What the stream processor writes of a listing's search postings when it
/// is created or its sale accepted (a confirm): the listing
/// read consistently, then its terms put or deleted in one
/// `BatchWriteItem` (8: the corpus's 8.2 a title rounded down; one on the
/// drawn term, 7 on cold ones), a write unit each.
fn postings(ids: &Ids, listing: &domain::ids::ListingId, kb: Sizes) -> R {
    let mut out = vec![get(keys::listing(listing)?, kb.listing, true)];
    for term in posting_terms(ids, listing) {
        out.push(small_write(keys::posting(&term, listing)?.into_key(), kb.posting, false));
    }
    // The listing read again after the writes (changed meanwhile: settled
    // again from the newer state; the model's never is).
    out.push(get(keys::listing(listing)?, kb.listing, true));
    Ok(out)
}

/// The terms of a listing's postings: the drawn one and cold ones.
fn posting_terms(ids: &Ids, listing: &domain::ids::ListingId) -> Vec<String> {
    (0..POSTINGS_PER_LISTING).map(|k| if k == 0 { ids.term.clone() } else { format!("w{listing}-{k}") }).collect()
}
