"""`polar eval --ray` on a real Ray cluster: a head and a second node started with `ray start --block`, inside a
network namespace of the test's own with only loopback (Ray would turn 127.0.0.1 into the machine's interface
address otherwise), each with its own custom resource, stopped by their process ids.

The summary equals a local run's, episodes land on both nodes, a driver killed with SIGKILL resumes, a node that
lacks the work's sandbox refuses at start naming itself, and a node killed mid-run loses no episode."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import require_binary, require_modules

require_modules("ray")

TASKS = "run_length_encoding,roman_numerals,caesar_cipher,balanced_brackets,word_frequency"
TIMES = ("wall_time_s", "episode_time_s", "mean_episode_s")
HEAD = "127.0.0.1:6379"


class Cluster:
    """Ray nodes sharing one loopback-only network namespace, made by the head's `unshare --net`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.nodes: dict[str, subprocess.Popen] = {}

    def start(self, name: str, *ray_args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        argv = ["ray", "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus", "1",
                "--resources", json.dumps({f"polar_{name}": 1}), "--disable-usage-stats", *ray_args]
        if not self.nodes:  # the head makes the namespace; `unshare` execs, so its pid is the node's
            argv = ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *argv]
        else:
            argv = self.enter(argv)
        log = self.root / f"{name}.log"
        with log.open("w") as out:
            node = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=os.environ | (env or {}))
        self.nodes[name] = node
        deadline = time.monotonic() + 180
        while "block forever" not in log.read_text():
            if node.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"ray node {name} did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        return node

    def enter(self, argv: list[str]) -> list[str]:
        """`argv` run inside the cluster's network namespace."""
        return ["nsenter", f"--net=/proc/{self.nodes['head'].pid}/ns/net", *argv]

    def polar(self, *args: str, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(self.enter([sys.executable, "-m", "polar.cli", *args]), capture_output=True,
                              text=True, timeout=600, **kw)

    def stop(self, name: str) -> None:
        node = self.nodes.pop(name)
        if node.poll() is None:
            node.send_signal(signal.SIGTERM)
            try:
                node.wait(timeout=60)
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait()


@pytest.fixture(scope="module")
def cluster(bwrap) -> Iterator[Cluster]:
    """A head and a second node. The second node sees no Docker engine (its DOCKER_HOST points at no socket), as a
    machine without one would: the refusal test asks it for docker sandboxes."""
    for binary, install in (("ray", "pip install 'polar-gym[train]' (brings ray)"), ("unshare", "util-linux"),
                            ("nsenter", "util-linux"), ("ip", "apt-get install iproute2")):
        require_binary(binary, install)
    root = Path(tempfile.mkdtemp(prefix="polar-ray-", dir="/tmp"))  # short: Ray's socket paths live under it
    made = Cluster(root)
    try:
        made.start("head", "--head", "--port", HEAD.split(":")[1], "--include-dashboard", "false",
                   "--temp-dir", str(root / "ray"))
        made.start("node2", "--address", HEAD, env={"DOCKER_HOST": f"unix://{root}/no-docker.sock"})
        yield made
    finally:
        for name in reversed(list(made.nodes)):
            made.stop(name)
        shutil.rmtree(root, ignore_errors=True)


def eval_args(out: Path, *extra: str) -> list[str]:
    return ["eval", "polar/Code-v0", "--policy", "oracle", "--tasks", TASKS, "-k", "2", "-j", "2", "--out", str(out),
            *extra]


def traces(out: Path) -> list[dict]:
    path = out / "traces.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def without_times(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in TIMES}


def test_ray_eval_equals_the_local_one_and_resumes_after_sigkill(cluster, tmp_path):
    local = tmp_path / "local"
    done = subprocess.run([sys.executable, "-m", "polar.cli", *eval_args(local)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    remote = tmp_path / "ray"
    driver = subprocess.Popen(cluster.enter([sys.executable, "-m", "polar.cli", *eval_args(remote, "--ray", HEAD)]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while len(traces(remote)) < 3 and driver.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert driver.poll() is None, driver.stderr.read()[-3000:]
    driver.send_signal(signal.SIGKILL)  # nsenter execs, so this is the driver itself
    driver.wait()
    kept = [t["episode_id"] for t in traces(remote)]
    assert 3 <= len(kept) < 10

    resumed = cluster.polar(*eval_args(remote, "--ray", HEAD))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming: {len(kept)} done" in resumed.stdout
    ran = traces(remote)
    assert [t["episode_id"] for t in ran[:len(kept)]] == kept and len(ran) == 10
    assert len({(t["task_id"], t["seed"]) for t in ran}) == 10
    assert all(t["node"] for t in ran) and len({t["node"] for t in ran}) == 2, Counter(t["node"] for t in ran)
    assert not any(t.get("node") for t in traces(local))
    summaries = [json.loads((out / "summary.json").read_text()) for out in (local, remote)]
    assert without_times(summaries[0]) == without_times(summaries[1])
    assert summaries[1]["episodes"] == summaries[1]["expected_episodes"] == 10

    import pandas as pd

    assert sorted(pd.read_parquet(remote / "traces.parquet").node.unique()) == sorted({t["node"] for t in ran})
    checked = subprocess.run([sys.executable, "-m", "polar.cli", "trace", "validate", str(remote / "traces.jsonl")],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_node_without_the_runs_sandbox_refuses_at_start(cluster, docker, tmp_path):
    refused = cluster.polar(*eval_args(tmp_path, "--sandbox", "docker", "--ray", HEAD))
    assert refused.returncode == 2
    assert "a node cannot run these episodes" in refused.stderr and "node 127.0.0.1 (" in refused.stderr
    assert "no Docker engine answers" in refused.stderr and "scripts/docker.sh" in refused.stderr
    assert refused.stderr.count("no Docker engine answers") == 1  # the head has an engine
    assert traces(tmp_path) == []


def test_a_node_at_another_polar_version_refuses(cluster):
    """The worker's own check, asked with another driver version, on the second node (pinned by its resource)."""
    script = f"""
import functools, json, gymnasium as gym, ray
from polar.evaluation.ray_worker import NodeWorker
ray.init(address={HEAD!r}, log_to_driver=False)
make_env = functools.partial(gym.make, "polar/Code-v0", sandbox="local", pool=0)
worker = ray.remote(NodeWorker).options(num_cpus=1, resources={{"polar_node2": 1}}).remote(make_env, None)
print(json.dumps(ray.get(worker.problems.remote("0.0.0-other"))))
"""
    done = subprocess.run(cluster.enter([sys.executable, "-c", script]), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    from polar import __version__

    [problem] = json.loads(done.stdout.strip().splitlines()[-1])
    assert problem.startswith(f"polar-gym {__version__}, not the driver's 0.0.0-other: install the driver's version")


def test_no_cluster_at_the_address_is_a_one_line_error(tmp_path):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = subprocess.run([sys.executable, "-m", "polar.cli", *eval_args(tmp_path, "--ray", f"127.0.0.1:{port}")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith(f"polar: error: no Ray cluster answers at 127.0.0.1:{port}") and "ray start --head" in error


def test_a_node_killed_mid_run_loses_no_episode(cluster, tmp_path):
    node3 = cluster.start("node3", "--address", HEAD)
    try:
        driver = subprocess.Popen(cluster.enter([sys.executable, "-m", "polar.cli",
                                                 *eval_args(tmp_path, "-k", "4", "--ray", HEAD)]),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while len({t["node"] for t in traces(tmp_path)}) < 3 and driver.poll() is None:
            assert time.monotonic() < deadline, "no episode reached all three nodes"
            time.sleep(0.2)
        raylet = subprocess.run(["pgrep", "-P", str(node3.pid), "-x", "raylet"], capture_output=True, text=True)
        assert driver.poll() is None and raylet.stdout.strip(), "the run ended before node3 could be killed"
        os.kill(int(raylet.stdout.split()[0]), signal.SIGKILL)
        out, err = driver.communicate(timeout=600)
    finally:
        cluster.stop("node3")
    assert driver.returncode == 0, err[-3000:]
    assert "a node worker is gone" in err and "goes back to the other nodes" in err, out[-2000:] + err[-2000:]
    ran = traces(tmp_path)
    assert len(ran) == 20 and len({(t["task_id"], t["seed"]) for t in ran}) == 20
    assert len({t["episode_id"] for t in ran}) == 20
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["episodes"] == summary["expected_episodes"] == 20 and summary["mean_reward"] == 1.0
