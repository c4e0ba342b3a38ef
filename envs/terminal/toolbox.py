"""The verifier's toolbox: what the standard Terminal-Bench test.sh preamble fetches from the internet, offline.

Most Terminal-Bench tests start with `apt-get install -y curl`, `curl -LsSf https://astral.sh/uv/<v>/install.sh | sh`,
`source $HOME/.local/bin/env` and `uvx -p 3.13 -w pytest==8.4.1 ... pytest /tests/test_outputs.py`: apt's lists, uv,
a CPython 3.13 that uv downloads and pytest from PyPI. The sandbox has no network, so polar brings each one, built on
the host once per machine and mounted read-only at `TOOLBOX` for a task whose tests use uv or pip
(`needs_toolbox`), so that test.sh runs as shipped:

- `uv/uv`, `uv/uvx`: uv `UV_VERSION`, from its PyPI wheel, and `uv-install.sh`, an offline stand-in for uv's
  installer that links them, and the toolbox's Python, into `$HOME/.local/bin` and writes the `env` file there;
- `cpython-3.13/`: a minimal Debian 13 with its CPython 3.13 and every library it links, its own C library
  included, and `python/cpython-<version>-linux-x86_64-gnu/`, that Python laid out as uv lays out the Pythons it
  downloads (`UV_PYTHON_INSTALL_DIR`); its program names the toolbox's loader and libraries (patchelf), so it runs
  in any image, and no library of the image changes;
- `shims/`: first on the verifier's PATH: `uv` and `uvx` (so a uv the agent put on PATH never runs for the tests),
  and `curl`, which answers uv's installer URL with `uv-install.sh` and hands every other call to the image's own
  curl (or fails as a missing curl does);
- `apt.conf`: apt with no sources and none of the image's configuration (its `APT::Update::Pre-Invoke` hooks run
  programs), so `apt-get update` has nothing to fetch and `apt-get install` of a package the image has succeeds, as
  it would online; in docker the Debian packages the tests install are installed when the
  task's image is built (`apt_build_steps`), where the build has the network;
- `wheels/`: the wheels of the packages the task's tests name (`uvx -w`, `uv pip install`, `pip install`, ...),
  downloaded when the task's sandbox is prepared (`prefetch`), where uv and pip look, offline.

The verifier's HOME is fresh (see `family.py`), and the installer runs into it before test.sh, so a script that
skips the curl step still finds uv where the installer puts it. Nothing here is the agent's: the mount is read-only
and the verifier's own environment names it.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from polar.cache import cache_dir, locked
from polar.envs.sandbox.dockerfile.replay import REQUIREMENT
from polar.errors import SandboxError

TOOLBOX = "/opt/polar-verifier"
"""Where the toolbox is mounted in the sandbox."""
UV_VERSION = "0.9.5"
PYTHON = "3.13"
REVISION = "4"
"""How the toolbox is made; another revision is built beside it."""
PYTHON_PACKAGES = ("python3.13-minimal", "libpython3.13-stdlib", "ca-certificates")
PIP_PYTHONS = ("3.11", "3.12", "3.13")
"""The Pythons a `pip install` in test.sh may run on (Debian 12, Ubuntu 24.04, Debian 13): wheels for each."""
_LIBRARIES = "cpython-3.13/usr/lib/x86_64-linux-gnu"
_USES = re.compile(r"^[^#\n]*(?<![\w/.-])(uvx?|pip3?|-m\s+pip|apt-get|apt|\$HOME/\.local/bin/env|~/\.local/bin/env)"
                   r"(?![\w-])", re.M)
_INSTALLER = """#!/bin/sh
# polar's offline stand-in for uv's installer: uv {version} and CPython {python} from the verifier's toolbox
mkdir -p "$HOME/.local/bin" || exit 1
for tool in uv uvx; do ln -sf {toolbox}/uv/$tool "$HOME/.local/bin/$tool"; done
cat > "$HOME/.local/bin/env" <<'EOF'
#!/bin/sh
case ":${{PATH}}:" in *:"$HOME/.local/bin":*) ;; *) export PATH="$HOME/.local/bin:$PATH" ;; esac
EOF
echo "everything's installed! (uv {version} from polar's offline verifier toolbox)"
"""
_CURL = """#!/bin/sh
# polar: uv's installer is answered from the toolbox; any other request goes to the system's curl
out=""; want=""; take=""
for arg in "$@"; do
  if [ -n "$take" ]; then out="$arg"; take=""; continue; fi
  case "$arg" in
    -o|--output) take=1 ;;
    https://astral.sh/uv/*install.sh|https://astral.sh/uv/install.sh) want=1 ;;
  esac
done
if [ -n "$want" ]; then
  if [ -n "$out" ]; then cat {toolbox}/uv-install.sh > "$out"; else cat {toolbox}/uv-install.sh; fi
  exit 0
fi
PATH=$(printf %s "$PATH" | sed 's#{toolbox}/shims:##g')
exec curl "$@"
"""


def toolbox_dir() -> Path:
    return cache_dir("verifier-toolbox") / f"r{REVISION}"


def needs_toolbox(scripts: dict[str, bytes]) -> bool:
    """Whether the task's test scripts use uv, pip or apt (or the env file uv's installer writes)."""
    return any(_USES.search(data.decode(errors="replace")) for name, data in scripts.items() if name.endswith(".sh"))


def ensure_toolbox() -> Path:
    """Build the toolbox once per machine (a minute or two: debootstrap of Python 3.13, uv's wheel); concurrent
    processes wait on a lock."""
    root = toolbox_dir()
    if (root / ".built").exists():
        return root
    if platform.machine() != "x86_64":
        raise SandboxError(f"the verifier toolbox is built for x86_64 only, not {platform.machine()}: give the task's "
                           "image its test dependencies instead")
    patchelf = shutil.which("patchelf")
    if patchelf is None:
        raise SandboxError("building the verifier toolbox needs patchelf: run `apt-get install patchelf` (or "
                           "`bash scripts/setup.sh`)")
    from polar.envs.sandbox.images import bootstrap

    with locked(root.parent / f".{root.name}.lock"):
        if (root / ".built").exists():
            return root
        staging = Path(tempfile.mkdtemp(prefix=f".{root.name}-", dir=root.parent))
        try:
            (staging / "cpython-3.13").mkdir()
            bootstrap(staging / "cpython-3.13", "trixie", PYTHON_PACKAGES, "the verifier toolbox's Python 3.13")
            for unused in ("usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/info", "var/cache"):
                shutil.rmtree(staging / "cpython-3.13" / unused, ignore_errors=True)
            _managed_python(staging, patchelf)
            _uv(staging / "uv")
            (staging / "wheels").mkdir()
            (staging / "shims").mkdir()
            for path, text in ((staging / "uv-install.sh", _INSTALLER), (staging / "shims/curl", _CURL)):
                path.write_text(text.format(toolbox=TOOLBOX, version=UV_VERSION, python=PYTHON))
                path.chmod(0o755)
            for tool in ("uv", "uvx"):
                (staging / "shims" / tool).symlink_to(f"../uv/{tool}")
            for folder in ("apt/sources.list.d", "apt/apt.conf.d"):
                (staging / folder).mkdir(parents=True)
            (staging / "apt/sources.list").write_text("")
            (staging / "apt.conf").write_text(  # nothing of the image's apt configuration: its hooks run programs
                f'Dir::Etc::SourceList "{TOOLBOX}/apt/sources.list";\n'
                f'Dir::Etc::SourceParts "{TOOLBOX}/apt/sources.list.d";\n'
                f'Dir::Etc::Parts "{TOOLBOX}/apt/apt.conf.d";\nDir::Etc::Main "{TOOLBOX}/apt.conf";\n')
            (staging / ".built").write_text(REVISION)
            staging.chmod(0o755)
            staging.rename(root)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return root


def _managed_python(staging: Path, patchelf: str) -> None:
    """The root's Python as uv's own downloads are laid out: `bin/python3.13` (a copy whose loader and library path
    are the toolbox's), `python3` and `python`, and `lib` (the root's), so a venv made from it finds its stdlib."""
    status = (staging / "cpython-3.13/var/lib/dpkg/status").read_text()
    found = re.search(rf"^Package: python{PYTHON}-minimal\n(?:.+\n)*?Version: ({PYTHON}\.\d+)", status, re.M)
    if found is None:
        raise SandboxError(f"the verifier toolbox's Debian 13 root has no python{PYTHON}-minimal")
    home = staging / "python" / f"cpython-{found.group(1)}-linux-x86_64-gnu"
    (home / "bin").mkdir(parents=True)
    shutil.copy(staging / f"cpython-3.13/usr/bin/python{PYTHON}", home / "bin" / f"python{PYTHON}")
    _run([patchelf, "--set-interpreter", f"{TOOLBOX}/{_LIBRARIES}/ld-linux-x86-64.so.2", "--force-rpath",
          "--set-rpath", f"{TOOLBOX}/{_LIBRARIES}", str(home / "bin" / f"python{PYTHON}")], "patchelf")
    for name in ("python3", "python"):
        (home / "bin" / name).symlink_to(f"python{PYTHON}")
    (home / "lib").symlink_to("../../cpython-3.13/usr/lib")


def _uv(into: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="polar-uv-") as tmp:
        _run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
              "--only-binary=:all:", "--platform", "manylinux2014_x86_64", "-d", tmp, f"uv=={UV_VERSION}"],
             f"pip download of uv {UV_VERSION}")
        (wheel,) = Path(tmp).glob("uv-*.whl")
        shutil.unpack_archive(wheel, Path(tmp) / "unpacked", "zip")
        into.mkdir()
        for tool in ("uv", "uvx"):
            (program,) = (Path(tmp) / "unpacked").glob(f"uv-*.data/scripts/{tool}")
            shutil.copy(program, into / tool)
            (into / tool).chmod(0o755)


def _run(argv: list[str], what: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise SandboxError(f"{what} failed (exit code {done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}")
    return done.stdout


# --- what the tests name ---------------------------------------------------------------------------------------

_VALUED = {"-p", "--python", "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint",
           "--from", "--target", "-t", "--prefix", "--root", "--cache-dir", "-e", "--editable", "--directory",
           "--project", "--with-requirements", "--python-version", "--platform"}
"""Options of uv and pip that take a value: the value is not a requirement."""


def requirements(scripts: dict[str, bytes]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(for uv, for pip): the requirements the test scripts name: `uvx [-w R]... TOOL`, `uv run --with R`,
    `uv pip install R...`, `uv add R...`, `pip install R...`, and the lines of a `-r FILE` that is one of tests/."""
    uv, pip = [], []
    for name, data in scripts.items():
        if not name.endswith(".sh"):
            continue
        for words in _lines(data):
            for i, word in enumerate(words):
                base, after = word.rsplit("/", 1)[-1], words[i + 1:]
                if base == "uvx":
                    uv += _uv_requirements(after, tool=True)
                elif base == "uv" and after[:2] == ["tool", "run"]:
                    uv += _uv_requirements(after[2:], tool=True)
                elif base == "uv" and after[:1] == ["run"]:
                    uv += _uv_requirements(after[1:], tool=False)
                elif base == "uv" and after[:2] == ["pip", "install"]:
                    uv += _listed(after[2:], scripts)
                elif base == "uv" and after[:1] == ["add"]:
                    uv += _listed(after[1:], scripts)
                elif words[i - 1:i] != ["uv"] and after[:1] == ["install"] and (
                        base in ("pip", "pip3") or (base == "pip" and words[i - 1:i] == ["-m"])):
                    pip += _listed(after[1:], scripts)
    return tuple(dict.fromkeys(uv)), tuple(dict.fromkeys(pip))


def apt_packages(scripts: dict[str, bytes]) -> tuple[str, ...]:
    """The Debian packages the test scripts install (`apt-get install [-y ...] PKG...`, `apt install ...`)."""
    found = []
    for name, data in scripts.items():
        if not name.endswith(".sh"):
            continue
        for words in _lines(data):
            for i, word in enumerate(words):
                if word.rsplit("/", 1)[-1] in ("apt-get", "apt") and "install" in words[i + 1:i + 4]:
                    rest = words[words.index("install", i) + 1:]
                    found += [w for w in _until_separator(rest) if _DEBIAN_PACKAGE.fullmatch(w)]
    return tuple(dict.fromkeys(found))


def apt_build_steps(packages: tuple[str, ...], user: str | None) -> tuple[str, ...]:
    """Dockerfile lines that install `packages` at build, where the build has the network test.sh lacks (each on
    its own when they cannot all be had, so one unknown name keeps none of the others out), as root."""
    if not packages:
        return ()
    names = " ".join(packages)
    install = "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends"
    steps = ["USER root", f"RUN apt-get update -qq && {{ {install} {names} || for p in {names}; do {install} \"$p\" "
             "|| true; done; }; rm -rf /var/lib/apt/lists/*"]
    return (*steps, f"USER {user}") if user else tuple(steps)


def _lines(data: bytes) -> list[list[str]]:
    """A script's lines (continued lines joined) as shell words and operators; a line that does not split is left
    out."""
    lines = []
    for line in data.decode(errors="replace").replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        try:
            lines.append(list(lexer))
        except ValueError:
            continue
    return lines


_DEBIAN_PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]+(=[^\s]+)?")


def _until_separator(words: list[str]) -> list[str]:
    out = []
    for word in words:
        if set(word) <= set(";&|()<>"):
            break
        if not word.startswith("-"):
            out.append(word)
    return out


def _uv_requirements(words: list[str], tool: bool) -> list[str]:
    found, i = [], 0
    while i < len(words):
        word = words[i]
        if word in ("-w", "--with"):
            found += [r for r in words[i + 1].split(",") if REQUIREMENT.fullmatch(r)] if i + 1 < len(words) else []
            i += 2
        elif word.startswith("--with="):
            found += [r for r in word[7:].split(",") if REQUIREMENT.fullmatch(r)]
            i += 1
        elif word in _VALUED:
            i += 2
        elif word.startswith("-"):
            i += 1
        else:
            if tool and REQUIREMENT.fullmatch(word) and word not in ("run", "tool"):
                found.append(word)
            break
    return found


def _listed(words: list[str], scripts: dict[str, bytes]) -> list[str]:
    found, i = [], 0
    while i < len(words) and not set(words[i]) <= set(";&|()<>"):
        word = words[i]
        if word in ("-r", "--requirement") and i + 1 < len(words):
            listed = scripts.get(words[i + 1].removeprefix("/tests/"), b"").decode(errors="replace")
            lines = (line.split("#")[0].strip() for line in listed.splitlines())
            found += [r for r in lines if REQUIREMENT.fullmatch(r)]
        elif REQUIREMENT.fullmatch(word):
            found.append(word)
        i += 2 if word in _VALUED or word in ("-r", "--requirement") else 1
    return found


def prefetch(scripts: dict[str, bytes]) -> list[str]:
    """Download the wheels of what the task's tests name into the toolbox's wheelhouse (once per set of names on
    this machine), and say what could not be had: [] when everything was."""
    uv, pip = requirements(scripts)
    wheels = ensure_toolbox() / "wheels"
    wanted = [(PYTHON, uv)] if uv else []
    wanted += [(version, pip) for version in PIP_PYTHONS] if pip else []
    missing = []
    for version, names in wanted:
        key = hashlib.sha256(json.dumps([version, names]).encode()).hexdigest()[:16]
        done = wheels / f".fetched-{key}"
        if done.exists():
            missing += json.loads(done.read_text())
            continue
        with locked(wheels.parent / ".wheels.lock"):
            failed = _download(wheels, version, names)
            if names is uv and not failed:  # uv locks for every platform (`uv add`): marker-only dependencies too
                _download(wheels, version, _universal(wheels.parent, version, names))
            done.write_text(json.dumps(failed))
        missing += failed
    return sorted(set(missing))


def _universal(toolbox: Path, version: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """Every package a universal resolution of `names` pins, whatever its platform marker (pytest's colorama on
    Windows): pip resolves markers for this machine only, and uv's lock wants them all. Best effort: () when the
    resolution fails (the plain download has said what is missing)."""
    done = subprocess.run([str(toolbox / "uv" / "uv"), "pip", "compile", "--universal", "--python-version", version,
                           "--no-header", "--no-annotate", "--no-config", "-"], input="\n".join(names),
                          capture_output=True, text=True)
    return tuple(line.split(";")[0].strip() for line in done.stdout.splitlines()
                 if line.strip() and not line.startswith("#")) if done.returncode == 0 else ()


def _download(wheels: Path, version: str, names: tuple[str, ...]) -> list[str]:
    if not names:
        return []
    base = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--only-binary=:all:",
            "--python-version", version, "--implementation", "cp", "--platform", "manylinux_2_28_x86_64",
            "--platform", "manylinux2014_x86_64", "--platform", "linux_x86_64", "-d", str(wheels)]
    if subprocess.run([*base, *names], capture_output=True).returncode == 0:
        return []
    return [f"{name} (Python {version})" for name in names
            if subprocess.run([*base, name], capture_output=True).returncode != 0]


def verifier_env(path: str) -> dict[str, str]:
    """What test.sh's environment gets where the toolbox is mounted: the curl shim first on PATH, apt with the
    toolbox's configuration only, uv and pip offline on the wheelhouse and reading no configuration file (the
    agent's `/etc/uv/uv.toml` or `pip.conf` would point them at its own packages), uv never downloading a Python,
    and a venv uv makes made afresh (a `.venv` the agent left in its place, with an `activate` of its own, goes)."""
    return {"PATH": f"{TOOLBOX}/shims:{path}", "APT_CONFIG": f"{TOOLBOX}/apt.conf", "UV_OFFLINE": "1",
            "UV_FIND_LINKS": f"{TOOLBOX}/wheels", "UV_PYTHON_DOWNLOADS": "never", "UV_NO_CONFIG": "1",
            "UV_VENV_CLEAR": "1", "UV_PYTHON_INSTALL_DIR": f"{TOOLBOX}/python", "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": f"{TOOLBOX}/wheels", "PIP_CONFIG_FILE": "/dev/null", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


INSTALL_INTO_HOME = f"/bin/sh {TOOLBOX}/uv-install.sh >/dev/null"
"""Run in the verifier's fresh HOME before test.sh: uv where its installer puts it."""
