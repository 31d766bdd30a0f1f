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

/// Creates the table (on-demand, the GSIs with their projections, a
/// NEW_AND_OLD_IMAGES stream, TTL on `expiresAt`) unless it exists.
pub async fn create_table(client: &Client, name: &str) -> Result<(), StoreError> {
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
    for attr in Index::all_key_attributes() {
        req = req.attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name(attr)
                .attribute_type(ScalarAttributeType::S)
                .build()
                .map_err(invalid)?,
        );
    }
    for index in Index::GSIS {
        req = req.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(index.name().unwrap_or_default())
                .set_key_schema(Some(key_schema(index)?))
                .projection(projection(index.projection()))
                .build()
                .map_err(invalid)?,
        );
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
