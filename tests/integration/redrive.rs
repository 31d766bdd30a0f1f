//! Redrive (issue 19): the stream processor loses its write permission for
//! a while (a deploy), the poller gives every batch up after its retries and
//! writes the on-failure messages Lambda would send to SQS into a file;
//! once fixed, redriving those messages makes everything exact, and a
//! second redrive (a replay) changes nothing.

use integration_tests::derived::differences;
use integration_tests::faults::Fault;
use integration_tests::workload::workload;
use integration_tests::TestTable;
use local_stack::stream::StreamPoller;
use maintenance::redrive::{self, parse_messages, Redriven};

#[tokio::test]
async fn batches_given_up_on_are_redriven_from_the_failure_file() {
    let (t, faults) = TestTable::with_faults().await;
    workload(&t, 10).await;
    let file = std::env::temp_dir().join(format!("stream-failures-{}.jsonl", ulid::Ulid::generate()));
    let mut poller = StreamPoller::new(t.deps.store.clone(), integration_tests::endpoint())
        .await
        .unwrap()
        .with_failures_file(file.clone());
    for op in ["UpdateItem", "TransactWriteItems", "PutItem", "DeleteItem", "BatchWriteItem"] {
        faults.inject(op, Fault::AccessDenied, 1_000_000);
    }
    let mut dropped = 0;
    for _ in 0..200 {
        let report = poller.poll_once().await.unwrap();
        dropped += report.dropped;
        if report.records == 0 && dropped > 0 {
            break;
        }
    }
    faults.clear();
    assert!(dropped > 0, "the poller gave batches up");
    assert_eq!(poller.poll_once().await.unwrap().records, 0, "what was given up on is not delivered again");
    let drift = differences(&t.deps.store).await;
    assert!(drift.len() > 10, "derived data drifted: {drift:?}");

    let text = std::fs::read_to_string(&file).unwrap();
    let messages = parse_messages(&text).unwrap();
    assert!(!messages.is_empty());
    let streams = redrive::streams_client(&store::Endpoint::Url(integration_tests::endpoint().to_owned())).await;
    let outcomes = redrive::redrive(&t.deps.store, &streams, &messages).await;
    let delivered: usize = outcomes
        .iter()
        .map(|o| match o {
            Ok(Redriven::Delivered { records }) => *records,
            other => panic!("{other:?}"),
        })
        .sum();
    assert_eq!(delivered, dropped, "every record given up on is delivered");
    // The stream then delivers the aggregate parts the redrive wrote.
    let mut parts = 0;
    for _ in 0..20 {
        match poller.poll_once().await.unwrap().records {
            0 => break,
            n => parts += n,
        }
    }
    assert!(parts > 0, "the parts' records");
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new(), "exact after the redrive");

    // A replay of the same messages changes nothing.
    for outcome in redrive::redrive(&t.deps.store, &streams, &messages).await {
        assert!(matches!(outcome, Ok(Redriven::Delivered { .. })), "{outcome:?}");
    }
    assert_eq!(differences(&t.deps.store).await, Vec::<String>::new());

    // A message about a shard the stream no longer has: past retention.
    let mut gone = messages[0].clone();
    gone.batch.shard_id = "shardId-00000000000000000000-00000000".into();
    let outcome = redrive::redrive(&t.deps.store, &streams, &[gone]).await;
    assert_eq!(outcome, vec![Ok(Redriven::Expired)]);
    let _ = std::fs::remove_file(file);
}
