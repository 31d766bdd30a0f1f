//! Homes (docs/regions.md): the regions of a global table, and where an
//! item is written. In DynamoDB's default multi-region mode a condition is
//! checked against the local replica only and concurrent writes of an item
//! in two regions are settled by last writer wins, so every item is
//! written in one region, its home, and a function elsewhere writes it
//! through a client for that region ([`Store::at`]).
//!
//! An item's home is a region named on it or on what it belongs to (a
//! listing's `home`, its seller's), or else the primary region: the first
//! of `REGIONS`, home of the users and their email guards, the catalog and
//! the ratings. Without `REGIONS` there is one region, the function's own,
//! and every home is it.

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_sdk_dynamodb::Client;

use crate::{Store, StoreError};

/// Environment variable listing the global table's regions, primary first
/// (`us-east-1,eu-west-1`); unset: one region.
pub const REGIONS_VAR: &str = "REGIONS";

/// The regions a store writes in: its own, the primary, and a client for
/// each other region.
#[derive(Clone, Debug)]
pub struct Regions {
    here: Arc<str>,
    primary: Arc<str>,
    peers: Arc<BTreeMap<String, Client>>,
}

impl Regions {
    /// One region, `here`: every home is it.
    pub fn single(here: &str) -> Regions {
        Regions { here: here.into(), primary: here.into(), peers: Arc::default() }
    }

    /// The regions of a global table, seen from `here`: `primary` and the
    /// clients of the others by region.
    pub fn global(here: &str, primary: &str, peers: BTreeMap<String, Client>) -> Regions {
        Regions { here: here.into(), primary: primary.into(), peers: Arc::new(peers) }
    }

    /// `REGIONS` read (primary first; it must name `here`): the primary and
    /// the other regions, or `None` when unset or naming one region.
    pub fn parse_list(list: &str, here: &str) -> Result<Option<(String, Vec<String>)>, String> {
        let regions: Vec<String> = list.split(',').map(str::trim).filter(|r| !r.is_empty()).map(String::from).collect();
        let Some(primary) = regions.first().cloned() else { return Ok(None) };
        if !regions.iter().any(|r| r == here) {
            return Err(format!("{REGIONS_VAR}={list} does not name this region ({here})"));
        }
        let others: Vec<String> = regions.into_iter().filter(|r| r != here).collect();
        Ok((!others.is_empty() || primary != here).then_some((primary, others)))
    }
}

impl Store {
    /// This store's region (its client's).
    pub fn region(&self) -> &str {
        &self.regions.here
    }

    /// The region `home` names, or the primary when it names none; in a
    /// single region, that region whatever `home` says (a table that was
    /// global, or the survivor of a lost region: docs/operations.md).
    pub fn home_of<'a>(&'a self, home: Option<&'a str>) -> &'a str {
        match home {
            _ if !self.is_global() => &self.regions.here,
            Some(home) => home,
            None => &self.regions.primary,
        }
    }

    /// Whether what lives in `home` (the primary when `None`) is written here.
    pub fn is_home(&self, home: Option<&str>) -> bool {
        self.home_of(home) == self.region()
    }

    /// The store that writes what lives in `home` (the primary when
    /// `None`): this one, or one over that region's client. A region with
    /// no client is a configuration error (`REGIONS` does not name it), not
    /// a busy service: `Service` `UnknownRegion`, never retried.
    pub fn at(&self, home: Option<&str>) -> Result<Store, StoreError> {
        let home = self.home_of(home);
        if home == self.region() {
            return Ok(self.clone());
        }
        let client = self.regions.peers.get(home).ok_or_else(|| StoreError::Service {
            code: "UnknownRegion".to_owned(),
            message: format!("an item is homed in {home}, which {REGIONS_VAR} does not name"),
        })?;
        let mut peers = (*self.regions.peers).clone();
        peers.remove(home);
        peers.insert(self.region().to_owned(), self.client.clone());
        let regions = Regions::global(home, &self.regions.primary, peers);
        Ok(Store { client: client.clone(), table: self.table.clone(), regions, reads: self.reads })
    }

    /// Whether the table is global (several regions).
    pub fn is_global(&self) -> bool {
        !self.regions.peers.is_empty()
    }

    /// The home to name on an item made here: this region in a global
    /// table, none in a single region (whose items all live in it).
    pub fn home_tag(&self) -> Option<String> {
        self.is_global().then(|| self.region().to_owned())
    }

    /// The stores of the other regions (none in a single region): where to
    /// look for an item this replica has not got yet.
    pub fn elsewhere(&self) -> Vec<Store> {
        self.regions.peers.keys().filter_map(|r| self.at(Some(r)).ok()).collect()
    }

    /// The store that writes what lives in the primary region.
    pub fn at_primary(&self) -> Result<Store, StoreError> {
        self.at(None)
    }

    /// This store in a global table of `regions` (as seen from its region).
    pub fn with_regions(mut self, regions: Regions) -> Store {
        self.regions = regions;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_region_list_names_the_primary_first_and_must_hold_this_region() {
        let parse = |list| Regions::parse_list(list, "eu-west-1");
        assert_eq!(parse(""), Ok(None));
        assert_eq!(parse("eu-west-1"), Ok(None), "one region: no routing");
        assert_eq!(parse("us-east-1, eu-west-1"), Ok(Some(("us-east-1".into(), vec!["us-east-1".into()]))));
        assert_eq!(parse("eu-west-1,us-east-1"), Ok(Some(("eu-west-1".into(), vec!["us-east-1".into()]))));
        assert!(parse("us-east-1,ap-south-1").is_err_and(|e| e.contains("eu-west-1")));
    }

    fn store(regions: Regions) -> Store {
        let config = aws_sdk_dynamodb::Config::builder()
            .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
            .region(aws_sdk_dynamodb::config::Region::new("eu-west-1"))
            .build();
        Store::new(Client::from_conf(config), "t").with_regions(regions)
    }

    #[test]
    fn one_region_is_every_home_and_an_unnamed_region_is_an_error_not_busy() {
        let single = store(Regions::single("eu-west-1"));
        for home in [None, Some("eu-west-1"), Some("us-east-1")] {
            assert!(single.is_home(home), "{home:?}: a single region is every home");
            assert_eq!(single.at(home).map(|s| s.region().to_owned()).ok().as_deref(), Some("eu-west-1"));
        }
        let peer = store(Regions::single("us-east-1")).client().clone();
        let global = store(Regions::global("eu-west-1", "us-east-1", BTreeMap::from([("us-east-1".into(), peer)])));
        assert!(!global.is_home(None), "the primary is us-east-1");
        assert!(global.is_home(Some("eu-west-1")));
        assert_eq!(global.at(None).map(|s| s.region().to_owned()).ok().as_deref(), Some("us-east-1"));
        let unknown = global.at(Some("ap-south-1")).map(|_| ()).unwrap_err();
        assert!(matches!(&unknown, StoreError::Service { code, .. } if code == "UnknownRegion"), "{unknown}");
        assert!(!unknown.is_retryable());
    }
}
