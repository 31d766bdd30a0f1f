//! The DynamoDB store layer shared by every function: the client (built once
//! per process, with one observer: [`usage`]), a [`Store`] handle with the
//! generic operations every access pattern uses (get, conditional put,
//! one-page query), item conversion, error classification and the time
//! budget ([`budget`]).
//!
//! Writes are `keyschema::write` changes rendered by [`tx`]: one conditional
//! `UpdateItem` ([`Store::update`]) or a [`tx::Transaction`] of named actions.

mod batch;
pub mod budget;
pub mod client;
pub mod conflicts;
mod details;
mod error;
pub mod homes;
pub mod item;
mod operation_facts;
pub mod reads;
mod start_key;
pub mod table;
pub mod tx;
pub mod usage;

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_sdk_dynamodb::Client;
use keyschema::table::PK;
use keyschema::{Entity, EntityKey, EntityQuery, Key, KeyQuery, ReadAs, SortKey};
use serde::de::DeserializeOwned;
use start_key::{check_start_key, start_key_of, string_attributes};

pub use aws_sdk_dynamodb;
pub use client::Endpoint;
pub use error::{Cancellation, StoreError};
pub use homes::Regions;
pub use item::Item;
pub use reads::IndexReads;
pub use tx::Transaction;
pub use usage::{operation_name, read_units, Observer, Usage};

/// Every request asks DynamoDB for the capacity it consumed (see [`usage`]).
pub(crate) const TOTAL: aws_sdk_dynamodb::types::ReturnConsumedCapacity =
    aws_sdk_dynamodb::types::ReturnConsumedCapacity::Total;

/// Environment variable naming the table.
pub const TABLE_VAR: &str = "TABLE_NAME";

/// Where to continue a query: the `LastEvaluatedKey` of the previous page
/// (every key attribute is a string in this table).
pub type StartKey = BTreeMap<String, String>;

/// One page of a query.
#[derive(Debug)]
pub struct Page<T> {
    /// The items, in the query's order.
    pub items: Vec<T>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<StartKey>,
    /// The 4 KB units it read, by the capacity DynamoDB says it consumed
    /// (0.5 RCU each, eventually consistent): at least one, as DynamoDB
    /// bills a query that finds nothing.
    pub read_units: usize,
}

/// The table and the client that reaches it. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    client: Client,
    table: Arc<str>,
    regions: Regions,
    reads: IndexReads,
}

impl Store {
    /// A store over an existing client, in one region (its client's).
    pub fn new(client: Client, table: impl Into<Arc<str>>) -> Self {
        let here = client.config().region().map_or_else(|| "local".to_owned(), ToString::to_string);
        Store { client, table: table.into(), regions: Regions::single(&here), reads: IndexReads::default() }
    }

    /// This store with its queries of a moving index sent to `reads`.
    pub fn reading(mut self, reads: IndexReads) -> Self {
        self.reads = reads;
        self
    }

    /// Reads `TABLE_NAME`, `DYNAMODB_ENDPOINT`, `REGIONS` (a global
    /// table's regions, primary first: [`homes`]) and `LIST_INDEX_READS`
    /// ([`reads`]), and builds the clients: one per region, each built once.
    pub async fn from_env() -> Result<Self, String> {
        let table = std::env::var(TABLE_VAR).map_err(|_| format!("{TABLE_VAR} is not set"))?;
        let config = client::config(&Endpoint::from_env()).await;
        let store = Store::new(Client::from_conf(config.clone().build()), table).reading(IndexReads::from_env()?);
        let list = std::env::var(homes::REGIONS_VAR).unwrap_or_default();
        let Some((primary, others)) = Regions::parse_list(&list, store.region())? else { return Ok(store) };
        let peer = |r: &str| Client::from_conf(client::for_another_region(config.clone(), r).build());
        let peers = others.into_iter().map(|r| (r.clone(), peer(&r)));
        let here = store.region().to_owned();
        Ok(store.with_regions(Regions::global(&here, &primary, peers.collect())))
    }

    /// The SDK client, for operations the generic helpers do not cover.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// `GetItem` of an entity's item (eventually consistent), as the entity
    /// or a part of it (`T`: [`ReadAs`] the key's entity).
    pub async fn get<T: ReadAs<E>, E: Entity>(&self, key: &EntityKey<E>) -> Result<Option<T>, StoreError> {
        self.get_item(key, false).await
    }

    /// [`Store::get`], strongly consistent (sees every write that completed
    /// before it).
    pub async fn get_consistent<T: ReadAs<E>, E: Entity>(&self, key: &EntityKey<E>) -> Result<Option<T>, StoreError> {
        self.get_item(key, true).await
    }

    async fn get_item<T: DeserializeOwned>(&self, key: &Key, consistent: bool) -> Result<Option<T>, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(self.table())
            .set_key(Some(item::key_item(key)))
            .consistent_read(consistent)
            .return_consumed_capacity(TOTAL)
            .send()
            .await?;
        out.item.map(item::from_item).transpose()
    }

    /// `BatchGetItem` of any number of one entity's keys (in requests of
    /// 100), in no particular order; missing items are left out. Keys
    /// DynamoDB leaves unprocessed are asked again after a growing pause, a
    /// bounded number of times (then `Throttled`).
    pub async fn batch_get<T: ReadAs<E>, E: Entity>(
        &self,
        keys: &[EntityKey<E>],
        consistent: bool,
    ) -> Result<Vec<T>, StoreError> {
        let keys: Vec<Key> = keys.iter().map(|k| (**k).clone()).collect();
        self.batch_get_items(&keys, consistent).await?.into_iter().map(item::from_item).collect()
    }

    /// [`Store::batch_get`] of raw items, for keys of different entities.
    pub async fn batch_get_items(&self, keys: &[Key], consistent: bool) -> Result<Vec<Item>, StoreError> {
        use aws_sdk_dynamodb::types::KeysAndAttributes;
        let mut found = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(100) {
            let mut pending = KeysAndAttributes::builder()
                .set_keys(Some(chunk.iter().map(item::key_item).collect()))
                .consistent_read(consistent)
                .build()
                .map_err(batch::invalid)?;
            let mut attempt = 0u32;
            loop {
                let out = self
                    .client
                    .batch_get_item()
                    .request_items(self.table(), pending)
                    .return_consumed_capacity(TOTAL)
                    .send()
                    .await?;
                if let Some(mut responses) = out.responses {
                    found.extend(responses.remove(self.table()).unwrap_or_default());
                }
                match out.unprocessed_keys.and_then(|mut u| u.remove(self.table())) {
                    Some(rest) if !rest.keys.is_empty() => pending = rest,
                    _ => break,
                }
                batch::back_off(&mut attempt).await?;
            }
        }
        Ok(found)
    }

    /// `PutItem` that replaces whatever item has the entity's key (for an
    /// item only its writer writes, such as a job's checkpoint).
    pub async fn put<E: Entity>(&self, entity: &E) -> Result<(), StoreError> {
        let item = item::to_item(entity)?;
        let req = self.client.put_item().table_name(self.table()).set_item(Some(item));
        let req = req.return_consumed_capacity(TOTAL);
        conflicts::retrying(|| async { req.clone().send().await.map_err(StoreError::from_put) }).await?;
        Ok(())
    }

    /// `DeleteItem` of whatever item has `key` (for an item only its writer
    /// writes, such as a job's checkpoint).
    pub async fn delete(&self, key: &impl AsRef<Key>) -> Result<(), StoreError> {
        let req = self.client.delete_item().table_name(self.table()).set_key(Some(item::key_item(key.as_ref())));
        let req = req.return_consumed_capacity(TOTAL);
        conflicts::retrying(|| async { Ok::<_, StoreError>(req.clone().send().await?) }).await?;
        Ok(())
    }

    /// `PutItem` that only creates: fails with `ConditionFailed` if an item
    /// with the same primary key exists. An SDK retry of a put that already
    /// applied finds exactly the item it writes, and succeeds.
    pub async fn put_new<E: Entity>(&self, entity: &E) -> Result<(), StoreError> {
        let item = item::to_item(entity)?;
        let req = self
            .client
            .put_item()
            .table_name(self.table())
            .set_item(Some(item.clone()))
            .condition_expression("attribute_not_exists(#pk)")
            .expression_attribute_names("#pk", PK)
            .return_values_on_condition_check_failure(
                aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure::AllOld,
            )
            .return_consumed_capacity(TOTAL);
        let result = conflicts::retrying(|| async { req.clone().send().await.map_err(StoreError::from_put) }).await;
        match result {
            Ok(_) => Ok(()),
            Err(StoreError::ConditionFailed(Some(old))) if old == item => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// `PutItem` of an item whose key no other write uses (a new ULID's):
    /// if the item exists, an earlier attempt of this put applied (its
    /// answer lost, the SDK retrying), however it has changed since (the
    /// stream processor may have added keys): that item (`Some`), not a
    /// failure. `None`: put now.
    pub async fn put_fresh<E: Entity>(&self, entity: &E) -> Result<Option<Item>, StoreError> {
        match self.put_new(entity).await {
            Ok(()) => Ok(None),
            Err(StoreError::ConditionFailed(Some(old))) => Ok(Some(old)),
            Err(e) => Err(e),
        }
    }

    /// One `Query` request: up to `limit` items of the query from `start`.
    ///
    /// Asks for one item more than `limit`, so that the last page says so
    /// (`next` is `None`) instead of handing out a cursor to an empty page.
    /// A start key outside the query's partition or range is refused.
    pub async fn query<T: ReadAs<E>, E: Entity>(
        &self,
        query: &EntityQuery<E>,
        limit: u16,
        start: Option<StartKey>,
    ) -> Result<Page<T>, StoreError> {
        self.query_reading(query, limit, start, 1).await
    }

    /// [`Store::query`] of any pattern's query, decoded as `T` whatever the
    /// entity: for a tool that runs every pattern by name (the explorer).
    pub async fn query_any<T: DeserializeOwned>(
        &self,
        query: &KeyQuery,
        limit: u16,
        start: Option<StartKey>,
    ) -> Result<Page<T>, StoreError> {
        self.query_reading(query, limit, start, 1).await
    }

    /// [`Store::query`] without the look-ahead item: reads at most `limit`
    /// items. `next` is DynamoDB's `LastEvaluatedKey`, which it also returns
    /// when the page ends exactly at `limit`: `None` proves the query has
    /// nothing more, `Some` does not prove there is more.
    pub async fn query_exact<T: ReadAs<E>, E: Entity>(
        &self,
        query: &EntityQuery<E>,
        limit: u16,
        start: Option<StartKey>,
    ) -> Result<Page<T>, StoreError> {
        self.query_reading(query, limit, start, 0).await
    }

    /// Every item of a query on the table, strongly consistent (pages of at
    /// most 1 MB until the end): for maintenance, where a partition is
    /// bounded (the markers of one aggregate).
    pub async fn query_all_consistent(&self, query: &KeyQuery) -> Result<Vec<Item>, StoreError> {
        let mut out = Vec::new();
        let mut start = None;
        loop {
            let (items, next) = self.query_page_consistent(query, start).await?;
            out.extend(items);
            match next {
                Some(key) => start = Some(key),
                None => return Ok(out),
            }
        }
    }

    /// One page (up to 1 MB) of a query on the table, strongly consistent,
    /// from `start`, and where the next begins: for walking a partition
    /// too large to hold at once (a category's rating markers).
    pub async fn query_page_consistent(
        &self,
        query: &KeyQuery,
        start: Option<Item>,
    ) -> Result<(Vec<Item>, Option<Item>), StoreError> {
        let page = self.query_request(query, None, start, true).send().await?;
        Ok((page.items.unwrap_or_default(), page.last_evaluated_key))
    }

    pub(crate) fn query_request(
        &self,
        query: &KeyQuery,
        limit: Option<usize>,
        start: Option<Item>,
        consistent: bool,
    ) -> aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder {
        let req = self
            .client
            .query()
            .table_name(self.table())
            .set_index_name(self.reads.name_of(query.index).map(str::to_owned))
            .set_limit(limit.map(|l| i32::try_from(l).unwrap_or(i32::MAX)))
            .scan_index_forward(!query.newest_first)
            .consistent_read(consistent)
            .return_consumed_capacity(TOTAL)
            .expression_attribute_names("#pk", query.index.pk())
            .expression_attribute_names("#sk", query.index.sk())
            .expression_attribute_values(":pk", item::s(&query.pk))
            .set_exclusive_start_key(start);
        match &query.sk {
            SortKey::BeginsWith(prefix) => req
                .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
                .expression_attribute_values(":prefix", item::s(prefix)),
            SortKey::Between(low, high) => req
                .key_condition_expression("#pk = :pk AND #sk BETWEEN :low AND :high")
                .expression_attribute_values(":low", item::s(low))
                .expression_attribute_values(":high", item::s(high)),
        }
    }

    async fn query_reading<T: DeserializeOwned>(
        &self,
        query: &KeyQuery,
        limit: u16,
        start: Option<StartKey>,
        look_ahead: usize,
    ) -> Result<Page<T>, StoreError> {
        let limit = usize::from(limit.max(1));
        let start = start.map(|s| check_start_key(query, s)).transpose()?;
        let req = self.query_request(query, Some(limit + look_ahead), start, false);
        let out = req.send().await?;
        let read_units = read_units(out.consumed_capacity.as_ref());
        let mut raw = out.items.unwrap_or_default();
        let next = if raw.len() > limit {
            raw.truncate(limit);
            raw.last().map(|last| start_key_of(query.index, last))
        } else {
            // Fewer than asked: the end, unless DynamoDB stopped at its 1 MB page size.
            out.last_evaluated_key.map(|key| string_attributes(key.into_iter()))
        };
        let items = raw.into_iter().map(item::from_item).collect::<Result<_, _>>()?;
        Ok(Page { items, next, read_units })
    }
}
