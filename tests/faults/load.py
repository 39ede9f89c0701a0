"""A load of commands as RULES.md 8 tells clients to send them: each logical command
has one Idempotency-Key, and is sent again with that key on a 503, a lost connection
or a timeout, until an answer that is not 503 comes (or the load gives up on it).

Every client works a player of its own: deposits, withdrawals, and now and then a
house baccarat round (open, bet, deal). What each command was told is kept, so the
checks afterwards can tell what was acknowledged.
"""

from __future__ import annotations

import collections
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx

SERVICE = {"Authorization": "Bearer dev-service"}
OPENING_BALANCE = "1000.00"
ROUND_SHARE = 0.15  # of the commands a client starts: a baccarat round, three commands
DEPOSIT_SHARE = 0.55  # of the rest: deposits; the others are withdrawals
# Between one command and the next of a client: a busy upstream, not a flood that
# leaves the test machine's two cores no time for the server's own timing.
THINK_SECONDS = 0.02
RETRY_PAUSE_SECONDS = 0.1  # when a 503 names no Retry-After, or the connection failed
RETRY_PAUSE_SECONDS_MAX = 1.0  # a Retry-After is honoured up to this
# What the request deadline leaves for the network and a loaded test machine before an
# answer counts as late.
LATE_SECONDS = 2.0


def cents(amount: str) -> int:
    return int(Decimal(amount) * 100)


@dataclass
class Command:
    """One logical command and everything it was told, in order."""

    kind: str  # register, deposit, withdrawal, round, bet, deal
    player: str
    path: str
    body: dict[str, Any] | None
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    tries: list[str] = field(default_factory=list)  # each try's status, or its error
    status: int | None = None  # of the answer that ended it; None: no answer yet
    answer: Any = None

    @property
    def acknowledged(self) -> bool:
        return self.status in (200, 201)

    @property
    def retries(self) -> int:
        return max(len(self.tries) - 1, 0)

    def describe(self) -> str:
        return f"{self.kind} {self.path} {self.body} (key {self.key}): {self.tries}"


@dataclass
class Tally:
    """What every client saw, shared by the clients' threads."""

    deadline_seconds: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    commands: list[Command] = field(default_factory=list)
    without_request_id: int = 0
    slow: list[str] = field(default_factory=list)  # answered late, or not at all in time
    errors: list[str] = field(default_factory=list)  # answers 5xx other than 503
    unavailable: collections.Counter[str] = field(default_factory=collections.Counter)  # 503s
    refused: collections.Counter[str] = field(default_factory=collections.Counter)  # 4xx

    def note(self, command: Command, response: httpx.Response | None, seconds: float) -> None:
        with self.lock:
            if response is not None:
                self.without_request_id += "x-request-id" not in response.headers
                if response.status_code == 503:
                    self.unavailable[_code(response)] += 1
                elif response.status_code >= 500:
                    self.errors.append(f"{command.describe()}: {response.text[:300]}")
                elif response.status_code >= 400:
                    self.refused[_code(response)] += 1
            # RULES.md 8: an answer, a 503 included, comes within the request deadline.
            if seconds > self.deadline_seconds + LATE_SECONDS:
                got = response.status_code if response is not None else "no answer"
                self.slow.append(f"{command.kind} {command.path}: {got} after {seconds:.1f} s")

    def sent(self, command: Command) -> None:
        with self.lock:
            self.commands.append(command)

    def acknowledged(self) -> list[Command]:
        with self.lock:
            return [command for command in self.commands if command.acknowledged]


class Client:
    """One HTTP connection that sends commands until each is answered."""

    def __init__(self, base: str, tally: Tally) -> None:
        # Long enough to see how late a late answer is; short enough to retry a hang.
        timeout = tally.deadline_seconds * 5
        self.http = httpx.Client(base_url=base, timeout=timeout, headers=SERVICE)
        self.tally = tally
        self.give_up_at = float("inf")

    def close(self) -> None:
        self.http.close()

    def send(self, command: Command) -> bool:
        """Send `command` until it gets an answer that is not 503; whether it got one."""
        if not command.tries:
            self.tally.sent(command)
        while time.monotonic() < self.give_up_at:
            response = self._try(command)
            if response is not None and response.status_code != 503:
                command.status, command.answer = response.status_code, _json(response)
                return True
            time.sleep(_pause(response))
        return False

    def _try(self, command: Command) -> httpx.Response | None:
        started = time.monotonic()
        headers = {"Idempotency-Key": command.key}
        try:
            response = self.http.post(command.path, json=command.body, headers=headers)
        except httpx.TransportError as error:  # a timeout or a lost connection: retried
            command.tries.append(type(error).__name__)
            self.tally.note(command, None, time.monotonic() - started)
            return None
        command.tries.append(str(response.status_code))
        self.tally.note(command, response, time.monotonic() - started)
        return response


def _pause(response: httpx.Response | None) -> float:
    if response is None:
        return RETRY_PAUSE_SECONDS
    try:
        asked = float(response.headers.get("retry-after", RETRY_PAUSE_SECONDS))
    except ValueError:
        asked = RETRY_PAUSE_SECONDS
    return min(max(asked, 0.0), RETRY_PAUSE_SECONDS_MAX)


def _code(response: httpx.Response) -> str:
    answer = _json(response)
    return str(answer.get("code")) if isinstance(answer, dict) else "(no problem body)"


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


class Load:
    """`clients` threads, each with a player of its own, sending commands until stopped."""

    def __init__(self, base: str, tally: Tally, clients: int, name: str) -> None:
        self.tally = tally
        self.players = [f"{name}-{index}" for index in range(clients)]
        self.clients = [Client(base, tally) for _ in self.players]
        self.stopping = threading.Event()
        self.ready = threading.Barrier(clients + 1)  # every player opened and funded
        self.threads = [
            threading.Thread(target=self._run, args=(client, player, index), daemon=True)
            for index, (client, player) in enumerate(zip(self.clients, self.players, strict=True))
        ]
        self.problems: list[str] = []

    def start(self, seconds_max: float = 60) -> None:
        """Start every client, and return once each has its player funded."""
        for thread in self.threads:
            thread.start()
        self.ready.wait(timeout=seconds_max)

    def stop(self, grace_seconds: float) -> None:
        """Stop starting commands; the ones in flight get `grace_seconds` to be answered."""
        self.stopping.set()
        for client in self.clients:
            client.give_up_at = time.monotonic() + grace_seconds
        for thread in self.threads:
            thread.join(timeout=grace_seconds + 30)
            assert not thread.is_alive(), "a client still runs after its grace"
        for client in self.clients:
            client.close()

    def _run(self, client: Client, player: str, index: int) -> None:
        rng = random.Random(index)
        try:
            self._open(client, player)
            self.ready.wait()
            while not self.stopping.wait(THINK_SECONDS):
                self._one_command(client, player, rng)
        except Exception as error:  # a bug of the client: the case must fail, not hang
            self.problems.append(f"client {player}: {error!r}")
            self.ready.abort()

    def _open(self, client: Client, player: str) -> None:
        opening = {"player_id": player, "display_name": player}
        client.send(Command("register", player, "/v1/players", opening))
        body = {"mode": "real", "amount": OPENING_BALANCE}
        client.send(Command("deposit", player, f"/v1/players/{player}/deposits", body))

    def _one_command(self, client: Client, player: str, rng: random.Random) -> None:
        if rng.random() < ROUND_SHARE:
            play_a_round(client, player, rng)
            return
        kind = "deposit" if rng.random() < DEPOSIT_SHARE else "withdrawal"
        amount = f"{rng.randint(1, 40)}.{rng.randint(0, 99):02d}"
        path = f"/v1/players/{player}/{kind}s"
        client.send(Command(kind, player, path, {"mode": "real", "amount": amount}))


def play_a_round(client: Client, player: str, rng: random.Random) -> None:
    """A house baccarat round: open it, bet, deal; stop at the first refusal."""
    opened = Command("round", player, "/v1/baccarat/rounds", {"player_id": player, "mode": "real"})
    if not (client.send(opened) and opened.acknowledged):
        return
    rounds = f"/v1/rounds/{opened.answer['round_id']}"
    spot = rng.choice(["player", "banker", "tie"])
    bet = Command("bet", player, f"{rounds}/bets", {"spot": spot, "amount": "5.00"})
    if client.send(bet) and bet.acknowledged:
        client.send(Command("deal", player, f"{rounds}/deal", None))
