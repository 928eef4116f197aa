"""Every file rmqlb reads or writes goes through here: one rule each way.

Writing (:func:`write_atomic`, :func:`atomic_directory`): the content goes to a temporary
file (or directory) beside the target, is flushed and fsynced, and is renamed over the
target. Whatever happens before the rename (a full disk, ``ulimit -f``, SIGINT, SIGTERM) the
previous file is left as it was and the temporary is removed; after SIGKILL the previous
file is intact too (only a ``.<name>.*.tmp`` may remain).

Reading (:func:`read_input`): an input is a regular file or standard input (``-``).
Anything else (a FIFO, a device such as ``/dev/zero``, a socket, a directory, a symlink
loop) is refused in one line naming what it is, before a byte is read. Reads are bounded:
each kind of input has a size limit (:data:`LIMITS`, in ``docs/limits.md``), raised for a
run by ``--max-input-size`` (:func:`max_input_size`) or ``RMQLB_MAX_INPUT_SIZE``.

JSON (:func:`load_json`): the one reading every loader uses. Strict UTF-8 (a leading BOM
is skipped), no duplicate key in any object, no lone surrogate escape, and nesting deeper
than the interpreter allows is an input error, never a ``RecursionError``. A big text is
decoded by pydantic-core where it accepts it (twice as fast), ``json.loads`` deciding the
rest; the rules are checked on the decoded value either way.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import gc
import json
import os
import re
import shutil
import stat
import sys
from collections.abc import Callable, Iterator
from enum import Enum
from itertools import chain, compress
from pathlib import Path
from typing import Any

from rmqlb.errors import InputError
from rmqlb.ranges import JAVA_LONG

__all__ = [
    "LIMITS",
    "LIMIT_ENV",
    "LIMIT_FLAG",
    "InputKind",
    "JsonError",
    "atomic_directory",
    "decode_text",
    "describe_special",
    "load_json",
    "max_input_size",
    "parse_json",
    "parse_size",
    "read_input",
    "size_limit",
    "write_atomic",
]

MiB = 1024 * 1024


class InputKind(Enum):
    """What an input file holds; each kind has its own size limit."""

    SNAPSHOT = "snapshot"
    CASES = "simulate input"
    CONFIG = "config"
    AUDIT = "snapshot or JSON Lines"


#: The largest input of each kind read by default, in bytes (``docs/limits.md``).
LIMITS: dict[InputKind, int] = {
    InputKind.SNAPSHOT: 1024 * MiB,
    InputKind.CASES: 64 * MiB,
    InputKind.CONFIG: 64 * MiB,
    InputKind.AUDIT: 1024 * MiB,
}

#: The option setting every limit for one run, and the environment variable it defaults to.
LIMIT_FLAG = "--max-input-size"
LIMIT_ENV = "RMQLB_MAX_INPUT_SIZE"
_SIZE = re.compile(r"^\s*(\d{1,20})\s*(?:([KMGT])(i)?(B)?|B)?\s*$", re.IGNORECASE)
_LIMIT: contextvars.ContextVar[int | None] = contextvars.ContextVar("max_input_size", default=None)


def parse_size(text: str) -> int:
    """A size in bytes: plain bytes (``1048576``, ``512B``), ``KiB``/``MiB``/``GiB``/``TiB``
    (powers of 1024, also written ``K``/``M``/``G``/``T``) or ``KB``/``MB``/``GB``/``TB``
    (powers of 1000); raises :class:`ValueError` with the one-line reason.

    >>> parse_size("2GiB"), parse_size("500MB"), parse_size("64M"), parse_size("100")
    (2147483648, 500000000, 67108864, 100)
    """
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"{text[:40]!r} is not a size: expected e.g. 2GiB, 500MB or 1048576")
    number, unit, binary, byte = match.groups()
    exponent = " KMGT".index(unit.upper()) if unit else 0
    size = int(number) * int((1024 if binary or not byte else 1000) ** exponent)
    if size < 1:
        raise ValueError(f"{text[:40]!r}: a size limit must be at least 1 byte")
    return size


@contextlib.contextmanager
def max_input_size(size: int | None) -> Iterator[None]:
    """Within the block every input of any kind may be ``size`` bytes (``None``: the
    defaults, or ``RMQLB_MAX_INPUT_SIZE``); what ``--max-input-size`` sets."""
    token = _LIMIT.set(size)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def size_limit(kind: InputKind) -> int:
    """The size limit of ``kind`` for this run: ``--max-input-size``, else
    ``RMQLB_MAX_INPUT_SIZE``, else :data:`LIMITS`.

    >>> size_limit(InputKind.CASES) == 64 * 1024 * 1024
    True
    """
    given = _LIMIT.get()
    if given is not None:
        return given
    raw = os.environ.get(LIMIT_ENV)
    if not raw:
        return LIMITS[kind]
    try:
        return parse_size(raw)
    except ValueError as exc:
        raise InputError(f"{LIMIT_ENV}: {exc}") from None


def _kind_name(mode: int) -> str | None:
    """What a non-regular file is, in words (``None`` for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def describe_special(path: str, kind: InputKind | None = None) -> str | None:
    """Why ``path`` cannot be read as an input file, or ``None`` when it is a regular file
    (following symlinks): "no such file", "is a FIFO (named pipe)", "is a symlink loop" ...

    With ``kind``, in the words :func:`read_input` refuses it with (a file over the limit of
    ``kind`` too), for a reader that must skip such a file before it opens it (Spark)."""
    try:
        info = os.stat(path)
    except OSError as exc:
        return _os_reason(exc)
    what = _kind_name(info.st_mode)
    if kind is None:
        return None if what is None else f"is {what}"
    return _refusal(what, info.st_size, kind)


def _refusal(what: str | None, size: int, kind: InputKind) -> str | None:
    """Why a file that is ``what`` (``None``: regular) of ``size`` bytes is not read."""
    if what is not None:
        return f"is {what}, expected a {kind.value} file"
    limit = size_limit(kind)
    return _too_big(kind, limit) if size > limit else None


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "is a symlink loop"
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno == errno.EACCES:
        return "permission denied"
    return f"cannot read: {exc.strerror or exc}"


def _human(size: int) -> str:
    if size % MiB == 0:
        return f"{size // MiB} MiB"
    return f"{size:,} bytes"


def _too_big(kind: InputKind, limit: int) -> str:
    return (
        f"larger than the {_human(limit)} limit for a {kind.value} file "
        f"(raise it with {LIMIT_FLAG}, e.g. {LIMIT_FLAG} 4GiB)"
    )


def read_input(path: str, kind: InputKind, *, label: str | None = None) -> bytes:
    """The bytes of input ``path`` (``-``: standard input), at most the limit of ``kind``.

    ``label`` names the input in messages (default: the path; ``<stdin>`` for ``-``).
    Refuses a non-regular file without blocking on it: a FIFO is opened non-blocking and
    checked with ``fstat`` before anything is read.
    """
    limit = size_limit(kind)
    if path == "-":
        name = label or "<stdin>"
        stream = getattr(sys.stdin, "buffer", None)  # a text stream (tests) has no buffer
        data = (
            stream.read(limit + 1)
            if stream is not None
            else sys.stdin.read(limit + 1).encode("utf-8", "surrogateescape")
        )
        if len(data) > limit:
            raise InputError(f"{name}: {_too_big(kind, limit)}")
        return data
    name = label or path
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"{name}: {_os_reason(exc)}") from None
    info = os.fstat(fd)
    why = _refusal(_kind_name(info.st_mode), info.st_size, kind)
    if why is not None:
        os.close(fd)
        raise InputError(f"{name}: {why}")
    with os.fdopen(fd, "rb", buffering=0) as handle:
        os.set_blocking(fd, True)
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise InputError(f"{name}: cannot read: {exc.strerror or exc}") from None
    assert data is not None
    if len(data) > limit:  # the file grew while it was read
        raise InputError(f"{name}: {_too_big(kind, limit)}")
    return data


_BOM = b"\xef\xbb\xbf"
# a \uD800-\uDFFF escape: only a valid pair is accepted (json.loads takes lone ones). A
# text without a backslash has none: that byte is found at memchr speed, where the pattern
# is searched byte by byte (115 M instructions over a 23 MB snapshot, against 2 M).
_SURROGATE_ESCAPE_UTF8 = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_BACKSLASH = b"\\"
# One byte translation of the UTF-8 text answers two questions without a regular expression
# (ten times slower over big snapshots): every ASCII digit becomes "0", so 19 "0"s in a row
# are a number that may not fit in a Java long (2**63 has 19 digits); a quote or JSON
# whitespace becomes '"' and a colon stays, so '":' counts every colon that may follow an
# object key. Every other byte becomes ".". No UTF-8 sequence of a non-ASCII character holds
# an ASCII byte, so the runs and pairs are those of the text.
_SCAN = bytes(
    0x30 if 0x30 <= b <= 0x39 else 0x22 if b in b'" \t\n\r' else b if b == 0x3A else 0x2E
    for b in range(256)
)
_LONG_DIGITS = b"0" * 19
_KEY_COLON = b'":'
# Deeper documents take the checked decoding: the depth at which the interpreter refuses
# one stays exactly as it was.
_FAST_DEPTH = 64


def _scan(text: str) -> bytes:
    """The byte translation of ``text``'s UTF-8 bytes."""
    return text.encode("utf-8", "surrogatepass").translate(_SCAN)


def _has_long_digits(text: str) -> bool:
    """Whether ``text`` holds 19 ASCII digits in a row.

    >>> _has_long_digits('{"a": 1234567890123456789}'), _has_long_digits('[123456789012345678]')
    (True, False)
    """
    return _LONG_DIGITS in _scan(text)


def decode_text(data: bytes, name: str) -> str:
    """``data`` as UTF-8 text (a leading BOM skipped); anything else is one input error."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


class JsonError(ValueError):
    """Why a text is not JSON rmqlb accepts (one line); ``syntax``: not JSON at all, as
    opposed to JSON that breaks a rule (a duplicate key, a lone surrogate, too deep)."""

    def __init__(self, message: str, *, syntax: bool = False) -> None:
        super().__init__(message)
        self.syntax = syntax


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                shown = key if len(key) <= 80 else key[:80] + "…"
                raise JsonError(f"duplicate key {shown!r} in an object")
            seen.add(key)
    return obj


def parse_json(text: str, utf8: bytes | None = None) -> Any:
    """Decode one JSON text by the rules of :func:`load_json`; raises :class:`JsonError`.
    ``utf8``: the text's UTF-8 bytes, when the caller decoded it from them (not made again).

    >>> parse_json('{"a": [1, 2.5, null]}')
    {'a': [1, 2.5, None]}
    >>> parse_json('{"a": 1, "a": 2}')
    Traceback (most recent call last):
    ...
    rmqlb.fileio.JsonError: duplicate key 'a' in an object
    """
    return _parse(text.encode("utf-8", "surrogatepass") if utf8 is None else utf8, lambda: text)


def _parse(utf8: bytes, text_of: Callable[[], str]) -> Any:
    """:func:`parse_json` of the text whose UTF-8 bytes are ``utf8``; ``text_of`` gives the
    text itself, asked for only when the big decoder declines (a big snapshot is never
    decoded to a string)."""
    scanned = utf8.translate(_SCAN)
    long_digits = _LONG_DIGITS in scanned  # searched once: a big text takes ~10 ms
    value = _decode_big(utf8) if len(utf8) >= _BIG_TEXT and not long_digits else None
    text: str | None = None
    if value is None:
        text = text_of()
        value = _decode(text, None)
    # No duplicate key when the decoded objects hold as many entries as the text has key
    # colons at most (a duplicate leaves one entry fewer than the text has keys); else the
    # checked decoding, which names the duplicate (or finds that a string held '":').
    if _members(value, _FAST_DEPTH) != scanned.count(_KEY_COLON):
        value = _decode(text_of() if text is None else text, _unique_object)
    if _BACKSLASH in utf8 and _SURROGATE_ESCAPE_UTF8.search(utf8) is not None:
        _check_surrogates(value)
    if long_digits:
        _check_longs(value)
    return value


#: Texts of at least this many UTF-8 bytes go first to jiter's ``from_json`` (Rust, from
#: the bytes: the text is never made): twice as fast as ``json.loads``, and its import
#: (~1 ms) is paid back from about a megabyte.
_BIG_TEXT = 1 * MiB


def _decode_big(utf8: bytes) -> Any:
    """``json.loads`` of the text whose UTF-8 bytes are ``utf8``, decoded by jiter; ``None``
    where it refuses them (a syntax error, bytes that are not UTF-8, a lone surrogate,
    nesting deeper than it allows) or reads ``null``: ``json.loads`` then decides, and names
    the error.

    Where it accepts a text it gives the values ``json.loads`` gives (tests compare the two
    on edge cases and on generated documents), with each repeated string one object. Texts
    holding 19 digits in a row stay with ``json.loads``: an integer too long for it to
    convert is refused there.
    """
    from jiter import from_json  # noqa: PLC0415  (only big inputs use it)

    try:
        return from_json(utf8, cache_mode="all")
    except ValueError:
        return None


def _decode(text: str, hook: Callable[[list[tuple[str, Any]]], Any] | None) -> Any:
    try:
        return json.loads(text, object_pairs_hook=hook)
    except json.JSONDecodeError as exc:
        where = f"at line {exc.lineno} column {exc.colno}"
        raise JsonError(f"{exc.msg} {where}", syntax=True) from None
    except RecursionError:
        raise JsonError("nested too deeply") from None


_IS_DICT = frozenset({dict}).__contains__
_IS_LIST = frozenset({list}).__contains__


def _split(values: list[Any]) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """The objects and the arrays among decoded ``values``."""
    kinds = set(map(type, values))
    if kinds == {dict}:
        return values, []
    if kinds == {list}:
        return [], values
    types = list(map(type, values))
    dicts = list(compress(values, map(_IS_DICT, types)))
    return dicts, list(compress(values, map(_IS_LIST, types)))


def _members(value: Any, depth: int) -> int:
    """The entries of every object in decoded ``value``, or -1 when it nests deeper than
    ``depth`` objects and arrays: level by level, with the loops in C.

    An object holding only strings, numbers, booleans and nulls is not tracked by CPython's
    garbage collector, so its values need no look. Where that does not hold (another
    interpreter), objects inside it are missed and the count falls short: never too high,
    so a short count only costs the checked decoding.
    """
    total = 0
    dicts, lists = _split([value])
    for _ in range(depth):
        if not dicts and not lists:
            return total
        total += sum(map(len, dicts))
        dicts, lists = _split(
            list(
                chain(
                    chain.from_iterable(map(dict.values, filter(gc.is_tracked, dicts))),
                    chain.from_iterable(lists),
                )
            )
        )
    return -1 if dicts or lists else total


def load_json(data: bytes | str, name: str) -> Any:
    """Decode one JSON document, the same way for every loader: strict UTF-8 (a leading BOM
    skipped), no duplicate key, no lone surrogate, no nesting too deep for the interpreter.

    >>> load_json(b'{"a": 1}', "f.json")
    {'a': 1}
    >>> load_json(b'{"a": 1, "a": 2}', "f.json")
    Traceback (most recent call last):
    ...
    rmqlb.errors.InputError: f.json: invalid JSON: duplicate key 'a' in an object
    """
    decoded: list[str] = []

    def text_of() -> str:  # decoded once, when needed: a big snapshot's bytes may do
        if not decoded:
            decoded.append(decode_text(data, name) if isinstance(data, bytes) else text)
        return decoded[0]

    if isinstance(data, bytes):
        utf8 = data.removeprefix(_BOM)  # what the text is, strictly decoded
    else:
        text = data.removeprefix("\ufeff")
        utf8 = text.encode("utf-8", "surrogatepass")
    try:
        return _parse(utf8, text_of)
    except JsonError as exc:
        if exc.syntax and (not text_of() or text_of().isspace()):
            raise InputError(f"{name}: empty file, expected a JSON document") from None
        raise InputError(f"{name}: invalid JSON: {exc}") from None


def _check_longs(value: Any) -> None:
    """Refuse an integer outside Java's ``long`` (RocketMQ's offsets and times are longs)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is int and item not in JAVA_LONG:
            digits = len(str(abs(item)))
            raise JsonError(f"a {digits}-digit integer is out of range ({JAVA_LONG.describe()})")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _check_surrogates(value: Any) -> None:
    """Refuse a string holding a lone surrogate (the escape of half a pair)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise JsonError("a lone surrogate escape (half a UTF-16 pair)") from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _temporary_name(target: Path) -> str:
    return f".{target.name}."


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, what: str = "") -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8) atomically.

    On any failure the previous file is intact, the temporary removed, and an
    :class:`InputError` names the file (``what``: the option it came from, e.g. ``--junit``).
    """
    target = Path(path)
    label = f"{what} {target}" if what else str(target)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    import tempfile  # noqa: PLC0415  (only where a file is written)

    try:
        fd, temp = tempfile.mkstemp(
            prefix=_temporary_name(target), suffix=".tmp", dir=target.parent or "."
        )
    except OSError as exc:
        raise InputError(f"{label}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, _file_mode(target))
        os.replace(temp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise InputError(f"{label}: cannot write: {exc.strerror or exc}") from None
        raise
    _sync_directory(target.parent)


def _file_mode(target: Path) -> int:
    """The mode an ordinary ``open(target, "w")`` would give (the old file's, if any)."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _sync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory or ".", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike[str], *, what: str = "") -> Iterator[Path]:
    """Build a directory beside ``path`` and rename it over ``path`` when the block ends.

    Yields the temporary directory to fill. On success the previous ``path`` (if any) is
    replaced; on any failure or signal it is left as it was and the temporary removed.
    """
    target = Path(path)
    label = f"{what} {target}" if what else str(target)
    if target.exists() and not target.is_dir():
        raise InputError(f"{label}: exists and is not a directory")
    parent = target.parent
    import tempfile  # noqa: PLC0415

    try:
        parent.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=_temporary_name(target), suffix=".tmp", dir=parent))
    except OSError as exc:
        raise InputError(f"{label}: cannot write: {exc.strerror or exc}") from None
    old: Path | None = None
    try:
        yield temp
        os.chmod(temp, _file_mode(target) | 0o111 & ~_umask())
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=_temporary_name(target), suffix=".old", dir=parent))
            os.replace(target, old / "previous")
        os.replace(temp, target)
    except BaseException as exc:
        if old is not None and not target.exists():
            with contextlib.suppress(OSError):
                os.replace(old / "previous", target)
        shutil.rmtree(temp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        if isinstance(exc, OSError):
            raise InputError(f"{label}: cannot write: {exc.strerror or exc}") from None
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    _sync_directory(parent)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask
