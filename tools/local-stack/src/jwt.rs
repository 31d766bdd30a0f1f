//! Dev JWTs: HS256 tokens signed with `DEV_JWT_SECRET`, verified the way
//! the HTTP API's JWT authorizer verifies real ones, and turned into the
//! same `requestContext.authorizer.jwt.claims` map (every claim a string;
//! arrays as `[a b]`, as API Gateway hands them over).

use std::collections::HashMap;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{json, Map, Value};
use sha2::Sha256;

/// Environment variable with the signing secret.
pub const SECRET_VAR: &str = "DEV_JWT_SECRET";
/// Secret used when `DEV_JWT_SECRET` is not set.
pub const DEFAULT_SECRET: &str = "local-dev-secret";

/// The dev secret in force.
pub fn secret() -> String {
    std::env::var(SECRET_VAR).unwrap_or_else(|_| DEFAULT_SECRET.to_owned())
}

fn mac(secret: &str, signing_input: &str) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).unwrap_or_else(|_| unreachable!());
    mac.update(signing_input.as_bytes());
    mac
}

/// Mints a token for `sub`, in the `admin` group if asked, valid for `ttl_secs`.
pub fn mint(secret: &str, sub: &str, admin: bool, ttl_secs: u64) -> String {
    let mut claims = Map::new();
    claims.insert("sub".into(), json!(sub));
    if admin {
        claims.insert("cognito:groups".into(), json!(["admin"]));
    }
    mint_claims(secret, claims, ttl_secs)
}

/// Mints a token with these claims (any JSON, as an identity provider
/// issues them: `cognito:groups` is an array) and `iat`, `exp` and `iss`,
/// valid for `ttl_secs`.
pub fn mint_claims(secret: &str, mut claims: Map<String, Value>, ttl_secs: u64) -> String {
    let now = domain::time::now_ms() / 1000;
    claims.insert("iat".into(), json!(now));
    claims.insert("exp".into(), json!(now + ttl_secs));
    claims.insert("iss".into(), json!("local-stack"));
    let claims = Value::Object(claims);
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let input = format!("{header}.{payload}");
    let sig = URL_SAFE_NO_PAD.encode(mac(secret, &input).finalize().into_bytes());
    format!("{input}.{sig}")
}

/// Why a token was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum JwtError {
    /// Not three base64url parts of JSON.
    #[error("malformed token")]
    Malformed,
    /// Not HS256.
    #[error("unsupported algorithm")]
    Algorithm,
    /// Signature does not verify.
    #[error("bad signature")]
    Signature,
    /// `exp` passed or `nbf` not reached.
    #[error("token expired or not yet valid")]
    Expired,
    /// No `sub` claim.
    #[error("no sub claim")]
    NoSubject,
}

/// Verifies a token and returns its claims as API Gateway passes them on.
pub fn verify(secret: &str, token: &str) -> Result<HashMap<String, String>, JwtError> {
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(s), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(JwtError::Malformed);
    };
    let decode = |part: &str| -> Result<Map<String, Value>, JwtError> {
        let bytes = URL_SAFE_NO_PAD.decode(part).map_err(|_| JwtError::Malformed)?;
        serde_json::from_slice(&bytes).map_err(|_| JwtError::Malformed)
    };
    let header = decode(h)?;
    if header.get("alg").and_then(Value::as_str) != Some("HS256") {
        return Err(JwtError::Algorithm);
    }
    let sig = URL_SAFE_NO_PAD.decode(s).map_err(|_| JwtError::Malformed)?;
    mac(secret, &format!("{h}.{p}")).verify_slice(&sig).map_err(|_| JwtError::Signature)?;
    let claims = decode(p)?;
    let now = domain::time::now_ms() / 1000;
    let time = |name: &str| claims.get(name).and_then(Value::as_u64);
    // A token without `exp` never expires: refused, as API Gateway's JWT
    // authorizer refuses it.
    if time("exp").is_none_or(|exp| exp <= now) || time("nbf").is_some_and(|nbf| nbf > now) {
        return Err(JwtError::Expired);
    }
    if !claims.get("sub").is_some_and(Value::is_string) {
        return Err(JwtError::NoSubject);
    }
    Ok(claims.into_iter().map(|(k, v)| (k, claim_string(v))).collect())
}

/// API Gateway's rendering of a claim value as a string.
fn claim_string(value: Value) -> String {
    match value {
        Value::String(s) => s,
        Value::Array(items) => {
            let inner: Vec<String> = items.into_iter().map(claim_string).collect();
            format!("[{}]", inner.join(" "))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_tokens_verify_and_carry_groups() {
        let t = mint("s", "alice", true, 60);
        let claims = verify("s", &t).unwrap();
        assert_eq!(claims["sub"], "alice");
        assert_eq!(claims["cognito:groups"], "[admin]");
        assert!(api::groups_contain(&claims["cognito:groups"], "admin"));
        assert_eq!(verify("other", &t), Err(JwtError::Signature));
        assert_eq!(verify("s", "a.b"), Err(JwtError::Malformed));
        assert_eq!(verify("s", &mint("s", "bob", false, 0)), Err(JwtError::Expired));
        let (h, rest) = t.split_once('.').unwrap();
        let none_alg = format!("{}.{}", URL_SAFE_NO_PAD.encode(br#"{"alg":"none"}"#), rest);
        assert_ne!(h, none_alg.split('.').next().unwrap());
        assert_eq!(verify("s", &none_alg), Err(JwtError::Algorithm));
    }

    #[test]
    fn tokens_without_exp_are_refused() {
        let claims = URL_SAFE_NO_PAD.encode(br#"{"sub":"alice"}"#);
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
        let input = format!("{header}.{claims}");
        let sig = URL_SAFE_NO_PAD.encode(mac("s", &input).finalize().into_bytes());
        assert_eq!(verify("s", &format!("{input}.{sig}")), Err(JwtError::Expired));
    }
}
