//! Who is calling: the claims API Gateway's JWT authorizer verified (the
//! local stack fills the same), never a header or a body.

use domain::ids::UserId;

use crate::ApiError;

/// Claim naming the caller.
pub const SUB_CLAIM: &str = "sub";
/// Claim listing the caller's groups; API Gateway hands arrays over as a
/// string such as `[admin]` or `[admin ops]`.
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

/// The group names of a `cognito:groups` claim, in the two forms API
/// Gateway's JWT authorizer is reported to hand over: a JSON array
/// (`["admin","partners"]`) or the bracketed, space-separated string
/// (`[admin partners]`). Anything else, or a name that could be read two
/// ways (a comma, a quote, a bracket or whitespace inside it), gives no
/// groups at all: a claim that parses ambiguously grants nothing.
pub fn groups(claim: &str) -> Vec<String> {
    let claim = claim.trim();
    let clean =
        |g: &str| !g.is_empty() && !g.chars().any(|c| matches!(c, ',' | '"' | '[' | ']' | '\\') || c.is_whitespace());
    if let Ok(names) = serde_json::from_str::<Vec<String>>(claim) {
        return if names.iter().all(|g| clean(g)) { names } else { Vec::new() };
    }
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
        for yes in
            ["[admin]", "[ops admin]", "[ops  admin ]", "[\"admin\"]", "[\"ops\",\"admin\"]", " [\"ops\", \"admin\"] "]
        {
            assert!(groups_contain(yes, "admin"), "{yes}");
        }
        for no in [
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
