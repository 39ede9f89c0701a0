"""The file witness: one checkpoint a line (infra/checkpoints/format.py), appended.

For development and for SQLite: a file on the service's own host is in the
insider's reach, so production refuses it (infra/config.py). It chains and counts
as the stream does, so verify reads both alike. Appends take an exclusive lock on
the file and first check that its last line is still the one read last, so two
server processes never fork the chain.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from infra.checkpoints.format import RECORD_BYTES_MAX, Checkpoint
from infra.checkpoints.witnesses import Entry, WitnessMoved, WitnessUnavailable, entry_of

TAIL_BYTES = 4 * RECORD_BYTES_MAX  # how far back from the end the last line is looked for


class FileWitness:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self._last_line: bytes | None = None  # as read by `last`; None: not read yet

    def last(self) -> Entry | None:
        try:
            with self.path.open("rb") as file:
                line = _last_line(file)
        except (FileNotFoundError, NotADirectoryError):
            line = b""  # none yet: `note` makes the file
        except OSError as error:
            raise WitnessUnavailable(self._cannot("read", error)) from None
        self._last_line = line
        return entry_of("the last line", line) if line else None

    def note(self, checkpoint: Checkpoint) -> str:
        assert self._last_line is not None, "read the witness's last line first"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+b") as file:
                fcntl.flock(file, fcntl.LOCK_EX)  # released when the file closes
                self._append(file, checkpoint.record())
        except OSError as error:
            raise WitnessUnavailable(self._cannot("write", error)) from None
        return f"{self.path}, at its end"

    def _append(self, file: BinaryIO, line: bytes) -> None:
        if _last_line(file) != self._last_line:
            self._last_line = None
            raise WitnessMoved(f"{self.path} was written to by something else since it was read")
        file.seek(0, os.SEEK_END)
        if file.tell() and not _ends_a_line(file):
            file.write(b"\n")  # a line torn by a crash stays whole as it was, not glued
        file.write(line + b"\n")
        file.flush()
        os.fsync(file.fileno())  # on disk before the service goes on
        self._last_line = line

    def entries(self) -> Iterator[Entry]:
        try:
            with self.path.open("rb") as file:
                for number, line in _lines(file):
                    yield entry_of(f"line {number}", line)
        except OSError as error:
            raise WitnessUnavailable(self._cannot("read", error)) from None

    def close(self) -> None:
        pass

    def _cannot(self, what: str, error: OSError) -> str:
        return f"the witness cannot {what} {self.path}: {error.strerror or error}"


def _last_line(file: BinaryIO) -> bytes:
    """The file's last non-blank line, without its newline (b"" for none); of a line
    longer than TAIL_BYTES, its end (enough to tell it from another)."""
    end = file.seek(0, os.SEEK_END)
    while end > 0:  # further back only past a tail of blank lines
        start = max(0, end - TAIL_BYTES)
        file.seek(start)
        lines = [line for line in file.read(end - start).split(b"\n") if line.strip()]
        if lines:
            return lines[-1]
        end = start
    return b""


def _ends_a_line(file: BinaryIO) -> bool:
    file.seek(-1, os.SEEK_END)
    ended = file.read(1) == b"\n"
    file.seek(0, os.SEEK_END)
    return ended


def _lines(file: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """The non-empty lines and their numbers; one longer than a record is cut short
    (it is named as no checkpoint), so no line is ever held whole in memory."""
    for number, line in enumerate(_bounded_lines(file), start=1):
        if line.strip():
            yield number, line.rstrip(b"\n")


def _bounded_lines(file: BinaryIO) -> Iterator[bytes]:
    while line := file.readline(RECORD_BYTES_MAX + 1):
        if len(line) > RECORD_BYTES_MAX and not line.endswith(b"\n"):
            while (rest := file.readline(RECORD_BYTES_MAX)) and not rest.endswith(b"\n"):
                pass  # the rest of an overlong line
        yield line
