"""Structured JSON logs: every line on stdout is one JSON object.

Our own lines come from structlog; the libraries' (uvicorn's, the event store's,
psycopg's) come through the standard `logging` module, whose root handler renders
them with the same processors (structlog's stdlib integration), so an operator's
log shipper sees one format. Values bound with structlog's contextvars (the
request id, for the whole request: `infra/http/middleware.py`) are in every line,
the libraries' included.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

SHARED_PROCESSORS: list[Any] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]
# Libraries that say too much at info.
QUIET_LOGGERS = {
    "eventsourcing": logging.WARNING,
    # Its "discarding broken connection", one line per pooled connection after every
    # fault: the fault itself is logged once (infra/fault_log.py).
    "psycopg.pool": logging.ERROR,
    "httpx": logging.WARNING,  # a line per request a test client makes
}
# The level configured last: a line below it is dropped by structlog anyway, so a
# caller that makes one at some cost (the request line) can skip making it.
_level = logging.NOTSET


class CurrentStdout(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to sys.stdout as it is at each line (tests swap it), not as it was."""

    @property
    def stream(self) -> TextIO:
        return sys.stdout

    @stream.setter
    def stream(self, _: TextIO) -> None:
        pass


def configure_logging(level: str = "info") -> None:
    global _level
    number = _level = logging.getLevelNamesMapping()[level.upper()]
    structlog.configure(
        processors=[
            *SHARED_PROCESSORS,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(number),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )
    handler = CurrentStdout()
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*SHARED_PROCESSORS, structlog.stdlib.ExtraAdder()],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(sort_keys=True),
            ],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(number)
    for name, quiet in QUIET_LOGGERS.items():
        logging.getLogger(name).setLevel(max(quiet, number))
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        # uvicorn's own handlers would print plain text: let its lines reach the root.
        logging.getLogger(name).handlers = []
        logging.getLogger(name).propagate = True


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(name)
    return logger


def enabled(level: int) -> bool:
    """Whether a line at `level` is written (as configured last)."""
    return level >= _level
