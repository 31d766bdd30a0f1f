//! Property and unit tests of the key design.

mod changes;
mod keys;
mod queries;
mod records;
