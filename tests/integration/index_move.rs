//! Issue 33 item 6: an index's projection cannot change in place, so
//! "listings near me" moved from GSI4 (what a page chose by, then a
//! `BatchGetItem` of the page) to GSI5 (GSI4's keys, holding the cards),
//! replayed on a local table deploy by deploy as docs/operations.md
//! ("Moving an index") ran it:
//! 0. the table as the release before the move left it (GSI1-4), with
//!    listings, every one in GSI4;
//! 1. one deploy creates GSI5 (one index change per `UpdateTable`, and
//!    none while another is under way: `IndexChange` is one); writes go on
//!    while DynamoDB fills it;
//! 2. once GSI5 is ACTIVE, the next deploy moved the reads to it (the
//!    release whose `NEAR_INDEX` named it);
//! 3. the one after deletes GSI4 (this release: its reads are gone).
//!
//! At steps 2 and 3 the walk is exact against brute force and reads the
//! cards alone, and a listing written during a step is found.

use domain::geo::Location;
use integration_tests::hostile::{listing_body, Hostile};
use integration_tests::{listings, req, walk_pages, Reply, TestTable};
use keyschema::Index;
use store::table::{change_index, IndexChange};

const SELLER: &str = "mover";
/// The radius walked.
const RADIUS: f64 = 10.0;

fn centre() -> Location {
    Location::new(52.52, 13.405).unwrap()
}

/// Every listing of the walk (GSI5), by ring, and whether any page
/// read listings from the table.
async fn walk(t: &TestTable) -> (Vec<String>, bool) {
    let (mut ids, mut batch) = (Vec::new(), false);
    let request = || {
        let c = centre();
        req("GET /listings/near").query("lat", c.lat).query("lon", c.lon).query("radiusKm", RADIUS).query("limit", 15)
    };
    walk_pages(
        t,
        request,
        |r| listings(&t.deps, r),
        |page: &Reply, sent| {
            batch |= sent.iter().any(|r| r == "BatchGetItem");
            ids.extend(page.items().iter().map(|l| l["listingId"].as_str().unwrap().to_owned()));
        },
    )
    .await;
    (ids, batch)
}

/// The listings GSI4 holds in the centre's partition.
async fn in_gsi4(t: &TestTable) -> usize {
    let pk = format!("GEO#{}", centre().geohash(domain::geo::CELL_LEN));
    let q = t.deps.store.client().query().table_name(t.deps.store.table()).index_name("GSI4");
    let q = q.key_condition_expression("gsi4pk = :p").expression_attribute_values(":p", store::item::s(&pk));
    q.send().await.unwrap().count as usize
}

/// `n` listings spread within 9 km (and, every third, at one spot),
/// indexed; with those before, by ring as brute force sorts them.
async fn add(h: &mut Hostile<'_>, placed: &mut Vec<(String, Location)>, n: usize) -> Vec<String> {
    let spots: Vec<Location> = (placed.len()..placed.len() + n)
        .map(|i| if i % 3 == 0 { centre().toward(1.0, 30.0) } else { centre().toward((i % 9) as f64, i as f64 * 47.0) })
        .collect();
    let bodies = spots.iter().map(|at| listing_body("Moving box", "moving", None, Some(*at))).collect();
    let ids = h.listings(SELLER, bodies).await;
    h.index().await;
    placed.extend(ids.into_iter().zip(spots));
    let points = placed.iter().map(|(id, at)| (id.clone(), *at));
    super::near::by_ring(points, centre(), RADIUS).into_iter().map(|(id, _)| id).collect()
}

#[tokio::test]
async fn near_moves_from_gsi4_to_gsi5_one_index_a_deploy() {
    // 0. The release before the move: GSI1-4.
    let t = TestTable::with_gsis(&[Index::Gsi1, Index::Gsi2, Index::Gsi3, Index::Gsi4]).await;
    let (client, table) = (t.deps.store.client(), t.deps.store.table());
    let mut h = Hostile::on(&t);
    h.users(&[SELLER]).await;
    h.category("moving", 1).await;
    let mut placed = Vec::new();
    add(&mut h, &mut placed, 45).await;
    assert_eq!(in_gsi4(&t).await, 45, "before: every listing in GSI4");

    // 1. Deploy 1 creates GSI5; DynamoDB fills it from the items while
    // listings are written.
    change_index(client, table, IndexChange::Create(Index::Gsi5)).await.unwrap();
    add(&mut h, &mut placed, 15).await;
    t.settle_indexes(&[Index::Gsi1, Index::Gsi2, Index::Gsi3, Index::Gsi4, Index::Gsi5]).await;

    // 2. Deploy 2 moved the reads: the walk from the cards alone, the
    // listings written before GSI5 and while it filled included.
    let want = add(&mut h, &mut placed, 15).await;
    assert_eq!(walk(&t).await, (want, false), "reads on GSI5");
    assert_eq!(in_gsi4(&t).await, 75, "GSI4 still written (a rollback read it)");

    // 3. Deploy 3 deletes GSI4; writes and reads go on without it.
    change_index(client, table, IndexChange::Delete(Index::Gsi4)).await.unwrap();
    t.settle_indexes(&[Index::Gsi1, Index::Gsi2, Index::Gsi3, Index::Gsi5]).await;
    let want = add(&mut h, &mut placed, 15).await;
    assert_eq!(placed.len(), 90);
    assert_eq!(walk(&t).await, (want, false), "after: GSI5 alone");
}
