//! Validated request field types: bounded text.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer};

/// Trimmed text of 1 to `MAX` characters without control characters (line
/// breaks and tabs allowed). Deserializing validates it.
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

    /// Validates `raw`.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let text = raw.trim();
        let len = text.chars().count();
        if len == 0 {
            return Err("must not be empty".to_owned());
        }
        if len > MAX {
            return Err(format!("must be at most {MAX} characters"));
        }
        if text.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
            return Err("must not contain control characters".to_owned());
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
        assert_eq!(Text::<5>::parse("  abc ").unwrap().as_str(), "abc");
        assert!(Text::<5>::parse("   ").is_err());
        assert!(Text::<5>::parse("abcdef").is_err());
        assert!(Text::<5>::parse("äöüßé").is_ok(), "characters, not bytes");
        assert!(Text::<50>::parse("a\u{0}b").is_err());
        assert!(Text::<50>::parse("line\nbreak").is_ok());
    }
}
