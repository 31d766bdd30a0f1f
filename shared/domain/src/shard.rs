//! Write sharding of the order status index (GSI3).

use crate::ids::OrderId;

/// Shard count used when none is configured (as in the e-commerce design).
pub const DEFAULT_SHARD_COUNT: u16 = 10;

/// The shard of an order: deterministic, so the same order always lands in
/// the same `STATUS#<status>#<shard>` partition, and uniform, because it is
/// taken from the ULID's 80 random bits. A count of 0 is treated as 1.
pub fn order_shard(id: &OrderId, shard_count: u16) -> u16 {
    (id.ulid().random() % u128::from(shard_count.max(1))) as u16
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
}
