//! Demo data for the local stack and the sample events: a few brands,
//! categories and products with fixed ids (events/ refers to them).

use domain::ids::{ListingId, ProductId};
use domain::model::{
    Brand, Category, Listing, ListingStatus, Money, Order, OrderItem, OrderLine, OrderMessage, OrderStatus, Product,
    Review, User, UserRole,
};
use domain::time::{now_ms, rfc3339};
use keyschema::records::EmailGuard;
use keyschema::Entity;
use store::{item, Store, StoreError};

/// Product ids used by the sample events.
pub const PRODUCT_IDS: [&str; 4] = [
    "01JF8Z5Q000000000000000001",
    "01JF8Z5Q000000000000000002",
    "01JF8Z5Q000000000000000003",
    "01JF8Z5Q000000000000000004",
];

/// Listing ids used by the sample events (active, active, sold).
pub const LISTING_IDS: [&str; 3] =
    ["01JF8Z6A000000000000000001", "01JF8Z6A000000000000000002", "01JF8Z6A000000000000000003"];

/// The demo order: bob bought alice's sold listing; confirmed (a pending
/// one placed in 2024 would be cancelled by the expiry sweeper at once).
pub const ORDER_ID: &str = "01JF8Z7B000000000000000001";

/// A delivered demo order: bob bought erin's teapot and reviewed her;
/// erin has not reviewed bob yet (the sample event does).
pub const DELIVERED_ORDER_ID: &str = "01JF8Z7B000000000000000002";

/// The teapot that order bought (sold).
pub const DELIVERED_LISTING_ID: &str = "01JF8Z6A000000000000000004";

/// Bob's review of erin, on the delivered order.
pub const REVIEW_ID: &str = "01JF8Z8C000000000000000001";

/// Demo users: `alice` and `erin` sell, `bob` buys.
pub const USERS: [(&str, &str, &str); 3] =
    [("alice", "Alice", "alice@example.com"), ("bob", "Bob", "bob@example.com"), ("erin", "Erin", "erin@example.com")];

/// Writes the demo items (overwriting, so loading twice is harmless).
pub async fn load(store: &Store) -> Result<usize, StoreError> {
    let now = rfc3339(now_ms());
    let brands = [("acme", "Acme"), ("globex", "Globex"), ("initech", "Initech")];
    // Books is spread over 4 shards, as a category expected to be hot is.
    let categories = [("pottery", "Pottery", 1), ("electronics", "Electronics", 1), ("books", "Books", 4)];
    let products = [
        (PRODUCT_IDS[0], "Stoneware mug", "acme", "pottery", 2800, 120),
        (PRODUCT_IDS[1], "Glazed vase", "acme", "pottery", 6500, 15),
        (PRODUCT_IDS[2], "Noise-cancelling headphones", "globex", "electronics", 19999, 40),
        (PRODUCT_IDS[3], "Rust in Action", "initech", "books", 3999, 300),
    ];
    let mut count = 0;
    for (id, name) in brands {
        let brand = Brand { brand_id: parse(id)?, name: name.into(), created_at: now.clone() };
        put(store, &brand).await?;
        count += 1;
    }
    for (id, name, listing_shards) in categories {
        let category = Category {
            category_id: parse(id)?,
            name: name.into(),
            listing_shards,
            listing_shards_before: None,
            listing_shards_from: None,
            created_at: now.clone(),
        };
        put(store, &category).await?;
        count += 1;
    }
    for (id, name, brand, category, cents, stock) in products {
        let product = Product {
            product_id: parse::<ProductId>(id)?,
            name: name.into(),
            brand_id: parse(brand)?,
            category_id: parse(category)?,
            price: Money::from_cents(cents),
            stock_level: stock,
            stock_shards: 1,
            description: None,
            created_at: now.clone(),
            updated_at: now.clone(),
        };
        put(store, &product).await?;
        count += 1;
    }
    for (id, name, email) in USERS {
        let role = if id == "bob" { UserRole::Buyer } else { UserRole::Both };
        let user = User {
            home: None,
            user_id: parse::<domain::ids::UserId>(id)?,
            name: name.into(),
            email: parse::<domain::ids::Email>(email)?,
            role,
            rating_sum: 0,
            review_count: 0,
            created_at: now.clone(),
            updated_at: now.clone(),
        };
        put(store, &EmailGuard { email: user.email.clone(), user_id: user.user_id.clone() }).await?;
        put(store, &user).await?;
        count += 2;
    }
    let listings = [
        (LISTING_IDS[0], "Stoneware mug, blue glaze", "pottery", 2800, ListingStatus::Active),
        (LISTING_IDS[1], "First edition, signed", "books", 12000, ListingStatus::Active),
        (LISTING_IDS[2], "Vase", "pottery", 6500, ListingStatus::Sold),
    ];
    for (id, title, category, cents, status) in listings {
        let listing_id = parse::<ListingId>(id)?;
        // The mug in Paris and the book in London: `GET /listings/near`.
        let location = match id {
            _ if id == LISTING_IDS[0] => domain::geo::Location::new(48.8566, 2.3522),
            _ if id == LISTING_IDS[1] => domain::geo::Location::new(51.5074, -0.1278),
            _ => None,
        };
        let shards = categories.iter().find(|c| c.0 == category).map_or(1, |c| c.2);
        let listing = Listing {
            home: None,
            listing_id,
            seller_id: parse::<domain::ids::UserId>("alice")?,
            title: title.into(),
            price: Money::from_cents(cents),
            category_id: parse(category)?,
            shard: domain::shard::listing_shard(&listing_id, shards),
            description: None,
            location: None,
            geohash: None,
            status,
            favorite_count: 0,
            created_at: now.clone(),
            updated_at: now.clone(),
        }
        .locate(location);
        // As the stream processor leaves it: every index it is in now.
        let keys = <Listing as Entity>::DECL.item_keys(&listing.attrs()?)?;
        let item = item::with_keys(&listing, &keys)?;
        store.client().put_item().table_name(store.table()).set_item(Some(item)).send().await?;
        // The partition of a dense cell its near key is in (the mug: Paris's).
        if let Some(cell) = listing.geohash.as_deref().filter(|_| status == ListingStatus::Active) {
            if let Some(cell) = keyschema::records::NearCell::of(cell) {
                store.put(&cell).await?;
                count += 1;
            }
        }
        // And its search postings.
        let postings = keyschema::records::Posting::of_listing(&listing);
        count += 1 + postings.len();
        store.write_batch(&postings, &[]).await?;
    }
    let order_id = parse(ORDER_ID)?;
    let order = Order {
        home: None,
        order_id,
        buyer_id: parse("bob")?,
        seller_id: Some(parse("alice")?),
        listing_id: Some(parse(LISTING_IDS[2])?),
        category_id: Some(parse("pottery")?),
        status: OrderStatus::Confirmed,
        total: Money::from_cents(6500),
        lines: vec![OrderLine::new(LISTING_IDS[2].to_owned(), 1)],
        shard: domain::shard::order_shard(&order_id, domain::shard::DEFAULT_SHARD_COUNT),
        buyer_review_id: None,
        seller_review_id: None,
        held_items: Vec::new(),
        created_at: now.clone(),
        updated_at: now.clone(),
    };
    let item = OrderItem {
        order_id,
        item_id: LISTING_IDS[2].to_owned(),
        name: "Vase".into(),
        qty: 1,
        price: Money::from_cents(6500),
        buyer_id: parse("bob")?,
        seller_id: Some(parse("alice")?),
    };
    put(store, &order).await?;
    put(store, &item).await?;
    Ok(count + 2 + load_delivered(store, &now).await?)
}

/// The delivered order, its teapot, and bob's review of erin.
async fn load_delivered(store: &Store, now: &str) -> Result<usize, StoreError> {
    let (alice, bob): (domain::ids::UserId, domain::ids::UserId) = (parse("erin")?, parse("bob")?);
    let listing = Listing {
        home: None,
        listing_id: parse(DELIVERED_LISTING_ID)?,
        seller_id: alice.clone(),
        title: "Teapot, celadon".into(),
        price: Money::from_cents(4500),
        category_id: parse("pottery")?,
        shard: 0,
        description: None,
        location: None,
        geohash: None,
        status: ListingStatus::Sold,
        favorite_count: 0,
        created_at: now.to_owned(),
        updated_at: now.to_owned(),
    };
    let order_id = parse(DELIVERED_ORDER_ID)?;
    let review = Review {
        home: None,
        review_id: parse(REVIEW_ID)?,
        reviewed_user_id: alice.clone(),
        author_id: bob.clone(),
        order_id,
        category_id: Some(listing.category_id.clone()),
        rating: 5,
        body: "Beautiful teapot, carefully packed.".into(),
        created_at: now.to_owned(),
    };
    let order = Order {
        home: None,
        order_id,
        buyer_id: bob.clone(),
        seller_id: Some(alice.clone()),
        listing_id: Some(listing.listing_id),
        category_id: Some(listing.category_id.clone()),
        status: OrderStatus::Delivered,
        total: listing.price,
        lines: vec![OrderLine::new(DELIVERED_LISTING_ID.to_owned(), 1)],
        shard: domain::shard::order_shard(&order_id, domain::shard::DEFAULT_SHARD_COUNT),
        buyer_review_id: Some(review.review_id),
        seller_review_id: None,
        held_items: Vec::new(),
        created_at: now.to_owned(),
        updated_at: now.to_owned(),
    };
    let item = OrderItem {
        order_id,
        item_id: DELIVERED_LISTING_ID.to_owned(),
        name: listing.title.clone(),
        qty: 1,
        price: listing.price,
        buyer_id: bob,
        seller_id: Some(alice),
    };
    put(store, &listing).await?;
    put(store, &order).await?;
    put(store, &item).await?;
    put(store, &review).await?;
    let message = OrderMessage {
        message_id: parse("01JF8Z9D000000000000000001")?,
        order_id,
        author_id: review.author_id.clone(),
        body: "Arrived safely, thank you!".into(),
        buyer_id: review.author_id.clone(),
        seller_id: review.reviewed_user_id.clone(),
        created_at: now.to_owned(),
    };
    put(store, &message).await?;
    Ok(5)
}

fn parse<T: std::str::FromStr<Err = domain::ids::IdError>>(s: &str) -> Result<T, StoreError> {
    s.parse().map_err(|e: domain::ids::IdError| StoreError::Service { code: "DemoData".into(), message: e.to_string() })
}

async fn put<E: Entity>(store: &Store, entity: &E) -> Result<(), StoreError> {
    store.client().put_item().table_name(store.table()).set_item(Some(item::to_item(entity)?)).send().await?;
    Ok(())
}
