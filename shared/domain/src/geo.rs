//! Places on the Earth for "listings near me": a validated location, the
//! great-circle (haversine) distance, geohashes (a cell prefix is the
//! index partition, the full hash the sort key) and the distance bounds
//! from a point to a geohash cell that tell a search near a point which
//! cells can hold what it looks for.

use serde::{Deserialize, Serialize};

/// The mean Earth radius the distances use, in km.
pub const EARTH_RADIUS_KM: f64 = 6371.0088;
/// Characters of a stored geohash (about 5 m).
pub const HASH_LEN: usize = 9;
/// Characters of the index partition's cell (about 156 km).
pub const CELL_LEN: usize = 3;

pub mod partition;

const BASE32: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";

/// A point: latitude -90..=90, longitude -180..=180 (degrees, finite).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Location {
    /// Degrees north.
    pub lat: f64,
    /// Degrees east.
    pub lon: f64,
}

impl Location {
    /// The location if both coordinates are in range, each rounded to 7
    /// decimals (about a centimetre: DynamoDB's numbers stop at 1e-130, and
    /// -0 is 0).
    pub fn new(lat: f64, lon: f64) -> Option<Location> {
        let round = |v: f64| (v * 1e7).round() / 1e7 + 0.0;
        ((-90.0..=90.0).contains(&lat) && (-180.0..=180.0).contains(&lon))
            .then(|| Location { lat: round(lat), lon: round(lon) })
    }

    /// Its geohash of `len` characters.
    pub fn geohash(&self, len: usize) -> String {
        let (mut lat, mut lon) = ((-90.0f64, 90.0f64), (-180.0f64, 180.0f64));
        let mut out = String::with_capacity(len);
        let (mut bits, mut ch, mut even) = (0, 0usize, true);
        while out.len() < len {
            let (range, value) = if even { (&mut lon, self.lon) } else { (&mut lat, self.lat) };
            let mid = (range.0 + range.1) / 2.0;
            ch <<= 1;
            if value >= mid {
                ch |= 1;
                range.0 = mid;
            } else {
                range.1 = mid;
            }
            even = !even;
            bits += 1;
            if bits == 5 {
                out.push(char::from(BASE32[ch]));
                (bits, ch) = (0, 0);
            }
        }
        out
    }

    /// The point `km` away along the great circle leaving at `bearing`
    /// degrees (clockwise from north).
    pub fn toward(&self, km: f64, bearing: f64) -> Location {
        let (d, b) = (km / EARTH_RADIUS_KM, bearing.to_radians());
        let (p1, l1) = (self.lat.to_radians(), self.lon.to_radians());
        let p2 = (p1.sin() * d.cos() + p1.cos() * d.sin() * b.cos()).asin();
        let l2 = l1 + (b.sin() * d.sin() * p1.cos()).atan2(d.cos() - p1.sin() * p2.sin());
        let lon = (l2.to_degrees() + 540.0).rem_euclid(360.0) - 180.0;
        Location::new(p2.to_degrees().clamp(-90.0, 90.0), lon.clamp(-180.0, 180.0)).unwrap_or(*self)
    }

    /// Great-circle distance in km (haversine).
    pub fn distance_km(&self, other: &Location) -> f64 {
        let (p1, p2) = (self.lat.to_radians(), other.lat.to_radians());
        let dp = p2 - p1;
        let dl = (other.lon - self.lon).to_radians();
        let a = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
        2.0 * EARTH_RADIUS_KM * a.sqrt().min(1.0).asin()
    }
}

/// The cell a geohash (prefix) names: its latitude and longitude ranges.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// South and north edges.
    pub lat: (f64, f64),
    /// West and east edges.
    pub lon: (f64, f64),
}

impl Cell {
    /// The cell of a geohash prefix; `None` for a character outside the alphabet.
    pub fn of(hash: &str) -> Option<Cell> {
        let (mut lat, mut lon) = ((-90.0f64, 90.0f64), (-180.0f64, 180.0f64));
        let mut even = true;
        for c in hash.bytes() {
            let v = BASE32.iter().position(|b| *b == c)?;
            for bit in (0..5).rev() {
                let range = if even { &mut lon } else { &mut lat };
                let mid = (range.0 + range.1) / 2.0;
                if v >> bit & 1 == 1 {
                    range.0 = mid;
                } else {
                    range.1 = mid;
                }
                even = !even;
            }
        }
        Some(Cell { lat, lon })
    }

    /// The nearest and farthest any point of the cell can be from `p`, in
    /// km: the nearest exactly (`Cell::nearest_km`); the farthest from the
    /// cell's centre plus the distance to its farthest corner (the
    /// farthest point of a latitude-longitude box smaller than a
    /// hemisphere: the triangle inequality).
    pub fn distance_bounds_km(&self, p: &Location) -> (f64, f64) {
        let centre = Location { lat: (self.lat.0 + self.lat.1) / 2.0, lon: (self.lon.0 + self.lon.1) / 2.0 };
        let corners = [
            Location { lat: self.lat.0, lon: self.lon.0 },
            Location { lat: self.lat.0, lon: self.lon.1 },
            Location { lat: self.lat.1, lon: self.lon.0 },
            Location { lat: self.lat.1, lon: self.lon.1 },
        ];
        let reach = corners.iter().map(|c| centre.distance_km(c)).fold(0.0, f64::max);
        let d = centre.distance_km(p);
        (self.nearest_km(p), d + reach)
    }

    /// The nearest any point of the cell is to `p`, in km, exactly: at the
    /// same longitude if `p`'s is within the cell's (the nearer edge of
    /// latitude, or 0 inside), else on one of its meridian edges, where the
    /// distance to a point at latitude φ is least at the φ that maximises
    /// `sin φp sin φ + cos φp cos Δλ cos φ` (a cosine of φ: its peak, if
    /// within the edge, or an end of it). Near the poles, where the cells
    /// are narrow wedges, the bound from the centre was far too low.
    fn nearest_km(&self, p: &Location) -> f64 {
        let at = |lat: f64, lon: f64| p.distance_km(&Location { lat, lon });
        if (self.lon.0..=self.lon.1).contains(&p.lon) {
            return match p.lat {
                lat if lat < self.lat.0 => at(self.lat.0, p.lon),
                lat if lat > self.lat.1 => at(self.lat.1, p.lon),
                _ => 0.0,
            };
        }
        let (sin_p, cos_p) = p.lat.to_radians().sin_cos();
        [self.lon.0, self.lon.1]
            .into_iter()
            .map(|edge| {
                let dlon = (p.lon - edge).to_radians();
                let peak = sin_p.atan2(cos_p * dlon.cos()).to_degrees();
                let mut best = at(self.lat.0, edge).min(at(self.lat.1, edge));
                if (self.lat.0..=self.lat.1).contains(&peak) {
                    best = best.min(at(peak, edge));
                }
                best
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// Its area in km² (a band of latitude times its share of longitude).
    pub fn area_km2(&self) -> f64 {
        let band = self.lat.1.to_radians().sin() - self.lat.0.to_radians().sin();
        EARTH_RADIUS_KM * EARTH_RADIUS_KM * band * (self.lon.1 - self.lon.0).to_radians()
    }

    /// The geohash cells of `len` characters within `radius_km` of `p`
    /// (every cell any point of which may be that close).
    pub fn covering(p: &Location, radius_km: f64, len: usize) -> Vec<String> {
        let sample = Cell::of(&p.geohash(len)).unwrap_or(Cell { lat: (-90.0, 90.0), lon: (-180.0, 180.0) });
        let (h, w) = (sample.lat.1 - sample.lat.0, sample.lon.1 - sample.lon.0);
        // Degrees of latitude the radius spans, and the band it covers.
        let dlat = (radius_km / EARTH_RADIUS_KM).to_degrees();
        let (south, north) = ((p.lat - dlat).max(-90.0), (p.lat + dlat).min(90.0));
        let mut out = Vec::new();
        let mut lat = south;
        loop {
            let mut lon = -180.0 + w / 2.0;
            while lon < 180.0 {
                let hash = Location { lat: lat.clamp(-90.0, 90.0), lon }.geohash(len);
                if let Some(cell) = Cell::of(&hash) {
                    if cell.distance_bounds_km(p).0 <= radius_km && !out.contains(&hash) {
                        out.push(hash);
                    }
                }
                lon += w;
            }
            if lat >= north {
                break;
            }
            lat = (lat + h).min(north);
        }
        out
    }

    /// The widest radius up to `max_km` whose [`Cell::covering`] at `p` has
    /// at most `max_cells` cells of `len` characters (to 10 m); `None` if
    /// none has (at a pole every cell of the top row touches the point).
    /// Cells narrow toward the poles, so a radius covers more of them there.
    pub fn widest_radius(p: &Location, max_km: f64, max_cells: usize, len: usize) -> Option<f64> {
        let fits = |km: f64| Cell::covering(p, km, len).len() <= max_cells;
        if !fits(0.0) {
            return None;
        }
        if fits(max_km) {
            return Some(max_km);
        }
        let (mut low, mut high) = (0.0, max_km);
        while high - low > 0.01 {
            let mid = (low + high) / 2.0;
            if fits(mid) {
                low = mid;
            } else {
                high = mid;
            }
        }
        Some(low)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nearest bound against a fine grid of each cell's points: never
    /// above the nearest point found (a lower bound, as the search needs),
    /// and within a grid step of it (tight), poles and antimeridian included.
    #[test]
    fn the_nearest_bound_is_the_nearest_point_of_the_cell() {
        let mut x: u64 = 7;
        let mut next = |span: f64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 53) as f64 * span
        };
        for _ in 0..400 {
            let p = Location::new(next(180.0) - 90.0, next(360.0) - 180.0).unwrap();
            let q = Location::new((p.lat + next(6.0) - 3.0).clamp(-90.0, 90.0), next(360.0) - 180.0).unwrap();
            let cell = Cell::of(&q.geohash(3)).unwrap();
            let (steps, mut nearest) = (60, f64::INFINITY);
            for i in 0..=steps {
                for j in 0..=steps {
                    let lat = cell.lat.0 + (cell.lat.1 - cell.lat.0) * i as f64 / steps as f64;
                    let lon = cell.lon.0 + (cell.lon.1 - cell.lon.0) * j as f64 / steps as f64;
                    nearest = nearest.min(p.distance_km(&Location { lat, lon }));
                }
            }
            let bound = cell.distance_bounds_km(&p).0;
            let step = 157.0 / steps as f64 * 2.0;
            assert!(bound <= nearest + 1e-6, "{p:?} {cell:?}: bound {bound} above {nearest}");
            assert!(bound >= nearest - step, "{p:?} {cell:?}: bound {bound} far below {nearest}");
        }
    }

    #[test]
    fn the_widest_radius_narrows_toward_the_poles() {
        let at = |lat: f64| Location::new(lat, 10.0).unwrap();
        assert_eq!(Cell::widest_radius(&at(45.0), 50.0, 16, 3), Some(50.0));
        assert_eq!(Cell::widest_radius(&at(85.0), 50.0, 16, 3), Some(50.0));
        let polar = Cell::widest_radius(&at(89.5), 50.0, 16, 3).unwrap();
        assert!(polar < 50.0 && polar > 0.0, "{polar}");
        assert!(Cell::covering(&at(89.5), polar, 3).len() <= 16);
        assert!(Cell::covering(&at(89.5), polar + 0.02, 3).len() > 16);
        let pole = Cell::widest_radius(&Location::new(90.0, 0.0).unwrap(), 50.0, 16, 3).unwrap();
        assert!(pole < 1.0, "every cell of the top row meets at the pole: {pole}");
    }

    #[test]
    fn cell_areas_add_up_to_the_sphere_and_shrink_toward_the_poles() {
        let cells: Vec<Cell> = BASE32.iter().filter_map(|c| Cell::of(&(*c as char).to_string())).collect();
        let total: f64 = cells.iter().map(Cell::area_km2).sum();
        let sphere = 4.0 * std::f64::consts::PI * EARTH_RADIUS_KM * EARTH_RADIUS_KM;
        assert!((total - sphere).abs() < 1e-6 * sphere, "{total} vs {sphere}");
        let cell_at = |lat| Cell::of(&Location::new(lat, 0.0).unwrap().geohash(3)).unwrap().area_km2();
        // Same angles, about 156 km square at the equator; a sliver at a pole.
        assert!((20_000.0..30_000.0).contains(&cell_at(0.1)), "{}", cell_at(0.1));
        assert!(cell_at(89.9) < cell_at(0.1) / 50.0, "{}", cell_at(89.9));
    }

    #[test]
    fn geohashes_match_the_published_examples_and_decode_back() {
        // The canonical example (Wikipedia: 57.64911, 10.40744 = u4pruydqqvj).
        let p = Location::new(57.64911, 10.40744).unwrap();
        assert_eq!(p.geohash(11), "u4pruydqqvj");
        let cell = Cell::of("u4pruydqqvj").unwrap();
        assert!((cell.lat.0..=cell.lat.1).contains(&p.lat) && (cell.lon.0..=cell.lon.1).contains(&p.lon));
        assert_eq!(Location::new(0.0, 0.0).unwrap().geohash(1), "s");
        assert_eq!(Location::new(-90.0, -180.0).unwrap().geohash(3), "000");
        assert_eq!(Location::new(90.0, 180.0).unwrap().geohash(3), "zzz");
        assert_eq!(Cell::of("a"), None, "not in the alphabet");
        let tiny = Location::new(-4.077033046229148e-215, 1e-300).unwrap();
        assert_eq!((tiny.lat.to_bits(), tiny.lon.to_bits()), (0.0f64.to_bits(), 0.0f64.to_bits()), "rounded, not -0");
        for bad in [(90.1, 0.0), (0.0, -180.5), (f64::NAN, 0.0), (0.0, f64::INFINITY)] {
            assert_eq!(Location::new(bad.0, bad.1), None, "{bad:?}");
        }
    }

    #[test]
    fn distances_are_haversine() {
        let paris = Location::new(48.8566, 2.3522).unwrap();
        let london = Location::new(51.5074, -0.1278).unwrap();
        assert!((paris.distance_km(&london) - 343.5).abs() < 1.0, "{}", paris.distance_km(&london));
        let east = Location::new(0.0, 179.9).unwrap();
        let west = Location::new(0.0, -179.9).unwrap();
        assert!((east.distance_km(&west) - 22.24).abs() < 0.05, "across the antimeridian");
        let pole = Location::new(90.0, 0.0).unwrap();
        assert!(pole.distance_km(&Location::new(90.0, 123.0).unwrap()) < 1e-9, "one pole, any longitude");
    }

    /// The bounds hold for every point of a cell (sampled on a grid), for
    /// points near, far, across the antimeridian and at the poles.
    #[test]
    fn cell_bounds_hold_for_every_point_of_the_cell() {
        let points = [(0.0, 0.0), (57.6, 10.4), (89.9, 45.0), (-89.95, -120.0), (10.0, 179.99), (-33.9, -180.0)];
        for hash in ["u4p", "u4pr", "zzz", "000", "b", "pb", "7zz", "8"] {
            let cell = Cell::of(hash).unwrap();
            for (lat, lon) in points {
                let p = Location::new(lat, lon).unwrap();
                let (near, far) = cell.distance_bounds_km(&p);
                for i in 0..=10 {
                    for j in 0..=10 {
                        let q = Location {
                            lat: cell.lat.0 + (cell.lat.1 - cell.lat.0) * f64::from(i) / 10.0,
                            lon: cell.lon.0 + (cell.lon.1 - cell.lon.0) * f64::from(j) / 10.0,
                        };
                        let d = p.distance_km(&q);
                        assert!(near <= d + 1e-9 && d <= far + 1e-9, "{hash} {p:?}: {near} <= {d} <= {far}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_covering_cells_hold_every_point_within_the_radius() {
        for (lat, lon, r) in [
            (0.0, 0.0, 50.0),
            (48.85, 2.35, 10.0),
            (0.0, 179.95, 50.0),
            (89.9, 10.0, 50.0),
            (-90.0, 0.0, 5.0),
            (12.0, 3.0, 0.0),
        ] {
            let p = Location::new(lat, lon).unwrap();
            let cells = Cell::covering(&p, r, CELL_LEN);
            assert!(cells.contains(&p.geohash(CELL_LEN)), "its own cell");
            // Points on the circle (and inside) fall in a covering cell.
            for k in 0..72 {
                for f in [0.0, 0.5, 1.0] {
                    let q = p.toward(r * f, f64::from(k) * 5.0);
                    assert!(cells.contains(&q.geohash(CELL_LEN)), "{p:?} r {r}: {q:?} not covered by {cells:?}");
                }
            }
            assert!(cells.len() <= 256 * 2, "{}", cells.len());
        }
    }
}
