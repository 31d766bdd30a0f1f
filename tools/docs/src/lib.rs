//! Documents generated from the key design, kept in `docs/`:
//! [`key_schema`] (`docs/key-schema.md`: the indexes, every entity's keys
//! as declared, every access pattern) and [`workbench`]
//! (`docs/nosql-workbench.json`: the NoSQL Workbench data model). A test of
//! each regenerates it and fails when the committed file differs
//! (`UPDATE_DOCS=1` rewrites it). Doc comments that restate the design are
//! checked against it: key templates (`doc_comments`) and the access
//! functions' pattern ids (`pattern_docs`).

#[cfg(test)]
mod doc_comments;
pub mod key_schema;
#[cfg(test)]
mod pattern_docs;
pub mod workbench;
