//! Creates the table from the key schema (the same definition `template.yaml`
//! declares; a test checks they agree). Used by tests and the local stack.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection, ProjectionType,
    ScalarAttributeType, StreamSpecification, StreamViewType, TimeToLiveSpecification,
};
use aws_sdk_dynamodb::Client;
use keyschema::table::{Index, TTL};

use crate::StoreError;

fn key_schema(index: Index) -> Result<Vec<KeySchemaElement>, StoreError> {
    let element = |name: &str, kind| KeySchemaElement::builder().attribute_name(name).key_type(kind).build();
    Ok(vec![
        element(index.pk(), KeyType::Hash).map_err(invalid)?,
        element(index.sk(), KeyType::Range).map_err(invalid)?,
    ])
}

fn projection(p: keyschema::table::Projection) -> Projection {
    let kind = ProjectionType::from(p.kind());
    let attrs = p.attributes().iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    Projection::builder().projection_type(kind).set_non_key_attributes((!attrs.is_empty()).then_some(attrs)).build()
}

fn invalid(e: impl std::fmt::Display) -> StoreError {
    StoreError::Service { code: "InvalidDefinition".into(), message: e.to_string() }
}

fn attribute(name: &str) -> Result<AttributeDefinition, StoreError> {
    AttributeDefinition::builder().attribute_name(name).attribute_type(ScalarAttributeType::S).build().map_err(invalid)
}

fn gsi(index: Index) -> Result<GlobalSecondaryIndex, StoreError> {
    GlobalSecondaryIndex::builder()
        .index_name(index.name().unwrap_or_default())
        .set_key_schema(Some(key_schema(index)?))
        .projection(projection(index.projection()))
        .build()
        .map_err(invalid)
}

/// Creates the table (on-demand, the GSIs with their projections, a
/// NEW_AND_OLD_IMAGES stream, TTL on `expiresAt`) unless it exists.
pub async fn create_table(client: &Client, name: &str) -> Result<(), StoreError> {
    create_table_with(client, name, &Index::GSIS).await
}

/// [`create_table`] with only `gsis` (a table as an earlier release left
/// it, for the index moves of docs/operations.md).
pub async fn create_table_with(client: &Client, name: &str, gsis: &[Index]) -> Result<(), StoreError> {
    let mut req = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .set_key_schema(Some(key_schema(Index::Table)?))
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::NewAndOldImages)
                .build()
                .map_err(invalid)?,
        );
    let used = |a: &&str| [Index::Table].iter().chain(gsis).any(|i| i.pk() == *a || i.sk() == *a);
    for attr in Index::all_key_attributes().filter(used) {
        req = req.attribute_definitions(attribute(attr)?);
    }
    for index in gsis {
        req = req.global_secondary_indexes(gsi(*index)?);
    }
    match req.send().await.map_err(StoreError::from) {
        Ok(_) => {}
        Err(StoreError::Service { code, .. }) if code == "ResourceInUseException" => return Ok(()),
        Err(e) => return Err(e),
    }
    client
        .update_time_to_live()
        .table_name(name)
        .time_to_live_specification(
            TimeToLiveSpecification::builder().enabled(true).attribute_name(TTL).build().map_err(invalid)?,
        )
        .send()
        .await?;
    Ok(())
}

/// What an index move does to the table: one index created (DynamoDB fills
/// it from the items; it answers once ACTIVE) or deleted per `UpdateTable`
/// (docs/operations.md, "Moving an index").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexChange {
    /// `Create` the index, its keys and projection as keyschema declares.
    Create(Index),
    /// `Delete` the index.
    Delete(Index),
}

/// Sends one index change.
pub async fn change_index(client: &Client, name: &str, change: IndexChange) -> Result<(), StoreError> {
    use aws_sdk_dynamodb::types::GlobalSecondaryIndexUpdate as Update;
    use aws_sdk_dynamodb::types::{CreateGlobalSecondaryIndexAction, DeleteGlobalSecondaryIndexAction};
    let update = match change {
        IndexChange::Create(index) => {
            let g = gsi(index)?;
            let create = CreateGlobalSecondaryIndexAction::builder()
                .index_name(g.index_name())
                .set_key_schema(Some(g.key_schema().to_vec()))
                .set_projection(g.projection().cloned())
                .build()
                .map_err(invalid)?;
            Update::builder().create(create).build()
        }
        IndexChange::Delete(index) => Update::builder()
            .delete(
                DeleteGlobalSecondaryIndexAction::builder()
                    .index_name(index.name().unwrap_or_default())
                    .build()
                    .map_err(invalid)?,
            )
            .build(),
    };
    let mut req = client.update_table().table_name(name).global_secondary_index_updates(update);
    if let IndexChange::Create(index) = change {
        req = req.attribute_definitions(attribute(index.pk())?).attribute_definitions(attribute(index.sk())?);
    }
    req.send().await?;
    Ok(())
}

/// The table's indexes and their status (`CREATING`, `ACTIVE`, `DELETING`).
pub async fn index_status(client: &Client, name: &str) -> Result<Vec<(String, String)>, StoreError> {
    let table = client.describe_table().table_name(name).send().await?;
    let gsis = table.table().map(|t| t.global_secondary_indexes()).unwrap_or_default();
    Ok(gsis
        .iter()
        .map(|g| {
            let status = g.index_status().map(|s| s.as_str().to_owned()).unwrap_or_default();
            (g.index_name().unwrap_or_default().to_owned(), status)
        })
        .collect())
}
