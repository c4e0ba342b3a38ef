"""What Terminal-v0 checks before it trusts a sandbox to run a task's tests/test.sh.

Harbor runs the tests inside the agent's own sandbox, so what they execute — the shell, the dynamic loader and
its libraries, the interpreters and tools test.sh calls and how PATH finds them, the start-up hooks of Python and
the shell, a test runner's configuration — must be what the task's environment had, not what the agent left.

**Docker** (the agent is root in its container): the container is compared with its image by the engine
(`docker diff`, and path stats through the engine's archive API: nothing inside the container answers). Changing
or deleting a system file, touching the loader's configuration or a start-up hook, adding a command or a Python
module earlier on its search path than one the image has, a `.pth` file that runs code or adds a folder, a `._pth`
file, libc's NSS and iconv modules and `nsswitch.conf`, a pytest plugin, or a test runner's config at `/`, is
tampering. What legitimate installs do — add new files (a package, a service
file) — is not. **Local**: the host's system is mounted read-only, so only the places the agent may write (the
working directory, /tmp, HOME, the task's writable dirs) could steer the tests: the verifier gets a fresh HOME, a
sealed /tests and an emptied /logs/verifier, and a command of test.sh that PATH resolves into one of those places
while the system has its own is tampering. **Both**: a file where Python's start-up looks for a module (asked of
the image's own Pythons with `-vv`: Debian's sitecustomize tries `apport_python_hook`, absent or not) is tampering.
"""

from __future__ import annotations

import ast
import base64
import io
import json
import posixpath
import re
import shlex
import tarfile
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from polar.envs.sandbox.docker import owner_labels
from polar.envs.sandbox.layer_diff import container_changes
from polar.errors import SandboxError
from polar.protocols import Sandbox
from polar.python_ast import parse_python

GRADER_TOOLS = ("/bin/bash", "/bin/sh", "/usr/bin/env", "/bin/mktemp", "/bin/rm", "/bin/mkdir", "/bin/tar",
                "/usr/bin/base64", "/usr/bin/find", "/usr/bin/head", "/usr/bin/perl")
"""What grading itself runs in the sandbox, by absolute path."""
ALWAYS_RUN = ("bash", "sh", "env", "python3", "python")
"""Commands a test runs whether or not test.sh names them (a Python test calls `bash` through subprocess)."""
_SYSTEM = ("/usr/bin/", "/usr/sbin/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/", "/usr/libx32/", "/usr/libexec/",
           "/usr/local/bin/", "/usr/local/sbin/", "/usr/local/lib/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/",
           "/libx32/", "/etc/alternatives/")
"""Where what runs lives: changing or deleting a file here is tampering (config in /etc, data in /usr/share are not)."""
_LOADER = ("/etc/ld.so.preload", "/etc/ld.so.conf", "/etc/ld.so.cache", "/etc/nsswitch.conf")
"""The loader's configuration and libc's: nsswitch.conf names the NSS modules (`libnss_NAME.so.2`) libc loads into
every process that looks a user, group or host up (bash at start-up, `id`, Python's `getpass`). (`host.conf`,
`gai.conf` and `resolv.conf` load no code.)"""
_LIBC_MODULES = re.compile(r"^(/usr)?/lib(32|64|x32)?/([^/]+/)*(libnss_[^/]*\.so[^/]*|gconv/.+)$")
"""Code and configuration that libc loads by name at run time: NSS modules, and iconv's gconv modules and their
`gconv-modules` lists (added ones too: libc loads what nsswitch.conf or a converter names, present in the image or
not)."""
_CODE_CONFIG = re.compile(r"^/(etc/(ssl|pki/tls|crypto-policies)|usr(/local)?/(lib/)?ssl)/"
                          r"(.+/)?[^/]*\.(cnf|conf|config)$")
"""OpenSSL's configuration (`openssl.cnf`, what it includes, the crypto policies it reads): it names providers and
engines, shared objects that OpenSSL loads into every process that uses it (Python's `hashlib` and `ssl`, curl,
git over https) by path."""
_PREFIX_LANDMARKS = ("lib/", "lib64/", "Lib/", "Modules/", "pybuilddir.txt")
"""What an interpreter looks for beside its own folder before its configured prefix (CPython's `getpath`: the
standard library's `lib/python3.N/os.py` and `lib-dynload`, searched from the executable's folder up; a build tree's
`pybuilddir.txt` and `Modules/Setup.local`): an added one there moves where the interpreter finds its standard
library."""
_STARTUP = ("/etc/profile", "/etc/bash.bashrc", "/etc/bash.bash_logout", "/etc/environment", "/etc/gitconfig")
_PY_HOOKS = ("sitecustomize.py", "usercustomize.py")
_STEERING = ("conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "setup.py")
_STDLIB = re.compile(r"^/usr(/local)?/lib/(python3\.\d+/(?!(dist|site)-packages(/|$))|python3\d+\.zip$)")
"""The standard library: its folder, and the zip that precedes it on sys.path (`/usr/lib/python311.zip`)."""
_PREFIXES = ("/", "/usr", "/usr/local")
"""Where an interpreter of the image looks for `pyvenv.cfg` besides its own folder (the folder above `bin`)."""
_SITE = re.compile(r"^/usr(/local)?/lib/python(3|3\.\d+)/(dist|site)-packages/")
_VERSION = re.compile(r"/python(3\.\d+)/")
DIFF_KINDS = {0: "changed", 1: "added", 2: "deleted"}
_BUILTINS = frozenset("""alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs
disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile
popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true type
typeset ulimit umask unalias unset wait . : [ [[ ]] if then else elif fi for in do done while until case esac
function select time { } !""".split())
_WRAPPERS = frozenset({"exec", "command", "env", "sudo", "nohup", "nice", "timeout", "xargs", "stdbuf", "time"})
_SEPARATORS = frozenset({";", "&", "&&", "|", "||", "|&", "(", ")", ";;"})


_SHELLS = frozenset({"bash", "sh", "dash", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/usr/bin/env"})
_HEREDOC = re.compile(r"(?<!<)<<(?!<)-?\s*(['\"]?)([A-Za-z_][\w.-]*)\1")


def command_words(script: str) -> set[str]:
    """The commands a shell script runs (first words of its simple commands, and what `env`, `timeout`, ...
    run), without shell builtins and keywords. The script is split as a whole, so a quoted program that spans lines
    (`python3 -c "...`) is one word, and a here-document fed to anything but a shell is data, not commands. A
    heuristic: a script that does not split is split line by line, skipping the lines that do not."""
    text = _without_data_heredocs(script)
    try:
        return _first_words(_tokens(text))
    except ValueError:
        words: set[str] = set()
        for line in text.splitlines():
            try:
                words |= _first_words(_tokens(line))
            except ValueError:
                continue
        return words


_CHMOD = re.compile(r"(.*/)?chmod")
_CHMOD_OPTIONS = frozenset({"-R", "--recursive", "-f", "--silent", "--quiet", "-v", "--verbose", "-c", "--changes"})
_MODE = re.compile(r"0?[0-7]{1,3}|([ugoa]*([-+=]([rwxX]*|[ugo]))+)(,[ugoa]*([-+=]([rwxX]*|[ugo]))+)*")
"""A chmod mode polar applies for test.sh: permission bits only (no set-id or sticky bit on a file of /tests)."""


def sealed_chmods(script: str, sealed: str) -> list[list[str]]:
    """The `chmod`s of a test script whose every file is the sealed dir `sealed` or in it, as chmod's arguments
    with those files made relative to it (`chmod -R go-rwx /tests` gives `["-R", "--", "go-rwx", "."]`). Harbor
    uploads the tests as plain files their script may chmod (hiding an answer key from the unprivileged user its
    tests run the agent's program as); polar's `/tests` is a read-only bind, so polar applies them from outside. A
    chmod with any other file, a mode or option it does not know, or a word the shell would expand, is left out."""
    try:
        tokens = _tokens(_without_data_heredocs(script))
    except ValueError:
        return []
    found, command, redirect = [], [], False
    for token in [*tokens, ";"]:
        if set(token) <= set("<>&") and set(token) & set("<>"):  # a redirection: its fd and target are no files
            command, redirect = command[:-1] if command[-1:] and command[-1].isdigit() else command, True
        elif redirect:
            redirect = False
        elif token in _SEPARATORS or set(token) <= set(";&|()\n"):
            words = command
            while words and (words[0] in _WRAPPERS or "=" in words[0] or re.fullmatch(r"\d+(\.\d+)?[smhd]?", words[0])
                             or (words[0].startswith("-") and command[0] in _WRAPPERS)):
                words = words[1:]  # what runs the command (`timeout 5`, `env A=1`)
            if words and _CHMOD.fullmatch(words[0]) and (args := _sealed_chmod(words[1:], sealed)):
                found.append(args)
            command = []
        else:
            command.append(token)
    return found


def _sealed_chmod(words: list[str], sealed: str) -> list[str] | None:
    options = []
    while words and words[0] in _CHMOD_OPTIONS:
        options.append(words.pop(0))
    words = words[1:] if words[:1] == ["--"] else words
    if len(words) < 2 or not _MODE.fullmatch(words[0]):
        return None
    files = []
    for word in words[1:]:
        path = posixpath.normpath(word)
        if re.search(r"[$`*?\[~{]", word) or not (path == sealed or path.startswith(f"{sealed}/")):
            return None
        files.append(posixpath.relpath(path, sealed))
    return [*options, "--", words[0], *files]


def _tokens(text: str) -> list[str]:
    """Shell words and operators; every line starts with a `;` (shlex's comments swallow the newline that ends
    them), after continued lines are joined."""
    lexer = shlex.shlex(text.replace("\\\n", " ").replace("\n", "\n;"), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    return list(lexer)


def _without_data_heredocs(script: str) -> str:
    """The script with the bodies of here-documents that feed a program other than a shell left out."""
    out, lines, i = [], script.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if (found := _HEREDOC.search(line)) is None:
            continue
        shell = line.split()[0] in _SHELLS
        while i < len(lines) and lines[i].strip() != found.group(2):
            out.append(lines[i] if shell else "")
            i += 1
        i += 1
    return "\n".join(out)


def _first_words(tokens: list[str]) -> set[str]:
    words: set[str] = set()
    start, redirect = True, False
    for token in tokens:
        if token in _SEPARATORS or (set(token) <= set(";&|()<>\n") and set(token) & set(";|()\n")):
            start, redirect = True, False
        elif set(token) <= set("<>&"):
            redirect = True
        elif redirect:
            redirect = False
        elif start and not (("=" in token and not token.startswith("=")) or token.startswith("-")
                            or re.fullmatch(r"\d+(\.\d+)?[smhd]?", token)):
            if token not in _BUILTINS and not token.startswith("$"):
                words.add(token)
            start = token in _WRAPPERS
    return words


ABSENT_PROBE = """import importlib.util, os, pkgutil, sys
tried = set()


class Watch:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if '.' not in name:
            tried.add(name)


out, skip = os.fdopen(os.dup(1), 'w'), ('antigravity', 'this', 'test', 'idlelib', 'tkinter', 'turtle', 'turtledemo',
                                        'distutils', 'lib2to3', 'ensurepip', 'venv', '__phello__', '_pyrepl', 'pydoc')
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0), os.dup2(null, 1), os.dup2(null, 2)
known = set(getattr(sys, 'stdlib_module_names', ()))
stdlib = os.path.dirname(os.__file__)
tops = {m.name for m in pkgutil.iter_modules([stdlib, os.path.join(stdlib, 'lib-dynload')])} | known
sys.meta_path.insert(0, Watch)
for top in sorted(tops):
    if top in skip or top.startswith('__'):
        continue
    try:
        module = __import__(top)
    except BaseException:
        continue
    for sub in pkgutil.walk_packages(getattr(module, '__path__', []), top + '.', onerror=lambda name: None):
        if not any(part in skip or part in ('__main__', 'tests') for part in sub.name.split('.')):
            try:
                __import__(sub.name)
            except BaseException:
                pass
sys.meta_path.remove(Watch)
for name in sorted((tried | known) - {'__main__'}):
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        print('POLAR-ABSENT', name, file=out)
out.flush()
os._exit(0)
"""
"""Run by a Python from an empty folder: the top-level module names its standard library tries to import when its
modules and their submodules are imported (a finder first on `sys.meta_path` records every name asked for), and those
`sys.stdlib_module_names` lists (other platforms' modules and those not built), that it cannot find: `nt` and
`_winapi` (ntpath, mimetypes), `msvcrt` (subprocess), `org` (copy). The standard library imports them, in `try`
blocks and on no platform check of its own, so a file of that name on the tests' sys.path is code in their process.
Modules with side effects (`antigravity`, `__main__`s) and the deprecated or GUI ones are not imported; a name only
those import (docutils, by distutils) is a real package an agent may install."""
STARTUP_PROBE = r"""seen=; for d in $(echo "$PATH" | tr : ' '); do
  for f in "$d"/python "$d"/python3 "$d"/python3.[0-9] "$d"/python3.[0-9][0-9]; do
    [ -x "$f" ] || continue
    "$f" -vv -c 'import sys; print("POLAR-SYS-PATH", *sys.path, sep="\n", file=sys.stderr)' 2>&1
    r=$(readlink -f "$f"); case " $seen " in *" $r "*) continue;; esac; seen="$seen $r"
    "$f" -I -c "$POLAR_ABSENT_PROBE" 2>/dev/null
  done
done; true"""
"""Shell that starts each Python on PATH with `-vv`, which names every file its start-up tries (the `site` module,
`.pth` files, `sitecustomize` and what it imports, such as Debian's `apport_python_hook`, absent or not), then
prints its sys.path; and runs `ABSENT_PROBE` (in `POLAR_ABSENT_PROBE`) once per interpreter."""


class Startup(NamedTuple):
    """What Python's start-up reads, from the `STARTUP_PROBE` output of an image's Pythons."""

    tries: frozenset[tuple[str, str]] = frozenset()
    """(folder, module name) of every file it tried, found or not."""
    names: frozenset[str] = frozenset()
    """Top-level module names it looked for along sys.path (an added file of that name in a folder of its path)."""
    folders: frozenset[str] = frozenset()
    """The folders of its sys.path, PYTHONPATH's included even where they do not exist yet."""
    absent: frozenset[str] = frozenset()
    """Module names its standard library may import that it lacks (`ABSENT_PROBE`)."""

    def reads(self, path: str) -> bool:
        """Whether a file or package at `path` would be imported when Python starts."""
        where, name = posixpath.dirname(path), _module_name(path)
        return (where, name) in self.tries or (where in self.folders and name in self.names)

    def absent_module(self, path: str, folders: Iterable[str] = ()) -> str | None:
        """The name, when `path` is a module, or Python code in a package, named like one the standard library may
        import but lacks, in one of its sys.path folders or `folders`: a package's subfolders count, a namespace package
        (`org/python/core.py`, which `copy` imports) needs no `__init__.py`."""
        for folder in {*self.folders, *folders}:
            if path.startswith(f"{folder.rstrip('/')}/"):
                rel = path[len(folder.rstrip("/")) + 1:]
                top = rel.split("/")[0]
                if rel.endswith((".py", ".pyc", ".so")) and _module_name(top) in self.absent:
                    return _module_name(top)
        return None


def parse_startup(output: str) -> Startup:
    tries = frozenset((posixpath.dirname(line[9:].strip()), _module_name(line[9:].strip()))
                      for line in output.splitlines() if line.startswith("# trying /"))
    folders, listing = set(), False
    for line in output.splitlines():
        listing = line == "POLAR-SYS-PATH" or (listing and (line == "" or line.startswith("/")))  # "" for -c
        if listing and line.startswith("/"):
            folders.add(line)
    loaded = {m.group(1) for m in _LOADED.finditer(output)}  # a package found in its folder: no "trying" line
    names = {name for folder, name in tries if folder in folders} | loaded
    absent = {line.split()[1] for line in output.splitlines() if line.startswith("POLAR-ABSENT ")}
    return Startup(tries, frozenset(names), frozenset(folders), frozenset(absent))


_LOADED = re.compile(r"^import '(\w+)[\w.]*' # <_frozen_importlib_external\.", re.MULTILINE)


def _module_name(path: str) -> str:
    return posixpath.basename(path).split(".")[0]


_STARTUPS: dict[tuple[str, str, str], Startup] = {}
"""`image_startup`'s answers by (image id, PATH, PYTHONPATH): a tag rebuilt to another image is asked again."""


def image_startup(client: Any, image: str, search_path: str, python_path: str = "") -> Startup:
    """What the Pythons on the verifier's PATH read when they start, asked of a fresh container of `image` (the image
    as built: nothing of the agent's runs), once per image and path. An added file there runs before the tests
    whether or not the image had that module (Debian's sitecustomize tries `apport_python_hook`)."""
    import docker

    environment = {"PATH": search_path, "PYTHONNOUSERSITE": "1", "POLAR_ABSENT_PROBE": ABSENT_PROBE,
                   **({"PYTHONPATH": python_path} if python_path else {})}
    try:
        key = (client.images.get(image).id, search_path, python_path)
        if key not in _STARTUPS:
            out = client.containers.run(key[0], [STARTUP_PROBE], entrypoint=["/bin/sh", "-c"], network_mode="none",
                                        environment=environment, labels=owner_labels(), remove=True, stdout=True,
                                        stderr=True)
            _STARTUPS[key] = parse_startup(out.decode(errors="replace"))
    except docker.errors.DockerException as e:
        raise SandboxError(f"polar could not ask the Pythons of image {image} what their start-up reads: {e}") from e
    return _STARTUPS[key]


# --- docker: the container against its image -------------------------------------------------------------


def docker_tampering(client: Any, container_id: str, search_path: str, words: Iterable[str],
                     startup: Startup | None = None, python_path: str = "", canaried: bool = False,
                     diff: dict[str, str] | None = None, btrfs_root: Path | None = None) -> list[str]:
    """What the agent changed in the container that grading would execute, one line each; [] when nothing.
    `startup`: what the image's Pythons read when they start (`image_startup`); `python_path`: the tests'
    PYTHONPATH, whose folders come before the image's own on sys.path. `canaried`: the tests carry a must-fail
    canary, which catches any code that makes them pass whatever they test, so the rules on what is merely present
    in Python's and OpenSSL's paths (`CANARY_COVERS`), which honest installs trip, are left out. `diff`: the
    container's diff against its image as it is now (`Snapshot.engine_diff`), else it is read here
    (`container_changes`)."""
    changes = diff if diff is not None else {c["Path"]: DIFF_KINDS[c["Kind"]]
                                             for c in container_changes(client, container_id, btrfs_root)}
    parents = {posixpath.dirname(p) for p in changes}
    stat = cache(lambda path: engine_stat(client, container_id, path))
    found = [f"{kind} {path}: {why}" for path, kind in sorted(changes.items())
             if path not in parents and (why := _sensitive(path, kind)) and not (canaried and why in CANARY_COVERS)]
    if canaried:
        return found + [line for word in sorted({*words, *ALWAYS_RUN, *GRADER_TOOLS})
                        for line in _resolved(word, _canonical(stat, [d for d in search_path.split(":")
                                                                      if d.startswith("/")]), changes, stat)]
    found += [f"{kind} {path}: a module that Python's start-up looks for here (`{_module_name(path)}`): it would "
              "run before every test" for path, kind in sorted(changes.items())
              if kind != "deleted" and startup is not None and startup.reads(path)]
    found += [f"{kind} {path}: `{name}`, a module the standard library imports where it has it (the image lacks "
              "it): it would run in the tests' Python" for path, kind in sorted(changes.items())
              if kind != "deleted" and startup is not None and (name := startup.absent_module(path))]
    path_dirs = _canonical(stat, [d for d in search_path.split(":") if d.startswith("/")])
    beside = {*path_dirs, *map(posixpath.dirname, path_dirs)}
    landmarks = {path for path, kind in changes.items() if kind != "deleted" and any(
        path.startswith(f"{d}/{mark}") for d in path_dirs for mark in _PREFIX_LANDMARKS)}
    found += [f"{changes[path]} {path}: where an interpreter on the verifier's PATH looks for its standard library "
              "before its own prefix" for path in sorted(landmarks) if posixpath.dirname(path) not in landmarks]
    found += [f"{kind} {path}: a virtual-environment marker where an interpreter on the verifier's PATH reads it"
              for path, kind in sorted(changes.items()) if kind != "deleted" and path not in parents
              and posixpath.basename(path) == "pyvenv.cfg" and posixpath.dirname(path) in beside]
    found += _shadows(changes, parents, path_dirs, stat, "a command", lambda name: [name])
    for version in sorted({m.group(1) for p in changes if (m := _VERSION.search(p))}):
        site = [f"/usr/local/lib/python{version}/dist-packages", f"/usr/local/lib/python{version}/site-packages",
                "/usr/lib/python3/dist-packages", f"/usr/lib/python{version}/dist-packages",
                f"/usr/lib/python{version}/site-packages"]
        found += _shadows(changes, parents, site, stat, "a Python module", _module_files)
    first = [f for f in dict.fromkeys(python_path.split(":")) if f.startswith("/")]
    rest = sorted((startup.folders if startup else frozenset()) - set(first))
    for i, folder in enumerate(first):
        found += [line for line in _shadows(changes, parents, [folder, *first[i + 1:], *rest], stat,
                                            "a Python module on PYTHONPATH", _module_files)
                  if line.startswith(f"added {folder}/")]
    for word in sorted({*words, *ALWAYS_RUN, *GRADER_TOOLS}):
        found += _resolved(word, path_dirs, changes, stat)
    for path, kind in sorted(changes.items()):
        if kind != "deleted" and path not in parents and _SITE.match(path) and (why := _runs_code(
                path, lambda p=path: _read(client, container_id, p))):
            found.append(f"{kind} {path}: {why}")
    return list(dict.fromkeys(found))


_HOOK = "a Python start-up hook"
_OPENSSL = "OpenSSL's configuration, which names the shared objects (providers, engines) OpenSSL loads"
_STDLIB_FILE = "Python's standard library"
_STARTUP_FILE = "a start-up file of the shell or git"
_SYSTEM_FILE = "a file of the image's system"
CANARY_COVERS = (_HOOK, _OPENSSL, _STDLIB_FILE, _STARTUP_FILE, _SYSTEM_FILE)
"""The rules of `_sensitive` left out where the tests carry a canary: each fires on honest work (a sitecustomize.py
edit, an OpenSSL setting, the first root Python writing the standard library's `.pyc` caches, `git config --system`,
`pip install --upgrade` of a package the image has), and what an attack there does (tests that pass whatever they
check) the canary run shows. Left out with them: a module Python's start-up imports, a module or command shadowing
the image's, a `.pth` in a site folder (an editable install), what moves an interpreter's prefix. Kept: the loader's
and libc's configuration and modules, a `._pth`, a test runner's config at `/`, and a changed program that grading
or test.sh runs by name (`_resolved`)."""


def _sensitive(path: str, kind: str) -> str | None:
    """Why a change to this one path (not a directory) is tampering by itself, or None."""
    name = posixpath.basename(path)
    if path in _LOADER or path.startswith("/etc/ld.so.conf.d/"):
        return "the dynamic loader's or libc's configuration"
    if path in _STARTUP or path.startswith("/etc/profile.d/"):
        return _STARTUP_FILE
    if name in _PY_HOOKS:
        return _HOOK
    if name == "pyvenv.cfg" and (path.startswith(_SYSTEM) or posixpath.dirname(path) in _PREFIXES):
        return "a virtual-environment marker beside the image's interpreters (it moves their prefix)"
    if _CODE_CONFIG.match(path):
        return _OPENSSL
    if name.endswith("._pth"):
        return "a `._pth` file, which an interpreter beside it reads as its whole sys.path"
    if _LIBC_MODULES.match(path):
        return "a module or module list that libc loads at run time (NSS, iconv)"
    if posixpath.dirname(path) == "/" and name in _STEERING:
        return "a test runner's configuration at /"
    if _STDLIB.match(path):
        return _STDLIB_FILE
    if kind != "added" and (path.startswith(_SYSTEM) or path in ("/bin", "/sbin", "/lib", "/lib64")):
        return _SYSTEM_FILE
    return None


def _shadows(changes: dict[str, str], parents: set[str], search: list[str], stat: Callable[[str], dict | None],
             what: str, names: Callable[[str], list[str]]) -> list[str]:
    """Files added in one directory of a search path whose name a later directory already resolves."""
    found = []
    for i, folder in enumerate(search):
        for path, kind in changes.items():
            if kind == "added" and posixpath.dirname(path) == folder:
                name = posixpath.basename(path)
                later = next((f"{d}/{n}" for d in search[i + 1:] for n in names(name) if stat(f"{d}/{n}")), None)
                if later is not None:
                    found.append(f"added {path}: {what} that shadows {later}")
    return found


def _module_files(name: str) -> list[str]:
    module = re.sub(r"(\.cpython-[^.]*)?\.(py|pyc|so|pth)$", "", name)
    return [module, f"{module}.py"]


def _resolved(word: str, path_dirs: list[str], changes: dict[str, str],
              stat: Callable[[str], dict | None]) -> list[str]:
    """The file `word` runs (the first on PATH, or the path itself) and its link target, if it is one of the tools:
    a bare word's that the image had and the agent changed, or one test.sh names by path in the image's system or
    a folder of PATH, added or changed (a tool test.sh expects there). Any other is the agent's work, not tampering
    by itself: a bare word's file the agent added (a tool the task asks for) unless it shadows one, and a file
    outside the tool folders that test.sh names by path (a deliverable it runs, or data the split took for a
    command)."""
    for candidate in [word] if word.startswith("/") else [f"{d}/{word}" for d in path_dirs]:
        if (info := stat(candidate)) is None:
            continue
        runs = dict.fromkeys([candidate, info.get("linkTarget") or candidate])
        named = word.startswith("/")
        return [f"{changes[p]} {p}, which grading runs as `{word}`" for p in runs
                if ((p in changes and _tool(p, path_dirs)) if named else changes.get(p) == "changed")]
    return []


def _tool(path: str, path_dirs: list[str]) -> bool:
    return path.startswith(_SYSTEM) or posixpath.dirname(path) in path_dirs


def _canonical(stat: Callable[[str], dict | None], folders: list[str]) -> list[str]:
    """The directories as the engine resolves them (`/bin` is `/usr/bin` on a merged-/usr image), first kept."""
    out = []
    for folder in folders:
        info = stat(folder)
        real = (info.get("linkTarget") or folder) if info else folder
        if real not in out:
            out.append(real)
    return out


def _runs_code(path: str, read: Callable[[], bytes | None]) -> str | None:
    """Why an added or changed file in a site directory runs code at interpreter or test start, or None. A file
    too large to read is judged unread: it fails closed."""
    if not path.endswith((".pth", "entry_points.txt")):
        return None
    data = read()
    if data is None:
        return "a start-up file (.pth or entry points) that polar could not read to check (too large)"
    text = data.decode(errors="replace")
    if path.endswith(".pth") and any(line.startswith(("import ", "import\t")) for line in text.splitlines()):
        return "a .pth file that runs code whenever Python starts"
    if path.endswith(".pth") and any(line.strip() and not line.startswith("#") for line in text.splitlines()):
        return ("a .pth file that adds a folder to every Python's sys.path (a module Python's start-up or the tests "
                "look for there would run)")
    if path.endswith("entry_points.txt") and "[pytest11]" in text:
        return "a pytest plugin, which pytest loads on its own"
    return None


def engine_stat(client: Any, container_id: str, path: str) -> dict | None:
    """The engine's stat of a path in the container (`linkTarget` fully resolved), or None when it is absent."""
    response = client.api.head(client.api._url("/containers/{0}/archive", container_id), params={"path": path})
    header = response.headers.get("X-Docker-Container-Path-Stat")
    return json.loads(base64.b64decode(header)) if response.status_code == 200 and header else None


def _read(client: Any, container_id: str, path: str, limit: int = 1 << 20) -> bytes | None:
    """A small file's bytes, read by the engine (None when absent or larger than `limit`)."""
    import docker

    try:
        stream, info = client.api.get_archive(container_id, path)
    except docker.errors.NotFound:
        return None
    if info.get("size", 0) > limit:
        return None
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        member = next((m for m in tar.getmembers() if m.isfile()), None)
        handle = tar.extractfile(member) if member else None
        return handle.read() if handle else None


# --- local: what the agent could write ---------------------------------------------------------------------


async def local_shadows(sandbox: Sandbox, search_path: str, writable: Iterable[str]) -> list[str]:
    """Files in a folder of PATH the agent could write (or a relative one) that a later folder of PATH also has:
    whatever the tests run by that name, test.sh or a program it starts (a Python test calling `wc` through
    subprocess), would be the agent's, as docker's comparison with the image finds; and a `._pth` file in a folder
    of PATH the agent could write."""
    roots = tuple(f"{w.rstrip('/')}/" for w in writable)
    listing = await sandbox.exec(
        f"(p={shlex.quote(search_path)}; IFS=:; for d in $p; do printf 'D %s\\n' \"$d\"; "
        "for f in \"$d\"/* \"$d\"/.[!.]*; do { [ -f \"$f\" ] || [ -L \"$f\" ]; } && "
        "printf 'F %s\\n' \"${f##*/}\"; done; done; true)", timeout=30)
    folders: list[tuple[str, set[str]]] = []
    for line in listing.output.splitlines():
        if line.startswith("D "):
            folders.append((line[2:], set()))
        elif line.startswith("F ") and folders:
            folders[-1][1].add(line[2:])
    found = []
    for i, (folder, files) in enumerate(folders):
        if not (f"{folder.rstrip('/')}/".startswith(roots) or not folder.startswith("/")):
            continue
        for name in sorted(files):
            later = next((f"{d}/{name}" for d, names in folders[i + 1:] if name in names and d != folder), None)
            if later is not None:
                found.append(f"{folder}/{name} shadows {later} on PATH for what the tests run as `{name}`")
    writable = [d for d in search_path.split(":") if f"{d.rstrip('/')}/".startswith(roots)]
    if writable:  # an interpreter there reads `<its name>._pth` beside it as its whole sys.path
        pth = await sandbox.exec("for d in " + " ".join(map(shlex.quote, writable)) + "; do for f in \"$d\"/*._pth; do "
                                 "[ -e \"$f\" ] && echo \"$f\"; done; done; true", timeout=30)
        found += [f"{path}: a `._pth` file in a folder of PATH, which an interpreter beside it reads as its whole "
                  "sys.path" for path in pth.output.splitlines() if path.startswith("/")]
    return found


_OPTION_ARGUMENT = r"-[A-Za-z]*[WX][ \t]*[^\s-]\S*|--check-hash-based-pycs[ \t]+\S+"
"""A Python option that takes an argument (`-W ignore`, `-X dev`): the argument is no option of its own."""
_MODULE_RUN = re.compile(rf"\bpython[\d.]*\s+(?:(?:{_OPTION_ARGUMENT}|-[A-Za-z]+)\s+)*-m\s*([A-Za-z_]\w*)")
_CWD_FIRST = re.compile(rf"(?<![\w.-])python[\d.]*((?:[ \t]+(?:{_OPTION_ARGUMENT}|-[A-Za-z]+))*)"
                        r"(?:[ \t]+(?:-[A-Za-z]*[cm]|-)(?=[\s'\"])"
                        r"|[ \t]*(?=[<|;&)\n]|$))", re.MULTILINE)
"""A Python that test.sh starts with `-c`, `-m`, `-` or its program on stdin (nothing after it but a redirection or
the command's end): each puts the working directory first on sys.path (unless `-I` or `-P`)."""
_FIND = ("import sys\n"
         "started = {m.split('.')[0] for m in sys.modules} | set(sys.builtin_module_names)\n"
         "spec, absent, names, loaded = sys.argv[1], set(sys.argv[2].split(',')) - {''}, sys.argv[3:], set()\n"
         "for n in names:\n"  # first, so that nothing of the probe's own is counted as what they load
         "    try:\n"
         "        __import__(n)\n"
         "        loaded.add(n)\n"
         "    except BaseException:\n"
         "        pass\n"
         "loaded |= {m.split('.')[0] for m in sys.modules} - started\n"
         "import importlib.metadata as md, os, pkgutil\n"
         "loaded |= {e.value.split(':')[0].split('.')[0] for e in md.entry_points(group='pytest11')}\n"
         "if spec.startswith('*'):\n"
         "    loaded |= {m.name for m in pkgutil.iter_modules([p for p in sys.path if p and p != os.getcwd()])}\n"
         "loaded = (loaded - (started - set(names))) | absent\n"
         "def code(d):\n"
         "    return any(f.endswith(('.py', '.pyc', '.so')) for _, _, fs in os.walk(d) for f in fs)\n"
         "for root in dict.fromkeys(spec.lstrip('*').split(':')):\n"
         "    ls = os.listdir(root) if os.path.isdir(root) else []\n"
         "    for m in sorted(loaded):\n"
         "        here = [f for f in ls if f in (m + '.py', m + '.pyc')\n"
         "                or f.startswith(m + '.') and f.endswith('.so')\n"
         "                or f == m and os.path.isfile(os.path.join(root, f, '__init__.py'))\n"
         "                or f == m and m in absent and code(os.path.join(root, f))]\n"
         "        if here:\n"
         "            print(os.path.join(root, here[0]), m)\n")
"""Run by the sandbox's python3 from an empty folder (the working directory is not on its path): each module named
(what test.sh runs with `-m`, what its `-c` programs import) that the system has, imported, and every module that
import loaded (and pytest's plugins by their entry points), but those loaded before the working directory joins
sys.path: the ones a file or package in the working directory would shadow. The roots are `:`-separated; given as
`*ROOTS`, every top-level module the system's Python can import counts (a program polar cannot read: stdin, `-`).
The second argument, `,`-separated: names the standard library imports but the system lacks (`ABSENT_PROBE`), which
count always, as a namespace package holding Python code too."""


def _programs_imports(script: str) -> tuple[set[str], bool]:
    """The top-level modules the `python -c PROGRAM`s of a shell script import, and whether every such program could
    be read (split as shell words and parsed as Python); an unread one may import anything."""
    try:
        tokens = _tokens(_without_data_heredocs(script))
    except ValueError:
        return set(), False
    names: set[str] = set()
    for i, token in enumerate(tokens[:-1]):
        if not (re.fullmatch(r"-[A-Za-z]*c", token) and any(re.fullmatch(r"(.*/)?python[\d.]*", w)
                                                          for w in tokens[max(0, i - 4):i])):
            continue
        try:
            tree = parse_python(tokens[i + 1])
        except (SyntaxError, ValueError):
            return names, False
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.add(node.module.split(".")[0])
            elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                    "__import__", "import_module"):
                return names, False  # a module named at run time
    return names, True


_CD = re.compile(r"(?:^|[;&|(]|\bthen|\bdo|\belse)[ \t]*cd[ \t]+(\"[^\"$`]*\"|'[^']*'|[^\s;&|)$`~'\"]+)(?=[\s;&|)]|$)",
                 re.MULTILINE)


def python_roots(script: str, workdir: str) -> list[str]:
    """The folders a Python that test.sh starts may run from: the working directory and every folder test.sh `cd`s
    into (a relative one, without `..`, from the working directory)."""
    found = [m.group(1).strip("'\"") for m in _CD.finditer(script)]
    return list(dict.fromkeys([workdir, *(posixpath.normpath(posixpath.join(workdir, f)) for f in found
                                          if f != "-" and ".." not in f.split("/"))]))


_PYTHONPATH = re.compile(r"(?<![\w$])PYTHONPATH=(\"[^\"]*\"|'[^']*'|[^\s;&|)]*)")


def script_python_path(script: str, python_path: str, workdir: str) -> str:
    """The verifier's PYTHONPATH with the folders test.sh sets it to itself (`PYTHONPATH=/app/lib python3 ...`,
    `export PYTHONPATH=...`; `$PYTHONPATH` in it is the verifier's, a relative folder is from the working
    directory): every folder a Python of the tests may have first on sys.path."""
    folders = [f for f in python_path.split(":") if f]
    for m in _PYTHONPATH.finditer(script):
        value = re.sub(r"\$\{?PYTHONPATH\}?", python_path, m.group(1).strip("'\""))
        folders += [posixpath.normpath(posixpath.join(workdir, f)) for f in value.split(":") if f and "$" not in f]
    return ":".join(dict.fromkeys(folders))


async def module_shadows(sandbox: Sandbox, script: str, workdir: str, search_path: str,
                         python_path: str = "", absent: Iterable[str] = ()) -> list[str]:
    """Modules that a Python test.sh starts with the working directory first on sys.path (`-m pytest`, `-c`, `-`,
    a program on stdin) could import, and that the working directory shadows: an agent's `pytest.py` there would be
    the test runner, its `iniconfig.py` or `socket.py` code in the tests' process. What such a Python loads is
    asked of the system's own Python, isolated: what `-m` runs and what a `-c` program imports, with everything
    those import; for a program polar cannot read (stdin, `-`, an import named at run time) every module the system
    has. Modules loaded at start-up, before the working directory joins sys.path, are not shadowed. The agent's own
    package run as `python -m <it>` is no shadow: the system has no module of that name; nor is a folder without
    `__init__.py` (a namespace portion loses to the system's module wherever it is on the path). `absent`: names the
    standard library imports and the system lacks (`Startup.absent`), shadowed by any module of that name. Every
    folder test.sh `cd`s into counts as a working directory."""
    invocations = [m for m in _CWD_FIRST.finditer(script)
                   if not re.search(r"(^|\s)-[A-Za-z]*[IP]", re.sub(_OPTION_ARGUMENT, "", m.group(1)))]
    if not invocations:
        return []
    imported, readable = _programs_imports(script)
    names = sorted(set(_MODULE_RUN.findall(script)) | imported)
    unread = not readable or any(not re.search(r"-[A-Za-z]*[cm]\b", m.group(0)) for m in invocations)
    roots = ":".join(python_roots(script, workdir))
    root = f"*{roots}" if unread else roots
    # from an empty folder of its own, with the verifier's PATH and PYTHONPATH (a task's mounted site) and no other
    # setting, so that nothing of the agent's is on this Python's path
    result = await sandbox.exec(f"d=$(/bin/mktemp -d) && cd \"$d\" && /usr/bin/env -i PATH={shlex.quote(search_path)} "
                                f"PYTHONPATH={shlex.quote(python_path)} python3 -s -c {shlex.quote(_FIND)} "
                                f"{shlex.quote(root)} {shlex.quote(','.join(sorted(absent)))} {' '.join(names)}; "
                                "cd / && /bin/rm -rf \"$d\"", timeout=60)
    how = " / ".join(dict.fromkeys(" ".join(m.group(0).split()) for m in invocations))
    return [f"{path} shadows the module `{name}`, which a Python test.sh starts from {posixpath.dirname(path)} ({how}) "
            "would import"
            for path, _, name in (line.partition(" ") for line in result.output.splitlines()) if name]


_LOCAL_STARTUPS: dict[str, Startup] = {}
"""`local_startup`'s answers by the PATH asked: the host's system, read-only to every sandbox, does not change."""


async def local_startup(sandbox: Sandbox, search_path: str, writable: Iterable[str]) -> Startup:
    """What the system's Pythons read when they start and the names their standard library imports but lacks, asked
    of the Pythons in the folders of PATH the agent could not write, with no PYTHONPATH, from an empty folder:
    nothing of the agent's is on their path or runs."""
    roots = tuple(f"{w.rstrip('/')}/" for w in writable)
    system = ":".join(d for d in search_path.split(":")
                      if d.startswith("/") and not f"{d.rstrip('/')}/".startswith(roots))
    if system not in _LOCAL_STARTUPS:
        probe = await sandbox.exec(f"d=$(/bin/mktemp -d) && cd \"$d\" && /usr/bin/env -i PATH={shlex.quote(system)} "
                                   f"PYTHONNOUSERSITE=1 POLAR_ABSENT_PROBE={shlex.quote(ABSENT_PROBE)} /bin/sh -c "
                                   f"{shlex.quote(STARTUP_PROBE)}; cd / && /bin/rm -rf \"$d\"", timeout=120)
        _LOCAL_STARTUPS[system] = parse_startup(probe.output)
    return _LOCAL_STARTUPS[system]


async def local_startup_shadows(sandbox: Sandbox, search_path: str, python_path: str,
                                writable: Iterable[str]) -> list[str]:
    """Files in a PYTHONPATH folder the agent could write (the verifier's, or one test.sh sets), named like a module
    that Python's start-up looks for (`sitecustomize`, what it imports, `encodings`), like one the system has
    (`pathlib.py`), or Python code named like a module the standard library imports but the system lacks
    (`_winapi`, `org/python/core.py`): PYTHONPATH comes first on sys.path, so such a file runs before or during
    every test."""
    writable = list(writable)
    roots = tuple(f"{w.rstrip('/')}/" for w in writable)
    folders = [f for f in python_path.split(":") if f and f"{f.rstrip('/')}/".startswith(roots)]
    if not folders:
        return []
    startup = await local_startup(sandbox, search_path, writable)
    listing = await sandbox.exec("for d in " + " ".join(map(shlex.quote, folders)) + "; do "
                                 "[ -d \"$d\" ] && for f in \"$d\"/* \"$d\"/.[!.]*; do [ -e \"$f\" ] && echo \"$f\"; "
                                 "done; [ -d \"$d\" ] && find \"$d\" -mindepth 2 -maxdepth 6 \\( -name '*.py' -o "
                                 "-name '*.pyc' -o -name '*.so' \\) -print; done; true", timeout=30)
    found = [f"{path}: a module that Python's start-up looks for on PYTHONPATH (`{_module_name(path)}`): it would run "
             "before every test" for path in listing.output.splitlines()
             if path.startswith("/") and posixpath.dirname(path) in folders and _module_name(path) in startup.names]
    found += [f"{path}: `{name}`, a module the standard library imports where it has it (the system lacks it), on "
              "PYTHONPATH: it would run in the tests' Python" for path in listing.output.splitlines()
              if path.startswith("/") and (name := startup.absent_module(path, folders))]
    system = ":".join(f for f in python_path.split(":") if f and f not in folders)
    shadows = await sandbox.exec(f"d=$(/bin/mktemp -d) && cd \"$d\" && /usr/bin/env -i PATH={shlex.quote(search_path)} "
                                 f"PYTHONPATH={shlex.quote(system)} python3 -s -c {shlex.quote(_FIND)} "
                                 f"{shlex.quote('*' + ':'.join(folders))} ''; cd / && /bin/rm -rf \"$d\"", timeout=60)
    found += [f"{path} shadows the module `{name}` on PYTHONPATH, ahead of the system's"
              for path, _, name in (line.partition(" ") for line in shadows.output.splitlines()) if name]
    return found
