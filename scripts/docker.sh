#!/usr/bin/env bash
# A Docker engine for the docker sandbox, from nothing: installs docker.io and debootstrap (the offline base
# image is built with it) when missing, starts dockerd when no daemon answers, and waits for it (~60 s).
# Idempotent. Containers get no network, so the daemon needs no bridge and no iptables rules.
# Usage: bash scripts/docker.sh      (log: ${POLAR_DOCKERD_LOG:-/var/log/polar-dockerd.log})
set -euo pipefail

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "docker.sh: apt-get install ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if docker info >/dev/null 2>&1; then
  exit 0
fi
log="${POLAR_DOCKERD_LOG:-/var/log/polar-dockerd.log}"
echo "docker.sh: starting dockerd (log: $log)"
as_root sh -c "nohup dockerd --bridge=none --iptables=false >'$log' 2>&1 &"
for _ in $(seq 120); do
  if docker info >/dev/null 2>&1; then
    echo "docker.sh: the Docker daemon is up"
    exit 0
  fi
  sleep 0.5
done
echo "docker.sh: dockerd did not answer within 60 s; last lines of $log:" >&2
tail -n 20 "$log" >&2 || true
exit 1
