//! Validated request field types: bounded text.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer};

/// Text of at most `MAX` characters as sent, without control characters
/// other than line feed and tab, with at least one character that is not
/// whitespace; kept trimmed. Deserializing validates it. These are exactly
/// the strings the `Name` and `Description` patterns of openapi.yaml admit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text<const MAX: usize>(String);

/// A display name: up to 200 characters.
pub type Name = Text<200>;
/// A long description: up to 4000 characters.
pub type Description = Text<4000>;

impl<const MAX: usize> Text<MAX> {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The owned text.
    pub fn into_string(self) -> String {
        self.0
    }

    /// Validates `raw` as sent (the bounds and characters count before
    /// trimming, so what is accepted does not depend on where whitespace is)
    /// and keeps it trimmed.
    pub fn parse(raw: &str) -> Result<Self, String> {
        if raw.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
            return Err("must not contain control characters".to_owned());
        }
        if raw.chars().count() > MAX {
            return Err(format!("must be at most {MAX} characters"));
        }
        let text = raw.trim();
        if text.is_empty() {
            return Err("must not be empty".to_owned());
        }
        Ok(Text(text.to_owned()))
    }
}

impl<const MAX: usize> fmt::Display for Text<MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de, const MAX: usize> Deserialize<'de> for Text<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Text::parse(&raw).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_characters() {
        assert_eq!(Text::<6>::parse("  abc ").unwrap().as_str(), "abc");
        assert!(Text::<5>::parse("  abc ").is_err(), "the length as sent");
        assert!(Text::<5>::parse("   ").is_err());
        assert!(Text::<5>::parse("\u{3000}\u{a0}\n\t").is_err(), "whitespace only");
        assert!(Text::<5>::parse("abcdef").is_err());
        assert!(Text::<5>::parse("äöüßé").is_ok(), "characters, not bytes");
        assert!(Text::<50>::parse("a\u{0}b").is_err());
        assert!(Text::<50>::parse("abc\r").is_err(), "control characters even where trimmed");
        assert!(Text::<50>::parse("\u{85}abc").is_err());
        assert!(Text::<50>::parse("a\u{9f}").is_err());
        assert!(Text::<50>::parse("line\nbreak\tand tab\n").is_ok());
    }
}
