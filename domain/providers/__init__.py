"""Third-party games (rules.md 10): providers run their own games and call the
casino's wallet for every bet and win (the seamless wallet).

- `provider.py`: a registered provider (its sealed secrets) and a game session.
- `signing.py`: the HMAC-SHA256 signature of a call's body, checked in constant time.
- `round.py`: a provider's round for one player, and a bet by its transaction id.
- `steps.py`: what each command does: register, rotate, open a session, bet, win,
  rollback, end a round, lapse an idle one.
"""
