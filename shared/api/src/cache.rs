//! Short in-function caches (per Lambda execution environment, so per
//! process) for what every instance would otherwise read from one hot
//! partition: the first page of the `BRANDS` and `CATEGORIES` lists, and
//! "this category or brand exists" for the writes that name one.
//!
//! Staleness is bounded by the TTL and documented in docs/api.md: a new
//! category shows in the list up to [`LIST_TTL`] late; existence is cached
//! only when found (a category just created is never refused), and the API
//! deletes no category or brand, so a cached "exists" cannot go wrong.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use keyschema::Key;
use store::{Store, StoreError};

/// How long a list page is served from memory.
pub const LIST_TTL: Duration = Duration::from_secs(60);
/// How long a category or brand found is remembered.
pub const EXISTS_TTL: Duration = Duration::from_secs(300);
/// Entries kept per cache (the oldest go first).
const CAPACITY: usize = 256;

/// A small map with a time to live, safe to share between tasks.
pub struct Ttl<K, V> {
    ttl: Duration,
    entries: Mutex<Vec<(K, Instant, V)>>,
}

impl<K: PartialEq, V: Clone> Ttl<K, V> {
    /// An empty cache whose entries live `ttl`.
    pub const fn new(ttl: Duration) -> Self {
        Ttl { ttl, entries: Mutex::new(Vec::new()) }
    }

    /// The value for `key`, if stored less than the TTL ago.
    pub fn get(&self, key: &K) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.iter().find(|(k, at, _)| k == key && at.elapsed() < self.ttl).map(|(_, _, v)| v.clone())
    }

    /// Forgets `key`.
    pub fn remove(&self, key: &K) {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).retain(|(k, _, _)| k != key);
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Stores `value` for `key` from now.
    pub fn put(&self, key: K, value: V) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|(k, at, _)| *k != key && at.elapsed() < self.ttl);
        if entries.len() >= CAPACITY {
            entries.remove(0);
        }
        entries.push((key, Instant::now(), value));
    }
}

/// Items found (categories, brands), by table and key (one process may
/// serve several tables: the local stack, the tests).
static FOUND: Ttl<(String, Key), serde_json::Value> = Ttl::new(EXISTS_TTL);

/// The item at `key`: from memory if it was found less than [`EXISTS_TTL`]
/// ago, else one eventually consistent `GetItem` (remembered if found).
/// What a cached item may hold stale is said where it is used: a category's
/// shard count can only be set when it is created.
pub async fn found<T: keyschema::ReadAs<E>, E: keyschema::Entity>(
    store: &Store,
    key: &keyschema::EntityKey<E>,
) -> Result<Option<T>, StoreError> {
    let entry = (store.table().to_owned(), (**key).clone());
    let item = match FOUND.get(&entry) {
        Some(item) => item,
        None => match store.get::<serde_json::Value, E>(key).await? {
            Some(item) => {
                FOUND.put(entry, item.clone());
                item
            }
            None => return Ok(None),
        },
    };
    let decode = |e: serde_json::Error| StoreError::Decode(serde::de::Error::custom(e));
    serde_json::from_value(item).map(Some).map_err(decode)
}

/// Forgets the item at `key` (this instance changed it).
pub fn forget(store: &Store, key: &impl AsRef<Key>) {
    FOUND.remove(&(store.table().to_owned(), key.as_ref().clone()));
}

/// Whether the item at `key` exists (see [`found`]).
pub async fn exists<E: keyschema::Entity>(store: &Store, key: &keyschema::EntityKey<E>) -> Result<bool, StoreError> {
    Ok(found::<serde::de::IgnoredAny, E>(store, key).await?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_are_replaced() {
        let cache: Ttl<u8, &str> = Ttl::new(Duration::from_millis(30));
        assert_eq!(cache.get(&1), None);
        cache.put(1, "a");
        cache.put(1, "b");
        assert_eq!(cache.get(&1), Some("b"));
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(cache.get(&1), None, "expired");
    }

    #[test]
    fn it_keeps_at_most_its_capacity() {
        let cache: Ttl<usize, usize> = Ttl::new(Duration::from_secs(60));
        for i in 0..CAPACITY + 10 {
            cache.put(i, i);
        }
        assert_eq!(cache.get(&0), None, "the oldest went first");
        assert_eq!(cache.get(&(CAPACITY + 9)), Some(CAPACITY + 9));
    }
}
