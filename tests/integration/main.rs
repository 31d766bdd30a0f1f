//! Integration tests against DynamoDB Local (started once for this binary,
//! or the endpoint in `DYNAMODB_ENDPOINT`). Each test uses its own table.

mod abuse;
mod bounds;
mod bounds_orders;
mod budget;
mod capacity;
mod catalog;
mod category_ratings;
mod details;
mod events;
mod expiry;
mod faults;
mod favorites;
mod hardening;
mod hot_items;
mod idempotency;
mod listings;
mod local_stack_http;
mod messages;
mod meter;
mod near;
mod orders;
mod pair_ratings;
mod price;
mod reconcile;
mod redrive;
mod reviews;
mod round_three;
mod search;
mod sharded_browse;
mod sharded_reads;
mod stream;
mod stream_throughput;
mod template;
mod users;
mod workbench;
