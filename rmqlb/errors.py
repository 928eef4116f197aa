"""The rmqlb exception tree. Every error the CLI reports derives from :class:`RmqlbError`
and carries the exit code the CLI boundary applies (design §3)::

    RmqlbError                      exit 2 unless said otherwise
    ├── InputError                  bad file, flag or spec (exit 2)
    │   ├── AllocationError         the Java strategy would throw for this input (exit 2)
    │   └── GroupNotFound           a named consumer group exists nowhere (exit 2)
    ├── ClusterUnreachable          no NameServer answered: no data at all (exit 3)
    └── ProtocolError               a peer broke the remoting protocol (exit 3)
        └── FrameError              a frame could not be decoded

Lower-level exceptions (``OSError``, ``json.JSONDecodeError`` ...) are translated at the
boundary where they occur with ``raise InputError(...) from exc``.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes (design §3)."""

    OK = 0
    FINDINGS = 1
    BAD_INPUT = 2
    UNREACHABLE = 3
    PARTIAL = 4


class RmqlbError(Exception):
    """Root of every error rmqlb reports as a one-line message."""

    exit_code: ExitCode = ExitCode.BAD_INPUT


class InputError(RmqlbError):
    """A file, flag or specification the user gave cannot be used."""


class AllocationError(InputError):
    """The Java allocation strategy would throw for this input.

    ``exception`` is the Java exception class Java would raise, ``message`` its message,
    word for word (``mqAll is null or mqAll empty``).
    """

    def __init__(self, message: str, exception: str = "java.lang.IllegalArgumentException"):
        super().__init__(message)
        self.message = message
        self.exception = exception


class GroupNotFound(InputError):
    """A consumer group named by the user exists nowhere: no subscription config, no online
    client, no committed offset (on the cluster), or not in the snapshot file.

    ``group`` is the name asked for, ``suggestion`` the closest known name (or ``None``).
    """

    def __init__(self, message: str, group: str, suggestion: str | None = None) -> None:
        super().__init__(message)
        self.group = group
        self.suggestion = suggestion


class ClusterUnreachable(RmqlbError):
    """No NameServer (or no broker at all) answered: there is no data to report."""

    exit_code = ExitCode.UNREACHABLE


class ProtocolError(RmqlbError):
    """A peer sent something that is not valid RocketMQ remoting protocol."""

    exit_code = ExitCode.UNREACHABLE


class FrameError(ProtocolError):
    """A frame could not be decoded (bad length, bad header, oversized)."""


class Terminated(BaseException):
    """SIGTERM (or SIGINT, as :class:`KeyboardInterrupt` is for it) ended the run: the CLI
    boundary prints ``rmqlb: interrupted`` and exits ``128 + signum``. A ``BaseException``,
    like ``KeyboardInterrupt``, so no ``except Exception`` swallows it on the way up."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
