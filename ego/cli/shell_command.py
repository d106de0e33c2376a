"""``ego shell``: an asyncio Python prompt with ``browser``, ``tab`` and ``site`` ready.

The standard library's asyncio REPL, with ego's objects in it: the event loop runs in the
main thread (where the browser's connection lives) and the prompt reads lines in another;
each statement is compiled with top-level ``await`` allowed and run as a task on the loop,
as ``python -m asyncio`` does. Ctrl+C cancels the statement that is running; Ctrl+D (or end
of input) leaves, and the browser is closed.

Statements piped in (stdin not a terminal) run as ``ego script`` runs a file: no banner and
no prompts, and the first statement that fails stops the rest; its own frames (``<stdin>``)
and one error line are printed, and the exit code is the error's (1 for one that is no ego
error, 3 for a tool's, 4 for the browser's).
"""

from __future__ import annotations

import ast
import asyncio
import code
import concurrent.futures
import contextlib
import inspect
import sys
import threading
import types
from pathlib import Path
from typing import Any

import click

from ..errors import EgoError
from ..learning.catalog.matching import as_url
from .common import Settings, endpoint_option, pass_settings
from .learning_commands import CLI_PROFILE_HINT
from .script_command import ScriptError, script_traceback

__all__ = ["AsyncConsole", "shell"]

#: The file name piped statements are compiled under (what their frames say).
STDIN = "<stdin>"

BANNER = (
    "ego shell: `browser`, `tab` and `site` are ready; use `await` directly, e.g.\n"
    "  await tab.navigate('https://example.org/')\n"
    "  await site.run_tool('demo-shop', 'get_product', {'id': 1})\n"
    "Ctrl+D (or exit()) leaves and closes the browser."
)


class AsyncConsole(code.InteractiveConsole):
    """An interactive console whose statements may ``await``, run as tasks on ``loop``.

    Args:
        names: the console's globals.
        loop: the running event loop (in another thread) that executes each statement.
        piped: the statements come from a pipe or a file: no prompts, and the first that
            fails ends the input (:attr:`failure` keeps its exception).
    """

    def __init__(
        self, names: dict[str, Any], loop: asyncio.AbstractEventLoop, *, piped: bool = False
    ) -> None:
        super().__init__(names, filename=STDIN if piped else "<console>")
        self.compile.compiler.flags |= ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        self.loop = loop
        self.piped = piped
        #: The statement running on the loop, for Ctrl+C to cancel.
        self.running: asyncio.Task[Any] | None = None
        #: The exception of the piped statement that failed (None: none did).
        self.failure: BaseException | None = None
        # Lines read from a pipe so far: a statement's frames name its lines in the input.
        self._read = 0

    def raw_input(self, prompt: str = "") -> str:
        if not self.piped:
            return super().raw_input(prompt)
        # input() would print the prompt to stdout, among the statements' own output.
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        self._read += 1
        return line.rstrip("\n")

    @property
    def lines_read(self) -> int:
        """How many lines were read from the pipe so far."""
        return self._read

    def runsource(self, source: str, filename: str = "<input>", symbol: str = "single") -> bool:
        if self.piped:
            # Compiled where it stands in the input: its first line is the buffer's first.
            source = "\n" * (self._read - len(self.buffer)) + source
        return super().runsource(source, filename, symbol)

    def showsyntaxerror(self, filename: str | None = None, **kwargs: Any) -> None:
        if not self.piped:
            super().showsyntaxerror(filename, **kwargs)
            return
        self.failure = sys.exc_info()[1]
        raise SystemExit  # ends the input: the statements after it would run without it

    def runcode(self, code: types.CodeType) -> None:
        """Run one compiled statement on the loop and wait for it; show its traceback."""
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def start() -> None:
            function = types.FunctionType(code, self.locals)
            try:
                result = function()
            except BaseException as exc:
                done.set_exception(exc)
                return
            if not inspect.iscoroutine(result):
                done.set_result(result)
                return
            task = self.loop.create_task(result)
            self.running = task

            def finished(task: asyncio.Task[Any]) -> None:
                self.running = None
                if task.cancelled():
                    done.set_exception(KeyboardInterrupt())
                elif task.exception() is not None:
                    done.set_exception(task.exception())
                else:
                    done.set_result(task.result())

            task.add_done_callback(finished)

        self.loop.call_soon_threadsafe(start)
        try:
            done.result()
        except SystemExit:
            raise
        except KeyboardInterrupt:
            self.write("\nKeyboardInterrupt\n")
        except BaseException as exc:
            if not self.piped:
                self.showtraceback()
                return
            self.failure = exc
            raise SystemExit from None  # the shell reports it once the input has ended


@click.command()
@click.option("--url", help="Open this page in the tab first.")
@click.option("--profile", help="Persistent profile to launch with.")
@endpoint_option
@pass_settings
def shell(settings: Settings, url: str | None, profile: str | None) -> None:
    """An asyncio Python prompt with `browser`, `tab` and `site` ready (top-level await works).

    Statements may also be piped in: `echo 'print(await tab.evaluate("1+1"))' | ego shell`.
    Then there are no prompts, and the first statement that fails stops the rest: its own
    frames and one error line are printed, and the exit code is non-zero, as `ego script`.
    """
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    stack = contextlib.AsyncExitStack()
    try:
        try:
            browser = loop.run_until_complete(
                stack.enter_async_context(settings.browser(profile=profile))
            )
            browser.site.profile_hint = CLI_PROFILE_HINT
            opening = browser.new_tab(as_url(url)) if url else browser.new_tab()
            tab = loop.run_until_complete(opening)
        except EgoError as exc:
            loop.run_until_complete(stack.aclose())
            sys.exit(settings.output.error(exc))
        names: dict[str, Any] = {
            "__name__": "__console__",
            "__doc__": None,
            "asyncio": asyncio,
            "ego": sys.modules["ego"],
            "browser": browser,
            "tab": tab,
            "site": browser.site,
        }
        console = AsyncConsole(names, loop, piped=not sys.stdin.isatty())
        _interact(console, loop)
        # An attached browser outlives the shell: leave no tab behind in it.
        with contextlib.suppress(EgoError):
            loop.run_until_complete(tab.close())
        if console.failure is not None:
            sys.exit(_report(settings, console.failure))
    finally:
        with contextlib.suppress(EgoError, OSError):
            loop.run_until_complete(stack.aclose())
        loop.close()


def _report(settings: Settings, failure: BaseException) -> int:
    """Print a failed piped statement as ``ego script`` prints a script's exception: its own
    frames, then one error line; return the exit code."""
    text = script_traceback(failure, Path(STDIN))
    if text:
        click.echo(text, err=True, nl=False)
    if isinstance(failure, EgoError):
        return settings.output.error(failure)
    if isinstance(failure, SyntaxError):
        where = f" (line {failure.lineno})" if failure.lineno else ""
        return settings.output.error(ScriptError(f"SyntaxError: {failure.msg}{where}"))
    return settings.output.error(ScriptError(f"{type(failure).__name__}: {failure}"))


def _interact(console: AsyncConsole, loop: asyncio.AbstractEventLoop) -> None:
    """Read statements in a thread while the loop runs here; return when the prompt ends."""

    def read() -> None:
        try:
            console.interact(banner="" if console.piped else BANNER, exitmsg="")
            if console.piped and console.buffer and console.failure is None:
                # The input ended inside a statement: it never ran, and that is said.
                start = console.lines_read - len(console.buffer) + 1
                console.failure = SyntaxError(
                    "the input ended inside a statement", (STDIN, start, 0, console.buffer[0])
                )
        except SystemExit:
            pass  # exit() or quit(): leave like Ctrl+D
        finally:
            loop.call_soon_threadsafe(loop.stop)

    reader = threading.Thread(target=read, name="ego shell", daemon=True)
    reader.start()
    while True:
        try:
            loop.run_forever()
        except KeyboardInterrupt:
            # Ctrl+C reaches the main thread: stop the running statement, keep the prompt.
            running = console.running
            if running is not None and not running.done():
                running.cancel()
            continue
        break
