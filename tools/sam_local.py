#!/usr/bin/env python3
"""Every function of template.yaml through `sam local invoke`, as users run
it, and one invoke through `sam local start-lambda`'s Lambda API (boto3).

    python3 tools/sam_local.py --endpoint http://127.0.0.1:PORT --table TABLE
        --target-dir DIR --workdir DIR [--arch x86_64|arm64]

Runs with the SAM CLI's venv (./dev's python_tools: sam, boto3 and SAM's
YAML reader), a Docker engine and the base image tools/docker_engine.sh
makes, and TABLE at the endpoint holding the demo data (`local-stack seed`).

The functions are the workspace's debug build (DIR/debug/<binary>), laid
out as `sam build` lays out its artifacts: a folder per function holding its
`bootstrap`, and a copy of template.yaml whose CodeUri names that folder.
`sam build` itself (cargo-lambda's release build, `./dev package`) would add
minutes to every run; docs/testing.md says what this does and does not show.

Each function answers at least one of its sample events (the stream processor
a stream batch), with the environment of events/sam-local-env.json, the file
the README gives users, its endpoint and table replaced by this run's (the
container reaches the host's DynamoDB Local at host.docker.internal, the
Docker bridge's gateway). Every answer is checked. One more invoke points a
function at a table that does not exist, and its answer must fail the same
check: the check can fail. The invokes run four at a time.

Exits non-zero, printing what SAM said, if any check fails.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MISSING_TABLE = "no-such-table"
# Amazon Linux 2023's glibc, what provided.al2023 has in Lambda. The image
# here is Debian bookworm's (2.36), so a binary that needs more would run
# here and fail there: each bootstrap's symbol versions are checked instead.
AL2023_GLIBC = "2.34"


def api_answer(field=None, status=200, items=False):
    """A check of an HTTP API answer: the status, and the entity the event
    names in its path (field) or a page of items."""

    def check(event, out):
        if out.get("statusCode") != status:
            return f"statusCode {out.get('statusCode')}, expected {status}"
        body = json.loads(out.get("body") or "null")
        if field is not None:
            want = event["pathParameters"][field]
            if not isinstance(body, dict) or body.get(field) != want:
                return f"body has {field} {body.get(field) if isinstance(body, dict) else None!r}, expected {want!r}"
        if items and not (isinstance(body, dict) and isinstance(body.get("items"), list) and body["items"]):
            return "body has no items"
        return None

    return check


def batch_answer(event, out):
    """A stream batch: every record processed, none reported for retry."""
    if out != {"batchItemFailures": []}:
        return f"expected no batchItemFailures, got {out}"
    return None


def sweep_answer(event, out):
    """The expiry sweep reports how many pending orders it examined."""
    if not isinstance(out, dict) or not isinstance(out.get("examined"), int):
        return f"expected {{'examined': <count>, ...}}, got {out}"
    return None


# (function, event, check): at least one event per function of template.yaml.
CASES = [
    ("CatalogFunction", "catalog/get-product.json", api_answer("productId")),
    ("UsersFunction", "users/get-user.json", api_answer("userId")),
    ("ListingsFunction", "listings/get-listing.json", api_answer("listingId")),
    ("OrdersFunction", "orders/get-order.json", api_answer("orderId")),
    ("ReviewsFunction", "reviews/reviews-about.json", api_answer(items=True)),
    ("StreamProcessorFunction", "stream-processor/listing-inserted.json", batch_answer),
    ("MaintenanceFunction", "maintenance/expire.json", sweep_answer),
]


def build_dir(target_dir, out):
    """`sam build`'s layout with the workspace's debug binaries."""
    from samcli.yamlhelper import yaml_dump, yaml_parse

    template = yaml_parse((ROOT / "template.yaml").read_text())
    functions = {}
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        binary = resource["Metadata"]["BuildProperties"]["Binary"]
        source = Path(target_dir) / "debug" / binary
        if not os.access(source, os.X_OK):
            sys.exit(f"{source}: not built (cargo build --workspace)")
        (out / name).mkdir(parents=True)
        try:  # a link to the inode the build made: no copy, and safe from a later build
            os.link(source, out / name / "bootstrap")
        except OSError:
            shutil.copy2(source, out / name / "bootstrap")
        resource["Properties"]["CodeUri"] = name
        # As `sam build` leaves it: built, so nothing for SAM to build.
        resource["Metadata"] = {"SamResourceId": name}
        functions[name] = binary
    (out / "template.yaml").write_text(yaml_dump(template))
    return functions


def glibc_needed(binary):
    """The highest GLIBC_x.y symbol version the binary links against."""
    out = subprocess.run(["objdump", "-T", str(binary)], capture_output=True, text=True, check=True).stdout
    versions = {tuple(int(p) for p in v.split(".")) for v in re.findall(r"GLIBC_([0-9]+(?:\.[0-9]+)+)", out)}
    return ".".join(map(str, max(versions))) if versions else "none"


def version(text):
    return tuple(int(p) for p in text.split("."))


def env_file(path, endpoint, table, out):
    """events/sam-local-env.json with this run's endpoint and table."""
    env = json.loads(Path(path).read_text())
    params = env["Parameters"]
    for key in ("DYNAMODB_ENDPOINT", "TABLE_NAME", "CURSOR_SECRET"):
        if key not in params:
            sys.exit(f"{path}: Parameters has no {key}")
    port = endpoint.rsplit(":", 1)[1].rstrip("/")
    params["DYNAMODB_ENDPOINT"] = f"http://host.docker.internal:{port}"
    params["TABLE_NAME"] = table
    out.write_text(json.dumps(env, indent=2))
    return out


def sam_args(build, env, arch):
    # What a user types (README), but for -t: the build folder of this run.
    return [
        "--template", str(build / "template.yaml"),
        "--env-vars", str(env),
        "--parameter-overrides", f"Architecture={arch}",
        "--skip-pull-image",
        "--add-host", "host.docker.internal:host-gateway",
    ]  # fmt: skip


def invoke(function, event_path, args):
    """One `sam local invoke`: (answer or None, what SAM printed, seconds)."""
    started = time.monotonic()
    cmd = ["sam", "local", "invoke", function, "--event", str(event_path), *args]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        return None, f"timed out after 180 s\n{e.stderr or ''}", time.monotonic() - started
    seconds = time.monotonic() - started
    # The function's answer is the last line SAM prints on stdout; its logs go to stderr.
    lines = [l for l in run.stdout.splitlines() if l.strip()]
    try:
        answer = json.loads(lines[-1]) if lines and run.returncode == 0 else None
    except json.JSONDecodeError:
        answer = None
    return answer, f"$ {' '.join(cmd)}\nexit {run.returncode}\n{run.stdout}\n{run.stderr}", seconds


def summary(out):
    if isinstance(out, dict) and "statusCode" in out:
        return f"{out['statusCode']} {(out.get('body') or '')[:90]}"
    return json.dumps(out)[:110]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lambda(args, log):
    """`sam local start-lambda` on a free port, in its own process group."""
    port = free_port()
    cmd = ["sam", "local", "start-lambda", "--host", "127.0.0.1", "--port", str(port), *args]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    return proc, port


def wait_port(port, proc, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.2)
    return False


def lambda_api_invoke(port, function, event):
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "lambda",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
        config=Config(retries={"max_attempts": 1}, read_timeout=120, connect_timeout=5),
    )
    answer = client.invoke(FunctionName=function, Payload=json.dumps(event).encode())
    if answer.get("FunctionError"):
        return None, f"FunctionError {answer['FunctionError']}: {answer['Payload'].read()!r}"
    return json.loads(answer["Payload"].read()), ""


def stop(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)  # SAM removes its containers on an interrupt
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--endpoint", required=True, help="DynamoDB Local on this machine, http://127.0.0.1:PORT")
    ap.add_argument("--table", required=True, help="a table there with the demo data")
    ap.add_argument("--target-dir", required=True, help="cargo's target directory (its debug/ build is run)")
    ap.add_argument("--workdir", required=True, help="an empty folder for the build layout and logs")
    ap.add_argument("--arch", default="x86_64", choices=["x86_64", "arm64"])
    ap.add_argument("--jobs", type=int, default=4, help="invokes at a time")
    ap.add_argument("--glibc", default=AL2023_GLIBC, help="the newest glibc symbol version a bootstrap may need")
    opts = ap.parse_args()

    started = time.monotonic()
    # Stopped (./dev test ending early): the finally below stops start-lambda.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = Path(opts.workdir)
    build = work / "build"
    functions = build_dir(opts.target_dir, build)
    covered = {function for function, _, _ in CASES}
    if covered != set(functions):
        sys.exit(f"functions without a sam local case: {sorted(set(functions) - covered)}")
    env = env_file(ROOT / "events/sam-local-env.json", opts.endpoint, opts.table, work / "env.json")
    missing_env = env_file(ROOT / "events/sam-local-env.json", opts.endpoint, MISSING_TABLE, work / "env-missing.json")
    args = sam_args(build, env, opts.arch)

    # start-lambda comes up while the first invoke runs.
    log = open(work / "start-lambda.log", "w")
    server, port = start_lambda(args, log)
    failures = 0
    needs = {name: glibc_needed(build / name / "bootstrap") for name in functions}
    too_new = {name: v for name, v in needs.items() if v != "none" and version(v) > version(opts.glibc)}
    if too_new:
        failures += 1
        print(f"FAIL bootstraps needing more than GLIBC_{opts.glibc} (AL2023's glibc): {too_new}")
    else:
        newest = max((v for v in needs.values() if v != "none"), key=version, default="none")
        print(f"ok   {len(needs)} bootstraps need at most GLIBC_{newest} (AL2023 has {AL2023_GLIBC}; this image bookworm's 2.36)")
    try:
        # The first invoke alone: on a machine that never ran sam local, it
        # builds SAM's rapid image, which the others then share.
        first, *rest = CASES
        results = [(first, False, invoke(first[0], ROOT / "events" / first[1], args))]
        # The same case as the first, pointed at a table that does not exist.
        more = [(case, args, False) for case in rest] + [(first, sam_args(build, missing_env, opts.arch), True)]
        with concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
            futures = [
                (case, expect_fail, pool.submit(invoke, case[0], ROOT / "events" / case[1], case_args))
                for case, case_args, expect_fail in more
            ]
            results += [(case, expect_fail, f.result()) for case, expect_fail, f in futures]
        for (function, event, check), expect_fail, (answer, said, seconds) in results:
            event_json = json.loads((ROOT / "events" / event).read_text())
            problem = "no answer" if answer is None else check(event_json, answer)
            label = f"{function} events/{event}"
            if expect_fail:
                label += f" (TABLE_NAME={MISSING_TABLE})"
                if problem is None:
                    failures += 1
                    print(f"FAIL {label}: answered as if the table existed: {summary(answer)}")
                else:
                    print(f"ok   {label}: the check fails, as it must: {problem} ({seconds:.1f} s)")
                continue
            if problem is None:
                print(f"ok   {label}: {summary(answer)} ({seconds:.1f} s)")
            else:
                failures += 1
                print(f"FAIL {label}: {problem}\n{said}")

        # One invoke through the Lambda API of start-lambda.
        function, event, check = CASES[0]
        t0 = time.monotonic()
        if not wait_port(port, server, 120):
            failures += 1
            log.flush()
            print(f"FAIL sam local start-lambda did not listen on {port}:\n{(work / 'start-lambda.log').read_text()}")
        else:
            event_json = json.loads((ROOT / "events" / event).read_text())
            try:
                answer, said = lambda_api_invoke(port, function, event_json)
            except Exception as e:  # noqa: BLE001 - reported with the server's log
                answer, said = None, repr(e)
            problem = "no answer: " + said if answer is None else check(event_json, answer)
            label = f"start-lambda: Lambda API Invoke {function} events/{event}"
            if problem is None:
                print(f"ok   {label}: {summary(answer)} ({time.monotonic() - t0:.1f} s)")
            else:
                failures += 1
                log.flush()
                print(f"FAIL {label}: {problem}\n{(work / 'start-lambda.log').read_text()}")
    finally:
        stop(server)
        log.close()
    print(f"{len(CASES) + 3} sam local checks in {time.monotonic() - started:.0f} s")
    print(f"sam-local: {len(CASES) + 3 - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
