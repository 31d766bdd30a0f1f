//! Demo data for the local stack and the sample events: a few brands,
//! categories and products with fixed ids (events/ refers to them).

use keyschema::ids::ProductId;
use keyschema::model::{Brand, Category, Entity, Money, Product};
use keyschema::time::{now_ms, rfc3339};
use store::{item, Store, StoreError};

/// Product ids used by the sample events.
pub const PRODUCT_IDS: [&str; 4] = [
    "01JF8Z5Q000000000000000001",
    "01JF8Z5Q000000000000000002",
    "01JF8Z5Q000000000000000003",
    "01JF8Z5Q000000000000000004",
];

/// Writes the demo items (overwriting, so loading twice is harmless).
pub async fn load(store: &Store) -> Result<usize, StoreError> {
    let now = rfc3339(now_ms());
    let brands = [("acme", "Acme"), ("globex", "Globex"), ("initech", "Initech")];
    let categories = [("pottery", "Pottery"), ("electronics", "Electronics"), ("books", "Books")];
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
    for (id, name) in categories {
        let category = Category { category_id: parse(id)?, name: name.into(), created_at: now.clone() };
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
            description: None,
            created_at: now.clone(),
            updated_at: now.clone(),
        };
        put(store, &product).await?;
        count += 1;
    }
    Ok(count)
}

fn parse<T: std::str::FromStr<Err = keyschema::ids::IdError>>(s: &str) -> Result<T, StoreError> {
    s.parse()
        .map_err(|e: keyschema::ids::IdError| StoreError::Service { code: "DemoData".into(), message: e.to_string() })
}

async fn put<E: Entity>(store: &Store, entity: &E) -> Result<(), StoreError> {
    store.client().put_item().table_name(store.table()).set_item(Some(item::to_item(entity)?)).send().await?;
    Ok(())
}
