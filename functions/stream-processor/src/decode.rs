//! Decoding stream records into work: a listing image for the browse flag,
//! or a counted instance's change (a review's rating, a favorite).

use aws_lambda_events::dynamodb::EventRecord;
use keyschema::decl::EntityDecl;
use keyschema::table::ENTITY_TYPE;
use keyschema::{entities, Attrs, Value};
use store::StoreError;

use crate::counters::CountChange;

/// Why one record could not be processed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The record does not have the shape its entity needs; it never will.
    #[error("malformed record: {0}")]
    Malformed(String),
    /// The write failed (throttled, unavailable, ...); the record is retried.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<keyschema::SchemaError> for RecordError {
    fn from(e: keyschema::SchemaError) -> Self {
        RecordError::Malformed(e.to_string())
    }
}

/// One record, classified.
#[derive(Debug)]
pub enum Work {
    /// The image of an item whose declaration has indexes the stream
    /// processor keeps (its attributes, keys included).
    Keys(&'static EntityDecl, Attrs),
    /// A counted instance inserted or removed: its changes (a review counts
    /// into its user's and its category's ratings).
    Count(Vec<CountChange>),
    /// Nothing to do.
    Skip,
}

/// What a record is about.
pub fn classify(record: &EventRecord) -> Result<Work, RecordError> {
    let malformed = |what: String| RecordError::Malformed(what);
    let Some(sequence_number) = record.change.sequence_number.clone() else {
        return Err(malformed("no sequence number".into()));
    };
    let (image, inserted) = match record.event_name.as_str() {
        "INSERT" => (&record.change.new_image, true),
        "MODIFY" => (&record.change.new_image, false),
        "REMOVE" => (&record.change.old_image, false),
        other => return Err(malformed(format!("unknown event name `{other}`"))),
    };
    let entity = match image.get(ENTITY_TYPE) {
        Some(serde_dynamo::AttributeValue::S(t)) => t.as_str(),
        // Deletions of items that never had a type: nothing to do.
        _ if record.event_name == "REMOVE" => return Ok(Work::Skip),
        _ => return Err(malformed("image without entityType".into())),
    };
    if let Some(decl) = entities::ALL.iter().copied().find(|d| d.entity.as_str() == entity) {
        if record.event_name != "REMOVE" && decl.stream_kept().next().is_some() {
            return Ok(Work::Keys(decl, attrs(image)));
        }
    }
    if record.event_name == "MODIFY" {
        return Ok(Work::Skip);
    }
    let changes = crate::counted::instances(entity, image.clone(), sequence_number, inserted)?;
    Ok(if changes.is_empty() { Work::Skip } else { Work::Count(changes) })
}

/// A stream image's scalar attributes, as the key design reads them.
pub fn attrs(image: &serde_dynamo::Item) -> Attrs {
    image
        .iter()
        .filter_map(|(k, v)| match v {
            serde_dynamo::AttributeValue::S(s) => Some((k.clone(), Value::S(s.clone()))),
            serde_dynamo::AttributeValue::N(n) => Some((k.clone(), Value::N(n.clone()))),
            _ => None,
        })
        .collect()
}
