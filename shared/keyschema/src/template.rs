//! Key templates: `#`-separated segments, each a literal or a composite
//! `<field>` (or `<field:format>`) filled from an item's field of that name.
//! Rendering a template, a prefix of it (for a query's sort-key condition)
//! and matching a key against it all read the one template string.

use crate::value::Value;

/// Why a template could not be rendered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A composite has no value.
    #[error("no value for `{0}`")]
    Missing(String),
    /// A value does not fit its composite (empty, has `#`, or is not the
    /// format's kind of value).
    #[error("`{field}` cannot be a key part: {why}")]
    Invalid {
        /// The composite.
        field: String,
        /// What is wrong.
        why: &'static str,
    },
}

/// One segment of a template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment<'a> {
    /// Literal text.
    Literal(&'a str),
    /// A field's value, with an optional format.
    Composite {
        /// The field (an entity's camelCase attribute name).
        field: &'a str,
        /// `cents10`: an amount as zero-padded cents (so string order is
        /// numeric order); `cell`: the near index's partition of a
        /// geohash ([`domain::geo::partition::partition`]: its first
        /// three characters, five in a dense cell).
        format: Option<&'a str>,
    },
}

/// The segments of a template.
pub fn segments(template: &str) -> impl Iterator<Item = Segment<'_>> {
    template.split('#').map(|s| match s.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
        Some(inner) => match inner.split_once(':') {
            Some((field, format)) => Segment::Composite { field, format: Some(format) },
            None => Segment::Composite { field: inner, format: None },
        },
        None => Segment::Literal(s),
    })
}

/// The fields a template's composites read, in order.
pub fn composites(template: &str) -> Vec<&str> {
    segments(template)
        .filter_map(|s| match s {
            Segment::Composite { field, .. } => Some(field),
            Segment::Literal(_) => None,
        })
        .collect()
}

/// One composite's text from its value.
pub fn format(field: &str, format: Option<&str>, value: &Value) -> Result<String, TemplateError> {
    let invalid = |why| TemplateError::Invalid { field: field.to_owned(), why };
    let text = match (format, value) {
        (None, Value::S(s) | Value::N(s)) => s.clone(),
        (Some("cents10"), Value::S(s) | Value::N(s)) => {
            let cents = cents(s).ok_or_else(|| invalid("not an amount with at most two decimals"))?;
            format!("{cents:010}")
        }
        (Some("cell"), Value::S(s)) => match domain::geo::partition::partition(s) {
            Some(cell) => cell.to_owned(),
            None => return Err(invalid("not within one partition's cell")),
        },
        (Some(_), _) => return Err(invalid("unknown format")),
    };
    if text.is_empty() {
        return Err(invalid("empty"));
    }
    if text.contains('#') {
        return Err(invalid("contains `#`"));
    }
    Ok(text)
}

/// A composite's value from its text in a key (the inverse of [`format`](fn@format)):
/// `cents10` gives the amount back as a number; a `cell` cannot be read back.
pub fn unformat(format: Option<&str>, text: &str) -> Option<Value> {
    match format {
        None => Some(Value::s(text)),
        Some("cents10") => {
            let cents: u64 = text.parse().ok().filter(|_| text.len() == 10)?;
            Some(Value::N(format!("{}.{:02}", cents / 100, cents % 100)))
        }
        Some(_) => None,
    }
}

/// Integer cents of a decimal text such as `28`, `29.9`, `29.99` or `28.00`.
fn cents(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) {
        return None;
    }
    let (kept, rest) = fraction.split_at(fraction.len().min(2));
    if rest.bytes().any(|b| b != b'0') {
        return None;
    }
    let kept: u64 = format!("{kept:0<2}").parse().ok()?;
    whole.parse::<u64>().ok()?.checked_mul(100)?.checked_add(kept)
}

/// Renders a whole template from `value_of` each composite.
pub fn render(template: &str, value_of: &dyn Fn(&str) -> Option<Value>) -> Result<String, TemplateError> {
    let mut parts = Vec::new();
    for segment in segments(template) {
        parts.push(match segment {
            Segment::Literal(text) => text.to_owned(),
            Segment::Composite { field, format: f } => {
                let value = value_of(field).ok_or_else(|| TemplateError::Missing(field.to_owned()))?;
                format(field, f, &value)?
            }
        });
    }
    Ok(parts.join("#"))
}

/// Renders the longest prefix of a template whose composites all have
/// values: every segment up to the first composite without one, followed by
/// its `#`. With every composite given, the whole key (`complete` is then
/// `true`).
pub fn prefix(template: &str, value_of: &dyn Fn(&str) -> Option<Value>) -> Result<(String, bool), TemplateError> {
    let mut out = String::new();
    for segment in segments(template) {
        let text = match segment {
            Segment::Literal(text) => text.to_owned(),
            Segment::Composite { field, format: f } => match value_of(field) {
                Some(value) => format(field, f, &value)?,
                None => return Ok((out, false)),
            },
        };
        out.push_str(&text);
        out.push('#');
    }
    out.pop();
    Ok((out, true))
}

/// Matches a key value against a template; on success returns the
/// composite values in order. Composite values are non-empty and never
/// contain `#`.
pub fn matches<'a>(template: &str, value: &'a str) -> Option<Vec<&'a str>> {
    let mut values = value.split('#');
    let mut captured = Vec::new();
    for segment in segments(template) {
        let v = values.next()?;
        match segment {
            Segment::Composite { .. } if !v.is_empty() => captured.push(v),
            Segment::Literal(text) if text == v => {}
            _ => return None,
        }
    }
    values.next().is_none().then_some(captured)
}

/// Whether some key value could match both templates.
pub fn overlap(a: &str, b: &str) -> bool {
    let (sa, sb): (Vec<_>, Vec<_>) = (segments(a).collect(), segments(b).collect());
    sa.len() == sb.len()
        && sa.iter().zip(&sb).all(|(x, y)| match (x, y) {
            (Segment::Composite { .. }, Segment::Composite { .. }) => true,
            (Segment::Composite { .. }, Segment::Literal(l)) | (Segment::Literal(l), Segment::Composite { .. }) => {
                !l.is_empty()
            }
            (Segment::Literal(x), Segment::Literal(y)) => x == y,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<Value> + 'a {
        move |f| pairs.iter().find(|(k, _)| *k == f).map(|(_, v)| Value::s(*v))
    }

    #[test]
    fn renders_prefixes_and_matches() {
        let t = "LISTING#<status>#<listingId>";
        assert_eq!(composites(t), ["status", "listingId"]);
        assert_eq!(render(t, &values(&[("status", "active"), ("listingId", "01")])).unwrap(), "LISTING#active#01");
        assert_eq!(render(t, &values(&[("status", "active")])), Err(TemplateError::Missing("listingId".into())));
        assert_eq!(prefix(t, &values(&[])).unwrap(), ("LISTING#".into(), false));
        assert_eq!(prefix(t, &values(&[("status", "sold")])).unwrap(), ("LISTING#sold#".into(), false));
        assert_eq!(
            prefix(t, &values(&[("status", "sold"), ("listingId", "01")])).unwrap(),
            ("LISTING#sold#01".into(), true)
        );
        let p = "CATEGORY#<categoryId>#PRODUCT#<productId>";
        assert_eq!(prefix(p, &values(&[("categoryId", "pots")])).unwrap().0, "CATEGORY#pots#PRODUCT#");
        assert_eq!(matches(t, "LISTING#active#01"), Some(vec!["active", "01"]));
        assert_eq!(matches(t, "LISTING#active"), None);
        assert_eq!(matches(t, "LISTING##01"), None);
        assert_eq!(matches("#METADATA", "#METADATA"), Some(vec![]));
        assert!(overlap("USER#<a>", "USER#<b>"));
        assert!(!overlap("#METADATA", "REVIEW#<id>"));
        assert!(!overlap("USER#<a>", "USER_EMAIL#<b>"));
        assert!(render("A#<x>", &values(&[("x", "a#b")])).is_err(), "a value with # would alias another key");
        assert!(render("A#<x>", &values(&[("x", "")])).is_err());
    }

    #[test]
    fn amounts_render_as_zero_padded_cents() {
        let t = "LISTING#<price:cents10>#<listingId>";
        for (price, key) in [
            ("28", "0000002800"),
            ("29.99", "0000002999"),
            ("0.5", "0000000050"),
            ("28.00", "0000002800"),
            ("1000000", "0100000000"),
        ] {
            let v = |f: &str| match f {
                "price" => Some(Value::N(price.into())),
                _ => Some(Value::s("L")),
            };
            assert_eq!(render(t, &v).unwrap(), format!("LISTING#{key}#L"), "{price}");
        }
        assert_eq!(unformat(Some("cents10"), "0000002999"), Some(Value::N("29.99".into())), "read back");
        assert_eq!(unformat(Some("cents10"), "2999"), None, "not a whole key part");
        for bad in ["-1", "1.234", "x", "", "1e3"] {
            let v = |f: &str| if f == "price" { Some(Value::N(bad.into())) } else { Some(Value::s("L")) };
            assert!(render(t, &v).is_err(), "{bad}");
        }
    }
}
