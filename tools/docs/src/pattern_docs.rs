//! The access functions' doc comments, checked against the registry: each
//! `pub fn` of shared/keyschema/src/access.rs whose doc names access
//! patterns (`Catalog AP6`, `Marketplace AP4/AP5`, `Marketplace AP8 /
//! e-commerce AP2`) must name exactly the registered reads whose request
//! calls it (shared/keyschema/src/patterns/registry.rs), and every such
//! read must be named by its function's doc. A pattern renumbered, moved
//! to another function or added without its doc fails here.

use std::collections::{BTreeMap, BTreeSet};

/// The designs whose ids the seeds number (`<design> AP<n>`).
const DESIGNS: &[&str] = &["catalog", "marketplace", "beyond", "e-commerce"];

/// The pattern ids a text names, lowercased: `Marketplace AP4/AP5` is
/// `marketplace AP4` and `marketplace AP5`; `catalog AP4-5` is itself.
pub fn ids_named(text: &str) -> BTreeSet<String> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower.split([' ', ',', ':', '.', '(', ')', ';']).filter(|w| !w.is_empty()).collect();
    let mut out = BTreeSet::new();
    for pair in words.windows(2) {
        let [design, numbers] = pair else { continue };
        if !DESIGNS.contains(design) || !numbers.starts_with("ap") {
            continue;
        }
        for n in numbers.split('/') {
            let n = n.trim_start_matches("ap");
            if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '-') {
                out.insert(format!("{design} ap{n}"));
            }
        }
    }
    out
}

/// Each `pub fn` of an access module's source with the ids its doc names.
pub fn documented(access_rs: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    let mut doc = String::new();
    for line in access_rs.lines() {
        let line = line.trim();
        if let Some(text) = line.strip_prefix("///") {
            doc.push_str(text);
            doc.push(' ');
        } else if let Some(rest) = line.strip_prefix("pub fn ") {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            out.insert(name, ids_named(&doc));
            doc.clear();
        } else if !line.starts_with("#[") {
            doc.clear();
        }
    }
    out
}

/// Each registered read's id (lowercased) with the access functions its
/// entry's request calls.
pub fn registered(registry_rs: &str, functions: &BTreeSet<String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let Some(reads) = registry_rs.split("writes {").next() else { return out };
    for entry in reads.split("=> (").skip(1) {
        let Some(id) = entry.split('"').nth(1) else { continue };
        // The code between its string literals (a route names no function).
        let code: String = entry.split('"').step_by(2).collect::<Vec<_>>().join(" ");
        let called: BTreeSet<String> = code
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| functions.contains(*w))
            .map(str::to_owned)
            .collect();
        for one in id.split(", ") {
            out.entry(one.to_lowercase()).or_default().extend(called.iter().cloned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACCESS: &str = include_str!("../../../shared/keyschema/src/access.rs");
    const REGISTRY: &str = include_str!("../../../shared/keyschema/src/patterns/registry.rs");

    /// Where the docs and the registry disagree, as lines.
    fn disagreements(access: &str, registry: &str) -> Vec<String> {
        let docs = documented(access);
        let functions: BTreeSet<String> = docs.keys().cloned().collect();
        let reads = registered(registry, &functions);
        let mut out = Vec::new();
        for (id, called) in &reads {
            // A numbered pattern of the seeds: its function says so.
            if !id.contains(" ap") {
                continue;
            }
            for f in called {
                if !docs.get(f).is_some_and(|named| named.contains(id)) {
                    out.push(format!("{f}: its doc does not name {id}, whose request calls it"));
                }
            }
        }
        for (f, named) in &docs {
            for id in named {
                if !reads.get(id).is_some_and(|called| called.contains(f)) {
                    out.push(format!("{f}: its doc names {id}, whose request does not call it"));
                }
            }
        }
        out
    }

    #[test]
    fn access_functions_name_the_patterns_that_call_them() {
        let wrong = disagreements(ACCESS, REGISTRY);
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        // The check reads what it should: most reads call a documented function.
        let functions: BTreeSet<String> = documented(ACCESS).keys().cloned().collect();
        assert!(registered(REGISTRY, &functions).values().filter(|f| !f.is_empty()).count() >= 20);
    }

    #[test]
    fn a_renumbered_doc_is_caught() {
        let stale = ACCESS.replacen("/// Catalog AP6:", "/// Catalog AP16:", 1);
        assert_ne!(stale, ACCESS, "the doc this test changes");
        let wrong = disagreements(&stale, REGISTRY);
        assert!(wrong.iter().any(|w| w.contains("catalog ap16")), "{wrong:?}");
        assert!(wrong.iter().any(|w| w.contains("does not name catalog ap6")), "{wrong:?}");
    }

    #[test]
    fn ids_are_read_as_the_docs_write_them() {
        let ids = ids_named("Marketplace AP8 / e-commerce AP2: a buyer's orders; Marketplace AP4/AP5, catalog AP4-5.");
        let want = ["catalog ap4-5", "e-commerce ap2", "marketplace ap4", "marketplace ap5", "marketplace ap8"];
        assert_eq!(ids, want.iter().map(|s| s.to_string()).collect());
    }
}
