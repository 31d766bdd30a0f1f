//! The registry's one list: every operation of the API, each declared
//! once (see [`super`]). A read: its id in the seeds, its short name, what
//! it answers, its requests, its entity, its request as the docs show it
//! (built with [`super::samples`] by the pattern's own function), its route.
//! A write: its name, what it does, its requests, its entity, its route.

use domain::ids::{ListingId, OrderId};
use domain::values::{ListingStatus, OrderStatus};

use super::samples::{self, brand as sb, category as sc, email as se, ulid as su, user as suser};
use super::{declare_registry, Pattern, Request, Write};
use crate::access::*;
use crate::keys;
use crate::table::EntityType;
use Request::{Get, Query};

declare_registry! {
    reads {
        CatalogAp1 => (
            "catalog AP1", "list brands", "all brands", "Query", EntityType::Brand, || Ok(Query(brands()?.into_query())), "GET /brands",
        ),
        CatalogAp2 => (
            "catalog AP2", "list categories",
            "all categories",
            "Query", EntityType::Category,
            || Ok(Query(categories()?.into_query())),
            "GET /categories",
        ),
        CatalogAp3 => (
            "catalog AP3", "get product",
            "product by id, with its description",
            "Query", EntityType::Product,
            || Ok(Query(product_with_details(&domain::ids::ProductId::from_ulid(su("P")))?.into_query())),
            "GET /products/{productId}",
        ),
        ChangeStock => (
            "catalog AP4-5", "change stock",
            "change stock (never below zero)",
            "TransactWriteItems (token) + Query", EntityType::Product,
            || Ok(Query(product_with_details(&domain::ids::ProductId::from_ulid(su("P")))?.into_query())),
            "POST /products/{productId}/stock",
        ),
        CatalogAp6 => (
            "catalog AP6", "products by brand",
            "products of a brand",
            "Query", EntityType::Product,
            || Ok(Query(products_by_brand(&sb())?.into_query())),
            "GET /brands/{brandId}/products",
        ),
        CatalogAp7 => (
            "catalog AP7", "products by brand in a category",
            "products of a brand in a category",
            "Query", EntityType::Product,
            || Ok(Query(products_by_brand_and_category(&sb(), &sc())?.into_query())),
            "GET /brands/{brandId}/products?categoryId=",
        ),
        CatalogAp8 => (
            "catalog AP8", "products by category",
            "products of a category",
            "Query", EntityType::Product,
            || Ok(Query(products_by_category(&sc())?.into_query())),
            "GET /categories/{categoryId}/products",
        ),
        CatalogAp9 => (
            "catalog AP9", "products by category of a brand",
            "products of a category by a brand",
            "Query", EntityType::Product,
            || Ok(Query(products_by_category_and_brand(&sc(), &sb())?.into_query())),
            "GET /categories/{categoryId}/products?brandId=",
        ),
        MarketplaceAp1 => (
            "marketplace AP1", "get user",
            "user by id",
            "GetItem", EntityType::User,
            || Ok(Get(keys::user(&suser("user"))?.into())),
            "GET /users/{userId}",
        ),
        MarketplaceAp2 => (
            "marketplace AP2", "user by email",
            "user by email (admin)",
            "Query", EntityType::User,
            || Ok(Query(user_by_email(&se())?.into_query())),
            "GET /users?email=",
        ),
        MarketplaceAp3 => (
            "marketplace AP3", "get listing",
            "listing by id, with its description",
            "Query", EntityType::Listing,
            || Ok(Query(listing_with_details(&domain::ids::ListingId::from_ulid(su("K")))?.into_query())),
            "GET /listings/{listingId}",
        ),
        MarketplaceAp4 => (
            "marketplace AP4", "seller listings",
            "a seller's listings, any status",
            "Query", EntityType::Listing,
            || Ok(Query(seller_listings(&suser("seller"), None)?.into_query())),
            "GET /sellers/{sellerId}/listings",
        ),
        MarketplaceAp5 => (
            "marketplace AP5", "seller active listings",
            "a seller's active listings",
            "Query", EntityType::Listing,
            || Ok(Query(seller_listings(&suser("seller"), Some(ListingStatus::Active))?.into_query())),
            "GET /sellers/{sellerId}/listings/active",
        ),
        MarketplaceAp6 => (
            "marketplace AP6", "browse category",
            "active listings of a category, newest first",
            "Query x shards", EntityType::Listing,
            || {
                Ok(Query(
                    category_listings(&sc(), 7, Some((ListingId::from_ulid(su("A")), ListingId::from_ulid(su("H")))))?
                        .into_query(),
                ))
            },
            "GET /categories/{categoryId}/listings",
        ),
        BeyondAp1 => (
            "beyond AP1", "list favorites",
            "a user's favorite listings, newest first",
            "Query", EntityType::Favorite,
            || Ok(Query(favorites_of(&suser("user"))?.into_query())),
            "GET /users/me/favorites",
        ),
        BeyondAp2 => (
            "beyond AP2", "browse by price",
            "active listings of a category by price, cheapest first",
            "Query x shards", EntityType::Listing,
            || {
                Ok(Query(
                    listings_by_price(
                        &sc(),
                        7,
                        (1200, ListingId::from_ulid(su("A"))),
                        (3400, ListingId::from_ulid(su("H"))),
                    )?
                    .into_query(),
                ))
            },
            "GET /categories/{categoryId}/listings?sort=price&minPrice=&maxPrice=",
        ),
        BeyondAp4 => (
            "beyond AP4", "listings near me",
            "active listings near a point, nearest first by ring",
            "Query x cells (of GSI5, the cards)", EntityType::Listing,
            || Ok(Query(listings_near("u4pru", None, None)?.into_query())),
            "GET /listings/near?lat=&lon=&radiusKm=",
        ),
        BeyondAp5 => (
            "beyond AP5", "search listings",
            "active listings whose title holds words, newest first",
            "Query x lists + BatchGetItem", EntityType::Posting,
            || Ok(Query(postings(&samples::term())?.into_query())),
            "GET /search/listings?q=",
        ),
        MarketplaceAp7 => (
            "marketplace AP7, e-commerce AP1", "get order",
            "order by id",
            "GetItem", EntityType::Order,
            || Ok(Get(keys::order(&OrderId::from_ulid(su("R")))?.into())),
            "GET /orders/{orderId}",
        ),
        MarketplaceAp8 => (
            "marketplace AP8, e-commerce AP2", "buyer orders",
            "a buyer's orders, newest first",
            "Query", EntityType::Order,
            || Ok(Query(buyer_orders(&suser("buyer"))?.into_query())),
            "GET /buyers/{buyerId}/orders",
        ),
        MarketplaceAp9 => (
            "marketplace AP9", "seller orders",
            "a seller's sales, newest first",
            "Query", EntityType::Order,
            || Ok(Query(seller_orders(&suser("seller"))?.into_query())),
            "GET /sellers/{sellerId}/orders",
        ),
        MarketplaceAp10 => (
            "marketplace AP10", "reviews about a user",
            "reviews about a user, newest first",
            "Query", EntityType::Review,
            || Ok(Query(reviews_about(&suser("user"))?.into_query())),
            "GET /users/{userId}/reviews",
        ),
        MarketplaceAp11 => (
            "marketplace AP11", "reviews by a user",
            "reviews written by a user, newest first",
            "Query", EntityType::Review,
            || Ok(Query(reviews_by(&suser("author"))?.into_query())),
            "GET /users/{userId}/reviews/written",
        ),
        BeyondAp3 => (
            "beyond AP3", "order messages",
            "messages of an order, oldest first",
            "Query", EntityType::OrderMessage,
            || Ok(Query(order_messages(&OrderId::from_ulid(su("R")))?.into_query())),
            "GET /orders/{orderId}/messages",
        ),
        EcommerceAp3 => (
            "e-commerce AP3", "orders by status",
            "orders by status, newest first",
            "Query x shards", EntityType::Order,
            || Ok(Query(orders_by_status_shard(OrderStatus::Pending, 7, None)?.into_query())),
            "GET /orders?status=",
        ),
        EcommerceAp4 => (
            "e-commerce AP4", "order items",
            "items of an order (held in the order, or beside it)",
            "Query", EntityType::OrderItem,
            || Ok(Query(order_with_items(&OrderId::from_ulid(su("R")))?.into_query())),
            "GET /orders/{orderId}/items",
        ),
        EcommerceAp5 => (
            "e-commerce AP5", "order item",
            "one item of an order (with the order, which may hold it)",
            "BatchGetItem", EntityType::OrderItem,
            || Ok(Get(keys::order_item(&OrderId::from_ulid(su("R")), &su("E").to_string())?.into())),
            "GET /orders/{orderId}/items/{itemId}",
        ),
        EcommerceAp6 => (
            "e-commerce AP6", "customer profile",
            "customer profile",
            "GetItem", EntityType::User,
            || Ok(Get(keys::user(&suser("user"))?.into())),
            "GET /users/{userId}",
        ),
        EcommerceAp7 => (
            "e-commerce AP7", "recent orders",
            "recent orders, all statuses",
            "Query x statuses x shards", EntityType::Order,
            || Ok(Query(orders_by_status_shard(OrderStatus::Pending, 7, None)?.into_query())),
            "GET /orders",
        ),
        EcommerceAp8 => (
            "e-commerce AP8", "orders in a date range",
            "orders in a date range",
            "Query x shards", EntityType::Order,
            || {
                Ok(Query(
                    orders_by_status_shard(
                        OrderStatus::Pending,
                        7,
                        Some((OrderId::from_ulid(su("A")), OrderId::from_ulid(su("H")))),
                    )?
                    .into_query(),
                ))
            },
            "GET /orders?status=&from=&to=",
        ),
        GetMe => (
            "get me",
            "get me",
            "the caller's own profile, with its email",
            "GetItem", EntityType::User,
            || Ok(Get(keys::user(&suser("user"))?.into())),
            "GET /users/me",
        ),
        CategoryRating => (
            "category rating",
            "get category",
            "a category with its buyers' rating",
            "GetItem x2", EntityType::Category,
            || Ok(Get(keys::category(&sc())?.into())),
            "GET /categories/{categoryId}",
        ),
    }
    writes {
        CreateProduct => (
            "create product",
            "a product of the catalog, with its description and stock (admin)",
            "GetItem x2 + TransactWriteItems", EntityType::Product,
            "POST /products",
        ),
        SignUp => ("sign-up", "the caller's account, its email unique", "TransactWriteItems", EntityType::User, "POST /users"),
        UpdateUser => (
            "update user",
            "the caller's name or email (an email moves its guard: a transaction)",
            "UpdateItem (a name), GetItem + TransactWriteItems (an email)", EntityType::User,
            "PATCH /users/{userId}",
        ),
        CreateBrand => ("create brand", "a brand of the catalog (admin)", "PutItem", EntityType::Brand, "POST /brands"),
        CreateCategory => (
            "create category",
            "a category, with its listing shards (admin)",
            "PutItem", EntityType::Category,
            "POST /categories",
        ),
        RaiseListingShards => (
            "raise listing shards",
            "a category's listing shards raised, as its traffic grows (admin)",
            "GetItem + UpdateItem", EntityType::Category,
            "PATCH /categories/{categoryId}",
        ),
        RaiseStockShards => (
            "raise stock shards",
            "a product's stock shared over more items, as its orders grow (admin)",
            "Query + TransactWriteItems", EntityType::Product,
            "PATCH /products/{productId}",
        ),
        CreateListing => (
            "create listing",
            "a listing of the caller's, with its description",
            "GetItem x2 + PutItem (with a long description or a key: TransactWriteItems)", EntityType::Listing,
            "POST /listings",
        ),
        UpdateListing => (
            "update listing",
            "a listing's title, price or status (its seller)",
            "UpdateItem + GetItem unless the description is in the item (+ TransactWriteItems: a longer title moves it out)", EntityType::Listing,
            "PATCH /listings/{listingId}",
        ),
        AddFavorite => (
            "add favorite",
            "a listing among the caller's favorites",
            "BatchGetItem + PutItem", EntityType::Favorite,
            "PUT /users/me/favorites/{listingId}",
        ),
        RemoveFavorite => (
            "remove favorite",
            "a listing out of the caller's favorites",
            "TransactWriteItems", EntityType::Favorite,
            "DELETE /users/me/favorites/{listingId}",
        ),
        PlaceListingOrder => (
            "place listing order",
            "an order of one listing, sold once",
            "GetItem + BatchGetItem + TransactWriteItems", EntityType::Order,
            "POST /orders",
        ),
        PlaceCatalogOrder => (
            "place catalog order",
            "an order of products, their stock taken",
            "GetItem + BatchGetItem + TransactWriteItems", EntityType::Order,
            "POST /orders",
        ),
        ConfirmOrder => (
            "confirm order",
            "an order's status moved on (its seller, or an admin)",
            "GetItem + UpdateItem", EntityType::Order,
            "PATCH /orders/{orderId}",
        ),
        CancelOrder => (
            "cancel order",
            "an order cancelled, what it took given back",
            "GetItem + TransactWriteItems", EntityType::Order,
            "PATCH /orders/{orderId}",
        ),
        SendMessage => (
            "send message",
            "a message between an order's parties",
            "GetItem + PutItem", EntityType::OrderMessage,
            "POST /orders/{orderId}/messages",
        ),
        WriteReview => (
            "write review",
            "a party's review of a delivered order",
            "GetItem x2 + TransactWriteItems", EntityType::Review,
            "POST /orders/{orderId}/reviews",
        ),
        ModerateReview => (
            "moderate review",
            "a review removed by moderation (admin)",
            "TransactWriteItems", EntityType::Review,
            "DELETE /users/{userId}/reviews/{reviewId}",
        ),
    }
}
