"""Copy a witness's checkpoints to a file that `casino audit verify --witness FILE`
reads: for an auditor's archive of the stream, or to verify away from its server.

    python -m infra.checkpoints.export nats://auditor:password@host:4222/STREAM -o witness.jsonl

Each record is written as the witness keeps it, one a line, in the witness's order
(a record holding a line break, which no checkpoint does, has it made a space).
Exit status 0 once every record is written; 2 when the witness cannot be read.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO

import typer

from infra.checkpoints.witnesses import Witness, WitnessFailure, open_witness


def export(witness: Witness, out: BinaryIO) -> int:
    """Write every record of `witness` to `out`, one a line; how many."""
    written = 0
    for entry in witness.entries():
        out.write(entry.data.replace(b"\n", b" ") + b"\n")
        written += 1
    return written


def main(
    witness: str = typer.Argument(
        ..., help="a witness file, or nats://user:password@host:port/STREAM"
    ),
    output: Path | None = typer.Option(None, "--output", "-o", help="a file, not stdout"),
) -> None:
    """Copy a witness's checkpoints, one a line."""
    try:
        source = open_witness(witness)
    except ValueError as error:
        typer.echo(f"WITNESS: {error}", err=True)
        raise typer.Exit(2) from None
    try:
        with output.open("wb") if output else open(sys.stdout.fileno(), "wb", closefd=False) as out:
            written = export(source, out)
    except WitnessFailure as error:
        typer.echo(str(error), err=True)
        raise typer.Exit(2) from None
    finally:
        source.close()
    typer.echo(f"{written} records copied from {source.where}", err=True)


if __name__ == "__main__":
    typer.run(main)
