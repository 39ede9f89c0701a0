"""Content negotiation for answers that come in more than JSON (the reports' CSV)."""

from __future__ import annotations

from fastapi import Request, Response

CSV = "text/csv"
ACCEPT_RANGES_MAX = 32  # media ranges of one Accept header looked at; the rest ignored


def wants_csv(request: Request) -> bool:
    """CSV when the caller's Accept names text/csv and prefers it to JSON: by its
    quality, or, at equal quality, by naming it first. Anything else gets JSON."""
    qualities: dict[str, tuple[float, int]] = {}
    ranges = request.headers.get("accept", "").lower().split(",")[:ACCEPT_RANGES_MAX]
    for order, part in enumerate(ranges):
        media, *parameters = (piece.strip() for piece in part.split(";"))
        quality = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        qualities.setdefault(media, (quality, -order))
    csv = qualities.get(CSV, (0.0, 0))
    json = qualities.get("application/json", qualities.get("*/*", (0.0, 0)))
    return csv[0] > 0 and csv > json


def csv_answer(text: str) -> Response:
    return Response(text, media_type=f"{CSV}; charset=utf-8")
