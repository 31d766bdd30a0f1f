//! Sample ids the documented patterns are built with; the docs show each as
//! its `<placeholder>`.

use domain::ids::{BrandId, CategoryId, Email, UserId};
use ulid::Ulid;

/// `(sample text, placeholder)`, longest first so none shadows another.
pub const PLACEHOLDERS: &[(&str, &str)] = &[
    ("sample-category#7", "<categoryId>#<shard>"),
    ("sample-term", "<term>"),
    ("sample-category", "<categoryId>"),
    ("sample-seller", "<sellerId>"),
    ("sample-author", "<authorId>"),
    ("sample-buyer", "<buyerId>"),
    ("sample-brand", "<brandId>"),
    ("sample-user", "<userId>"),
    ("sample@email.example", "<email>"),
    ("0000000000000000000000000H", "<high>"),
    ("0000000000000000000000000A", "<low>"),
    ("0000000000000000000000000E", "<itemId>"),
    ("0000000000000000000000000P", "<productId>"),
    ("0000000000000000000000000K", "<listingId>"),
    ("0000000000000000000000000R", "<orderId>"),
    ("0000001200", "<minCents>"),
    ("0000003400", "<maxCents>"),
    ("GEO#u4p", "GEO#<geohash:cell>"),
    ("u4pru", "<geohash prefix>"),
    ("STATUS#pending#7", "STATUS#<status>#<shard>"),
    ("LISTING#active#", "LISTING#<status>#"),
];

fn parse<T: std::str::FromStr>(s: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    // The samples are constants that parse: checked by the docs test.
    s.parse().unwrap_or_else(|e| panic!("sample `{s}`: {e:?}"))
}

/// A brand.
pub fn brand() -> BrandId {
    parse("sample-brand")
}
/// A category.
pub fn category() -> CategoryId {
    parse("sample-category")
}
/// A user in the role named by `who` (`user`, `seller`, `buyer`, `author`).
pub fn user(who: &str) -> UserId {
    parse(&format!("sample-{who}"))
}
/// A search term.
pub fn term() -> String {
    "sample-term".to_owned()
}
/// An email.
pub fn email() -> Email {
    parse("sample@email.example")
}
/// A ULID ending in `tag`: `P` product, `K` listing, `R` order, `E`
/// order item, `A`/`H` the low/high bound of a range.
pub fn ulid(tag: &str) -> Ulid {
    parse(&format!("0000000000000000000000000{tag}"))
}

/// `text` with every sample replaced by its placeholder.
pub fn placeholders(text: &str) -> String {
    PLACEHOLDERS.iter().fold(text.to_owned(), |t, (sample, name)| t.replace(sample, name))
}
