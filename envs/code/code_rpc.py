"""The wire between Code-v0's test driver (trusted, on the host) and the subject (the module under test, sandboxed).

Standalone, stdlib only: polar copies it beside the driver and into the grading sandbox. A message is a 4-byte
length and a JSON array. A value travels as a flat table of nodes, children before parents, each node used once,
so decoding is one loop whatever the nesting, takes time linear in the message, and builds only builtin values
(None, bool, int, float, str, bytes, list, tuple, dict, set, frozenset, Fraction, range, a few builtins by name,
builtin exceptions) or stand-ins that the receiving side makes for *handles*: objects that stay where they live.
Nothing is unpickled or evaluated. Either side may call back into the other while a request of its own is
pending (a test passes an iterator; the module pulls from it). The arguments of a request are sent by value;
its reply may name them again ("e" nodes: `get(data, "") is data` holds) and carries back the in-place changes
the call made to them, so sending by value keeps the in-process semantics of lists, dicts and sets passed in.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import itertools
import json
import struct
from fractions import Fraction

MAX_MESSAGE = 8 << 20
"""Bytes in one message: the bundled tests' largest is under 1 MiB."""
MAX_NODES = 500_000
"""Containers and handles in one message (a flat list of numbers is one node)."""
MAX_DEPTH = 10_000
"""Containers inside containers: hashing a set member or a dict key nested far deeper (a tuple 200,000 deep) recurses
in C without a check and kills the process that builds it, so neither side builds or sends one. Honest values go deep
too (flatten_nested's tests send a list 3,000 deep), so the bound sits well above them and well below the crash."""
SCALARS = (type(None), bool, int, float, str)
MUTABLE = (list, dict, set)
CONTAINERS = {list: "l", tuple: "t", set: "s", frozenset: "f", dict: "d"}
BUILDERS = {"l": list, "t": tuple, "s": set, "f": frozenset}
NAMED = {id(getattr(builtins, n)): n for n in (
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "dict", "divmod", "enumerate", "filter",
    "float", "format", "frozenset", "hash", "hex", "int", "isinstance", "issubclass", "iter", "len", "list", "map",
    "max", "min", "next", "object", "oct", "ord", "pow", "range", "repr", "reversed", "round", "set", "slice",
    "sorted", "str", "sum", "tuple", "type", "zip")}
"""Builtins that travel by name (a test passes `int` as a converter); no other name is ever looked up."""
EXCEPTIONS = {n: c for n, c in vars(builtins).items() if isinstance(c, type) and issubclass(c, Exception)}
"""Builtin exceptions rebuilt by name on arrival; SystemExit, KeyboardInterrupt and the like arrive as `Aborted`."""
_END = object()
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode
_DECODE = json.JSONDecoder().decode


class ProtocolError(Exception):
    """The other side sent something the codec does not accept."""


class PeerGone(BaseException):
    """The other side closed the connection, broke the protocol or ran out of time. A BaseException, so that code
    under `except Exception:` cannot swallow it."""


class Unsendable(BaseException):
    """A request's value cannot travel (too large, containing itself, of a type the codec does not carry). A
    BaseException, so that a test's `except ValueError:` cannot take it for the module's answer."""


class Aborted(BaseException):
    """The other side raised SystemExit, KeyboardInterrupt or another exception that is not an `Exception`."""


class Encoder:
    """Builds one message's node table; `sent` maps node index to the container sent there (for "e" nodes)."""

    def __init__(self, link: Link, echo: list | None = None):
        self.link, self.nodes, self.sent, self.path = link, [], {}, set()
        self.echo = {id(obj): k for k, obj, _ in echo or ()}

    def ref(self, value):
        """The reference to `value`: itself if a scalar, else `[index]` of its node (added with its children)."""
        stack: list = []
        r = self._enter(value, stack)
        while stack:
            tag, obj, items, refs = stack[-1]
            if r is not _END:
                refs.append(r)
            child = next(items, _END)
            if child is _END:
                stack.pop()
                self.path.discard(id(obj))
                r = self.add([tag, *refs], obj)
            else:
                r = self._enter(child, stack)
        return r

    def add(self, node: list, container=None) -> list:
        if len(self.nodes) >= MAX_NODES:
            raise ValueError(f"a value of more than {MAX_NODES} parts cannot be sent")
        if isinstance(container, MUTABLE):
            self.sent[len(self.nodes)] = container
        self.nodes.append(node)
        return [len(self.nodes) - 1]

    def _enter(self, x, stack: list):
        kind = type(x)
        if kind in SCALARS:
            return x
        if self.echo and id(x) in self.echo:
            return self.add(["e", self.echo[id(x)]])
        if len(stack) >= MAX_DEPTH:
            raise ValueError(f"a value nested more than {MAX_DEPTH} deep cannot be sent")
        tag = CONTAINERS.get(kind)
        if tag is None:
            leaf = self.leaf(x)
            if leaf is not None:
                return self.add(leaf)
            tag, x = self.link.encode_other(x, self)
            if tag is None:
                return x
        if id(x) in self.path:
            raise ValueError("a value that contains itself cannot be sent")
        self.path.add(id(x))
        items = itertools.chain.from_iterable(x.items()) if tag == "d" else iter(x)
        stack.append((tag, x, items, []))
        return _END

    def leaf(self, x) -> list | None:
        kind = type(x)
        if kind is bytes:
            return ["b", base64.b64encode(x).decode()]
        if kind is Fraction:
            return ["q", x.numerator, x.denominator]
        if kind is range:
            return ["r", x.start, x.stop, x.step]
        if id(x) in NAMED and getattr(builtins, NAMED[id(x)]) is x:
            return ["n", NAMED[id(x)]]
        if isinstance(x, BaseException) and getattr(builtins, kind.__name__, None) is kind:
            return ["x", kind.__name__, *safe_args(x)]
        return None


def safe_args(exc: BaseException) -> tuple:
    args = exc.args if type(exc.args) is tuple else ()
    return tuple(a if type(a) in SCALARS else repr(a)[:2000] for a in args)


class Decoder:
    """Rebuilds one message's values; `received` lists (index, container, snapshot) for write-back."""

    def __init__(self, link: Link, nodes, sent: dict | None = None):
        if type(nodes) is not list:
            raise ProtocolError("the node table is not a list")
        if len(nodes) > MAX_NODES:
            raise ProtocolError(f"a value of more than {MAX_NODES} parts")
        self.link, self.sent, self.received = link, sent or {}, []
        self.built: list = []
        self.depth: list[int] = []
        """How deep each built node nests: checked before a parent is built (and its members hashed)."""
        self.used = bytearray(len(nodes))
        for node in nodes:
            self.deepest = 0
            self.built.append(self._build(node))
            self.depth.append(self.deepest + 1)

    def take(self, r):
        kind = type(r)
        if kind in SCALARS:
            return r
        if kind is not list or len(r) != 1 or type(r[0]) is not int or not 0 <= r[0] < len(self.built):
            raise ProtocolError(f"bad reference {str(r)[:80]}")
        if self.used[r[0]]:
            raise ProtocolError("a node is referenced twice")
        if self.depth[r[0]] >= MAX_DEPTH:
            raise ProtocolError(f"a value nested more than {MAX_DEPTH} deep")
        self.used[r[0]] = 1
        self.deepest = max(self.deepest, self.depth[r[0]])
        return self.built[r[0]]

    def _build(self, node):
        if type(node) is not list or not node or type(node[0]) is not str:
            raise ProtocolError("a node is not a tagged list")
        tag, fields = node[0], node[1:]
        try:
            if tag in BUILDERS:
                value = BUILDERS[tag](self.take(r) for r in fields)
            elif tag == "d":
                if len(fields) % 2:
                    raise ProtocolError("a dict node has an odd number of fields")
                parts = [self.take(r) for r in fields]
                value = dict(zip(parts[::2], parts[1::2], strict=True))
            else:
                return self._leaf(tag, fields)
        except TypeError as e:  # an unhashable key or member
            raise ProtocolError(str(e)) from None
        if isinstance(value, MUTABLE):
            snapshot = list(value.items()) if tag == "d" else list(value)
            self.received.append((len(self.built), value, snapshot))
        return value

    def _leaf(self, tag: str, fields: list):
        if tag == "b" and len(fields) == 1 and type(fields[0]) is str:
            return base64.b64decode(fields[0], validate=True)
        if tag == "q" and len(fields) == 2 and all(type(f) is int for f in fields) and fields[1] > 0:
            return Fraction(fields[0], fields[1])
        if tag == "r" and len(fields) == 3 and all(type(f) is int for f in fields) and fields[2] != 0:
            return range(*fields)
        if tag == "n" and len(fields) == 1 and fields[0] in NAMED.values():
            return getattr(builtins, fields[0])
        if tag == "x" and fields and type(fields[0]) is str:
            args = [self.take(r) for r in fields[1:]]
            if fields[0] in EXCEPTIONS:
                cls = EXCEPTIONS[fields[0]]
                try:
                    return cls(*args)
                except Exception:  # noqa: BLE001 - a constructor with its own signature (UnicodeError)
                    return cls.__new__(cls, *args)
            return Aborted(f"{fields[0][:100]}: {', '.join(map(str, args))[:500]}")
        if tag == "e" and len(fields) == 1 and type(fields[0]) is int and fields[0] in self.sent:
            return self.sent[fields[0]]
        if tag == "y" and len(fields) == 1 and type(fields[0]) is int and fields[0] in self.link.exports:
            return self.link.exports[fields[0]]
        if tag in ("o", "w", "C") and fields and type(fields[0]) is int:
            refs = [self.take(r) for r in fields[1:]] if tag != "C" else fields[1:]
            return self.link.decode_handle(tag, fields[0], refs)
        raise ProtocolError(f"bad {tag!r} node")


def changed(received: list) -> list:
    """The received containers the call changed in place (compared by identity with their snapshots)."""
    out = []
    for k, obj, snapshot in received:
        now = list(obj.items()) if isinstance(obj, dict) else list(obj)
        if isinstance(obj, dict):
            now, snapshot = [x for pair in now for x in pair], [x for pair in snapshot for x in pair]
        if len(now) != len(snapshot) or any(a is not b for a, b in zip(now, snapshot, strict=True)):
            out.append((k, obj))
    return out


class Link:
    """One end of the connection: framing, requests, serving the other side's requests, and the handle tables.

    Subclasses say how objects that are not plain values go out (`encode_other`), how handles come in
    (`decode_handle`) and which requests they serve (`perform`)."""

    def __init__(self, sock):
        self.sock, self.buffer = sock, bytearray()
        self.exports: dict[int, object] = {}
        self.export_ids: dict[int, int] = {}
        self.imports: dict[int, object] = {}
        self.broken: str | None = None
        self.violation: str | None = None

    # --- framing ----------------------------------------------------------------------------------------------
    def send(self, message: list) -> None:
        self.sock.sendall(frame(message))

    def recv(self) -> list:
        """The next message, waiting for it."""
        while (message := self.poll()) is None:
            self._fill()
        return message

    def poll(self) -> list | None:
        """The next message if all of it has arrived, else None (on a non-blocking socket: after one read)."""
        if self.broken:
            raise PeerGone(self.broken)
        try:
            if not self.sock.getblocking() and len(self.buffer) < 4 + self._size():
                with contextlib.suppress(BlockingIOError):
                    self._fill()
            if len(self.buffer) < 4 + self._size():
                return None
            size = self._size()
            body = self.buffer[4:4 + size].decode()
            del self.buffer[:4 + size]
            message = _DECODE(body)
            if type(message) is not list or not message:
                raise ProtocolError("a message is not a list")
            return message
        except OSError as e:
            raise self.fail(f"the connection broke: {e}") from None
        except (ValueError, RecursionError, ProtocolError) as e:
            raise self.fail(f"the other side sent a malformed message: {e}", violation=True) from None

    def _size(self) -> int:
        """The length of the message at the head of the buffer (0 until its length has arrived)."""
        if len(self.buffer) < 4:
            return 0
        size = struct.unpack_from(">I", self.buffer)[0]
        if size > MAX_MESSAGE:
            raise ProtocolError(f"a message of {size} bytes is over the limit")
        return size

    def _fill(self) -> None:
        while True:
            try:
                chunk = self.sock.recv(1 << 16)
                break
            except TimeoutError:  # a socket with a timeout: nothing yet; the side may look around, then wait on
                self.idle()
            except BlockingIOError:
                raise
            except (OSError, ValueError) as e:
                raise self.fail(f"the connection broke: {e}") from None
        if not chunk:
            raise self.fail("the other side closed the connection")
        self.buffer += chunk

    def idle(self) -> None:
        """Called while a wait on a socket with a timeout goes on; raise to stop waiting."""

    def fail(self, why: str, violation: bool = False) -> PeerGone:
        """Mark the connection broken; a `violation` is data our own code on the other side never sends (someone
        else wrote on the socket, or changed that code)."""
        self.broken = self.broken or why
        if violation:
            self.violation = self.violation or why
        return PeerGone(self.broken)

    # --- handles ----------------------------------------------------------------------------------------------
    def export(self, obj) -> int:
        """The handle id of one of this side's objects (kept alive for the connection's life)."""
        key = id(obj)
        if key not in self.export_ids:
            self.export_ids[key] = len(self.exports) + 1
            self.exports[len(self.exports) + 1] = obj
        return self.export_ids[key]

    def encode_other(self, x, enc: Encoder):
        """A value that is neither a plain value nor a builtin: (container tag, iterable) or (None, reference)."""
        raise TypeError(f"a {type(x).__name__} cannot be sent")

    def decode_handle(self, tag: str, ident: int, fields: list):
        raise ProtocolError(f"unexpected {tag!r} node")

    def perform(self, op: str, args: list, kwargs: dict):
        raise ProtocolError(f"request {op!r} is not served here")

    # --- requests ---------------------------------------------------------------------------------------------
    def request(self, op: str, args: tuple, kwargs: dict | None = None):
        """Ask the other side to do `op`; serve its requests meanwhile; return its result or raise its exception."""
        if self.broken:
            raise PeerGone(self.broken)
        kwargs = kwargs or {}
        enc = Encoder(self)
        try:
            refs = [enc.ref(a) for a in (*args, *kwargs.values())]
            data = frame(["q", op, enc.nodes, refs, list(kwargs)])
        except (TypeError, ValueError) as e:
            raise Unsendable(str(e)) from None
        self.sock.sendall(data)
        return self.wait_reply(enc.sent)

    def wait_reply(self, sent: dict):
        while True:
            message = self.recv()
            if message[0] == "q":
                self.serve(message)
                continue
            try:
                if message[0] != "r" or len(message) != 5 or type(message[1]) is not bool or \
                        type(message[4]) is not list:
                    raise ProtocolError("expected a reply")
                dec = Decoder(self, message[2], sent)
                value = dec.take(message[3])
                for item in message[4]:
                    if type(item) is not list or len(item) != 2 or item[0] not in sent:
                        raise ProtocolError("bad write-back")
                    write_back(sent[item[0]], dec.take(item[1]))
            except (ProtocolError, TypeError, ValueError) as e:
                raise self.fail(f"the other side broke the protocol: {e}", violation=True) from None
            if message[1]:
                return value
            if not isinstance(value, BaseException):
                raise self.fail("the other side failed with something that is not an exception", violation=True)
            raise value

    def serve(self, message: list) -> None:
        """Answer one request of the other side."""
        dec = None
        try:
            if message[0] != "q" or len(message) != 5 or type(message[1]) is not str or \
                    type(message[3]) is not list or type(message[4]) is not list or \
                    not all(type(k) is str for k in message[4]):
                raise ProtocolError("bad request")
            dec = Decoder(self, message[2])
            values = [dec.take(r) for r in message[3]]
            split = len(values) - len(message[4])
            if split < 0:
                raise ProtocolError("more keyword names than values")
            kwargs = dict(zip(message[4], values[split:], strict=True))
            ok, result = True, self.perform(message[1], values[:split], kwargs)
        except PeerGone:
            raise
        except BaseException as e:  # the request's own failure, whatever it is, goes back as its answer
            ok, result = False, e
        self.reply(ok, result, dec.received if dec else [])

    def reply(self, ok: bool, result, received: list) -> None:
        enc = Encoder(self, received)
        try:
            ref = enc.ref(result)
            backs = [[k, enc.ref(list(obj.items()) if isinstance(obj, dict) else list(obj))]
                     for k, obj in changed(received)]
            data = frame(["r", ok, enc.nodes, ref, backs])
        except Exception as e:  # noqa: BLE001 - a result that cannot travel is the request's failure
            enc = Encoder(self)
            ref = enc.ref(TypeError(f"the answer cannot be sent: {e}"))
            data = frame(["r", False, enc.nodes, ref, []])
        self.sock.sendall(data)


def frame(message: list) -> bytes:
    """One message on the wire: its length, then its JSON."""
    body = _ENCODE(message).encode()
    if len(body) > MAX_MESSAGE:
        raise ValueError(f"a message of {len(body)} bytes is over the {MAX_MESSAGE}-byte limit")
    return struct.pack(">I", len(body)) + body


def write_back(target, contents) -> None:
    """Apply a call's in-place change to the container that was sent (its contents arrive as a list of items)."""
    if type(contents) is not list:
        raise ProtocolError("a write-back is not a list")
    if isinstance(target, list):
        target[:] = contents
    elif isinstance(target, dict):
        if not all(type(p) is tuple and len(p) == 2 for p in contents):
            raise ProtocolError("a dict write-back is not a list of pairs")
        target.clear()
        target.update(contents)
    else:
        target.clear()
        target.update(contents)
