//! The marketplace's domain, apart from how it is stored: typed ids
//! ([`ids`]: validated, so no key component can hold a separator), values
//! ([`values`]: statuses, roles, money, the order lifecycle), the entity
//! records as stored ([`model`]) and as answered ([`answers`]: without
//! their storage bookkeeping; a listing in a list as a card), the shard rules
//! ([`shard`]) and time ([`time`]: the clock, RFC 3339, ULID range
//! bounds). Pure code, no AWS calls; the key design over these records is
//! `keyschema`.

pub mod answers;
pub mod catalog;
pub mod geo;
pub mod ids;
pub mod model;
pub mod shard;
pub mod stock;
pub mod time;
pub mod values;
pub mod words;
