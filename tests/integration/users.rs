//! Users (marketplace AP1-2, e-commerce AP6) against DynamoDB Local.

use integration_tests::{req, users, As, TestTable};
use serde_json::json;

async fn sign_up(t: &TestTable, sub: &'static str, email: &str) -> u16 {
    users(&t.deps, req("POST /users").by(As::User(sub)).json(json!({ "name": sub, "email": email }))).await.status
}

#[tokio::test]
async fn sign_up_takes_the_id_from_the_token_and_keeps_emails_unique() {
    let t = TestTable::new().await;
    let r = users(
        &t.deps,
        req("POST /users").by(As::User("dana")).json(json!({ "name": "Dana", "email": "Dana@Example.com" })),
    )
    .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!((r.body["userId"].as_str(), r.body["email"].as_str()), (Some("dana"), Some("dana@example.com")));
    assert_eq!(r.body["role"], "buyer");
    assert_eq!(t.requests(), ["TransactWriteItems"], "user and email guard in one transaction");

    assert_eq!(sign_up(&t, "erin", "DANA@example.com").await, 409, "emails are unique case-insensitively");
    let again =
        users(&t.deps, req("POST /users").by(As::User("dana")).json(json!({ "name": "D", "email": "d2@example.com" })))
            .await;
    assert_eq!(again.status, 409);
    assert!(again.body["error"]["message"].as_str().unwrap().contains("already signed up"));
    // A body cannot choose the id or the role.
    let forged = users(
        &t.deps,
        req("POST /users")
            .by(As::User("fay"))
            .json(json!({ "name": "F", "email": "f@example.com", "userId": "admin" })),
    )
    .await;
    assert_eq!(forged.status, 400);
    let no_token = users(&t.deps, req("POST /users").json(json!({ "name": "F", "email": "f@example.com" }))).await;
    assert_eq!(no_token.status, 401);
}

/// Two concurrent sign-ups with one email: exactly one succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_sign_ups_with_one_email_admit_one() {
    let t = TestTable::new().await;
    for round in 0..5 {
        let email = format!("race{round}@example.com");
        let subs: [&'static str; 2] =
            [["r0a", "r0b"], ["r1a", "r1b"], ["r2a", "r2b"], ["r3a", "r3b"], ["r4a", "r4b"]][round];
        let tasks: Vec<_> = subs
            .iter()
            .map(|sub| {
                let (deps, email, sub) = (t.deps.clone(), email.clone(), *sub);
                tokio::spawn(async move {
                    users(&deps, req("POST /users").by(As::User(sub)).json(json!({ "name": sub, "email": email })))
                        .await
                        .status
                })
            })
            .collect();
        let mut statuses = Vec::new();
        for task in tasks {
            statuses.push(task.await.unwrap());
        }
        statuses.sort();
        assert_eq!(statuses, [201, 409], "round {round}");
    }
}

#[tokio::test]
async fn ap1_public_profile_never_shows_the_email_and_me_does() {
    let t = TestTable::with_demo_data().await;
    let get = |by: As| req("GET /users/{userId}").path("userId", "alice").by(by);
    for who in [As::Anonymous, As::User("alice"), As::User("bob"), As::Admin] {
        let public = users(&t.deps, get(who)).await;
        assert_eq!((public.status, &public.body["name"]), (200, &json!("Alice")), "{:?}", public.body);
        assert!(public.body.get("email").is_none(), "the public profile has no email: {:?}", public.body);
        assert_eq!(t.requests(), ["GetItem"]);
    }
    let me = users(&t.deps, req("GET /users/me").by(As::User("alice"))).await;
    assert_eq!((me.status, me.body["email"].as_str()), (200, Some("alice@example.com")));
    assert_eq!(t.requests(), ["GetItem"]);
    let anonymous_me = users(&t.deps, req("GET /users/me")).await;
    assert_eq!(anonymous_me.status, 401);
    let unknown_me = users(&t.deps, req("GET /users/me").by(As::User("nobody"))).await;
    assert_eq!(unknown_me.status, 404);
    let missing = users(&t.deps, req("GET /users/{userId}").path("userId", "nobody")).await;
    assert_eq!(missing.status, 404);
}

#[tokio::test]
async fn ap2_lookup_by_email_is_one_gsi1_query_for_admins_only() {
    let t = TestTable::with_demo_data().await;
    let r = users(&t.deps, req("GET /users").query("email", "BOB@example.com").by(As::Admin)).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.item_field("userId"), ["bob"]);
    assert_eq!(r.items()[0]["email"], "bob@example.com");
    assert_eq!(t.requests(), ["Query"]);
    let none = users(&t.deps, req("GET /users").query("email", "nobody@example.com").by(As::Admin)).await;
    assert_eq!((none.status, none.items().len()), (200, 0));
    let not_admin = users(&t.deps, req("GET /users").query("email", "bob@example.com").by(As::User("alice"))).await;
    assert_eq!(not_admin.status, 403, "another user's email is not readable");
    assert!(t.requests().len() == 1, "the refused lookup never reached the table");
    let no_email = users(&t.deps, req("GET /users").by(As::Admin)).await;
    assert_eq!(no_email.status, 400);
}

#[tokio::test]
async fn profile_updates_keep_emails_unique() {
    let t = TestTable::with_demo_data().await;
    let patch = |by: As, who: &str, body| req("PATCH /users/{userId}").path("userId", who).by(by).json(body);
    let r = users(&t.deps, patch(As::User("alice"), "alice", json!({ "name": "Alice A." }))).await;
    assert_eq!((r.status, r.body["name"].as_str()), (200, Some("Alice A.")));
    assert_eq!(t.requests(), ["UpdateItem"]);

    let taken = users(&t.deps, patch(As::User("alice"), "alice", json!({ "email": "bob@example.com" }))).await;
    assert_eq!(taken.status, 409);
    t.requests();
    let moved = users(&t.deps, patch(As::User("alice"), "alice", json!({ "email": "alice@new.example" }))).await;
    assert_eq!((moved.status, moved.body["email"].as_str()), (200, Some("alice@new.example")));
    assert_eq!(t.requests(), ["GetItem", "TransactWriteItems"]);
    // The old address is free again, the new one is taken, and lookup follows.
    assert_eq!(sign_up(&t, "newcomer", "alice@example.com").await, 201);
    assert_eq!(sign_up(&t, "other", "alice@new.example").await, 409);
    let found = users(&t.deps, req("GET /users").query("email", "alice@new.example").by(As::Admin)).await;
    assert_eq!(found.item_field("userId"), ["alice"]);

    let someone_else = users(&t.deps, patch(As::User("bob"), "alice", json!({ "name": "Mallory" }))).await;
    assert_eq!(someone_else.status, 403);
    let empty = users(&t.deps, patch(As::User("alice"), "alice", json!({}))).await;
    assert_eq!(empty.status, 400);
    let server_owned = users(&t.deps, patch(As::User("alice"), "alice", json!({ "role": "admin" }))).await;
    assert_eq!(server_owned.status, 400);
}
