#!/usr/bin/env python3
"""Fails when a crate's top-level modules reference each other in a cycle.

Each crate under shared/, functions/ and tools/ with a src/ folder is read
as a graph (tests/ has none: its support and integration code is not read):
a module (a file or folder under src/, by its first path segment) points at
every `crate::<module>` its code names (comments and test modules left
out). A cycle (a strongly connected set of two or more modules) means a
constant or a type is in the wrong file. Prints each cycle; exits 1 if any.
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
            refs = set(re.findall(r"crate::([a-z_][a-z0-9_]*)", code)) - {parts[0]}
            edges.setdefault(parts[0], set()).update(refs)
    return edges


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
