#!/usr/bin/env python3
"""Fails when a crate's top-level modules reference each other in a cycle.

Each crate under shared/, functions/ and tools/ with a src/ folder is read
as a graph (tests/ has none: its support and integration code is not read):
a module (a file or folder under src/, by its first path segment) points at
every module its code names (comments and test modules left out): by
`crate::<module>`, in a group (`use crate::{a, b::c}`), or by `super::`
(`super::super::`...), resolved from the module the path is written in (a
file's, or an inline `mod name { .. }` in it). A cycle (a strongly connected
set of two or more modules) means a constant or a type is in the wrong
file. Prints each cycle; exits 1 if any.
"""
import os
import re
import sys


def crates(root):
    for group in ("shared", "functions", "tools", "tests"):
        base = os.path.join(root, group)
        for name in sorted(os.listdir(base)):
            src = os.path.join(base, name, "src")
            if os.path.isdir(src):
                yield f"{group}/{name}", src


def graph(src):
    edges = {}
    for folder, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(folder, f)
            parts = os.path.relpath(path, src)[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            if not parts:
                continue
            code = "\n".join(l for l in open(path).read().split("\n") if not l.strip().startswith("//"))
            code = code.split("#[cfg(test)]")[0]
            edges.setdefault(parts[0], set()).update(refs(code, parts) - {parts[0]})
    return edges


IDENT = r"[a-z_][a-z0-9_]*"
# A path from the crate or a parent (its first segment, or a `{` group
# next), an inline module's opening, or a brace.
TOKEN = re.compile(
    rf"(?P<path>\b(?P<root>crate|super)(?P<ups>(?:::super)*)::(?:(?P<first>{IDENT})|(?=\{{)))"
    rf"|(?P<mod>\bmod\s+(?P<name>{IDENT})\s*\{{)|(?P<open>\{{)|(?P<close>\}})"
)


def group(code, at):
    """The first segments of the paths in the `{ .. }` group opening at `at`."""
    items, depth, start = [], 0, at + 1
    for i in range(at, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                items.append(code[start:i])
                break
        elif code[i] == "," and depth == 1:
            items.append(code[start:i])
            start = i + 1
    firsts = (re.match(IDENT, item.strip()) for item in items)
    return [m.group(0) for m in firsts if m and m.group(0) != "self"]


def refs(code, parts):
    """The top-level modules `code` (of the module at `parts`) names."""
    # Strings and characters blanked (their braces are not the code's).
    code = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'', lambda m: " " * len(m.group(0)), code)
    found, inline, depth = set(), [], 0
    for m in TOKEN.finditer(code):
        if m.group("mod"):
            inline.append((m.group("name"), depth))
            depth += 1
        elif m.group("open"):
            depth += 1
        elif m.group("close"):
            depth -= 1
            while inline and inline[-1][1] >= depth:
                inline.pop()
        else:
            names = [m.group("first")] if m.group("first") else group(code, m.end())
            if m.group("root") == "crate":
                found.update(names)
                continue
            here = parts + [name for name, _ in inline]
            ups = 1 + m.group("ups").count("super")
            if ups > len(here):
                continue
            base = here[: len(here) - ups]
            found.update(base[0] if base else name for name in names)
    return found


def cycles(edges):
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in list(edges):
        if v not in index:
            visit(v)
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    total = 0
    for name, src in crates(root):
        for c in cycles(graph(src)):
            total += 1
            print(f"{name}: modules in a cycle: {' <-> '.join(c)}")
    print(f"module cycles: {total}")
    sys.exit(1 if total else 0)


if __name__ == "__main__":
    main()
