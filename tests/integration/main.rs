//! Integration tests against DynamoDB Local (started once for this binary,
//! or the endpoint in `DYNAMODB_ENDPOINT`). Each test uses its own table.

mod catalog;
mod events;
mod faults;
mod favorites;
mod hardening;
mod listings;
mod local_stack_http;
mod messages;
mod orders;
mod price;
mod reviews;
mod stream;
mod template;
mod users;
mod workbench;
