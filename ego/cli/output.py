"""How the command line prints: JSON when piped or asked for, readable text on a terminal."""

from __future__ import annotations

import contextlib
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import click
import orjson

from ..errors import (
    BrowserError,
    ConfirmationRequiredError,
    EgoError,
    HarTooLargeError,
    JavaScriptError,
    LearningError,
    ListenError,
    NoTabError,
    PackBuildError,
    ProfileInUseError,
    SiteUnreachableError,
    SkillBrokenError,
    SkillExistsError,
    StorageStateTooLargeError,
    WorkspaceRequiredError,
)
from ..protocol.jsontext import json_text

__all__ = [
    "EXIT_BROWSER",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_OTHER",
    "EXIT_TERMINATED",
    "EXIT_TOOL",
    "EXIT_USAGE",
    "Output",
    "cli_words",
    "exit_code_for",
    "heal_hint",
]

EXIT_OK = 0
#: Something else went wrong: an agent script's (or a piped shell statement's) own exception,
#: a bug, an unexpected OS error.
EXIT_OTHER = 1
#: The command line was wrong (click uses 2 as well).
EXIT_USAGE = 2
#: A tool, skill or learning failed: unknown site or tool, bad args, a JS error, a signal.
EXIT_TOOL = 3
#: The browser failed: Chrome missing, profile in use, endpoint unreachable, timeout, gone.
EXIT_BROWSER = 4
#: Ctrl+C (SIGINT) stopped the command (the shell's convention: 128 + the signal's number).
EXIT_INTERRUPTED = 130
#: SIGTERM stopped ``ego batch`` (which ends its run as for Ctrl+C, keeping every result).
EXIT_TERMINATED = 143


def exit_code_for(exc: BaseException) -> int:
    """The exit code for an error: tool errors 3, browser errors 4, others 1."""
    if isinstance(exc, (LearningError, JavaScriptError)):
        return EXIT_TOOL
    if isinstance(exc, BrowserError):
        return EXIT_BROWSER
    if isinstance(exc, (click.UsageError, ValueError)):
        return EXIT_USAGE
    return EXIT_OTHER


class Output:
    """Prints results and progress for one command.

    Args:
        json_mode: print JSON; the default is JSON when stdout is not a terminal.
    """

    def __init__(self, json_mode: bool | None = None) -> None:
        self.tty = sys.stdout.isatty()
        self.json = (not self.tty) if json_mode is None else json_mode
        self.progress_enabled = sys.stderr.isatty() and not self.json

    def result(
        self,
        data: Any,
        human: Callable[[Any], str] | str | None = None,
        *,
        one_line: bool = False,
    ) -> None:
        """Print ``data``: as JSON in JSON mode, else with ``human`` (or as pretty JSON).

        ``one_line`` prints the JSON on a single line, for a command that keeps running after
        it (``ego launch``, ``ego login``) so that a supervising process can read it with one
        readline.
        """
        if self.json and one_line:
            click.echo(json_text(data, default=_default))
        elif self.json or human is None:
            click.echo(_dumps(data))
        else:
            click.echo(human(data) if callable(human) else human)

    def info(self, text: str) -> None:
        """A line for a person on the terminal; silent in JSON mode."""
        if not self.json:
            click.echo(text, err=True)

    @contextlib.contextmanager
    def progress(self, label: str) -> Iterator[None]:
        """Show ``label`` with a spinner and the elapsed time on a terminal while waiting."""
        if not self.progress_enabled:
            yield
            return
        stop = threading.Event()
        started = time.monotonic()

        def spin() -> None:
            frames = "|/-\\"
            index = 0
            while not stop.wait(0.1):
                elapsed = time.monotonic() - started
                sys.stderr.write(f"\r{frames[index % 4]} {label} ({elapsed:.1f} s)")
                sys.stderr.flush()
                index += 1

        thread = threading.Thread(target=spin, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()

    def error(self, exc: BaseException) -> int:
        """Print an error as one line on stderr and return its exit code."""
        self.error_line(type(exc).__name__, cli_words(exc), ego=isinstance(exc, EgoError))
        return exit_code_for(exc)

    def error_line(self, type_name: str, message: str, *, ego: bool = True) -> None:
        """Print one line on stderr for an error of type ``type_name`` (an ego error, unless
        ``ego`` is False) saying ``message``, as :meth:`error` does."""
        if self.json:
            # One line even in JSON mode: a caller reads the error with a single readline.
            click.echo(json_text({"error": message, "type": type_name}), err=True)
        else:
            click.echo(f"ego: {type_name if ego else 'error'}: {message}", err=True)


#: Fixes that errors word for Python callers, and the same fix as a command-line user types
#: it: (error type, pattern, replacement).
_CLI_FIXES: tuple[tuple[type[BaseException], re.Pattern[str], str], ...] = (
    (
        ProfileInUseError,
        re.compile(r"attach to it with ego\.connect\('([^']*)'\)"),
        r"attach to it with --endpoint \1",
    ),
    (ProfileInUseError, re.compile(r"use another profile"), "pass another --profile"),
    (SkillExistsError, re.compile(r"pass overwrite=True"), "pass --overwrite"),
    (
        SkillBrokenError,
        re.compile(r"`site\.heal_tool\('([^']*)', '([^']*)'\)`"),
        r"`ego heal \1 \2`",
    ),
    (HarTooLargeError, re.compile(r"HarBounds\(max_entries=N\)"), "--max-har-entries N"),
    (HarTooLargeError, re.compile(r"HarBounds\(max_bytes=N\)"), "--max-har-bytes SIZE"),
    (PackBuildError, re.compile(r"pass (name|version)="), r"pass --\1"),
    (
        WorkspaceRequiredError,
        re.compile(r", or pass workspace= to ego\.launch\(\)/Learnings\(\)"),
        "",
    ),
    (WorkspaceRequiredError, re.compile(r"\(or --workspace, workspace=\)"), "(or --workspace)"),
    (
        NoTabError,
        re.compile(
            r"open one \(browser\.new_tab\(url\)\) and pass tab=, or call set_start_url\([^)]*\)"
        ),
        "pass --start-url with a page of the site",
    ),
    (
        SiteUnreachableError,
        re.compile(r"pass that tab \(tab=\) or call set_start_url\('([^']*)', '([^']*)'\)"),
        r"pass --start-url \1=\2",
    ),
)


def heal_hint(site_id: str, tool: str) -> str:
    """What to run about a tool whose health says SUSPECT."""
    return f"`ego heal {site_id} {tool}` finds why"


def cli_words(exc: BaseException) -> str:
    """``exc``'s message on one line, with a fix worded for Python callers (``confirm=True``,
    ``ego.connect()``, ``overwrite=True``) worded as the command-line user types it."""
    if isinstance(exc, ConfirmationRequiredError):
        return exc.worded("run it again with --confirm")
    if isinstance(exc, StorageStateTooLargeError):
        return exc.worded(f"to load it all the same, raise the bound with {exc.flag}")
    if isinstance(exc, ListenError):
        return exc.command_line
    message = str(exc).replace("\n", " ") or type(exc).__name__
    for kind, pattern, fix in _CLI_FIXES:
        if isinstance(exc, kind):
            message = pattern.sub(fix, message)
    return message


def _dumps(data: Any) -> str:
    # Any string a manifest, a page or a tool holds prints: a lone surrogate as an escape.
    return json_text(
        data,
        option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY,
        default=_default,
    )


def _default(value: Any) -> Any:
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        return model_dump(mode="json")
    as_dict = getattr(value, "as_dict", None)
    if callable(as_dict):
        return as_dict()
    if isinstance(value, float):
        return repr(value)
    raise TypeError(f"cannot print {type(value).__name__} as JSON")
