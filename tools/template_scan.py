#!/usr/bin/env python3
"""template.yaml through two scanners teams run on SAM templates, with the
template's waivers checked, not just trusted.

    python3 tools/template_scan.py CHECKOV    (CHECKOV: .tools/checkov/bin/checkov)

- checkov (`--framework cloudformation`, `--skip-download`: it asks no
  server) must report no failed check. Its waivers are each resource's
  `Metadata: checkov: skip:` entries.
- cfn-lint with AWS's Serverless Rules (`--append-rules
  cfn_lint_serverless.rules`) must report nothing. Its waivers are each
  resource's `Metadata: cfn-lint: config: ignore_checks:`.
- Every waiver must be explained and still needed: a checkov skip carries a
  comment, every waived id is in docs/deploy.md's list of waivers, and each
  waiver must match a finding of that resource (cfn-lint is run a second time
  on a copy of the template without its waivers to see what they cover), so
  a fixed finding does not leave a stale waiver behind.

Runs with the SAM CLI's venv (cfn-lint and SAM's YAML reader). Exits 1 on
any finding, unexplained or stale waiver.
"""

import concurrent.futures
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from samcli.yamlhelper import yaml_dump, yaml_parse

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "template.yaml"
DOC = ROOT / "docs/deploy.md"


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)


def cfn_lint(path):
    """(resource, rule id) of every finding, and the raw run."""
    out = run(["cfn-lint", "--format", "json", "--append-rules", "cfn_lint_serverless.rules", "--", str(path)])
    findings = json.loads(out.stdout or "[]")
    pairs = []
    for f in findings:
        where = f.get("Location", {}).get("Path") or []
        resource = where[1] if len(where) > 1 and where[0] == "Resources" else "(template)"
        pairs.append((resource, f["Rule"]["Id"], f["Message"]))
    return pairs, out


def main():
    checkov_bin = sys.argv[1]
    template = yaml_parse(TEMPLATE.read_text())
    documented = DOC.read_text()
    problems = []

    # The waivers the template declares.
    skips, ignores = {}, {}
    for name, resource in template["Resources"].items():
        meta = resource.get("Metadata") or {}
        for skip in (meta.get("checkov") or {}).get("skip") or []:
            skips[(name, skip["id"])] = (skip.get("comment") or "").strip()
        for rule in ((meta.get("cfn-lint") or {}).get("config") or {}).get("ignore_checks") or []:
            ignores[(name, rule)] = True

    # The template without its cfn-lint waivers, to see what they cover.
    bare = yaml_parse(TEMPLATE.read_text())
    for resource in bare["Resources"].values():
        (resource.get("Metadata") or {}).pop("cfn-lint", None)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix="template-unwaived-") as tmp:
        tmp.write(yaml_dump(bare))
        tmp.flush()
        checkov_cmd = [checkov_bin, "-f", str(TEMPLATE), "--framework", "cloudformation", "--skip-download", "-o", "json"]
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            ck = pool.submit(run, checkov_cmd)
            lint = pool.submit(cfn_lint, TEMPLATE)
            unwaived = pool.submit(cfn_lint, Path(tmp.name))
            ck, (lint_findings, lint_run), (all_findings, _) = ck.result(), lint.result(), unwaived.result()

    # checkov
    try:
        report = json.loads(ck.stdout)
    except json.JSONDecodeError:
        sys.exit(f"checkov gave no report:\n{ck.stdout}\n{ck.stderr}")
    results = report["results"]
    for f in results.get("failed_checks", []):
        problems.append(f"checkov {f['check_id']} {f['resource']}: {f['check_name']}")
    matched = {(f["resource"].split(".")[-1], f["check_id"]) for f in results.get("skipped_checks", [])}
    for (name, check), comment in sorted(skips.items()):
        if not comment:
            problems.append(f"checkov skip {check} on {name} has no comment (its reason)")
        if (name, check) not in matched:
            problems.append(f"checkov skip {check} on {name} matches no finding: remove it")
        if not re.search(rf"\b{check}\b", documented):
            problems.append(f"checkov skip {check} on {name} is not in docs/deploy.md's waivers")

    # cfn-lint with the Serverless Rules
    for resource, rule, message in lint_findings:
        problems.append(f"cfn-lint {rule} {resource}: {message}")
    if lint_run.returncode not in (0,) and not lint_findings:
        problems.append(f"cfn-lint failed:\n{lint_run.stdout}\n{lint_run.stderr}")
    covered = {(resource, rule) for resource, rule, _ in all_findings}
    for name, rule in sorted(ignores):
        if (name, rule) not in covered:
            problems.append(f"cfn-lint ignore {rule} on {name} matches no finding: remove it")
        if not re.search(rf"\b{rule}\b", documented):
            problems.append(f"cfn-lint ignore {rule} on {name} is not in docs/deploy.md's waivers")

    s = report["summary"]
    print(
        f"checkov {s.get('checkov_version', '')}: {s['passed']} passed, {s['failed']} failed, "
        f"{s['skipped']} waived in the template"
    )
    print(
        f"cfn-lint + Serverless Rules: {len(lint_findings)} findings, "
        f"{len(all_findings) - len(lint_findings)} waived in the template"
    )
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print("every waiver has its reason in the template and in docs/deploy.md, and each still matches a finding")


if __name__ == "__main__":
    main()
