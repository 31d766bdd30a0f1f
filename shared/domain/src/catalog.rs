//! The catalog's entities: brands, categories (of products and listings)
//! and products with their stock and description (re-exported by
//! [`crate::model`]).

use serde::{Deserialize, Serialize};

use crate::ids::{BrandId, CategoryId, ProductId};
use crate::values::Money;

/// A catalog brand.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Brand {
    /// Slug id.
    pub brand_id: BrandId,
    /// Display name.
    pub name: String,
    /// RFC 3339 creation time.
    pub created_at: String,
}

/// A category of catalog products and marketplace listings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Category {
    /// Slug id.
    pub category_id: CategoryId,
    /// Display name.
    pub name: String,
    /// How many shards its listings' browse and price keys are spread over
    /// (1 to [`crate::shard::MAX_LISTING_SHARDS`]; 1 for categories created
    /// before there were shards): readers query them all.
    #[serde(default = "crate::shard::one")]
    pub listing_shards: u16,
    /// After a raise of `listing_shards`: the count new listings keep using
    /// until `listing_shards_from`, when every function instance's cached
    /// copy of the category knows the new count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing_shards_before: Option<u16>,
    /// See `listing_shards_before` (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing_shards_from: Option<String>,
    /// RFC 3339 creation time.
    pub created_at: String,
}

impl Category {
    /// The shard count a listing created at `now_ms` spreads over: the
    /// previous count until a raise has reached every reader.
    pub fn shards_for_new_listing(&self, now_ms: u64) -> u16 {
        let from = self.listing_shards_from.as_deref().and_then(crate::time::parse_rfc3339);
        match (self.listing_shards_before, from) {
            (Some(before), Some(from)) if now_ms < from => before,
            _ => self.listing_shards,
        }
    }
}

/// A catalog product with its stock level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Product {
    /// ULID id.
    pub product_id: ProductId,
    /// Display name.
    pub name: String,
    /// The brand it belongs to.
    pub brand_id: BrandId,
    /// The category it belongs to.
    pub category_id: CategoryId,
    /// Unit price.
    pub price: Money,
    /// Units in stock; never negative. On the item, the first share of
    /// the stock (all of it with one share); in an answer of the product,
    /// the total of its shares.
    pub stock_level: u32,
    /// Items the stock is shared over (1 to [`crate::stock::MAX_SHARDS`]): the
    /// product item and [`crate::stock::ProductStock`] items `1..stock_shards`, so
    /// that concurrent orders take from different items. Absent: one.
    #[serde(default = "one_share", skip_serializing_if = "is_one_share")]
    pub stock_shards: u16,
    /// Only on products written before descriptions moved out
    /// ([`ProductDetails`]); reconcile moves it there. Never written now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last change of its catalog fields (no stock
    /// change, of its level or of its shares, sets it).
    pub updated_at: String,
}

fn one_share() -> u16 {
    1
}

fn is_one_share(n: &u16) -> bool {
    *n == 1
}

/// A product's long text, beside the product in its partition: never in
/// an index copy, so a list of products reads items of bounded size and a
/// stock change rewrites no description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProductDetails {
    /// The product.
    pub product_id: ProductId,
    /// Its description (up to 4,000 characters).
    pub description: String,
}

impl Product {
    /// The largest stock level a product may hold.
    pub const MAX_STOCK: u32 = crate::stock::MAX_STOCK;

    /// The product as answered with its other shares of stock: its
    /// `stockLevel` their total.
    pub fn with_stock(mut self, shares: &[crate::stock::ProductStock]) -> Product {
        let total = shares.iter().fold(u64::from(self.stock_level), |t, s| t + u64::from(s.stock_level));
        self.stock_level = u32::try_from(total).unwrap_or(u32::MAX);
        self
    }

    /// The product with its details' description, as answered (a product
    /// written before details carries its own).
    pub fn with_details(mut self, details: Option<ProductDetails>) -> Product {
        if let Some(d) = details {
            self.description = Some(d.description);
        }
        self
    }
}
