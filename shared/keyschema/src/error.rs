//! Why a declaration could not give what was asked.

use crate::table::EntityType;
use crate::template::TemplateError;

/// Why a declaration could not give what was asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// A key could not be rendered.
    #[error("{entity:?} {index}: {source}")]
    Template {
        /// The entity.
        entity: EntityType,
        /// The index (or `table`).
        index: &'static str,
        /// What went wrong.
        source: TemplateError,
    },
    /// A change sets part of an index's fields without knowing the others.
    #[error("{entity:?}: a change of `{set}` moves index {index}, which also needs `{missing}`")]
    Incomplete {
        /// The entity.
        entity: EntityType,
        /// The index the change moves.
        index: &'static str,
        /// A field the change sets.
        set: String,
        /// A field the index needs that the change does not know.
        missing: &'static str,
    },
    /// A change sets a field of the primary key.
    #[error("{entity:?}: `{field}` is part of the primary key and cannot change")]
    PrimaryKeyChange {
        /// The entity.
        entity: EntityType,
        /// The field.
        field: String,
    },
    /// A stored field is not what its type says.
    #[error("{entity:?}: `{field}` is not valid: {value:?}")]
    Field {
        /// The entity.
        entity: EntityType,
        /// The field.
        field: &'static str,
        /// Its value.
        value: String,
    },
    /// An entity did not serialize to an object.
    #[error("{0:?} is not an object")]
    NotAnObject(EntityType),
}
