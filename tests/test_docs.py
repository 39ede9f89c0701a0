"""The docs a newcomer reads first cannot drift from the code: the README's walk-through
is run against the app, the first pages keep their length, and every `casino` command,
setting and error code the code has is documented."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import click
import httpx
import pytest
import typer.main
from fastapi.testclient import TestClient

from domain.errors import DomainError
from infra.cli import app as casino
from infra.config import Settings
from infra.http.api_doc import current_document

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
WALK_THROUGH_MARK = "<!-- walk-through -->"
CAPTURE = re.compile(r"^(\w+)=\$\((curl .*?) \| (python3 -c .*)\)$")
ASSIGNMENT = re.compile(r"^(\w+)=(.*)$")
EXPECTED_STATUS = re.compile(r"\((\d{3})\)")
VARIABLE = re.compile(r"\$(\w+)")


@dataclass
class Step:
    """One command of the walk-through: a curl, with the status its comment names, and
    where a `NAME=$(curl ... | python3 -c ...)` keeps what the snippet prints."""

    curl: str
    status: int
    keep_as: str = ""
    snippet: str = ""


@dataclass
class Walk:
    variables: dict[str, str] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)


def walk_through_lines() -> list[str]:
    """The README's marked shell block, its continued lines joined."""
    text = README.read_text()
    assert WALK_THROUGH_MARK in text, "README.md has lost its walk-through mark"
    block = text.split(WALK_THROUGH_MARK, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return block.replace("\\\n", " ").splitlines()


def parse_walk_through() -> Walk:
    walk = Walk()
    status = 0
    for raw in walk_through_lines():
        line = " ".join(raw.split())
        if line.startswith("#"):
            found = EXPECTED_STATUS.search(line)
            status = int(found.group(1)) if found else status
        elif captured := CAPTURE.match(line):
            name, curl, snippet = captured.groups()
            walk.steps.append(Step(curl, status, name, snippet))
        elif line.startswith("curl "):
            walk.steps.append(Step(line, status))
        elif assigned := ASSIGNMENT.match(line):
            walk.variables[assigned.group(1)] = shlex.split(assigned.group(2))[0]
        else:
            assert not line, f"the walk-through test cannot read: {line}"
    return walk


def expanded(token: str, variables: dict[str, str]) -> str:
    return VARIABLE.sub(lambda name: variables[name.group(1)], token)


def request_of(curl: str, variables: dict[str, str]) -> tuple[str, str, dict[str, str], str]:
    """Method, path, headers and body of a curl command line."""
    tokens = [expanded(token, variables) for token in shlex.split(curl)[1:]]
    method, url, headers, body = "GET", "", {}, ""
    while tokens:
        token = tokens.pop(0)
        if token == "-X":
            method = tokens.pop(0)
        elif token == "-H":
            name, value = tokens.pop(0).split(":", 1)
            headers[name] = value.strip()
        elif token == "-d":
            body = tokens.pop(0)
        elif token.startswith("http"):
            url = token
        else:
            assert token in ("-s", "-i", "-si"), f"the walk-through test knows no {token}"
    return method, httpx.URL(url).raw_path.decode(), headers, body


def run_walk_through(client: TestClient) -> list[httpx.Response]:
    walk = parse_walk_through()
    answers = []
    for step in walk.steps:
        method, path, headers, body = request_of(step.curl, walk.variables)
        answer = client.request(method, path, headers=headers, content=body or None)
        assert answer.status_code == step.status, f"{step.curl}: {answer.text}"
        if step.keep_as:
            snippet = shlex.split(step.snippet)[2]
            printed = subprocess.run(
                [sys.executable, "-c", snippet],
                input=answer.text,
                capture_output=True,
                text=True,
                check=True,
            )
            walk.variables[step.keep_as] = printed.stdout.strip()
        answers.append(answer)
    return answers


def test_the_readme_walk_through_plays_a_round_and_the_balance_follows_it(
    client: TestClient,
) -> None:
    answers = run_walk_through(client)
    deposited = Decimal(answers[1].json()["wallet"]["balance"])
    settled, wallet = answers[-2].json(), answers[-1].json()
    assert settled["status"] == "settled"
    assert Decimal(wallet["balance"]) == deposited + Decimal(settled["net"]["player"])
    assert wallet["held"] == "0.00"
    assert wallet["last_round"]["round_id"] == settled["round_id"]


def test_the_walk_through_checks_every_command_it_shows() -> None:
    walk = parse_walk_through()
    curls = [line for line in walk_through_lines() if "curl " in line]
    assert len(walk.steps) == len(curls) >= 6
    assert all(step.status for step in walk.steps)


def test_the_first_pages_stay_short() -> None:
    assert len(README.read_text().splitlines()) <= 200
    assert len((DOCS / "architecture.md").read_text().splitlines()) <= 400


def casino_commands(
    command: click.Command, path: str = "casino"
) -> list[tuple[str, click.Command]]:
    found = [(path, command)]
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            found += casino_commands(sub, f"{path} {name}")
    return found


def test_every_casino_command_and_option_is_in_docs_cli_md() -> None:
    documented = (DOCS / "cli.md").read_text()
    for path, command in casino_commands(typer.main.get_command(casino)):
        assert f"`{path}" in documented, f"docs/cli.md does not name `{path}`"
        for parameter in command.params:
            for option in parameter.opts:
                if option.startswith("--") and option != "--help":
                    assert option in documented, f"docs/cli.md: `{path}` {option}"


def settings_the_code_reads() -> set[str]:
    names = {f"CASINO_{name.upper()}" for name in Settings.model_fields}
    for folder in ("domain", "infra", "projections"):
        for module in (ROOT / folder).rglob("*.py"):
            names |= set(re.findall(r"[\"'](CASINO_[A-Z0-9_]+)[\"']", module.read_text()))
    return names


def not_named_in(page: str, names: set[str]) -> list[str]:
    documented = (DOCS / page).read_text()
    return sorted(name for name in names if f"`{name}`" not in documented)


def test_every_setting_the_code_reads_is_in_docs_configuration_md() -> None:
    missing = not_named_in("configuration.md", settings_the_code_reads())
    assert not missing, f"docs/configuration.md does not name {missing}"


def domain_error_codes(error: type[DomainError] = DomainError) -> set[str]:
    """The codes of every refusal the domain defines (the base class's own is none)."""
    codes: set[str] = set()
    for subclass in error.__subclasses__():
        codes |= {subclass.code} | domain_error_codes(subclass)
    return codes


def codes_in_the_openapi_document() -> set[str]:
    """The codes each route's problem answers list (infra/http/contract.py)."""
    codes: set[str] = set()
    for operations in current_document()["paths"].values():
        for operation in operations.values():
            for answer in operation.get("responses", {}).values():
                for content in answer.get("content", {}).values():
                    code = content["schema"].get("properties", {}).get("code", {})
                    codes |= set(code.get("enum", ()))
    return codes


def codes_the_code_answers() -> set[str]:
    codes = domain_error_codes() | codes_in_the_openapi_document()
    for module in (ROOT / "infra").rglob("*.py"):
        codes |= set(re.findall(r"problem_response\(\s*\d+,\s*\"([a-z_]+)\"", module.read_text()))
    return codes


def test_every_error_code_is_in_docs_api_md() -> None:
    missing = not_named_in("api.md", codes_the_code_answers())
    assert not missing, f"docs/api.md lists no {missing}"


@pytest.mark.parametrize("page", ["README.md", *(f"docs/{p.name}" for p in DOCS.glob("*.md"))])
def test_every_link_between_the_docs_leads_to_a_page(page: str) -> None:
    source = ROOT / page
    for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", source.read_text()):
        assert (source.parent / target).exists(), f"{page} links to {target}, which is not there"
