//! Opaque, tamper-evident pagination cursors bound to their query.
//!
//! A cursor is `base64url(position) "." base64url(tag)`, where the tag is an
//! HMAC-SHA256 (truncated to 128 bits) over the query's scope and the
//! position. A cursor from one query does not open for another (the scope
//! differs), and an edited cursor fails the tag check.

use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use serde::de::DeserializeOwned;
use serde::Serialize;
use sha2::Sha256;

use crate::ApiError;

/// Environment variable holding the signing secret (at least 32 bytes).
pub const SECRET_VAR: &str = "CURSOR_SECRET";
const MAX_CURSOR_LEN: usize = 8192;
const TAG_LEN: usize = 16;

/// The key cursors are signed with. Cheap to clone.
#[derive(Clone)]
pub struct CursorKey(Arc<[u8]>);

impl std::fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorKey(..)")
    }
}

impl CursorKey {
    /// Environment variable holding the signing secret.
    pub const SECRET_VAR_NAME: &'static str = SECRET_VAR;

    /// A key from secret bytes.
    pub fn new(secret: impl AsRef<[u8]>) -> Self {
        CursorKey(secret.as_ref().into())
    }

    /// The key from `CURSOR_SECRET`; at least 32 bytes.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(SECRET_VAR) {
            Ok(s) if s.len() >= 32 => Ok(CursorKey::new(s)),
            Ok(_) => Err(format!("{SECRET_VAR} must be at least 32 bytes")),
            Err(_) => Err(format!("{SECRET_VAR} is not set")),
        }
    }

    fn tag(&self, scope: &str, payload: &[u8]) -> Hmac<Sha256> {
        // HMAC accepts keys of any length.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!());
        mac.update(scope.as_bytes());
        mac.update(&[0]);
        mac.update(payload);
        mac
    }

    /// Seals a position of the query identified by `scope`.
    pub fn seal<T: Serialize>(&self, scope: &str, position: &T) -> String {
        let payload = serde_json::to_vec(position).unwrap_or_default();
        let tag = self.tag(scope, &payload).finalize().into_bytes();
        format!("{}.{}", URL_SAFE_NO_PAD.encode(&payload), URL_SAFE_NO_PAD.encode(&tag[..TAG_LEN]))
    }

    /// Opens a cursor of the query identified by `scope`; any cursor not
    /// sealed by this key for this scope is a 400.
    pub fn open<T: DeserializeOwned>(&self, scope: &str, cursor: &str) -> Result<T, ApiError> {
        let invalid = || ApiError::bad_request("invalid cursor");
        if cursor.len() > MAX_CURSOR_LEN {
            return Err(invalid());
        }
        let (payload, tag) = cursor.split_once('.').ok_or_else(invalid)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| invalid())?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| invalid())?;
        self.tag(scope, &payload).verify_truncated_left(&tag).map_err(|_| invalid())?;
        if tag.len() != TAG_LEN {
            return Err(invalid());
        }
        serde_json::from_slice(&payload).map_err(|_| invalid())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn key() -> CursorKey {
        CursorKey::new("0123456789abcdef0123456789abcdef")
    }

    #[test]
    fn round_trips_within_its_scope_only() {
        let pos = BTreeMap::from([("pk".to_string(), "BRANDS".to_string())]);
        let c = key().seal("q1", &pos);
        assert_eq!(key().open::<BTreeMap<String, String>>("q1", &c).unwrap(), pos);
        assert_eq!(key().open::<BTreeMap<String, String>>("q2", &c).unwrap_err().status, 400);
        let other = CursorKey::new("another secret of at least 32 bytes!!");
        assert!(other.open::<BTreeMap<String, String>>("q1", &c).is_err());
        for forged in ["", ".", "abc", "e30.", "e30.AAAAAAAAAAAAAAAAAAAAAA", &"A".repeat(5000)] {
            assert!(key().open::<BTreeMap<String, String>>("q1", forged).is_err(), "{forged}");
        }
    }

    proptest! {
        /// Changing any character of a cursor makes it invalid.
        #[test]
        fn tampering_is_detected(pk in "[A-Z#0-9]{1,40}", at in any::<prop::sample::Index>(), ch in "[A-Za-z0-9_.-]") {
            let pos = BTreeMap::from([("pk".to_string(), pk)]);
            let c = key().seal("q", &pos);
            let i = at.index(c.len());
            let mut bytes = c.clone().into_bytes();
            bytes[i] = ch.as_bytes()[0];
            let edited = String::from_utf8(bytes).unwrap();
            prop_assume!(edited != c);
            let opened = key().open::<BTreeMap<String, String>>("q", &edited);
            // Base64 padding bits can make two encodings decode equal; only then may it open, to the same value.
            if let Ok(v) = opened { prop_assert_eq!(v, pos); }
        }
    }
}
