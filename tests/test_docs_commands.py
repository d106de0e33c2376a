"""Every ``ego ...`` command line in README.md and docs/*.md parses as the code defines it.

The lines come from fenced code blocks and from inline code spans. Each is normalised
(placeholders such as ``[--profile NAME]`` lose their brackets, ``a | b`` alternatives are
both kept, comments and ``&`` are dropped), ``--help`` is appended, and it is handed to the
real ``ego`` group in-process with every command's body replaced by a stub: a line that
parses prints its command's help and exits 0; an unknown option, command or misplaced option
fails; and a line whose last option would swallow ``--help`` as its value is caught because
the stub runs instead of the help.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any

import click
import pytest
from click.testing import CliRunner

from ego.cli import cli
from tests.helpers.paths import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
# An inline code span (it may wrap onto the next line, never across a blank line).
SPAN = re.compile(r"(?<!`)`([^`\n]+(?:\n[^`\n]+)?)`(?!`)")
# How a command line starts: `ego`, a path to it, or `python -m ego`.
START = re.compile(r"^(?:\S*/)?(?:ego|python3?\s+-m\s+ego)(?=\s|$)")


def _split_shell(line: str) -> list[str]:
    """``line`` split on ``&&``, ``;`` and pipes, but not on the ``|`` of an alternative
    inside brackets (``[--url URL | --domain HOST]``)."""
    parts, current, depth = [], "", 0
    index = 0
    while index < len(line):
        char = line[index]
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth == 0 and (line.startswith("&&", index) or char in ";|"):
            parts.append(current)
            current = ""
            index += 2 if line.startswith("&&", index) else 1
            continue
        current += char
        index += 1
    return [*parts, current]


def _segments(line: str) -> Iterator[str]:
    """The ``ego`` commands of one shell line (``&`` dropped)."""
    for part in _split_shell(line):
        part = part.strip().removesuffix("&").strip()
        if START.match(part):
            yield part


def _strip_comment(line: str) -> str:
    return re.sub(r"\s+#\s.*$", "", line)


def documented_lines() -> Iterator[tuple[str, str]]:
    """(where, command line) for every ``ego`` command line in the docs."""
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        for block in FENCE.finditer(text):
            joined = re.sub(r"\\\n\s*", " ", block.group(1))  # continuation lines
            for line in joined.splitlines():
                for command in _segments(_strip_comment(line.strip().lstrip("$ "))):
                    yield name, command
        prose = FENCE.sub("", text)
        for span in SPAN.finditer(prose):
            content = " ".join(span.group(1).replace("\\|", "|").split())
            # `ego.launch()` and friends are Python; a command has a word after `ego`.
            if START.match(content) and re.match(r"^\S*ego\s+[-a-z]", content):
                for command in _segments(content):
                    yield name, command


def argv(command: str) -> list[str]:
    """The arguments after ``ego``, placeholders made plain."""
    text = re.sub(r"(?<=\S)\[([^\]\s]*)\]", r"\1", command)  # HOST[:PORT] -> HOST:PORT
    text = text.replace("[", " ").replace("]", " ").replace("...", " ")
    text = re.sub(r"\s\|\s", " ", text)
    words = shlex.split(text)
    if words[0] in ("python", "python3"):
        words = words[2:]  # python -m ego
    return [word for word in words[1:] if word not in ("|", "&")]


LINES = sorted(set(documented_lines()))


def test_the_docs_have_command_lines_to_check() -> None:
    where = {name for name, _ in LINES}
    assert {"README.md", "docs/skills.md", "docs/learning-loop.md"} <= where
    assert len(LINES) >= 30, LINES
    assert ("docs/skills.md", "ego skill import FILE --workspace DIR") in LINES


@pytest.fixture
def stubbed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every command's body replaced by a stub that records that it ran."""
    ran: list[str] = []

    def stub_all(group: click.Group) -> None:
        context = click.Context(group)
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            assert command is not None
            if isinstance(command, click.Group):
                stub_all(command)
            else:

                def stub(*_: Any, _name: str = name, **__: Any) -> None:
                    ran.append(_name)

                monkeypatch.setattr(command, "callback", stub)

    stub_all(cli)
    return ran


@pytest.mark.parametrize(("where", "command"), LINES, ids=[c for _, c in LINES])
def test_documented_command_line_parses(where: str, command: str, stubbed: list[str]) -> None:
    args = argv(command)
    result = CliRunner().invoke(cli, [*args, "--help"], catch_exceptions=False)
    context = f"{where}: {command}\n$ ego {shlex.join([*args, '--help'])}\n{result.output}"
    assert "No such option" not in result.output, context
    assert result.exit_code == 0, context
    assert stubbed == [], f"--help was taken as an option's value, so the command ran: {context}"
    # ego's --version is eager as --help is: it answers first (`pack build --version V` is
    # that command's own option, which takes a value).
    at = args.index("--version") if "--version" in args else -1
    eager = at >= 0 and (at + 1 == len(args) or args[at + 1].startswith("-"))
    assert (", version " if eager else "Usage:") in result.output, context
