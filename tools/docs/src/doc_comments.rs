//! Key templates restated in doc comments, checked against the
//! declarations: every key template (a literal, `#`, a `<field>`, ...) a
//! `///` or `//!` line of the
//! workspace's Rust code names must begin a key template some entity
//! declares (literals and composites in order; a composite's format may be
//! left out; a range's bound, `<low>`, `<high>`, `<cents>`..., stands for
//! any composite, as the registry's rendering writes it). A key design change that leaves a comment behind fails here.

use std::path::{Path, PathBuf};

use keyschema::entities::ALL;
use keyschema::template::{segments, Segment};

/// Every template the declarations hold (primary keys and index keys).
fn declared() -> Vec<&'static str> {
    ALL.iter()
        .flat_map(|d| std::iter::once(&d.key).chain(d.indexes.iter().map(|i| &i.key)))
        .flat_map(|k| [k.pk, k.sk])
        .collect()
}

/// Placeholders of a range's bounds (see the registry's samples).
const BOUNDS: &[&str] = &["low", "high", "min", "max", "minCents", "maxCents", "cents", "id"];

/// Whether `token`'s segments begin `template`'s.
fn begins(token: &str, template: &str) -> bool {
    let token: Vec<Segment<'_>> = segments(token.trim_end_matches('#')).collect();
    let template: Vec<Segment<'_>> = segments(template).collect();
    token.len() <= template.len()
        && token.iter().zip(&template).all(|pair| match pair {
            (Segment::Literal(a), Segment::Literal(b)) => a == b,
            (Segment::Composite { field: a, format: fa }, Segment::Composite { field: b, format: fb }) => {
                BOUNDS.contains(a) || (a == b && (fa.is_none() || fa == fb))
            }
            _ => false,
        })
}

/// The key templates a line names: runs of key characters holding a `#`
/// next to a `<field>`.
fn tokens(line: &str) -> Vec<&str> {
    let key_char = |c: char| c.is_ascii_alphanumeric() || "_#<>:".contains(c);
    line.split(|c: char| !key_char(c))
        .filter(|t| t.contains("#<") || t.contains(">#"))
        .filter(|t| t.starts_with(|c: char| c.is_ascii_uppercase()))
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() && !matches!(name.to_str(), Some("target" | ".tools" | "node_modules")) {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

mod tests {
    use super::*;

    #[test]
    fn doc_comments_name_only_declared_key_templates() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        for dir in ["functions", "shared", "tools", "tests"] {
            rust_files(&root.join(dir), &mut files);
        }
        let declared = declared();
        let mut stale = Vec::new();
        let mut checked = 0;
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            for (n, line) in text.lines().enumerate() {
                let trimmed = line.trim_start();
                if !(trimmed.starts_with("///") || trimmed.starts_with("//!")) {
                    continue;
                }
                for token in tokens(trimmed) {
                    checked += 1;
                    if !declared.iter().any(|t| begins(token, t)) {
                        stale.push(format!(
                            "{}:{}: {token}",
                            file.strip_prefix(&root).unwrap_or(file).display(),
                            n + 1
                        ));
                    }
                }
            }
        }
        assert!(checked > 50, "the scan found the comments ({checked} templates)");
        assert!(stale.is_empty(), "doc comments naming no declared key template:\n{}", stale.join("\n"));
    }

    #[test]
    fn a_stale_template_is_caught() {
        let declared = declared();
        assert!(declared.iter().any(|t| begins("SELLER#<sellerId>", t)));
        assert!(declared.iter().any(|t| begins("LISTING#<status>#", t)));
        assert!(!declared.iter().any(|t| begins("SELLER#<seller>", t)), "a renamed composite");
        assert!(!declared.iter().any(|t| begins("GEO#<cell>", t)));
        assert_eq!(
            tokens("/// `GSI1: gsi1pk = BRAND#<brandId> AND begins_with(gsi1sk, CATEGORY#)`"),
            ["BRAND#<brandId>"]
        );
    }
}
