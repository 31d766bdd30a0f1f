//! Write sharding: of the order status index, of a category's browse and
//! price keys, and of the favorite markers of a listing.

use crate::ids::{ListingId, OrderId, ReviewId, UserId};

/// Shard count used when none is configured (as in the e-commerce design).
pub const DEFAULT_SHARD_COUNT: u16 = 10;

/// Environment variable with the number of order status shards.
pub const ORDER_SHARDS_VAR: &str = "ORDER_SHARD_COUNT";

/// The order status shard count from `ORDER_SHARD_COUNT` (1-100; default
/// [`DEFAULT_SHARD_COUNT`]), for the orders function and the sweeper.
pub fn order_shards_from_env() -> Result<u16, String> {
    match std::env::var(ORDER_SHARDS_VAR) {
        Ok(v) => v.parse().ok().filter(|n| (1..=100).contains(n)).ok_or(format!("{ORDER_SHARDS_VAR} must be 1-100")),
        Err(_) => Ok(DEFAULT_SHARD_COUNT),
    }
}

/// The shard of an order: deterministic, so the same order always lands in
/// the same `STATUS#<status>#<shard>` partition, and uniform, because it is
/// taken from the ULID's 80 random bits. A count of 0 is treated as 1.
pub fn order_shard(id: &OrderId, shard_count: u16) -> u16 {
    (id.ulid().random() % u128::from(shard_count.max(1))) as u16
}

/// Partitions the favorite markers of one listing are spread over: a
/// listing many users favorite at once writes its markers into this many
/// partitions (and the maintenance job reads them back in as many queries).
pub const FAVORITE_MARKER_SHARDS: u16 = 10;

/// The shard of a user's favorite marker of a listing: from the user id (a
/// 64-bit FNV-1a hash), so the same user always lands in the same one.
pub fn favorite_marker_shard(user: &UserId) -> u16 {
    let hash =
        user.as_str().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    (hash % u64::from(FAVORITE_MARKER_SHARDS)) as u16
}

/// The most shards a category's listings may be spread over.
pub const MAX_LISTING_SHARDS: u16 = 16;

/// One shard (the default of a category's `listingShards`).
pub const fn one() -> u16 {
    1
}

/// The browse and price shard of a new listing of a category with
/// `shard_count` shards: from the ULID's random bits, as an order's.
pub fn listing_shard(id: &ListingId, shard_count: u16) -> u16 {
    (id.ulid().random() % u128::from(shard_count.max(1))) as u16
}

/// What a sharded browse page asks of each of `shards` shards in its first
/// round at least: about what one 4 KB read unit holds of typical listings
/// (about 0.6 KB each), which a query is billed for however few it returns,
/// so that the second round runs rarely (measured by `./dev capacity`); but
/// no more than [`BROWSE_FIRST_ROUND_ITEMS`] in all, at least two each, so
/// that a first round over many shards of the largest cards (about 1.7 KB:
/// two fit one read unit) stays near one read unit per shard.
pub fn browse_first_round(shards: usize) -> usize {
    (BROWSE_FIRST_ROUND_ITEMS / shards.max(1)).clamp(2, 6)
}

/// See [`browse_first_round`]: 6 each up to 5 shards, 4 at 8, 2 from 11
/// (at 8 shards of the largest cards, 4 are two read units a shard).
pub const BROWSE_FIRST_ROUND_ITEMS: usize = 32;

/// Partitions the rating markers of one category are spread over (the top
/// category's reviews write here, not into its aggregate's partition).
pub const CATEGORY_RATING_MARKER_SHARDS: u16 = 10;

/// The marker shard of a review in its category (the retired per-review
/// markers): from its ULID's random bits.
pub fn category_rating_marker_shard(id: &ReviewId) -> u16 {
    (id.ulid().random() % u128::from(CATEGORY_RATING_MARKER_SHARDS)) as u16
}

/// The shard of an author's rating slots in a category: from the author's
/// id (as [`favorite_marker_shard`]), so one pair's slot is always in one.
pub fn category_rating_slot_shard(author: &UserId) -> u16 {
    favorite_marker_shard(author) % CATEGORY_RATING_MARKER_SHARDS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_deterministic_in_range_and_spread() {
        let mut seen = [0u32; 10];
        for _ in 0..2000 {
            let id = OrderId::generate();
            let s = order_shard(&id, 10);
            assert_eq!(s, order_shard(&id, 10));
            seen[s as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 100), "uneven spread: {seen:?}");
        assert_eq!(order_shard(&OrderId::generate(), 0), 0);
    }

    #[test]
    fn favorite_marker_shards_are_stable_and_spread() {
        let mut seen = [0u32; FAVORITE_MARKER_SHARDS as usize];
        for i in 0..2000 {
            let user: UserId = format!("user-{i}").parse().unwrap();
            let s = favorite_marker_shard(&user);
            assert_eq!(s, favorite_marker_shard(&user));
            seen[usize::from(s)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 100), "uneven spread: {seen:?}");
    }

    #[test]
    fn listing_shards_are_stable_and_within_the_count() {
        for count in [0u16, 1, 8, MAX_LISTING_SHARDS] {
            let id = ListingId::generate();
            let s = listing_shard(&id, count);
            assert_eq!(s, listing_shard(&id, count));
            assert!(s < count.max(1), "{s} of {count}");
        }
    }
}
