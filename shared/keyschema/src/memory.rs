//! Changes applied to an item held in memory as an attribute map, as
//! DynamoDB would apply them: for tests of the write side, the key moves
//! and the page planner, without a table.

use crate::change::{Change, Cond};
use crate::table::PK;
use crate::value::{Attrs, Value};

impl Cond {
    /// Evaluates the clause on an item.
    pub fn holds(&self, item: &Attrs) -> bool {
        // Numbers compare by value, as DynamoDB compares them (28 = 28.00).
        let num = |v: &Value| match v {
            Value::N(n) => n.parse::<f64>().ok(),
            Value::S(_) => None,
        };
        let cmp = |a: &str, v: &Value, f: fn(f64, f64) -> bool| matches!((item.get(a).and_then(num), num(v)), (Some(x), Some(y)) if f(x, y));
        let eq = |a: &str, v: &Value| match (item.get(a), v) {
            (Some(Value::N(_)), Value::N(_)) => cmp(a, v, |x, y| x == y),
            (found, v) => found == Some(v),
        };
        match self {
            Cond::ItemExists => item.contains_key(PK),
            Cond::Exists(a) => item.contains_key(*a),
            Cond::NotExists(a) => !item.contains_key(*a),
            Cond::Eq(a, v) => eq(a, v),
            Cond::Ne(a, v) | Cond::Differs(a, v) => !eq(a, v),
            Cond::Ge(a, v) => cmp(a, v, |x, y| x >= y),
            Cond::Le(a, v) => cmp(a, v, |x, y| x <= y),
            Cond::AnyDiffers(pairs) => pairs.iter().any(|(a, v)| !eq(a, v)),
        }
    }
}

impl Change {
    /// Applies the change to an item: `false` (and no change) if the
    /// condition fails.
    pub fn apply(&self, item: &mut Attrs) -> bool {
        if !self.condition.iter().all(|c| c.holds(item)) {
            return false;
        }
        for (a, v) in &self.set {
            item.insert((*a).to_owned(), v.clone());
        }
        for a in &self.remove {
            item.remove(*a);
        }
        for (a, d) in &self.add {
            let old = item.get(*a).and_then(|v| if let Value::N(n) = v { n.parse::<i128>().ok() } else { None });
            let delta = if let Value::N(n) = d { n.parse::<i128>().unwrap_or(0) } else { 0 };
            item.insert((*a).to_owned(), Value::n(old.unwrap_or(0) + delta));
        }
        true
    }
}
