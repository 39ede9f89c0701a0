"""Checkpoints of the seals, kept by a witness in another trust domain (rules.md 5).

- `format.py`: a checkpoint, its digest, signature and JSON (the format, written down);
- `witnesses.py`: what a witness is (note a checkpoint, read the last one, read them
  all), its errors, and `open_witness`, which picks a backend from CASINO_WITNESS;
- `file.py`: the file witness (development, SQLite): one checkpoint a line;
- `jetstream.py`: the NATS JetStream witness (production): one checkpoint a message
  on an append-only stream the service can only publish to and read;
- `check.py`: what `casino audit verify` checks in a witness, whichever the backend.

The server's worker that notes them is `infra/witness.py`; the deployment of the
witness is in docs/witness.md.
"""
