//! Exact pages over a write-sharded index: the items of one view spread
//! over several partitions (an order status over its shards, a hot
//! category's listings over theirs), read newest first or cheapest first
//! in at most two rounds of queries per page. Pure code: the planner says
//! what to ask, the caller asks DynamoDB (or memory, in the tests).

pub mod bitmap;
pub mod budget;
pub mod hint;
pub mod key;
pub mod nearest;
pub mod page_planner;
pub mod search;

pub use budget::Budget;
pub use key::{Cheapest, PageKey};
pub use page_planner::{page, page_reading_at_least, Answer, Ask, Asker, Bounded, Keyed, Position, Walk};
