"""The figures of each fault case, kept for the table printed at the end of the run
(tests/faults/conftest.py), for the note of issue 36."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Figures:
    case: str
    faults: int = 0  # injections: kills of connections, restarts, stalls, kills of processes
    backends_ended: int = 0  # connections pg_terminate_backend ended
    acknowledged: int = 0  # commands answered 2xx
    retried: int = 0  # sends of a command after its first
    lost: int = 0  # acknowledged, not in the log
    doubled: int = 0  # in the log twice, or applied without an answer that says so
    unavailable: int = 0  # answers 503 (the clients sent those commands again)
    errors: int = 0  # answers 5xx other than 503: 500 internal_error, say
    late: int = 0  # answers later than the deadline allows, and timeouts
    without_request_id: int = 0  # answers without X-Request-ID
    ready_seconds: float | None = None  # from the fault's end until readiness said 200
    ready_slowest: float = 0.0  # readiness's slowest answer while the fault lasted
    readiness: dict[str, int] = field(default_factory=dict)  # its answers in the fault
    verify: str = "-"
    log_lines: int = 0  # the server's warnings and errors, the flood of issue 36
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    log_summary: list[str] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        return "passed" if not self.problems else f"FAILED ({len(self.problems)})"

    def report(self) -> str:
        """What went wrong, what was seen, and the end of the server's log."""
        lines = [f"{self.case}: {len(self.problems)} problems", *self.problems[:30]]
        lines += [f"note: {note}" for note in self.notes]
        lines.append(f"readiness in the fault: {self.readiness}")
        lines.append(f"the server's log, {self.log_lines} lines, by kind:")
        return "\n".join(lines + self.log_summary)


COLUMNS = (
    ("case", "case"),
    ("faults", "faults"),
    ("ended", "backends_ended"),
    ("acked", "acknowledged"),
    ("retried", "retried"),
    ("lost", "lost"),
    ("doubled", "doubled"),
    ("503", "unavailable"),
    ("5xx", "errors"),
    ("late", "late"),
    ("no req-id", "without_request_id"),
    ("ready s", "ready_seconds"),
    ("ready max s", "ready_slowest"),
    ("verify", "verify"),
    ("log lines", "log_lines"),
    ("outcome", "outcome"),
)


def table(rows: list[Figures]) -> list[str]:
    """A Markdown table, to paste into a note as it is."""
    cells = [[title for title, _ in COLUMNS]]
    cells += [[_cell(getattr(row, name)) for _, name in COLUMNS] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return lines


def _cell(value: object) -> str:
    if value is None:
        return "never"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)
