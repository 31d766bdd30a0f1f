"""Fails if a target built without a test harness (`test = false` in its
Cargo.toml, to save a build and a link) holds a test that would never run.

A lib target with test = false: every .rs file under its directory; a bin
target: its main file and the modules it declares (`mod name;`), down their
tree. A test is `#[test]`, `#[tokio::test]` or any `#[cfg(...)]` naming
`test`. Reads `cargo metadata` on stdin.
"""

import json
import pathlib
import re
import sys

TEST = re.compile(r"#\[(?:tokio::)?test\b|#\[cfg\([^\]]*(?<![\w\"-])test(?![\w\"-])")
MOD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)


def module_tree(main):
    """`main` and the files of the modules it declares, recursively."""
    files, todo = [], [main]
    while todo:
        f = todo.pop()
        files.append(f)
        base = f.parent if f.name in ("main.rs", "lib.rs", "mod.rs") else f.parent / f.stem
        for name in MOD.findall(f.read_text()):
            for candidate in (base / f"{name}.rs", base / name / "mod.rs"):
                if candidate.exists():
                    todo.append(candidate)
    return files


found = []
for package in json.load(sys.stdin)["packages"]:
    for target in package["targets"]:
        if target.get("test", True) or not {"lib", "bin"} & set(target["kind"]):
            continue
        main = pathlib.Path(target["src_path"])
        files = main.parent.rglob("*.rs") if "lib" in target["kind"] else module_tree(main)
        found += [f"{package['name']} ({target['name']}): {f}" for f in files if TEST.search(f.read_text())]
if found:
    print("tests in targets built with test = false (they would never run; set test = true):")
    print("\n".join(found))
    sys.exit(1)
