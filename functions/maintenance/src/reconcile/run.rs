//! One reconcile run's state: the table, the options, the pacer, what it
//! found and did, and the partitions of dense cells whose records it has
//! checked.

use std::collections::BTreeSet;
use std::sync::Mutex;

use store::Store;

use super::{Kind, Options, Report, Tally};
use crate::pace::Pacer;

pub(super) struct Run<'a> {
    pub store: &'a Store,
    pub options: Options,
    pub segments: u16,
    pub pacer: Pacer,
    pub report: Mutex<Report>,
    /// The partitions of dense cells whose `NearCell` this run has checked
    /// (each once a run, whatever the process checked before).
    pub near_cells: Mutex<BTreeSet<String>>,
}

impl<'a> Run<'a> {
    pub fn new(store: &'a Store, options: Options, pacer: Pacer) -> Self {
        let (segments, report) = (options.segments.max(1), Mutex::new(Report::default()));
        Run { store, options, segments, pacer, report, near_cells: Mutex::new(BTreeSet::new()) }
    }

    pub fn tally(&self, kind: Kind, tally: Tally) {
        self.report.lock().unwrap_or_else(|p| p.into_inner()).tally(kind, tally);
    }

    /// Found, and repaired unless a dry run.
    pub fn fixed(&self, n: u64) -> Tally {
        if self.options.dry_run {
            Tally::found(n)
        } else {
            Tally::repaired(n)
        }
    }

    /// Whether partition `cell`'s record is this run's to check (the first
    /// time it is asked).
    pub fn first_check(&self, cell: &str) -> bool {
        self.near_cells.lock().unwrap_or_else(|p| p.into_inner()).insert(cell.to_owned())
    }
}
