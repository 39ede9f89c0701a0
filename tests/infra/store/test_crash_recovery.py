"""Crash safety (issue 7, rules.md 4): killing `casino serve` with SIGKILL at any moment
loses no acknowledged command and leaves no half-applied one.

The server runs as a real process of its own on one store (a SQLite file, or a fresh
PostgreSQL schema), driven by concurrent clients - house baccarat, P2P baccarat,
blackjack, coups at an American table, deposits and withdrawals, every request with an
Idempotency-Key - and is
killed with SIGKILL at a random moment while they are in flight, then restarted on the
same store. After each restart:

- every request that got an answer, sent again with its key, gets that same answer,
  marked `Idempotent-Replayed: true`;
- every request that got none, sent again with its key, succeeds (replayed if the
  first try had landed), and a second retry is a replay: it happened exactly once;
- every round reads exactly as the last answer about it said (nothing acknowledged is
  missing, nothing unacknowledged half-done);
- the books reconcile, as an auditor would check them: each wallet's balance is its
  deposits, withdrawals and round results as the answers reported them; its ledger runs
  entry by entry to that balance and holds each transaction and each round result once;
  its hold is exactly the stakes of its rounds still open (no orphaned hold); the
  liability report agrees; the trial balance holds those accounts, the cashier, the
  bank and the commission as the answers imply, and totals 0.00;
- `casino audit verify` exits 0.

After the last kill the server is restarted with a one-second idle timeout: every round
left open is ended from the store (voided, or a blackjack hand in play finished with the
house defaults), every hold goes back to zero, and the books reconcile again.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

import httpx

from tests.conftest import StoreFactory

CYCLES = 3  # kills under traffic per store, then one more before the idle-timeout restart
TRAFFIC_SECONDS = (1.0, 2.5)  # how long the clients run before the kill (uniform)
FIRST_ANSWER_SECONDS_MAX = 30.0
SERVER_START_SECONDS_MAX = 60
ROUNDS_END_SECONDS_MAX = 60
CONCURRENT_UPDATE_RETRIES = 30
CHECKERS = 6  # threads re-sending and reading after a restart
MODES = ("real", "play")
OVER = ("settled", "voided")
KEYS = {"service": "dev-service", "operator": "dev-operator", "auditor": "dev-auditor"}
# The installed console script (it execs Python: its pid is the server's own), else the module.
_SCRIPT = Path(sys.executable).with_name("casino")
CASINO = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "infra.cli"]


T = TypeVar("T")
R = TypeVar("R")


def cents(amount: str) -> int:
    return int(Decimal(amount) * 100)


def auth(role: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[role]}"}


def json_or_text(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


# The server process.


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Server:
    """`casino serve` as deployed: a process of its own, restartable on the same store."""

    def __init__(self, env: dict[str, str], workdir: Path) -> None:
        self.env = env
        self.workdir = workdir  # no stray .env is read from here
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / "server.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self, **settings: str) -> None:
        assert self.process is None
        self.starts += 1
        command = [*CASINO, "serve", "--port", str(self.port)]
        with self.log_path.open("ab") as log:
            log.write(f"--- start {self.starts} {settings}\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                command,
                env={**self.env, **settings},
                cwd=self.workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + SERVER_START_SECONDS_MAX
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"the server exited:\n{self.log_tail()}"
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.base}/openapi.json", timeout=5).status_code == 200:
                    return
            time.sleep(0.05)
        raise AssertionError(f"the server did not answer within {SERVER_START_SECONDS_MAX} s")

    def kill(self) -> None:
        """SIGKILL the server process itself; nothing may answer on its port afterwards
        (a wrapper killed in its place would leave the real server serving)."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        assert self.process.wait(timeout=30) == -signal.SIGKILL
        self.process = None
        try:
            httpx.get(f"{self.base}/openapi.json", timeout=5)
        except httpx.ConnectError:
            return
        raise AssertionError("something still answers on the killed server's port")

    def close(self) -> None:
        """Stop whatever still runs (a failed test included)."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)
        self.process = None

    def log_tail(self, lines: int = 60) -> str:
        """The end of the server's output, without the lines of requests that went well."""
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        kept = [
            line
            for line in text.splitlines()
            if '"event": "request"' not in line or '"status": 5' in line
        ]
        return "\n".join(kept[-lines:])

    def audit_verify(self) -> None:
        result = subprocess.run(
            [*CASINO, "audit", "verify"],
            env=self.env,
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert result.returncode == 0, (
            f"casino audit verify failed:\n{result.stdout}{result.stderr}"
        )


def server_env(stores: StoreFactory) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("CASINO_")}
    env.update(
        CASINO_DATABASE_URL=stores.url,
        CASINO_POSTGRES_SCHEMA=stores.schema,
        CASINO_DB_POOL_SIZE="4",
        CASINO_LOG_LEVEL="info",
    )
    return env


# What the clients sent and what they were told.


@dataclass
class Request:
    key: str
    method: str
    path: str
    body: Any
    role: str
    status: int | None = None
    answer: Any = None

    def describe(self) -> str:
        return f"{self.method} {self.path} {self.body} (key {self.key})"


class NoAnswer(Exception):
    """The request got no answer: the server is gone (or kept losing races)."""


class Refused(Exception):
    """An answer a correct client never expects; the test fails."""


@dataclass
class Books:
    """Everything the answers told the clients, kept for the checks after each restart."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    answered: list[Request] = field(default_factory=list)  # of the current cycle
    earlier: list[Request] = field(default_factory=list)  # every answer of the cycles before
    unanswered: list[Request] = field(default_factory=list)  # of the current cycle
    problems: list[str] = field(default_factory=list)
    players: set[str] = field(default_factory=set)
    movements: dict[str, tuple[str, str, int]] = field(default_factory=dict)  # txn -> signed
    rounds: dict[str, dict[str, Any]] = field(default_factory=dict)  # the last answer on each
    totals: collections.Counter[str] = field(default_factory=collections.Counter)

    def learn(self, request: Request) -> None:
        """Note the facts of a 2xx answer (the last one about its round, if it is one)."""
        body, answer = request.body, request.answer
        with self.lock:
            if request.path == "/v1/players":
                self.players.add(body["player_id"])
            elif request.path.endswith(("/deposits", "/withdrawals")):
                sign = 1 if request.path.endswith("/deposits") else -1
                player_id = request.path.split("/")[3]
                movement = (player_id, body["mode"], sign * cents(body["amount"]))
                self.movements[answer["transaction_id"]] = movement
            elif isinstance(answer, dict) and "game" in answer and "round_id" in answer:
                # A P2P deal's answer also names the next round; the round itself is the rest.
                self.rounds[answer["round_id"]] = {
                    name: value for name, value in answer.items() if name != "next_round"
                }


class Caller:
    """One client: an HTTP connection, fresh keys, and a journal of what it was told."""

    def __init__(self, base: str, books: Books) -> None:
        self.http = httpx.Client(base_url=base, timeout=60)
        self.books = books

    def close(self) -> None:
        self.http.close()

    def command(self, method: str, path: str, body: Any = None, role: str = "service") -> Any:
        request = Request(uuid.uuid4().hex, method, path, body, role)
        try:
            response = send(self.http, request)
        except NoAnswer:
            with self.books.lock:
                self.books.unanswered.append(request)
            raise
        if response.status_code not in (200, 201):
            raise Refused(f"{request.describe()} -> {response.status_code} {response.text}")
        request.status, request.answer = response.status_code, response.json()
        with self.books.lock:
            self.books.answered.append(request)
        self.books.learn(request)
        return request.answer


def send(http: httpx.Client, request: Request) -> httpx.Response:
    """Send once, and again with the same key while it loses concurrency races (503)."""
    headers = {**auth(request.role), "Idempotency-Key": request.key}
    for _ in range(CONCURRENT_UPDATE_RETRIES):
        try:
            response = http.request(
                request.method, request.path, json=request.body, headers=headers
            )
        except httpx.TransportError as error:
            raise NoAnswer(f"{request.describe()}: {error!r}") from error
        if response.status_code != 503:
            return response
        time.sleep(0.02)
    raise NoAnswer(f"{request.describe()}: still 503 after {CONCURRENT_UPDATE_RETRIES} tries")


# The clients: each works its own players, one request at a time, until the server dies.


def house_baccarat(call: Caller, rng: random.Random, name: str, mode: str) -> None:
    player = f"{name}-h"
    call.command("POST", "/v1/players", {"player_id": player, "display_name": player})
    call.command("POST", f"/v1/players/{player}/deposits", {"mode": mode, "amount": "5000.00"})
    while True:
        round_id = call.command("POST", "/v1/baccarat/rounds", {"player_id": player, "mode": mode})[
            "round_id"
        ]
        spots = rng.sample(["player", "banker", "tie"], rng.randint(1, 2))
        for spot in spots:
            amount = f"{rng.randint(1, 60)}.00"
            call.command("POST", f"/v1/rounds/{round_id}/bets", {"spot": spot, "amount": amount})
        if len(spots) == 2 and rng.random() < 0.2:
            call.command("DELETE", f"/v1/rounds/{round_id}/bets/{spots[0]}")
        if rng.random() < 0.1:
            continue  # left open, stakes held: the idle timeout ends it later
        call.command("POST", f"/v1/rounds/{round_id}/deal")
        if rng.random() < 0.3:
            kind = rng.choice(["deposits", "withdrawals"])
            amount = f"{rng.randint(1, 40)}.{rng.randint(0, 99):02d}"
            call.command("POST", f"/v1/players/{player}/{kind}", {"mode": mode, "amount": amount})


def p2p_baccarat(call: Caller, rng: random.Random, name: str, mode: str, table_type: str) -> None:
    dealer, player = f"{name}-d", f"{name}-p"
    for person, amount in ((dealer, "100000.00"), (player, "5000.00")):
        call.command("POST", "/v1/players", {"player_id": person, "display_name": person})
        call.command("POST", f"/v1/players/{person}/deposits", {"mode": mode, "amount": amount})
    call.command(
        "POST",
        f"/v1/players/{dealer}/dealer-points/adjustments",
        {"mode": mode, "change": 1_000_000, "reason": "crash test dealer"},
        role="operator",
    )
    seat = {"mode": mode, "table_type": table_type}
    call.command("POST", "/v1/p2p/dealers", {"player_id": dealer, **seat, "auto_confirm": False})
    # The player sits with the longest-waiting dealer, maybe one left by an earlier cycle.
    table_id = call.command("POST", "/v1/p2p/players", {"player_id": player, **seat})["table_id"]
    while True:
        round_id = call.command("POST", f"/v1/p2p/tables/{table_id}/confirm")["round_id"]
        spot = rng.choice(["player", "banker", "tie"])
        amount = f"{rng.randint(5, 60)}.00"
        call.command("POST", f"/v1/rounds/{round_id}/bets", {"spot": spot, "amount": amount})
        call.command("POST", f"/v1/rounds/{round_id}/deal")


def blackjack(call: Caller, rng: random.Random, name: str, mode: str) -> None:
    player = f"{name}-b"
    call.command("POST", "/v1/players", {"player_id": player, "display_name": player})
    call.command("POST", f"/v1/players/{player}/deposits", {"mode": mode, "amount": "5000.00"})
    dealt_before = False
    while True:
        round_id = call.command(
            "POST", "/v1/blackjack/rounds", {"player_id": player, "mode": mode, "hall": "2"}
        )["round_id"]
        if dealt_before and rng.random() < 0.3:
            call.command("POST", f"/v1/rounds/{round_id}/repeat-bets")
        else:
            for box in rng.sample([1, 2, 3], rng.randint(1, 2)):
                amount = f"{rng.randint(1, 40)}.{rng.choice(['00', '25', '50'])}"
                call.command("POST", f"/v1/rounds/{round_id}/bets", {"box": box, "amount": amount})
        if rng.random() < 0.1:
            continue  # never dealt: the idle timeout voids it later
        round_ = call.command("POST", f"/v1/rounds/{round_id}/deal")
        dealt_before = True
        while round_["status"] == "in_play" and rng.random() > 0.03:  # some stay in play
            turn = round_["legal_actions"]
            body = {**turn, "action": choose(rng, round_, turn)}
            del body["actions"]
            round_ = call.command("POST", f"/v1/rounds/{round_id}/actions", body)


def table_coups(call: Caller, rng: random.Random, name: str, mode: str) -> None:
    """Three players at an American table: coups with bets on every spot, a few left
    undealt (the idle timeout voids them), some bets taken back."""
    players = [f"{name}-t{seat}" for seat in (1, 2, 3)]
    table_id = call.command("POST", "/v1/tables", {"game": "punto_banco", "mode": mode})["table_id"]
    for seat, player in enumerate(players, start=1):
        call.command("POST", "/v1/players", {"player_id": player, "display_name": player})
        call.command("POST", f"/v1/players/{player}/deposits", {"mode": mode, "amount": "5000.00"})
        call.command(
            "POST", f"/v1/tables/{table_id}/seats", {"player_id": player, "seat": str(seat)}
        )
    while True:
        round_id = call.command("POST", f"/v1/tables/{table_id}/coups")["round_id"]
        for player in rng.sample(players, rng.randint(1, 3)):
            for spot in rng.sample(["player", "banker", "tie"], rng.randint(1, 2)):
                body = {"player_id": player, "spot": spot, "amount": f"{rng.randint(1, 30)}.00"}
                call.command("POST", f"/v1/rounds/{round_id}/bets", body)
        if rng.random() < 0.08:
            return  # left undealt, stakes held: the idle timeout voids it later
        call.command("POST", f"/v1/rounds/{round_id}/deal")


def choose(rng: random.Random, round_: dict[str, Any], turn: dict[str, Any]) -> str:
    actions = turn["actions"]
    if "no_insurance" in actions:
        return rng.choice([a for a in ("no_insurance", "insurance", "even_money") if a in actions])
    box = next(b for b in round_["boxes"] if b["box"] == turn["box"])
    total = box["hands"][turn["hand"]]["total"]
    if "double" in actions and total in (10, 11) and rng.random() < 0.5:
        return "double"
    if "split" in actions and rng.random() < 0.5:
        return "split"
    return "hit" if total < 12 or (total < 17 and rng.random() < 0.5) else "stand"


Client = Callable[[Caller, random.Random, str], None]
CLIENTS: list[Client] = [
    lambda call, rng, name: house_baccarat(call, rng, name, "real"),
    lambda call, rng, name: house_baccarat(call, rng, name, "play"),
    lambda call, rng, name: p2p_baccarat(call, rng, name, "real", "I"),
    lambda call, rng, name: p2p_baccarat(call, rng, name, "play", "II"),
    lambda call, rng, name: blackjack(call, rng, name, "real"),
    lambda call, rng, name: blackjack(call, rng, name, "play"),
    lambda call, rng, name: table_coups(call, rng, name, "real"),
]


def traffic_then_kill(server: Server, books: Books, cycle: int, rng: random.Random) -> None:
    """Run every client until the server, killed at a random moment, stops answering."""
    books.earlier += books.answered + books.unanswered
    books.answered, books.unanswered = [], []
    threads = []
    for index, client in enumerate(CLIENTS):
        name = f"c{cycle}-{index}"
        seeded = random.Random(rng.getrandbits(64))
        threads.append(
            threading.Thread(
                target=run_client, args=(client, server, books, seeded, name), daemon=True
            )
        )
    for thread in threads:
        thread.start()
    # The clock starts once traffic flows: on a busy machine a restarted server may take
    # a while to answer its first command, and a kill before that would test nothing.
    deadline = time.monotonic() + FIRST_ANSWER_SECONDS_MAX
    while not books.answered and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(rng.uniform(*TRAFFIC_SECONDS))
    server.kill()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive(), "a client still runs a minute after the kill"
    assert not books.problems, "\n".join(books.problems)
    assert books.answered, "no command was acknowledged before the kill"
    books.totals["answered"] += len(books.answered)
    books.totals["unanswered"] += len(books.unanswered)


def run_client(client: Client, server: Server, books: Books, rng: random.Random, name: str) -> None:
    call = Caller(server.base, books)
    try:
        client(call, rng, name)
    except NoAnswer:
        pass  # the server died under this client: its last request is checked later
    except Exception as error:  # a refusal, or a bug in the client: the test must fail
        with books.lock:
            books.problems.append(f"client {name}: {error!r}")
    finally:
        call.close()


# The checks after a restart.


class Auditor:
    """Reads and re-sends over HTTP, and checks the books."""

    def __init__(self, base: str, books: Books) -> None:
        self.http = httpx.Client(base_url=base, timeout=60)
        self.books = books

    def close(self) -> None:
        self.http.close()

    def get(self, path: str, role: str = "operator") -> Any:
        response = self.http.get(path, headers=auth(role))
        assert response.status_code == 200, f"GET {path} -> {response.status_code} {response.text}"
        return response.json()

    def each(self, check: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """`check` on every item, a few at a time (a failed assertion fails the test)."""
        with concurrent.futures.ThreadPoolExecutor(CHECKERS) as pool:
            return list(pool.map(check, items))

    def replay(self, requests: list[Request]) -> None:
        """Every acknowledged request, sent again, gets its first answer back, replayed."""
        for problem in self.each(self.replayed_wrongly, requests):
            assert problem is None, problem

    def replayed_wrongly(self, request: Request) -> str | None:
        response = send(self.http, request)
        if response.headers.get("Idempotent-Replayed") != "true" or (
            response.status_code,
            json_or_text(response),
        ) != (request.status, request.answer):
            return (
                f"{request.describe()}: first answered {request.status} {request.answer}, "
                f"now {response.status_code} {response.headers} {response.text}"
            )
        return None

    def retry_unanswered(self) -> None:
        """A request that got no answer either landed (its retry is a replay) or not at all
        (its retry applies it); either way a second retry is a replay of the first."""
        for request in self.books.unanswered:
            first = send(self.http, request)
            assert first.status_code in (200, 201), f"{request.describe()} -> {first.text}"
            request.status, request.answer = first.status_code, first.json()
            landed = first.headers.get("Idempotent-Replayed") == "true"
            self.books.totals["landed before the kill" if landed else "applied on retry"] += 1
            self.books.learn(request)
            second = send(self.http, request)
            assert second.headers.get("Idempotent-Replayed") == "true", request.describe()
            assert (second.status_code, json_or_text(second)) == (request.status, request.answer)

    def rounds_as_last_answered(self) -> dict[str, dict[str, Any]]:
        """Each round reads exactly as the last answer about it said."""
        rounds = self.current_rounds()
        for round_id, answered in self.books.rounds.items():
            assert rounds[round_id] == answered, f"round {round_id} is not as last answered"
        return rounds

    def current_rounds(self) -> dict[str, dict[str, Any]]:
        ids = list(self.books.rounds)
        return dict(zip(ids, self.each(lambda r: self.get(f"/v1/rounds/{r}"), ids), strict=True))

    def books_reconcile(self, rounds: dict[str, dict[str, Any]]) -> None:
        expected = Expected.of(self.books, rounds, self.dealer_worst_case)
        owners = [(player, mode) for player in sorted(self.books.players) for mode in MODES]
        wallets = dict(
            zip(owners, self.each(lambda owner: self.wallet(*owner, expected), owners), strict=True)
        )
        for mode in MODES:
            self.reports_agree(mode, wallets, expected)

    def wallet(self, player: str, mode: str, expected: Expected) -> dict[str, Any]:
        """The wallet, checked against the answers, with its ledger."""
        wallet: dict[str, Any] = self.get(f"/v1/players/{player}/wallets/{mode}")
        where = f"wallet {player}/{mode}"
        balance, held = expected.balances[player, mode], expected.held[player, mode]
        assert cents(wallet["balance"]) == balance, f"{where}: {wallet}, expected {balance}"
        assert cents(wallet["held"]) == held, f"{where}: orphaned hold? {wallet}, held {held}"
        assert cents(wallet["available"]) == balance - held, where
        self.ledger_runs_to(player, mode, wallet, expected)
        return wallet

    def ledger_runs_to(
        self, player: str, mode: str, wallet: dict[str, Any], expected: Expected
    ) -> None:
        entries, after = [], 0
        while True:
            page = self.get(f"/v1/players/{player}/ledger?mode={mode}&limit=500&after={after}")
            entries += page["entries"]
            if page["next_after"] is None:
                break
            after = page["next_after"]
        running = 0
        seen: collections.Counter[tuple[str, str]] = collections.Counter()
        for entry in entries:
            running += cents(entry["amount"])
            assert cents(entry["balance_after"]) == running, f"{player}/{mode} ledger: {entry}"
            if entry["kind"] in ("deposit", "withdrawal"):
                seen["movement", entry["transaction_id"]] += 1
                movement = self.books.movements.get(entry["transaction_id"])
                assert movement == (player, mode, cents(entry["amount"])), entry
            else:
                seen[entry["kind"], entry["round_id"]] += 1
        assert running == cents(wallet["balance"]), f"{player}/{mode}: ledger ends at {running}"
        assert seen == expected.ledger[player, mode], (
            f"{player}/{mode} ledger: {sorted(seen.items())}"
            f" != {sorted(expected.ledger[player, mode].items())}"
        )

    def reports_agree(
        self, mode: str, wallets: dict[tuple[str, str], dict[str, Any]], expected: Expected
    ) -> None:
        liability = self.get(f"/v1/reports/liability?mode={mode}")
        in_mode = [w for (_, m), w in wallets.items() if m == mode]
        assert liability["wallets"] == len(self.books.players), liability
        assert cents(liability["player_balances"]) == sum(cents(w["balance"]) for w in in_mode)
        held = sum(held for (_, m), held in expected.held.items() if m == mode)
        assert cents(liability["held_in_open_rounds"]) == held, (liability, held)
        trial = self.get(f"/v1/reports/trial-balance?mode={mode}", role="auditor")
        assert trial["total"] == "0.00", trial
        accounts = {
            a["account"]: cents(a["balance"]) for a in trial["accounts"] if a["balance"] != "0.00"
        }
        wanted = {a: c for (a, m), c in expected.accounts.items() if m == mode and c != 0}
        assert accounts == wanted, f"{mode} trial balance {accounts} != expected {wanted}"

    def dealer_worst_case(self, table_id: str) -> int:
        return cents(self.get(f"/v1/p2p/tables/{table_id}")["dealer_worst_case"])

    def wait_until_every_round_is_over(self) -> dict[str, dict[str, Any]]:
        deadline = time.monotonic() + ROUNDS_END_SECONDS_MAX
        while True:
            rounds = self.current_rounds()
            open_ = [r for r, seen in rounds.items() if seen["status"] not in OVER]
            if not open_:
                return rounds
            assert time.monotonic() < deadline, f"rounds still open after the idle timeout: {open_}"
            time.sleep(0.25)


@dataclass
class Expected:
    """The books as the answers imply them."""

    balances: collections.Counter[tuple[str, str]]
    held: collections.Counter[tuple[str, str]]
    accounts: collections.Counter[tuple[str, str]]
    ledger: dict[tuple[str, str], collections.Counter[tuple[str, str]]]

    @classmethod
    def of(
        cls,
        books: Books,
        rounds: dict[str, dict[str, Any]],
        dealer_worst_case: Callable[[str], int],
    ) -> Expected:
        balances: collections.Counter[tuple[str, str]] = collections.Counter()
        held: collections.Counter[tuple[str, str]] = collections.Counter()
        accounts: collections.Counter[tuple[str, str]] = collections.Counter()
        ledger: dict[tuple[str, str], collections.Counter[tuple[str, str]]] = (
            collections.defaultdict(collections.Counter)
        )
        for transaction_id, (player, mode, amount) in books.movements.items():
            balances[player, mode] += amount
            accounts["cashier", mode] -= amount
            ledger[player, mode]["movement", transaction_id] += 1
        for round_id, round_ in rounds.items():
            if round_["variant"] == "punto_banco":
                _coup_books(round_id, round_, balances, held, accounts, ledger)
                continue
            mode, p2p = round_["mode"], round_["variant"] == "p2p"
            roles = {"player": round_["player_id"]}
            if p2p:
                roles["dealer"] = round_["dealer_id"]
            if round_["status"] == "settled":
                for role, person in roles.items():
                    balances[person, mode] += cents(round_["net"][role])
                    ledger[person, mode]["round_result", round_id] += 1
                house = "casino:commission" if p2p else "casino:bank"
                accounts[house, mode] += cents(round_["net"]["casino"])
                if p2p and round_["commission"] != "0.00":
                    ledger[roles["dealer"], mode]["commission", round_id] += 1
            elif round_["status"] not in OVER:
                stake = round_["held"] if round_["game"] == "blackjack" else round_["total_stake"]
                held[roles["player"], mode] += cents(stake)
                if p2p:
                    held[roles["dealer"], mode] += dealer_worst_case(round_["table_id"])
        for (player, mode), balance in balances.items():
            accounts[f"player:{player}", mode] += balance
        return cls(balances, held, accounts, ledger)


def _coup_books(
    round_id: str,
    coup: dict[str, Any],
    balances: collections.Counter[tuple[str, str]],
    held: collections.Counter[tuple[str, str]],
    accounts: collections.Counter[tuple[str, str]],
    ledger: dict[tuple[str, str], collections.Counter[tuple[str, str]]],
) -> None:
    """A coup at a table: each player's result against the bank, or their stakes held."""
    mode = coup["mode"]
    if coup["status"] == "settled":
        for player, net in coup["net"].items():
            balances[player, mode] += cents(net)
            ledger[player, mode]["round_result", round_id] += 1
        accounts["casino:bank", mode] += cents(coup["casino_net"])
    elif coup["status"] not in OVER:
        for bet in coup["bets"]:
            held[bet["player_id"], mode] += cents(bet["amount"])


@contextlib.contextmanager
def auditing(server: Server, books: Books) -> Iterator[Auditor]:
    auditor = Auditor(server.base, books)
    try:
        yield auditor
    finally:
        auditor.close()


def test_sigkill_loses_no_acknowledged_command_and_half_applies_none(
    stores: StoreFactory, tmp_path: Path
) -> None:
    seed = random.randrange(2**32)
    print(f"crash test seed {seed} on {stores.backend}")
    rng = random.Random(seed)
    books = Books()
    server = Server(server_env(stores), tmp_path)
    spent: collections.defaultdict[str, float] = collections.defaultdict(float)

    @contextlib.contextmanager
    def timed(step: str) -> Iterator[None]:
        started = time.monotonic()
        yield
        spent[step] += time.monotonic() - started

    try:
        with timed("start"):
            server.start()
        for cycle in range(CYCLES):
            with timed("traffic"):
                traffic_then_kill(server, books, cycle, rng)
            with timed("start"):
                server.start()
            with auditing(server, books) as auditor, timed("checks"):
                auditor.replay(books.answered)
                auditor.retry_unanswered()
                auditor.books_reconcile(auditor.rounds_as_last_answered())
            with timed("audit verify"):
                server.audit_verify()
        # A kill with nothing in flight, then a restart whose idle timeout ends every round
        # left open before it: the timeouts fire from the store after a restart.
        server.kill()
        with timed("start"):
            server.start(CASINO_IDLE_TIMEOUT_SECONDS="1", CASINO_RESUME_WINDOW_SECONDS="1")
        with auditing(server, books) as auditor:
            with timed("idle timeout"):
                rounds = auditor.wait_until_every_round_is_over()
            with timed("checks"):
                auditor.replay(books.earlier + books.answered + books.unanswered)
                auditor.books_reconcile(rounds)
            for mode in MODES:
                liability = auditor.get(f"/v1/reports/liability?mode={mode}")
                assert liability["held_in_open_rounds"] == "0.00", liability
        with timed("audit verify"):
            server.audit_verify()
            server.close()
            server.audit_verify()  # and on the store alone, nobody serving it
        print(f"crash test totals: {dict(books.totals)}, {len(books.rounds)} rounds")
        print(f"crash test seconds: { {step: round(s, 1) for step, s in spent.items()} }")
    except BaseException:
        print(f"server log (tail):\n{server.log_tail()}")
        raise
    finally:
        server.close()
