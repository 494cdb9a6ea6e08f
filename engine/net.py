"""One bounded HTTP call: a JSON POST to a server Memex does not control.

Every outbound request of the engine (the OpenAI-compatible embedder, the HTTP re-ranker)
goes through `post_json`, which holds it to:

- a total deadline for the whole request (connect, send, headers, body), not per read: a
  watchdog shuts the socket down when it passes, so a server trickling a byte at a time
  cannot hold the caller past it;
- a cap on the bytes read of the answer (`max_bytes`; `ERROR_BYTES` of an error answer):
  an endless or huge body is cut off, never kept;
- no redirects: a 3xx is an answer like any other status, so what is sent (a key, the
  user's text) goes to the configured host only;
- no compression (`Accept-Encoding: identity`), so no decompression bomb.

`parse_json` reads an answer with a nesting limit (`MAX_DEPTH`, checked first by one linear
pass in bounded steps, engine/jsonscan.py), under the caller's deadline, and without the NaN
and Infinity literals; `finite_number` is the check every score and vector value passes.

The standard library's `http.client`, because it hands over the socket the watchdog needs;
httpx has per-operation timeouts and no size cap, which would need the same watchdog and
more. Proxies named by the environment (`https_proxy`, `no_proxy`, …) are used for remote
hosts, never for this machine. Name resolution is the one step the deadline cannot cut.
"""

from __future__ import annotations

import base64
import http.client
import json
import math
import socket
import threading
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit

from engine import jsonscan

MAX_DEPTH = 32  # JSON nesting; every answer Memex reads needs 4
ERROR_BYTES = 16 * 1024  # read of an error answer
READ_BYTES = 64 * 1024  # one read
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})


class NetError(Exception):
    """The request got no usable answer; the message is one clause ("no complete answer
    within 5 s")."""

    retryable = False


class Unreachable(NetError):
    """Refused, reset, closed early, no route, a TLS failure: worth another try."""

    retryable = True


class TimedOut(NetError):
    """The deadline passed before the whole answer arrived."""

    retryable = True


class TooLarge(NetError):
    """The answer is longer than the cap."""


class BadAnswer(NetError):
    """Not HTTP, not JSON, nested too deep, or a NaN/Infinity literal."""


@dataclass(frozen=True)
class Reply:
    """A status, its headers (lower-case names) and the body read (at most the cap)."""

    status: int
    headers: Mapping[str, str]
    body: bytes


def is_local_url(url: str) -> bool:
    """True for a server on this machine."""
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        return False
    return host in LOCAL_HOSTS or host.endswith(".localhost")


def http_url(url: str) -> SplitResult | None:
    """`url` split, if it is an http(s) URL with a host; else None."""
    try:
        parts = urlsplit(url.strip())
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        return None
    return parts if ok else None


def post_json(
    url: str, payload: Any, *, headers: Mapping[str, str], deadline: float, max_bytes: int
) -> Reply:
    """POST `payload` as JSON to `url`; the reply within `deadline` seconds in all, its body
    at most `max_bytes` (`ERROR_BYTES` for a status ≥ 300). NetError otherwise."""
    target = http_url(url)
    if target is None:
        raise BadAnswer(f"{url!r} is not an http(s) URL")
    deadline = max(deadline, 0.001)  # a socket timeout of 0 would mean non-blocking
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8", "replace")  # lone surrogates
    sent = {"Content-Type": "application/json", "Accept": "application/json", **headers}
    watchdog = _Watchdog(deadline)
    conn = _connection(target, deadline, watchdog)
    try:
        conn.request("POST", _request_target(target, conn), body=data, headers=sent)
        response = conn.getresponse()
        cap = max_bytes if response.status < 300 else ERROR_BYTES
        body = _read_capped(response, cap, response.status < 300)
        reply = Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, body)
    except NetError:
        raise
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise _failure(exc, watchdog.fired, deadline) from None
    finally:
        watchdog.stop()
        conn.close()
    if watchdog.fired:  # the answer may have been cut by the shutdown
        raise TimedOut(f"no complete answer within {round(deadline, 1):g} s")
    return reply


def _failure(exc: BaseException, fired: bool, deadline: float) -> NetError:
    """What a failed exchange was, in one clause."""
    if fired or isinstance(exc, TimeoutError):
        return TimedOut(f"no complete answer within {round(deadline, 1):g} s")
    if isinstance(exc, OSError | http.client.RemoteDisconnected | http.client.IncompleteRead):
        return Unreachable(type(exc).__name__)
    return BadAnswer(f"a malformed HTTP answer ({type(exc).__name__})")


def _read_capped(response: http.client.HTTPResponse, cap: int, strict: bool) -> bytes:
    """The body, at most `cap` bytes: TooLarge past it when `strict` (an answer to use),
    else the first `cap` bytes (an error answer, read only to be described)."""
    declared = response.getheader("content-length") or ""
    if strict and declared.strip().isdigit() and int(declared) > cap:
        raise TooLarge(f"an answer of {int(declared):,} bytes (at most {cap:,} are read)")
    pieces: list[bytes] = []
    total = 0
    while total <= cap:
        piece = response.read(min(READ_BYTES, cap + 1 - total))
        if not piece:
            break
        pieces.append(piece)
        total += len(piece)
    if total > cap and strict:
        raise TooLarge(f"an answer longer than {cap:,} bytes")
    return b"".join(pieces)[:cap]


def _connection(
    target: SplitResult, deadline: float, watchdog: _Watchdog
) -> http.client.HTTPConnection:
    """A connection to the target, or to the proxy the environment names for it, whose
    socket the watchdog holds from the moment it exists."""
    host, port, https = target.hostname or "", target.port, target.scheme == "https"
    proxy = _proxy_for(target)
    if proxy is None:
        conn: http.client.HTTPConnection = (
            http.client.HTTPSConnection(host, port, timeout=deadline)
            if https
            else http.client.HTTPConnection(host, port, timeout=deadline)
        )
    else:
        proxy_host, proxy_port = proxy.hostname or "", proxy.port or 80
        if https:
            conn = http.client.HTTPSConnection(proxy_host, proxy_port, timeout=deadline)
            conn.set_tunnel(host, port, headers=_proxy_auth(proxy))
        else:
            conn = http.client.HTTPConnection(proxy_host, proxy_port, timeout=deadline)
    # http.client makes its socket through this attribute: the watchdog sees it at once,
    # so the TLS handshake and a proxy's CONNECT answer are under the deadline too.
    setattr(conn, "_create_connection", watchdog.connector())  # noqa: B010
    return conn


def _request_target(target: SplitResult, conn: http.client.HTTPConnection) -> str:
    """The path and query; the whole URL when a plain-HTTP proxy carries the request."""
    path = (target.path or "/") + (f"?{target.query}" if target.query else "")
    direct = conn.host == (target.hostname or "") or target.scheme == "https"
    return path if direct else target.geturl()


def _proxy_for(target: SplitResult) -> SplitResult | None:
    """The proxy the environment names for this target; never one for this machine."""
    host = target.hostname or ""
    if is_local_url(target.geturl()) or urllib.request.proxy_bypass(host):
        return None
    named = urllib.request.getproxies().get(target.scheme)
    proxy = http_url(named if "://" in (named or "") else f"http://{named}") if named else None
    return proxy


def _proxy_auth(proxy: SplitResult) -> dict[str, str]:
    """A Proxy-Authorization header for a proxy URL with credentials."""
    if proxy.username is None:
        return {}
    pair = f"{unquote(proxy.username)}:{unquote(proxy.password or '')}".encode()
    return {"Proxy-Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}


class _Watchdog:
    """Shuts the connection's socket down when the deadline passes: whatever read or write
    is blocked then returns at once. Held by file descriptor, which a TLS wrap keeps."""

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def connector(self) -> Any:
        def create(address: Any, timeout: Any = None, source: Any = None) -> socket.socket:
            sock = socket.create_connection(address, timeout, source)
            with self._lock:
                self._fd = sock.fileno()
                fired = self.fired
            if fired:
                _shutdown(sock.fileno())
            return sock

        return create

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            if self._fd is not None:
                _shutdown(self._fd)

    def stop(self) -> None:
        """Before the socket is closed (its descriptor may then be reused)."""
        self._timer.cancel()
        with self._lock:
            self._fd = None


def _shutdown(fd: int) -> None:
    """Shut down the connection behind `fd` (through a duplicate: shutdown acts on the
    connection, not the descriptor, and the duplicate is ours to close)."""
    try:
        with socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM) as dup:
            dup.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed


def parse_json(raw: bytes, *, ends: float | None = None) -> Any:
    """The JSON value of `raw`; BadAnswer if it is not JSON, is nested deeper than
    `MAX_DEPTH` or holds NaN/Infinity (JSON has no such numbers); TimedOut if the clock
    (`time.monotonic`) passes `ends` while it is read."""
    try:
        shape = jsonscan.scan(raw, limit=MAX_DEPTH, ends=ends)
    except jsonscan.DeadlinePassed:
        raise TimedOut("no answer read within the deadline") from None
    if shape.deepest > MAX_DEPTH:
        raise BadAnswer(f"an answer nested deeper than {MAX_DEPTH} levels")
    if not shape.closed:
        raise BadAnswer("an answer that is not JSON (a string never closed)")
    if ends is not None and time.monotonic() > ends:
        raise TimedOut("no answer read within the deadline")
    try:  # linear once the scan has bounded the nesting
        return json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise BadAnswer("an answer that is not JSON") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def finite_number(value: Any) -> float | None:
    """`value` as a float if it is a JSON number (not a bool) and finite; else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer of hundreds of digits
        return None
    return number if math.isfinite(number) else None


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait (`retry-after-ms`, else `retry-after` in seconds),
    or None; a value that is not a finite number counts as not said."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            seconds = float(headers.get(name, "")) / divisor
        except ValueError:
            continue
        if math.isfinite(seconds):
            return max(0.0, seconds)
    return None


def error_text(reply: Reply, limit: int = 200) -> str:
    """What an error answer says, one printable line of at most `limit` characters: its
    JSON `error` / `message` (`error.message` too), else its text."""
    try:
        said: Any = parse_json(reply.body)
    except BadAnswer:
        said = reply.body.decode("utf-8", errors="replace")
    for field in ("error", "message"):
        if isinstance(said, dict) and field in said:
            said = said[field]
    if isinstance(said, dict):
        said = said.get("message", "")
    text = said if isinstance(said, str) else reply.body.decode("utf-8", errors="replace")
    return _one_line(text)[:limit]


def _one_line(text: str) -> str:
    """`text` with control characters (terminal escapes, line breaks) as spaces, squeezed."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())
