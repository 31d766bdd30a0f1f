//! Bounded, exact pages over DynamoDB indexes, each within a page's
//! [`budget::Budget`] where the route has one: a view write-sharded over
//! several partitions (an order status over its shards, a hot category's
//! listings over theirs), newest or cheapest first, in at most two rounds
//! of queries (`page_planner`); nearest first by ring over geohash cells
//! (`nearest`); word search over posting lists (`search`). Pure code: the
//! planner says what to ask, the caller asks DynamoDB (or memory, in the
//! tests).

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
