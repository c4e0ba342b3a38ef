"""What every external CLI harness shares, written once: install, sandbox channel, launch, exit.

An adapter (one short file each) only says which package to install, which environment variables and
config files point the CLI at the gateway, and its command line. This module installs the package once per
host (cached, pinned, mounted read-only into sandboxes), opens a gateway session, starts the in-sandbox
bridge from loopback TCP to the gateway's Unix socket, launches the CLI in the background, and turns its
model calls into env steps until it exits.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from polar.cache import cache_dir, locked
from polar.errors import HarnessError
from polar.harnesses.declaration import Declaration
from polar.harnesses.gateway.server import Gateway, GatewaySession, PendingCall, shared_gateway
from polar.protocols import HarnessExit, Mount, Sandbox, Task, ToolSet
from polar.types import ModelReply, ModelRequest

GATEWAY_DIR = "/run/polar"
TOOLS_DIR = "/opt/polar"
NODE_DIR = f"{TOOLS_DIR}/node/bin"
"""Where the host's Node.js is mounted for npm-installed CLIs: a container image need not have one."""
HOME = "/home/polar"
"""The CLIs' home in every sandbox (the local one's own, and set for them in containers, whose HOME is root's):
adapters write their config files under it."""
BRIDGE_PORT = 4000
STATE = "/tmp/polar"
BRIDGE = Path(__file__).with_name("gateway") / "bridge.py"
EXIT_POLL_S = 0.2


def mcp_url(base_url: str) -> str:
    """Where the gateway serves a session's env tools over MCP, inside the sandbox."""
    return f"{base_url}/mcp"


def mcp_harnesses() -> list[str]:
    """The harnesses that can reach an env's own tools (a browser), as their declarations say."""
    from polar.harnesses import declarations  # the registry imports the adapters, which import this module

    return [name for name, declared in declarations().items() if declared.env_tool_name is not None]


@dataclass(frozen=True)
class McpConfig:
    """What points a CLI at an MCP server: config files (merged over the adapter's own) and arguments."""

    files: dict[str, str] = field(default_factory=dict)
    args: str = ""
    """Appended to the adapter's command line."""


def run_install(argv: list[str], what: str) -> None:
    """Run one install command; its failure is a HarnessError with the installer's own words."""
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise HarnessError(f"installing {what} failed ({' '.join(argv)}):\n{done.stderr[-3000:]}")


def is_installed(harness: object) -> bool:
    """Whether a harness is ready to run: the built-in one always, an external one once its install finished."""
    where = getattr(harness, "install_dir", None)
    return where is None or (where / ".installed").exists()


class ExternalHarness:
    """Base class of the CLI adapters. Subclasses set the attributes and override `env`, `files`, `command`."""

    name: str
    declared: Declaration
    """What the model sees of this CLI: its API, tools, env-tool names (read by the oracle, the tests, the README)."""
    package: str
    """npm package (or PyPI distribution when `installer == "pip"`)."""
    version: str
    """The pinned version that is installed and recorded in traces."""
    bin: str
    """The executable, relative to the install directory."""
    installer = "npm"
    model = "polar"
    """The model name the CLI is told to use; the gateway session accepts it."""
    extra_models: tuple[str, ...] = ()

    # --- what an adapter says ----------------------------------------------------------------------

    def env(self, base_url: str) -> dict[str, str]:
        """Environment variables for the CLI; `base_url` is the gateway session's root inside the sandbox."""
        return {}

    def files(self, base_url: str) -> dict[str, str]:
        """Config files to write before launch, by absolute path inside the sandbox."""
        return {}

    def command(self, exe: str) -> str:
        """The shell command that runs the CLI once, non-interactively; the task is in $POLAR_INSTRUCTION."""
        raise NotImplementedError

    def install_into(self, target: Path) -> None:
        """Install the pinned package into its empty cache folder `target`: with npm, or with this Python's pip, whose
        version the sandbox's `python3` shares."""
        if self.installer == "npm":
            run_install(["npm", "install", "--prefix", str(target), "--no-audit", "--no-fund", "--loglevel=error",
                         self.install], self.install)
        else:
            run_install([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target",
                         str(target / self.bin), self.install], self.install)

    def after_install(self, target: Path) -> None:
        """Fix-ups to a fresh install (a missing execute bit, say)."""

    def mcp(self, base_url: str) -> McpConfig | None:
        """How the CLI is told about the MCP server of the env's tools (a browser), at `mcp_url(base_url)`; None
        when it has no MCP support, which rules it out of envs whose tasks need those tools."""
        return None

    # --- written once for all adapters ---------------------------------------------------------------

    @property
    def install_dir(self) -> Path:
        return cache_dir("harnesses") / f"{self.name}-{self.version}"

    @property
    def install(self) -> str:
        """The pinned install, as its package manager spells it."""
        return f"{self.package}@{self.version}" if self.installer == "npm" else f"{self.package}=={self.version}"

    @property
    def exe(self) -> str:
        return f"{TOOLS_DIR}/{self.name}/{self.bin}"

    def ensure_installed(self) -> Path:
        """Install the pinned package once per host; concurrent processes wait on a file lock."""
        target = self.install_dir
        if (target / ".installed").exists():
            return target
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        with locked(target.parent / f".{self.name}.lock"):
            if not (target / ".installed").exists():
                target.mkdir(exist_ok=True)
                self.install_into(target)
                self.after_install(target)
                (target / ".installed").write_text(self.version)
        return target

    def sandbox_mounts(self) -> tuple[Mount, ...]:
        """The install folder is mounted before the install lands in it (a bind mount shows it as it arrives):
        `launch` installs in a thread, so a first install does not block the event loop the other episodes run on."""
        self.install_dir.mkdir(parents=True, exist_ok=True, mode=0o755)
        mounts = (Mount(shared_gateway().socket_dir, GATEWAY_DIR),
                  Mount(str(self.install_dir), f"{TOOLS_DIR}/{self.name}"))
        if self.installer == "npm":
            node = shutil.which("node")
            if node is None:
                raise HarnessError(f"{self.name} runs on Node.js, which is not installed: install Node.js 20 or newer")
            mounts += (Mount(os.path.realpath(node), f"{NODE_DIR}/node"),)
        return mounts

    async def launch(self, task: Task, sandbox: Sandbox, tools: ToolSet | None = None) -> ExternalRun:
        await asyncio.to_thread(self.ensure_installed)
        gateway = await shared_gateway().ensure_started()
        if not any(m.sandbox_path == GATEWAY_DIR for m in sandbox.spec.mounts):
            raise HarnessError(f"the sandbox was started without the gateway mount at {GATEWAY_DIR}")
        session = gateway.open_session(models={self.model, *self.extra_models})
        base_url = f"http://127.0.0.1:{BRIDGE_PORT}/s/{session.id}"
        files, args = self.files(base_url), ""
        if tools is not None:
            mcp = self.mcp(base_url)
            if mcp is None:
                gateway.close_session(session.id)
                raise HarnessError(f"{self.name} has no MCP support, so it cannot reach this env's tools (a browser); "
                                   f"use a harness that has: {', '.join(mcp_harnesses())}")
            session.tools, files, args = tools, files | mcp.files, f" {mcp.args}"
        await sandbox.write(f"{STATE}/bridge.py", BRIDGE.read_text())
        await sandbox.write(f"{STATE}/instruction.md", task.instruction)
        for path, text in files.items():
            await sandbox.write(path, text)
        started = await sandbox.exec(  # no `exit` here: it would end the sandbox's persistent shell
            f"(cd {STATE} && nohup python3 bridge.py {BRIDGE_PORT} {GATEWAY_DIR}/gateway.sock > bridge.log 2>&1 &); "
            f"up=; for i in $(seq 200); do if (exec 3<>/dev/tcp/127.0.0.1/{BRIDGE_PORT}) 2>/dev/null; then up=1; "
            f"break; fi; sleep 0.05; done; [ -n \"$up\" ] || {{ cat {STATE}/bridge.log; false; }}", timeout=30)
        if started.exit_code != 0:
            gateway.close_session(session.id)
            raise HarnessError(f"the gateway bridge did not start in the sandbox: {started.output[-1000:]}")
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env(base_url).items())
        launch = (f'export POLAR_INSTRUCTION="$(cat {STATE}/instruction.md)" HOME={HOME} PATH="{NODE_DIR}:$PATH"; '
                  f'mkdir -p "$HOME"; cd {sandbox.spec.workdir}; '
                  f"{env} {self.command(self.exe)}{args}; echo $? > {STATE}/harness.exit")
        await sandbox.exec(f"(nohup bash -c {shlex.quote(launch)} > {STATE}/harness.log 2>&1 < /dev/null &)")
        return ExternalRun(sandbox, gateway, session)


class ExternalRun:
    """One CLI process: its model calls come in through the gateway session; its exit ends the episode."""

    def __init__(self, sandbox: Sandbox, gateway: Gateway, session: GatewaySession):
        self.sandbox, self.gateway, self.session = sandbox, gateway, session
        self.pending: PendingCall | None = None

    async def advance(self, reply: ModelReply | None) -> ModelRequest | HarnessExit:
        if reply is not None and self.pending is not None and not self.pending.reply.done():
            self.pending.reply.set_result(reply)
        self.pending = None
        call = asyncio.ensure_future(self.session.next_call())
        exited = asyncio.ensure_future(self._wait_for_exit())
        try:
            done, _ = await asyncio.wait({call, exited}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in (call, exited):
                if not waiter.done():
                    waiter.cancel()
        if call in done:
            self.pending = call.result()
            return self.pending.request
        return exited.result()

    async def _wait_for_exit(self) -> HarnessExit:
        while True:
            result = await self.sandbox.exec(f"cat {STATE}/harness.exit 2>/dev/null")
            if result.output.strip().lstrip("-").isdigit():
                code = int(result.output.strip())
                log = (await self.sandbox.exec(f"tail -c 4000 {STATE}/harness.log")).output
                if code == 0:
                    return HarnessExit(final_answer=log)
                return HarnessExit(final_answer=log, error=f"the harness exited with code {code}:\n{log[-2000:]}")
            await asyncio.sleep(EXIT_POLL_S)

    async def stop(self) -> None:
        self.gateway.close_session(self.session.id)
