//! The exhausted partitions of a walk, as a cursor carries them: one bit
//! per partition in lowercase hex.

/// `bits` as hex digits, four partitions per digit.
pub fn encode(bits: &[bool]) -> String {
    bits.chunks(4)
        .map(|c| c.iter().enumerate().fold(0u8, |n, (i, b)| n | (u8::from(*b) << i)))
        .map(|n| format!("{n:x}"))
        .collect()
}

/// The bits of `hex` for `len` partitions; `None` for anything else (a
/// cursor of another partition count, or not hex).
pub fn decode(hex: &str, len: usize) -> Option<Vec<bool>> {
    let bits: Vec<bool> = hex
        .chars()
        .map(|c| c.to_digit(16))
        .collect::<Option<Vec<u32>>>()?
        .into_iter()
        .flat_map(|n| (0..4).map(move |i| n & (1 << i) != 0))
        .collect();
    (bits.len() == len.div_ceil(4) * 4).then(|| bits.into_iter().take(len).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_bitmaps_round_trip() {
        for len in [1usize, 3, 4, 5, 50, 500] {
            let bits: Vec<bool> = (0..len).map(|i| i % 3 == 0 || i % 7 == 0).collect();
            let hex = encode(&bits);
            assert_eq!(hex.len(), len.div_ceil(4));
            assert_eq!(decode(&hex, len), Some(bits));
            assert_eq!(decode(&hex, len + 4), None, "a cursor for another partition count");
        }
        assert_eq!(decode("zz", 8), None);
    }
}
