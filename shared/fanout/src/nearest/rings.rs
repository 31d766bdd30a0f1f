//! The order of a walk near a point: rings of distance, each
//! [`GROWTH`] times as far out as the last (the first [`FIRST_KM`] across),
//! the last ending at the radius; within a ring, by sort key (the geohash,
//! then the id). And where a cell lies against a ring ([`Class`]).

use domain::geo::{Cell, Location};

/// The outer edge of the first ring, in km.
pub const FIRST_KM: f64 = 0.1;
/// Each ring's outer edge over the last's.
pub const GROWTH: f64 = 1.25;
/// Rounding allowed between a cell's distance bounds and an item's
/// distance (a micrometre): a cell so near a ring's edge is read.
const EPS_KM: f64 = 1e-9;

/// The rings of a search of `radius` km: `edges[k]` is ring `k`'s outer
/// edge (exclusive), each below the radius; the last ring runs from the
/// last edge to the radius (inclusive).
#[derive(Clone, Debug, PartialEq)]
pub struct Rings {
    edges: Vec<f64>,
    radius: f64,
}

/// Where a cell lies against a ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// No point of it is in the ring.
    Out,
    /// Some points may be.
    Partial,
    /// Every point of it is.
    In,
}

impl Rings {
    /// The rings of a search of `radius_km` (29 for 50 km).
    pub fn new(radius_km: f64) -> Rings {
        let mut edges = Vec::new();
        let mut edge = FIRST_KM;
        while edge < radius_km && edges.len() < 64 {
            edges.push(edge);
            edge *= GROWTH;
        }
        Rings { edges, radius: radius_km }
    }

    /// How many there are.
    pub fn count(&self) -> usize {
        self.edges.len() + 1
    }

    /// The ring of a distance (`None` beyond the radius).
    pub fn of(&self, km: f64) -> Option<usize> {
        (km <= self.radius).then(|| self.edges.partition_point(|e| *e <= km))
    }

    /// Ring `k`'s inner edge (inclusive) and outer edge (exclusive, but
    /// the last's: the radius, inclusive).
    pub fn bounds(&self, k: usize) -> (f64, f64) {
        let inner = k.checked_sub(1).and_then(|i| self.edges.get(i)).copied().unwrap_or(0.0);
        (inner, self.edges.get(k).copied().unwrap_or(self.radius))
    }

    /// Where `cell` lies against ring `k` seen from `at`: by its nearest
    /// point (exact) and a bound on its farthest.
    pub fn class(&self, cell: &Cell, at: &Location, k: usize) -> Class {
        let (near, far) = cell.distance_bounds_km(at);
        let (inner, outer) = self.bounds(k);
        if near > outer + EPS_KM || near > self.radius + EPS_KM || far < inner - EPS_KM {
            Class::Out
        } else if near >= inner + EPS_KM && far < outer - EPS_KM {
            Class::In
        } else {
            Class::Partial
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_grow_by_a_quarter_and_end_at_the_radius() {
        let r = Rings::new(50.0);
        assert_eq!(r.count(), 29);
        assert_eq!(r.of(0.0), Some(0));
        assert_eq!(r.of(0.0999), Some(0));
        assert_eq!(r.of(0.1), Some(1));
        assert_eq!(r.of(0.125), Some(2));
        assert_eq!(r.of(50.0), Some(28));
        assert_eq!(r.of(50.001), None);
        assert_eq!(r.bounds(0), (0.0, 0.1));
        assert_eq!(r.bounds(28).1, 50.0);
        let spot = Rings::new(0.0);
        assert_eq!((spot.count(), spot.of(0.0), spot.of(1e-12), spot.bounds(0)), (1, Some(0), None, (0.0, 0.0)));
        // Every distance is in the ring whose bounds hold it.
        for km in [0.0, 0.05, 0.1, 0.3, 1.0, 7.7, 12.5, 49.99, 50.0] {
            let k = r.of(km).unwrap();
            let (inner, outer) = r.bounds(k);
            assert!(inner <= km && (km < outer || k + 1 == r.count()), "{km} in {k}: {inner}..{outer}");
        }
    }

    #[test]
    fn a_cell_is_out_of_a_ring_only_if_none_of_its_points_is_in() {
        let at = Location::new(48.8566, 2.3522).unwrap();
        let r = Rings::new(20.0);
        for hash in ["u09tvw", "u09tv", "u09", "u0", "u09tvwx", "u09tvwxyz", "spey61", "u09w"] {
            let cell = Cell::of(hash).unwrap();
            for k in 0..r.count() {
                let class = r.class(&cell, &at, k);
                let points = (0..=20).flat_map(|i| (0..=20).map(move |j| (i, j))).map(|(i, j)| {
                    let lat = cell.lat.0 + (cell.lat.1 - cell.lat.0) * f64::from(i) / 20.0;
                    let lon = cell.lon.0 + (cell.lon.1 - cell.lon.0) * f64::from(j) / 20.0;
                    Location::new(lat, lon).unwrap()
                });
                let rings: Vec<Option<usize>> = points.map(|p| r.of(at.distance_km(&p))).collect();
                match class {
                    Class::Out => assert!(rings.iter().all(|x| *x != Some(k)), "{hash} {k}"),
                    Class::In => assert!(rings.iter().all(|x| *x == Some(k)), "{hash} {k}"),
                    Class::Partial => {}
                }
            }
        }
    }
}
