//! A request's JSON body, read strictly: exactly one JSON object and
//! nothing after it, no member named twice, no member given as `null` (an
//! optional field is left out), a number with a zero fraction read as an
//! integer (as JSON Schema does), and an object never given as an array, at
//! any depth ([`objects`]). Errors name the offending field.

mod objects;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::{ApiError, Request};

/// The largest body any route accepts.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

impl Request {
    /// The JSON body as `T`. Types reject unknown fields; the body may not
    /// name a member twice nor give any member as `null` (an optional field
    /// is left out); a number with a zero fraction (`2.0`) is an integer, as
    /// in JSON Schema; a struct (or map) given a JSON array is an error at
    /// any depth, where serde would read the array as the fields in order.
    /// Errors name the offending field.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        let raw = self.event().body.as_deref().unwrap_or_default();
        let bytes = if self.event().is_base64_encoded {
            STANDARD.decode(raw).map_err(|_| ApiError::bad_request("body is not valid base64"))?
        } else {
            raw.as_bytes().to_vec()
        };
        if bytes.len() > MAX_BODY_BYTES {
            return Err(ApiError::too_large(MAX_BODY_BYTES));
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::bad_request("a JSON body is required"));
        }
        let de = &mut serde_json::Deserializer::from_slice(&bytes);
        let Strict(value) = serde_path_to_error::deserialize(&mut *de).map_err(body_error)?;
        // Exactly one value: only whitespace may follow it.
        de.end().map_err(|_| ApiError::bad_request("invalid body: one JSON object, with nothing after it"))?;
        if !value.is_object() {
            return Err(ApiError::bad_request("invalid body: must be a JSON object"));
        }
        if let Some(path) = null_member(&value, String::new()) {
            return Err(ApiError::bad_request(format!(
                "invalid body: `{path}`: must not be null (leave an optional field out)"
            )));
        }
        serde_path_to_error::deserialize(objects::Objects(value)).map_err(body_error)
    }
}

/// The 400 for a body that is not JSON or not a `T`.
fn body_error(e: serde_path_to_error::Error<serde_json::Error>) -> ApiError {
    let path = e.path().to_string();
    let inner = e.into_inner();
    let what = match inner.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "malformed JSON".to_owned(),
        _ => strip_position(&inner.to_string()),
    };
    if path == "." || path.is_empty() {
        ApiError::bad_request(format!("invalid body: {what}"))
    } else {
        ApiError::bad_request(format!("invalid body: `{path}`: {what}"))
    }
}

/// A JSON value read strictly: an object naming a member twice is an error
/// (the typed structs refuse it too, so reading through a value keeps that),
/// and a finite number with a zero fraction within 64 bits becomes an
/// integer.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        // 2^64 and -2^63 are exact in f64; the casts below are exact within them.
        Ok(if v.is_finite() && v.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&v) {
            Value::from(v as u64)
        } else if v.is_finite() && v.fract() == 0.0 && (-9_223_372_036_854_775_808.0..0.0).contains(&v) {
            Value::from(v as i64)
        } else {
            Value::from(v)
        })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if members.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
            let Strict(value) = map.next_value()?;
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

/// Where `value` holds a `null` inside an object or array, as a path such as
/// `items[0].qty`.
fn null_member(value: &Value, path: String) -> Option<String> {
    let join = |key: &str| if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") };
    match value {
        Value::Object(members) => members.iter().find_map(|(k, v)| match v {
            Value::Null => Some(join(k)),
            v => null_member(v, join(k)),
        }),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| match v {
            Value::Null => Some(format!("{path}[{i}]")),
            v => null_member(v, format!("{path}[{i}]")),
        }),
        _ => None,
    }
}

/// serde_json appends " at line L column C"; callers do not need it.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use aws_lambda_events::apigw::ApiGatewayV2httpRequest;

    use crate::Request;

    #[test]
    fn a_body_is_one_json_object() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Delta {
            delta: i64,
        }
        let read = |b: &str| with_body(b).json::<Delta>().map(|_| ()).map_err(|e| e.message);
        assert_eq!(read("{\"delta\":1}\n "), Ok(()));
        for bad in
            ["{\"delta\":1}{\"delta\":500}", "{\"delta\":1} garbage", "{\"delta\":1},", "[2]", "[{\"delta\":1}]", "7"]
        {
            assert!(read(bad).is_err(), "{bad}");
        }
    }

    fn with_body(body: &str) -> Request {
        let mut event = ApiGatewayV2httpRequest::default();
        event.body = Some(body.to_owned());
        Request::from(event)
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Body {
        n: u32,
        s: Option<String>,
        list: Option<Vec<u8>>,
    }

    #[test]
    fn bodies_are_read_as_the_contract_reads_them() {
        let ok = |b: &str| with_body(b).json::<Body>().map_err(|e| e.message);
        assert_eq!(ok(r#"{"n": 2.0}"#), Ok(Body { n: 2, s: None, list: None }), "2.0 is an integer");
        assert_eq!(ok(r#"{"n": 2, "s": "x"}"#), Ok(Body { n: 2, s: Some("x".into()), list: None }));
        assert!(ok(r#"{"n": 2.5}"#).unwrap_err().contains("`n`"));
        assert!(ok(r#"{"n": 1e30}"#).unwrap_err().contains("`n`"));
        assert!(ok(r#"{"n": 2, "s": null}"#).unwrap_err().contains("`s`: must not be null"));
        assert!(ok(r#"{"n": 2, "list": [1, null]}"#).unwrap_err().contains("`list[1]`: must not be null"));
        assert!(ok(r#"{"n": 2, "n": 3}"#).unwrap_err().contains("duplicate field `n`"));
        assert!(ok(r#"{"n": 2, "x": 1}"#).unwrap_err().contains("unknown field `x`"));
        assert!(ok(r#"{"n": "#).unwrap_err().contains("malformed JSON"));
        assert!(ok("null").unwrap_err().contains("invalid body"));
        assert!(ok(" ").unwrap_err().contains("body is required"));
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Point {
        lat: f64,
        lon: f64,
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Line {
        id: String,
        qty: u32,
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Wrapped(Point);

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Shape {
        Circle { centre: Point, r: f64 },
        Dot(Point),
        Nothing,
    }

    #[derive(Debug, serde::Deserialize, PartialEq, Default)]
    #[serde(deny_unknown_fields)]
    struct Nested {
        at: Option<Point>,
        lines: Option<Vec<Line>>,
        grid: Option<Vec<Vec<Line>>>,
        wrapped: Option<Wrapped>,
        shape: Option<Shape>,
        list: Option<Vec<u8>>,
        pair: Option<(u8, u8)>,
    }

    /// An array is never read as an object, at any depth: serde's derived
    /// structs accept a sequence of their fields in order unless the
    /// deserializer refuses it (`"at":[45,170]` would be lat 45, lon 170).
    #[test]
    fn an_array_is_never_an_object_at_any_depth() {
        let read = |b: &str| with_body(b).json::<Nested>().map_err(|e| e.message);
        for (bad, field) in [
            (r#"{"at":[45,170]}"#, "`at`"),
            (r#"{"lines":[["01JF8Z5Q000000000000000001",1]]}"#, "`lines[0]`"),
            (r#"{"lines":[{"id":"a","qty":1},["b",2]]}"#, "`lines[1]`"),
            (r#"{"grid":[[{"id":"a","qty":1}],[["b",2]]]}"#, "`grid[1][0]`"),
            (r#"{"wrapped":[45,170]}"#, "`wrapped`"),
            (r#"{"shape":{"circle":[[1,2],3]}}"#, "`shape.circle`"),
            (r#"{"shape":{"circle":{"centre":[1,2],"r":3}}}"#, "`shape.circle.centre`"),
            (r#"{"shape":{"dot":[1,2]}}"#, "`shape.dot`"),
        ] {
            let message = read(bad).expect_err(bad);
            assert!(message.contains(field), "{bad}: {message}");
            assert!(message.contains("must be a JSON object, not an array"), "{bad}: {message}");
        }
        let all = r#"{"at":{"lat":45,"lon":170},"lines":[{"id":"a","qty":1}],"grid":[[{"id":"b","qty":2}]],
            "wrapped":{"lat":1,"lon":2},"shape":{"circle":{"centre":{"lat":3,"lon":4},"r":5}},"list":[1,2],"pair":[3,4]}"#;
        let read_all = read(all).expect("objects, and arrays where arrays belong");
        assert_eq!(read_all.at, Some(Point { lat: 45.0, lon: 170.0 }));
        assert_eq!(read_all.lines, Some(vec![Line { id: "a".into(), qty: 1 }]));
        assert_eq!(read_all.grid, Some(vec![vec![Line { id: "b".into(), qty: 2 }]]));
        assert_eq!(read_all.wrapped, Some(Wrapped(Point { lat: 1.0, lon: 2.0 })));
        assert_eq!(read_all.shape, Some(Shape::Circle { centre: Point { lat: 3.0, lon: 4.0 }, r: 5.0 }));
        assert_eq!((read_all.list, read_all.pair), (Some(vec![1, 2]), Some((3, 4))));
        assert_eq!(read(r#"{"shape":"nothing"}"#).map(|n| n.shape), Ok(Some(Shape::Nothing)));
        assert_eq!(
            read(r#"{"shape":{"dot":{"lat":1,"lon":2}}}"#).map(|n| n.shape),
            Ok(Some(Shape::Dot(Point { lat: 1.0, lon: 2.0 })))
        );
        assert!(
            read(r#"{"shape":{"dot":{"lat":1,"lon":2},"circle":{"centre":{"lat":1,"lon":2},"r":1}}}"#).is_err(),
            "an enum is one member"
        );
        assert!(read(r#"{"at":{"lat":1,"lon":2,"lat":3}}"#).unwrap_err().contains("duplicate field `lat`"));
        assert!(read(r#"{"at":{"lat":1}}"#).unwrap_err().contains("`at`: missing field `lon`"));
        assert_eq!(read("{}"), Ok(Nested::default()));
    }
}
