//! Validated request field types: bounded text without invisible or
//! direction-changing characters.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer};

/// Text of at most `MAX` characters as sent, without control characters
/// other than line feed and tab, without invisible or direction-changing
/// characters (see [`is_hidden`]), with at least one character that is not
/// whitespace; kept trimmed. Deserializing validates it. These are exactly
/// the strings the `Name` and `Description` patterns of openapi.yaml admit
/// (the pattern lists the characters of [`is_hidden`] in the Basic
/// Multilingual Plane; the few above it are named in its description).
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
        if let Some(c) = first_hidden(raw) {
            return Err(format!(
                "must not contain invisible or direction-changing characters (found U+{:04X})",
                u32::from(c)
            ));
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

/// Whether `c` is a character a page would not show, or one that changes
/// how the text around it is laid out: Unicode's format characters (the
/// bidi embeddings, overrides and isolates, the left-to-right and
/// right-to-left marks, zero-width space, word joiner, the BOM, soft
/// hyphen, invisible operators, interlinear annotations, and the format
/// controls of a few scripts), the line and paragraph separators, and the
/// Hangul fillers. Zero-width joiner and non-joiner (U+200D, U+200C) are
/// not: emoji sequences and several scripts need them. Tag characters
/// (U+E0020-U+E007F) are, except inside an emoji tag sequence (see
/// [`first_hidden`]).
pub fn is_hidden(c: char) -> bool {
    matches!(
        u32::from(c),
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x890..=0x891
            | 0x8E2
            | 0x180E
            | 0x200B
            | 0x200E..=0x200F
            | 0x2028..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0x3164
            | 0xFEFF
            | 0xFFA0
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    )
}

/// The first hidden character of `text` (see [`is_hidden`]). Tag characters
/// are allowed only as an emoji tag sequence: right after a black flag
/// (U+1F3F4), tag letters and digits ended by CANCEL TAG (U+E007F), as in
/// the flags of Scotland or Wales; anywhere else they are text no one sees.
pub fn first_hidden(text: &str) -> Option<char> {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1F3F4}' && chars.peek().is_some_and(|n| ('\u{E0020}'..='\u{E007E}').contains(n)) {
            let mut ended = false;
            while let Some(&n) = chars.peek() {
                chars.next();
                if n == '\u{E007F}' {
                    ended = true;
                    break;
                }
                if !('\u{E0020}'..='\u{E007E}').contains(&n) {
                    return Some(n);
                }
            }
            if !ended {
                return Some('\u{E0020}');
            }
            continue;
        }
        if is_hidden(c) {
            return Some(c);
        }
    }
    None
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

    #[test]
    fn invisible_and_direction_changing_characters() {
        for c in
            ['\u{202E}', '\u{2066}', '\u{200B}', '\u{200E}', '\u{FEFF}', '\u{2060}', '\u{AD}', '\u{E0041}', '\u{3164}']
        {
            assert!(Text::<50>::parse(&format!("a{c}b")).is_err(), "U+{:04X}", u32::from(c));
        }
        for ok in [
            "👩\u{200D}💻",
            "می\u{200C}خواهم",
            "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}!",
            "❤\u{FE0F}",
        ] {
            assert!(Text::<50>::parse(ok).is_ok(), "{ok:?}");
        }
        for bad in ["🏴\u{E0067}\u{E0062}", "🏴\u{E0067}x\u{E007F}", "x\u{E0067}\u{E007F}", "🏴\u{E007F}\u{E007F}"]
        {
            assert!(Text::<50>::parse(bad).is_err(), "{bad:?}");
        }
    }
}
