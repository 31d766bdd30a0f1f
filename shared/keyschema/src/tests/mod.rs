//! Property and unit tests of the key design.

mod changes;
mod keys;
mod projections;
mod queries;
mod records;
