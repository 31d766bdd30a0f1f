//! Positions in the key order of a near index's cells: a cell's sub-cells
//! in key order, the position past every key of a cell, and how far
//! through a cell's keys a position lies.

/// The geohash alphabet: a cell's sub-cells, in key order.
pub(super) const BASE32: &str = "0123456789bcdefghjkmnpqrstuvwxyz";
/// Above every character of a sort key: `prefix~` is past every key of
/// the cell `prefix`.
const PAST: char = '~';

/// How far through the keys of cell `prefix` position `key` lies, from 0
/// (its start, or `None`) to 1 (past it), by the geohash characters after
/// the prefix.
pub(super) fn through(prefix: &str, key: Option<&str>) -> f64 {
    let (mut at, mut scale) = (0.0, 1.0);
    for c in key.and_then(|k| k.get(prefix.len()..)).unwrap_or("").chars() {
        if c == PAST {
            return at + scale;
        }
        let Some(digit) = BASE32.find(c) else { break };
        scale /= 32.0;
        at += digit as f64 * scale;
    }
    at
}

/// Past every key of cell `prefix`.
pub(super) fn past(prefix: &str) -> String {
    format!("{prefix}{PAST}")
}

/// Pushes the sub-cells of `prefix` not wholly at or before `pos`, so that
/// the first in key order comes off the stack first.
pub(super) fn push_subcells(stack: &mut Vec<String>, prefix: &str, pos: Option<&str>) {
    for c in BASE32.chars().rev() {
        let sub = format!("{prefix}{c}");
        if pos.is_none_or(|p| past(&sub).as_str() > p) {
            stack.push(sub);
        }
    }
}
