//! Products: by brand then category, by category then brand.

use super::*;

/// GSI6: a brand's products, by category (catalog AP6, AP7).
pub const BY_BRAND: IndexDecl =
    index("by_brand", key(Index::Gsi6, "BRAND#<brandId>", "CATEGORY#<categoryId>#PRODUCT#<productId>"));
/// GSI7: a category's products, by brand (catalog AP8, AP9); beside the
/// listings' browse partitions (theirs end with a shard).
pub const BY_CATEGORY: IndexDecl =
    index("by_category", key(Index::Gsi7, "CATEGORY#<categoryId>", "BRAND#<brandId>#PRODUCT#<productId>"));
/// The declaration.
pub const ENTITY: EntityDecl = EntityDecl {
    entity: EntityType::Product,
    key: key(Index::Table, "PRODUCT#<productId>", "#METADATA"),
    indexes: &[BY_BRAND, BY_CATEGORY],
    defaults: &[],
    note: "stockLevel: the first share of the stock (all of it with one share)",
};
/// A share of a product's stock beyond the first (`1..stockShards`).
pub const STOCK: EntityDecl = EntityDecl {
    entity: EntityType::ProductStock,
    key: key(Index::Table, "PRODUCT#<productId>", "#STOCK#<shard>"),
    indexes: &[],
    defaults: &[],
    note: "beside the product (read with it in one Query); an order takes from one share or a few, so concurrent orders hold different items",
};
