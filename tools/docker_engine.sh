#!/usr/bin/env bash
# A Docker engine for `sam local`, and the Lambda base image it runs the
# functions on, on a machine that has neither and reaches no image registry.
#
#   tools/docker_engine.sh ARCH      ARCH: x86_64 or arm64 (the machine's)
#
# 1. docker.io (Debian's engine) and debootstrap: installed with apt-get when
#    missing and we are root; otherwise the apt-get line is printed and the
#    script fails.
# 2. dockerd: started in the background (no systemd here) when no engine
#    answers `docker info`; it keeps running after this script, as a
#    service would (log: /var/log/dockerd-dev.log). Fails with what dockerd
#    said if it does not answer within 60 s.
# 3. public.ecr.aws/lambda/provided:al2023-ARCH, the tag `sam local` asks
#    for: only when `docker image inspect` does not find it (Docker keeps it
#    on the machine), a `debootstrap --variant=minbase bookworm` root with
#    Lambda's /var/runtime, /var/task and /opt, imported with `docker import`.
#    SAM builds its `...:al2023-rapid-ARCH` image on it itself (adding the
#    aws-lambda-rie it ships); `sam local` then runs with --skip-pull-image.
#    Not AL2023: Debian bookworm (glibc 2.36, AL2023 has 2.34) under AL2023's
#    tag; docs/testing.md says what that does and does not show.
#
# Traffic: apt-get and debootstrap reach Debian's archive (the machine's apt
# source), nothing else; no image is pulled.
set -euo pipefail
arch=${1:?usage: tools/docker_engine.sh x86_64|arm64}
image=public.ecr.aws/lambda/provided:al2023-$arch
started=$SECONDS
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo

missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "sam local needs a Docker engine and debootstrap; install them, then run this again:"
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}"
    exit 1
  fi
  echo "installing ${missing[*]} (apt-get)"
  log=$(mktemp)
  # Waits for another apt-get (dpkg's lock) instead of failing at once.
  { apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 "${missing[@]}"; } >"$log" 2>&1 ||
    { cat "$log"; echo "apt-get install ${missing[*]} failed"; exit 1; }
  rm -f "$log"
fi

engine_answers() { timeout 10 docker info >/dev/null 2>&1; }
if ! engine_answers; then
  if [ "$(id -u)" != 0 ]; then
    echo "no Docker engine answers (docker info), and only root can start dockerd here: start it, e.g."
    echo "  sudo dockerd >/var/log/dockerd.log 2>&1 &"
    exit 1
  fi
  # A pid file whose process is gone (a dockerd killed with its machine, a
  # machine restored from a snapshot) stops a new dockerd from starting.
  for stale in /var/run/docker.pid /var/run/docker/containerd/containerd.pid; do
    if [ -f "$stale" ] && ! kill -0 "$(cat "$stale" 2>/dev/null)" 2>/dev/null; then
      echo "removing $stale: its process $(cat "$stale" 2>/dev/null) is gone"
      rm -f "$stale"
    fi
  done
  echo "starting dockerd (log: /var/log/dockerd-dev.log)"
  # Its own session, from /, so it outlives this run and whatever folder
  # started it, and with no descriptor of ours but its log: an inherited one
  # would stay open as long as dockerd runs (a `flock` lock around ./dev
  # test, say, would then never be released).
  (
    cd /
    for fd in /proc/$BASHPID/fd/*; do
      fd=${fd##*/}
      [ "$fd" -le 2 ] || eval "exec $fd>&-"
    done
    exec setsid dockerd >/var/log/dockerd-dev.log 2>&1 </dev/null
  ) &
  pid=$!
  for _ in $(seq 120); do
    engine_answers && break
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 /var/log/dockerd-dev.log
      echo "dockerd exited: the SAM step cannot run without a Docker engine (see its log above)"
      exit 1
    fi
    sleep 0.5
  done
  engine_answers || {
    tail -n 30 /var/log/dockerd-dev.log
    echo "dockerd did not answer within 60 s: the SAM step cannot run without a Docker engine"
    exit 1
  }
fi

if ! docker image inspect "$image" >/dev/null 2>&1; then
  case $arch in x86_64) debarch=amd64 ;; arm64) debarch=arm64 ;; *) echo "unknown architecture $arch"; exit 2 ;; esac
  echo "building $image: debootstrap --variant=minbase bookworm ($debarch), then docker import"
  root=$(mktemp -d /var/tmp/lambda-base.XXXXXX)
  trap '$sudo rm -rf "$root"' EXIT
  $sudo debootstrap --variant=minbase --arch="$debarch" bookworm "$root" http://deb.debian.org/debian \
    >"$root.log" 2>&1 || { tail -n 30 "$root.log"; rm -f "$root.log"; echo "debootstrap failed"; exit 1; }
  rm -f "$root.log"
  $sudo mkdir -p "$root/var/runtime" "$root/var/task" "$root/opt"
  $sudo rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  # What Lambda's base images set, so a function sees the same paths.
  $sudo tar -C "$root" -c . | docker import \
    --change 'ENV LAMBDA_TASK_ROOT=/var/task LAMBDA_RUNTIME_DIR=/var/runtime LANG=en_US.UTF-8 TZ=:/etc/localtime' \
    --change 'ENV PATH=/var/lang/bin:/usr/local/bin:/usr/bin:/bin:/opt/bin' \
    --change 'WORKDIR /var/task' \
    --message "debootstrap --variant=minbase bookworm, for sam local (tools/docker_engine.sh)" \
    - "$image" >/dev/null
fi
echo "Docker $(docker version --format '{{.Server.Version}}' 2>/dev/null) engine answering; $image present ($((SECONDS - started)) s)"
