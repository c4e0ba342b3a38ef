#!/usr/bin/env bash
# A Docker engine for the docker sandbox, from nothing: installs docker.io, debootstrap (the offline base image is
# built with it) and btrfs-progs when missing, starts dockerd when no daemon answers, and waits for it (~60 s).
# Where polar is installed and can mount its capped btrfs volume (envs/sandbox/disk.py: root, Linux 6.7+), dockerd
# keeps its data there with the btrfs storage driver, so each container's writable layer can be capped; an engine
# already running elsewhere is restarted onto it (its containers stop; its images stay in the old data root).
# Idempotent. Containers get no network, so the daemon needs no bridge and no iptables rules.
# Usage: bash scripts/docker.sh      (log: ${POLAR_DOCKERD_LOG:-/var/log/polar-dockerd.log})
set -euo pipefail

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
PATH="$PATH:/usr/sbin:/sbin" command -v mkfs.btrfs >/dev/null 2>&1 || missing+=(btrfs-progs)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "docker.sh: apt-get install ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
fi

args=(--bridge=none --iptables=false)
if volume=$(as_root python3 -m polar.envs.sandbox.disk); then  # it says why on stderr when it cannot
  args+=(--data-root "$volume/docker" --storage-driver btrfs)
else
  echo "docker.sh: containers' disk use will not be capped (see above; is polar installed?)" >&2
fi

if root=$(docker info -f '{{.DockerRootDir}}' 2>/dev/null); then
  if [ -z "${volume:-}" ] || [ "$root" = "$volume/docker" ]; then
    exit 0
  fi
  pidfile=/var/run/docker.pid
  echo "docker.sh: restarting dockerd (pid $(cat "$pidfile")) with its data in $volume/docker instead of $root"
  as_root kill "$(cat "$pidfile")"
  for _ in $(seq 60); do [ -e "$pidfile" ] || break; sleep 0.5; done
fi
log="${POLAR_DOCKERD_LOG:-/var/log/polar-dockerd.log}"
echo "docker.sh: starting dockerd (log: $log)"
as_root sh -c "nohup dockerd ${args[*]} >'$log' 2>&1 &"
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
