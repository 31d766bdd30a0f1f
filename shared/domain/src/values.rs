//! Value types: statuses, roles and money. They sit below both the key
//! functions (a status is part of a key) and the entity records.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Defines a string enum stored and sent in lower case.
macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The stored text.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(format!("must be one of: {}", [$($text),+].join(", "))),
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                s.parse().map_err(de::Error::custom)
            }
        }
    };
}

string_enum!(
    /// Status of a listing; part of its GSI6 sort key.
    ListingStatus {
        /// For sale; in the category browse index.
        Active = "active",
        /// Bought through an order.
        Sold = "sold",
        /// Taken down by its seller.
        Removed = "removed",
    }
);

string_enum!(
    /// Status of an order; part of its GSI8 partition key.
    OrderStatus {
        /// Placed, not yet confirmed by the seller.
        Pending = "pending",
        /// Accepted by the seller.
        Confirmed = "confirmed",
        /// On its way.
        Shipped = "shipped",
        /// Received; reviews may now be written.
        Delivered = "delivered",
        /// Cancelled before shipping; stock restored or listing relisted.
        Cancelled = "cancelled",
    }
);

string_enum!(
    /// What a user does on the marketplace.
    UserRole {
        /// Has only bought.
        Buyer = "buyer",
        /// Has only sold.
        Seller = "seller",
        /// Both bought and sold.
        Both = "both",
    }
);

/// An amount of money, held as integer cents so arithmetic is exact.
/// JSON and DynamoDB see a decimal number with at most two decimals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Money(u64);

impl Money {
    /// The largest accepted amount: 1,000,000.00.
    pub const MAX_CENTS: u64 = 100_000_000;

    /// From integer cents.
    pub const fn from_cents(cents: u64) -> Self {
        Money(cents)
    }

    /// Integer cents.
    pub const fn cents(self) -> u64 {
        self.0
    }

    /// The largest amount, the bound every read enforces.
    pub const MAX: Money = Money(Self::MAX_CENTS);

    /// Multiplies by a quantity, if the result is still an amount that reads
    /// back (at most [`Money::MAX`]).
    pub fn times(self, qty: u32) -> Option<Money> {
        self.0.checked_mul(u64::from(qty)).filter(|c| *c <= Self::MAX_CENTS).map(Money)
    }

    /// Adds two amounts, if the sum is still an amount that reads back (at
    /// most [`Money::MAX`]).
    pub fn plus(self, other: Money) -> Option<Money> {
        self.0.checked_add(other.0).filter(|c| *c <= Self::MAX_CENTS).map(Money)
    }

    fn from_decimal(value: f64) -> Result<Money, &'static str> {
        if !value.is_finite() || value < 0.0 {
            return Err("must be a non-negative amount");
        }
        // The shortest decimal that reads back as this number (what Display
        // writes, never in exponent form) has at most two decimals: 1.999999999
        // is refused, not rounded to 2.
        let text = value.to_string();
        if text.split_once('.').is_some_and(|(_, decimals)| decimals.len() > 2) {
            return Err("must have at most two decimal places");
        }
        let cents = (value * 100.0).round();
        if cents > Self::MAX_CENTS as f64 {
            return Err("must be at most 1000000");
        }
        Ok(Money(cents as u64))
    }
}

/// An amount as plain decimal text, as a query parameter gives it: digits
/// without a leading zero (but `0` itself), at most two decimals, no sign,
/// exponent or space, at most 1000000.
impl std::str::FromStr for Money {
    type Err = &'static str;
    fn from_str(text: &str) -> Result<Money, &'static str> {
        const WHAT: &str = "must be an amount from 0 to 1000000 with at most two decimals";
        let (whole, decimals) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let plain = digits(whole) && (whole == "0" || !whole.starts_with('0')) && whole.len() <= 7;
        if !plain || (text.contains('.') && !(digits(decimals) && decimals.len() <= 2)) {
            return Err(WHAT);
        }
        let fraction = format!("{decimals:0<2}").parse::<u64>().unwrap_or(0);
        let cents = whole.parse::<u64>().ok().and_then(|w| w.checked_mul(100)?.checked_add(fraction));
        cents.filter(|c| *c <= Money::MAX_CENTS).map(Money).ok_or(WHAT)
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_multiple_of(100) {
            s.serialize_u64(self.0 / 100)
        } else {
            // Exact for two decimals: the shortest f64 text round-trips.
            s.serialize_f64(self.0 as f64 / 100.0)
        }
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MoneyVisitor;
        impl Visitor<'_> for MoneyVisitor {
            type Value = Money;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an amount such as 28 or 29.99")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Money, E> {
                v.checked_mul(100)
                    .filter(|c| *c <= Money::MAX_CENTS)
                    .map(Money)
                    .ok_or_else(|| E::custom("must be at most 1000000"))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Money, E> {
                u64::try_from(v).map_err(|_| E::custom("must be a non-negative amount")).and_then(|v| self.visit_u64(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Money, E> {
                Money::from_decimal(v).map_err(E::custom)
            }
        }
        d.deserialize_any(MoneyVisitor)
    }
}

impl OrderStatus {
    /// Whether an order may move from `self` to `next`: pending -> confirmed
    /// -> shipped -> delivered, and cancelled from pending or confirmed.
    pub fn can_become(self, next: OrderStatus) -> bool {
        use OrderStatus::*;
        matches!(
            (self, next),
            (Pending, Confirmed) | (Confirmed, Shipped) | (Shipped, Delivered) | (Pending | Confirmed, Cancelled)
        )
    }

    /// Whether the seller accepted the sale (confirmed, shipped or
    /// delivered): no longer pending, so the expiry sweeper leaves it.
    pub fn is_accepted(self) -> bool {
        matches!(self, OrderStatus::Confirmed | OrderStatus::Shipped | OrderStatus::Delivered)
    }
}

#[cfg(test)]
mod tests {
    use super::Money;

    #[test]
    fn an_amount_in_a_query_is_plain_decimal_text() {
        for (text, cents) in [("0", 0), ("10", 1000), ("0.5", 50), ("19.99", 1999), ("1000000", 100_000_000)] {
            assert_eq!(text.parse::<Money>(), Ok(Money::from_cents(cents)), "{text}");
        }
        for bad in [
            "",
            " 10",
            "10 ",
            "+10",
            "-1",
            "1e3",
            "1E1",
            "5e0",
            "1e-2",
            "10.",
            ".5",
            "01",
            "00",
            "1.234",
            "1000000.01",
            "99999999",
            "0x10",
            "NaN",
            "1_0",
            "١٠",
        ] {
            assert!(bad.parse::<Money>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn drifted_counters_read_within_their_range() {
        #[derive(serde::Deserialize)]
        struct Counts {
            #[serde(deserialize_with = "counter::u32")]
            small: u32,
            #[serde(deserialize_with = "counter::u64")]
            big: u64,
        }
        let read = |small: i64, big: i64| {
            let c: Counts = serde_json::from_value(serde_json::json!({ "small": small, "big": big })).unwrap();
            (c.small, c.big)
        };
        assert_eq!(read(-1, -3), (0, 0));
        assert_eq!(read(7, 9), (7, 9));
        assert_eq!(read(i64::from(u32::MAX) + 1, i64::MAX), (u32::MAX, i64::MAX as u64));
    }

    use super::*;

    #[test]
    fn money_parses_exactly() {
        let parse = |s: &str| serde_json::from_str::<Money>(s).map_err(|e| e.to_string());
        assert_eq!(parse("28"), Ok(Money::from_cents(2800)));
        assert_eq!(parse("29.99"), Ok(Money::from_cents(2999)));
        assert_eq!(parse("0.1"), Ok(Money::from_cents(10)));
        assert!(parse("-1").unwrap_err().contains("non-negative"));
        assert!(parse("1.234").unwrap_err().contains("two decimal"));
        // Near a whole cent is not a whole cent (a black-box pass found these rounded).
        for near in ["1.999999999999", "12.3400000001", "0.30000000000000004", "29.999999999"] {
            assert!(parse(near).unwrap_err().contains("two decimal"), "{near}");
        }
        assert_eq!(parse("12.30"), Ok(Money::from_cents(1230)));
        assert_eq!(parse("1e2"), Ok(Money::from_cents(10000)));
        assert_eq!(parse("999999.99"), Ok(Money::from_cents(99_999_999)));
        assert!(parse("1000000.01").is_err());
        assert!(parse("\"12\"").is_err(), "JSON strings are not amounts");
        assert_eq!(serde_json::to_string(&Money::from_cents(2999)).unwrap(), "29.99");
        assert_eq!(serde_json::to_string(&Money::from_cents(2800)).unwrap(), "28");
        assert_eq!(Money::from_cents(5).to_string(), "0.05");
    }

    /// Whatever arithmetic yields must deserialize again: sums and products
    /// stop at the bound reads enforce.
    #[test]
    fn money_arithmetic_stays_readable() {
        let big = Money::from_cents(60_000_000);
        assert_eq!(big.times(2), None);
        assert_eq!(big.plus(big), None);
        assert_eq!(Money::MAX.times(1), Some(Money::MAX));
        assert_eq!(Money::MAX.plus(Money::from_cents(1)), None);
        assert_eq!(Money::from_cents(u64::MAX).times(u32::MAX), None);
        for m in [Money::MAX, Money::from_cents(1), Money::default()] {
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<Money>(&json).unwrap(), m);
        }
    }

    #[test]
    fn order_lifecycle() {
        use OrderStatus::*;
        let allowed: Vec<_> = OrderStatus::ALL
            .iter()
            .flat_map(|a| OrderStatus::ALL.iter().map(move |b| (*a, *b)))
            .filter(|(a, b)| a.can_become(*b))
            .collect();
        assert_eq!(
            allowed,
            [
                (Pending, Confirmed),
                (Pending, Cancelled),
                (Confirmed, Shipped),
                (Confirmed, Cancelled),
                (Shipped, Delivered)
            ]
        );
    }

    #[test]
    fn statuses_parse_and_print() {
        assert_eq!("active".parse::<ListingStatus>(), Ok(ListingStatus::Active));
        assert!("Active".parse::<ListingStatus>().is_err());
        assert_eq!(OrderStatus::ALL.len(), 5);
        assert_eq!(serde_json::to_string(&OrderStatus::Cancelled).unwrap(), "\"cancelled\"");
    }
}

/// Counters the stream processor keeps (`favoriteCount`, `reviewCount`,
/// `ratingSum`), read from their stored number with the drift they may
/// carry: a value below zero (a count whose attribute was lost, then
/// decremented by a removal, until reconcile repairs it) reads as 0 and one
/// past the type's range as its largest, instead of making the item, and
/// every page that holds it, unreadable.
pub mod counter {
    use serde::{Deserialize, Deserializer};

    /// A `u32` counter (`#[serde(default, deserialize_with = "counter::u32")]`).
    pub fn u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        let n = i64::deserialize(d)?;
        Ok(u32::try_from(n.max(0)).unwrap_or(u32::MAX))
    }

    /// A `u64` counter.
    pub fn u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let n = i64::deserialize(d)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}
