//! Who is calling: the claims API Gateway's JWT authorizer verified (the
//! local stack fills the same), never a header or a body.

use domain::ids::UserId;

use crate::ApiError;

/// Claim naming the caller.
pub const SUB_CLAIM: &str = "sub";
/// Claim listing the caller's groups; API Gateway hands arrays over as a
/// string such as `[admin]` or `[admin ops]` (see [`groups`]).
pub const GROUPS_CLAIM: &str = "cognito:groups";
/// The group whose members are admins.
pub const ADMIN_GROUP: &str = "admin";

/// Who is calling, from the claims the JWT authorizer verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The `sub` claim.
    pub user_id: UserId,
    /// Member of the `admin` group.
    pub admin: bool,
}

impl Caller {
    /// 403 unless an admin.
    pub fn require_admin(&self) -> Result<(), ApiError> {
        if self.admin {
            Ok(())
        } else {
            Err(ApiError::forbidden("admin only"))
        }
    }

    /// Whether the caller is this user.
    pub fn is(&self, user: &UserId) -> bool {
        &self.user_id == user
    }

    /// 403 unless the caller is this user or an admin.
    pub fn require_self_or_admin(&self, user: &UserId) -> Result<(), ApiError> {
        if self.is(user) || self.admin {
            Ok(())
        } else {
            Err(ApiError::forbidden("only the user or an admin may do this"))
        }
    }
}

/// The group names of a `cognito:groups` claim in the one form the HTTP
/// API's JWT authorizer delivers it: the payload's claims are a map of
/// strings (AWS's payload format 2.0, `requestContext.authorizer.jwt.claims`;
/// `aws_lambda_events` types it so), and an array claim arrives flattened to
/// its elements between brackets, separated by spaces (`[admin partners]`;
/// the local stack flattens the same way). A JSON array is not read as one:
/// the authorizer never sends that form, and `["admin"]` is what the
/// flattening makes of a group named `"admin"` (quotes are legal in Cognito
/// group names), so reading it as JSON would make that group the admin
/// group. Cognito group names hold no whitespace, so the split at spaces is
/// exact for them; a name holding a comma, a quote, a bracket or a
/// backslash (a claim another reader could take for JSON or a comma list),
/// or a claim in any other form, gives no groups at all: it grants nothing.
pub fn groups(claim: &str) -> Vec<String> {
    let claim = claim.trim();
    let clean =
        |g: &str| !g.is_empty() && !g.chars().any(|c| matches!(c, ',' | '"' | '[' | ']' | '\\') || c.is_whitespace());
    match claim.strip_prefix('[').and_then(|c| c.strip_suffix(']')) {
        Some(inner) => {
            let names: Vec<String> = inner.split_whitespace().map(str::to_owned).collect();
            if names.iter().all(|g| clean(g)) {
                names
            } else {
                Vec::new()
            }
        }
        None => Vec::new(),
    }
}

/// Whether a groups claim names `group` (a whole name; see [`groups`]).
pub fn groups_contain(claim: &str, group: &str) -> bool {
    groups(claim).iter().any(|g| g == group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_claim_forms() {
        for yes in ["[admin]", "[ops admin]", "[ops  admin ]", " [admin ops] "] {
            assert!(groups_contain(yes, "admin"), "{yes}");
        }
        // The flattening of the groups `"admin"`, `"ops","admin"` and
        // `"ops",` with `"admin"`: JSON arrays to the eye, never the admin group.
        for no in [
            "[\"admin\"]",
            "[\"ops\",\"admin\"]",
            "[\"ops\", \"admin\"]",
            " [\"ops\", \"admin\"] ",
            "[\"partners,admin\"]",
            "[\"\\\"admin\\\"\"]",
            "[partners,admin]",
            "[ops, admin]",
            "[\"admin]",
            "[admin\"]",
            "[administrators]",
            "[\"admin \"]",
            "[[admin]]",
            "admin",
            "admin,partners",
            "[]",
            "",
            "[\"admin\",\"a b\"]",
        ] {
            assert!(!groups_contain(no, "admin"), "{no}");
        }
        assert_eq!(groups("[a b]"), ["a", "b"]);
    }
}
