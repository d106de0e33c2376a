"""What every ``ego`` command shares: settings, the browser to use, options, arg parsing.

The global options (``--workspace``, ``--endpoint``, ``--new-browser``, ``--json``) sit on the
``ego`` group and, through :func:`accept_global_options`, on every command too, so they work
before or after the command's name. The browser a command gets (:meth:`Settings.browser`) is
the one ``--endpoint`` names, else the one ``ego launch`` keeps (see :mod:`.state`) when it
runs, else a new Chrome.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import click
import orjson

from ..errors import BrowserError, ChromeLaunchError, EgoError, ProfileInUseError
from ..learning.health.origin import front_end
from .output import EXIT_INTERRUPTED, Output

if TYPE_CHECKING:
    from ..api import Browser
    from ..learning.catalog.registry import Learnings
    from . import state

__all__ = [
    "GLOBAL_OPTIONS",
    "START_URL_HELP",
    "Settings",
    "accept_global_options",
    "args_options",
    "common",
    "endpoint_option",
    "json_option",
    "new_browser_option",
    "parse_args",
    "parse_start_urls",
    "pass_settings",
    "run_async",
    "state_bounds",
    "storage_state_bounds_options",
    "workspace_option",
]

T = TypeVar("T")


#: The options every command accepts, before or after its name.
GLOBAL_OPTIONS = ("--workspace", "--endpoint", "--new-browser", "--json", "--start-url")

#: Seconds to reach the kept browser before starting a new one instead.
_ATTACH_TIMEOUT = 3.0


class Settings:
    """Options every command shares.

    Attributes:
        endpoint: the browser ``--endpoint`` (or ``$EGO_ENDPOINT``) names, if any.
        endpoint_source: ``"--endpoint"`` or ``"EGO_ENDPOINT"``: where :attr:`endpoint` came
            from (for messages).
        new_browser: ``--new-browser`` (or ``$EGO_NEW_BROWSER``): never attach to the kept
            browser.
        output: how to print.
        workspace: the agent workspace, as given (``--workspace`` or ``$EGO_WORKSPACE``).
    """

    def __init__(
        self,
        endpoint: str | None = None,
        json_mode: bool | None = None,
        workspace: str | None = None,
        new_browser: bool = False,
        start_url_values: tuple[str, ...] = (),
    ) -> None:
        self.endpoint = endpoint
        self.endpoint_source = "--endpoint"
        self.output = Output(json_mode)
        self.workspace = workspace
        self.new_browser = new_browser
        self.start_url_values: list[str] = list(start_url_values)

    def start_urls(self, site_id: str | None = None) -> tuple[tuple[str, str], ...]:
        """The ``--start-url`` values (``$EGO_START_URL`` first) as (site, URL) pairs.

        Args:
            site_id: the site a bare ``--start-url URL`` is for (the command's own site);
                None for a command that names no site.

        Raises:
            click.UsageError: a value is not ``SITE=URL`` (or a bare URL where the command
                names a site).
        """
        return parse_start_urls(self.start_url_values, site_id)

    def start_url(self, site_id: str, default: str | None) -> str | None:
        """Where ``site_id``'s tools open: its last ``--start-url``, else ``default`` (the
        manifest's ``startUrl``).

        Raises:
            click.UsageError: as :meth:`start_urls`.
        """
        found = default
        for site, url in self.start_urls(site_id):
            if site == site_id:
                found = url
        return found

    def learnings(self) -> Learnings:
        from ..learning.catalog.registry import Learnings

        return Learnings(workspace=self.workspace)

    def kept_browser(
        self, *, profile: str | None = None, headless: bool = True, checked: bool = True
    ) -> state.KeptBrowser | None:
        """The browser ``ego launch`` keeps, when this command should attach to it.

        Not with ``--endpoint`` or ``--new-browser``, nor when it runs another profile than
        ``profile`` (that one gets a Chrome of its own). ``checked=False`` skips asking
        whether its Chrome still runs (for a caller that finds out by reaching it).

        Raises:
            ProfileInUseError: ``profile`` is the kept browser's, which has no window, and a
                window is wanted: neither attaching nor a second Chrome on it can work.
        """
        if self.endpoint or self.new_browser:
            return None
        from . import state  # the kept browser's record: only commands that use one

        kept = state.kept() if checked else state.read()
        if kept is None or (profile is not None and profile != kept.profile):
            return None
        if kept.headless and not headless:
            if profile is None:
                return None
            raise ProfileInUseError(
                f"profile {profile} is open without a window in the browser `ego launch` keeps "
                f"(pid {kept.pid}): run `ego close`, then this command again (or keep one with "
                "a window: `ego launch --headed`)",
                profile_dir=kept.profile_dir,
                pid=kept.pid,
            )
        return kept

    @contextlib.asynccontextmanager
    async def browser(
        self,
        *,
        profile: str | None = None,
        headless: bool = True,
        site_id: str | None = None,
        slow_mo: float = 0,
        port: int | None = None,
    ) -> AsyncIterator[Browser]:
        """The browser to use: ``--endpoint``'s, else the kept one, else a launched Chrome,
        with every ``--start-url`` set on its ``site`` (a bare URL for ``site_id``).

        Closing it at the end only disconnects from an attached browser.

        Args:
            profile: the profile a launched Chrome uses (the kept browser only when it runs
                this one).
            headless: False wants a window: the kept browser only if it has one, and a
                launched Chrome opens one (refused at once where there is no display).
            site_id: the command's own site, which a bare ``--start-url URL`` is for.
            slow_mo: milliseconds to pause before each input and navigation (``--slow-mo``).
            port: a debugging port for a launched Chrome (0: Chrome's choice), so that
                another process can reach it; none by default.

        Raises:
            click.UsageError: a ``--start-url`` is malformed (before any browser starts).
            ChromeLaunchError: a window is wanted and this machine has no display.
        """
        start_urls = self.start_urls(site_id)
        learnings = self.learnings()
        browser: Browser | None = None
        if self.endpoint:
            with self.output.progress(f"connecting to {self.endpoint}"):
                # Imported here: commands that read only files never pay for the browser.
                from ..api import connect

                browser = await connect(self.endpoint, learnings=learnings, slow_mo=slow_mo)
        else:
            kept = self.kept_browser(profile=profile, headless=headless)
            if kept is not None:
                browser = await self._attach(kept, learnings, slow_mo)
            if browser is None:
                with self.output.progress("starting Chrome"):
                    browser = await self._launch(profile, headless, learnings, slow_mo, port)
        for start_site, start_url in start_urls:
            browser.site.set_start_url(start_site, start_url)
        try:
            yield browser
        finally:
            await browser.close()

    async def _attach(
        self, kept: state.KeptBrowser, learnings: Learnings, slow_mo: float = 0
    ) -> Browser | None:
        """Attach to the kept browser; None (and a stale record removed) when it is gone."""
        try:
            from ..api import connect

            browser = await connect(
                kept.websocket, learnings=learnings, timeout=_ATTACH_TIMEOUT, slow_mo=slow_mo
            )
        except BrowserError:
            from . import state

            if not state.pid_alive(kept):
                state.forget(kept.pid)
            return None
        self.say_attached(kept)
        return browser

    def say_attached(self, kept: state.KeptBrowser) -> None:
        """Tell a person at a terminal which browser the command uses, and how not to."""
        if sys.stderr.isatty():
            click.echo(
                f"ego: using the browser `ego launch` keeps ({kept.describe()}); "
                "--new-browser starts a fresh one",
                err=True,
            )

    async def _launch(
        self,
        profile: str | None,
        headless: bool,
        learnings: Learnings,
        slow_mo: float = 0,
        port: int | None = None,
    ) -> Browser:
        if not headless:
            from .display import check_display

            check_display(_command_name())
        try:
            from ..api import launch

            return await launch(
                profile=profile, headless=headless, learnings=learnings, slow_mo=slow_mo, port=port
            )
        except ProfileInUseError as exc:
            from . import state

            kept = state.kept()
            if kept is None or kept.pid != exc.pid:
                raise
            # The profile is the kept browser's: say how to use it, in command-line words.
            raise ProfileInUseError(
                f"profile {kept.profile} is in use by the browser `ego launch` keeps "
                f"(pid {kept.pid}): drop --new-browser to attach to it, or run `ego close` first",
                profile_dir=exc.profile_dir,
                pid=exc.pid,
            ) from None
        except ChromeLaunchError as exc:
            if headless:
                raise
            from .display import no_display_error

            raise no_display_error(exc, _command_name()) from None


def _command_name() -> str:
    """The running command as a person typed it (``ego run``), for messages."""
    context = click.get_current_context(silent=True)
    return context.command_path if context is not None else "ego"


def run_async(settings: Settings, coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; turn an ego error into one line and an exit code.

    The tool runs it makes are the command line's in the tools' health.
    """
    try:
        import asyncio  # a command that needs no loop (--help) never imports it

        with front_end("cli"):
            return asyncio.run(coroutine)
    except EgoError as exc:
        sys.exit(settings.output.error(exc))
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)


pass_settings = click.make_pass_decorator(Settings, ensure=True)


def _settings(ctx: click.Context) -> Settings:
    return ctx.ensure_object(Settings)


def _remember_endpoint(ctx: click.Context, _: click.Parameter, value: str | None) -> None:
    if value:
        settings = _settings(ctx)
        settings.endpoint = value
        settings.endpoint_source = "--endpoint"


def _remember_json(ctx: click.Context, _: click.Parameter, value: bool | None) -> None:
    if value is not None:
        _settings(ctx).output = Output(value)


def _remember_workspace(ctx: click.Context, _: click.Parameter, value: str | None) -> None:
    if value:
        _settings(ctx).workspace = value


def _remember_new_browser(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value:
        _settings(ctx).new_browser = True


def _remember_start_urls(ctx: click.Context, _: click.Parameter, values: tuple[str, ...]) -> None:
    if values:
        _settings(ctx).start_url_values.extend(values)


#: What ``--start-url`` does, for every command's help.
START_URL_HELP = (
    "Open SITE's tools at URL (a local copy on another port, a staging host) instead of its "
    "manifest's startUrl; tabs on URL's host and port count as the site's. A bare URL is for "
    "the command's own site. Repeatable; $EGO_START_URL holds SITE=URL pairs for every command."
)


_NO_BROWSER = " (This command uses no browser; accepted so that global options work anywhere.)"


def _endpoint(browser: bool = True) -> click.Option:
    return click.Option(
        ["--endpoint"],
        metavar="URL",
        expose_value=False,
        callback=_remember_endpoint,
        help="Attach to this browser (http://host:port or ws://...) instead of the one "
        "`ego launch` keeps or a new one." + ("" if browser else _NO_BROWSER),
    )


def _new_browser(browser: bool = True) -> click.Option:
    return click.Option(
        ["--new-browser"],
        is_flag=True,
        expose_value=False,
        callback=_remember_new_browser,
        help="Start a fresh Chrome even when `ego launch` keeps one."
        + ("" if browser else _NO_BROWSER),
    )


def _json(_: bool = True) -> click.Option:
    return click.Option(
        ["--json/--no-json", "json_mode"],
        default=None,
        expose_value=False,
        callback=_remember_json,
        help="JSON output (the default when stdout is not a terminal).",
    )


def _workspace(_: bool = True) -> click.Option:
    return click.Option(
        ["--workspace"],
        metavar="DIR",
        type=click.Path(file_okay=False),
        expose_value=False,
        callback=_remember_workspace,
        help="Agent workspace whose learnings/ and skills/ come first.",
    )


def _start_url(_: bool = True) -> click.Option:
    return click.Option(
        ["--start-url"],
        multiple=True,
        metavar="[SITE=]URL",
        expose_value=False,
        callback=_remember_start_urls,
        help=START_URL_HELP,
    )


def _decorator(make: Callable[[], click.Option]) -> Callable[[Callable[..., Any]], Any]:
    def decorate(function: Callable[..., Any]) -> Any:
        option = make()
        if isinstance(function, click.Command):
            function.params.append(option)
        else:
            params = function.__dict__.setdefault("__click_params__", [])
            params.append(option)
        return function

    return decorate


#: ``--endpoint`` on a command that uses a browser.
endpoint_option = _decorator(_endpoint)
#: ``--new-browser`` on a command that uses a browser.
new_browser_option = _decorator(_new_browser)
#: ``--json/--no-json``.
json_option = _decorator(_json)
#: ``--workspace DIR``.
workspace_option = _decorator(_workspace)


def common(function: Callable[..., Any]) -> Callable[..., Any]:
    """The options of a command that uses a browser: ``--endpoint``, ``--new-browser``,
    ``--json``."""
    return endpoint_option(new_browser_option(json_option(function)))  # type: ignore[no-any-return]


_GLOBAL_MAKERS: dict[str, Callable[[bool], click.Option]] = {
    "--workspace": _workspace,
    "--endpoint": _endpoint,
    "--new-browser": _new_browser,
    "--json": _json,
    "--start-url": _start_url,
}


def accept_global_options(command: click.Command) -> None:
    """Give ``command`` and its subcommands each global option they do not declare.

    A command that declares ``--endpoint`` uses a browser; on any other, ``--endpoint`` and
    ``--new-browser`` are accepted (so that they work in any position) and say they are
    ignored. A command's own option of the same name (``ego batch --endpoint``, repeatable)
    is left alone.
    """
    declared = {name for param in command.params for name in getattr(param, "opts", ())}
    declared |= {name for param in command.params for name in getattr(param, "secondary_opts", ())}
    browser = "--endpoint" in declared
    for name, make in _GLOBAL_MAKERS.items():
        if name not in declared:
            command.params.append(make(browser))
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            accept_global_options(sub)


def args_options(
    what: str, one: str, schema: str, note: str = ""
) -> Callable[[Callable[..., Any]], Any]:
    """``--args JSON`` and ``--arg K=V`` (repeatable), read by :func:`parse_args`.

    Args:
        what: what the values are, as help text says it ("Tool args", "Params").
        one: one of them ("arg", "param").
        schema: whose schema types ``--arg`` values ("the tool's", "the skill's").
        note: appended to both helps (e.g. " (with --run)").
    """

    def decorate(function: Callable[..., Any]) -> Any:
        function = click.option(
            "--arg",
            "pairs",
            multiple=True,
            metavar="K=V",
            help=f"One {one}{note}, V read as the type {schema} schema gives K "
            "(JSON for arrays/objects).",
        )(function)
        return click.option("--args", "args_json", help=f"{what} as a JSON object{note}.")(function)

    return decorate


def parse_args(args_json: str | None, pairs: tuple[str, ...], schema: Any = None) -> dict[str, Any]:
    """Tool args from ``--args JSON`` and ``--arg k=v``.

    Args:
        args_json: a JSON object, or None.
        pairs: ``k=v`` texts; each ``v`` is read as the type ``schema`` declares for ``k``
            (a string field keeps ``"123"`` a string), else as JSON when it parses, else text.
        schema: the args object's JSON Schema (the tool's or skill's), or None.

    Raises:
        click.BadParameter: ``--args`` is not a JSON object or a pair is not ``k=v``.
        InvalidArgsError: a value does not read as its field's type (the message says what
            it takes).
    """
    from .arg_values import property_schema, value_from_text

    args: dict[str, Any] = {}
    if args_json:
        try:
            loaded = orjson.loads(args_json)
        except orjson.JSONDecodeError as exc:
            raise click.BadParameter(f"not JSON: {exc}", param_hint="--args") from None
        if not isinstance(loaded, dict):
            raise click.BadParameter("must be a JSON object", param_hint="--args")
        args.update(loaded)
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not k=v", param_hint="--arg")
        args[key] = value_from_text(key, value, property_schema(schema, key))
    return args


def parse_start_urls(values: Iterable[str], site_id: str | None) -> tuple[tuple[str, str], ...]:
    """``--start-url`` values as (site, URL) pairs, each URL as :func:`as_url` reads it.

    Args:
        values: ``SITE=URL`` texts, or a bare ``URL`` for ``site_id``.
        site_id: the site a bare URL is for; None refuses bare URLs.

    Raises:
        click.UsageError: a value is neither.
    """
    from ..learning.catalog.matching import as_url

    pairs = []
    for value in values:
        site, sep, url = value.partition("=")
        if not sep or "/" in site or ":" in site:
            site, url = "", value  # a bare URL (its query may hold "=")
        site, url = site.strip(), url.strip()
        if not url:
            raise click.UsageError(f"--start-url {value!r} is not SITE=URL")
        if not site:
            if site_id is None:
                raise click.UsageError(
                    f"--start-url {value!r} names no site, and this command has none of its "
                    "own: give SITE=URL"
                )
            site = site_id
        pairs.append((site, as_url(url)))
    return tuple(pairs)


#: What the storage-state bound options say of their defaults (ego.page.storage_state's
#: MAX_STATE_BYTES and MAX_STATE_ITEMS; importing that module here would load the page layer
#: for every command: tests/test_storage_state_bounds.py checks they agree).
STATE_MB_DEFAULT = 64
STATE_ITEMS_DEFAULT = 20_000


def storage_state_bounds_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--max-storage-state MB`` and ``--max-storage-state-items N``: how large a
    ``--storage-state`` file (and, for ``ego mcp``, one ``load_storage_state`` reads) may be."""
    items = click.option(
        "--max-storage-state-items",
        "max_state_items",
        type=click.IntRange(min=1),
        default=STATE_ITEMS_DEFAULT,
        show_default=True,
        metavar="N",
        help="The most cookies, origins and localStorage entries a storage state file may hold.",
    )
    size = click.option(
        "--max-storage-state",
        "max_state_mb",
        type=click.IntRange(min=1),
        default=STATE_MB_DEFAULT,
        show_default=True,
        metavar="MB",
        help="The largest storage state file read, in MB; a larger one is refused before it "
        "is read.",
    )
    return size(items(function))


def state_bounds(max_state_mb: int, max_state_items: int) -> dict[str, int]:
    """The keywords of ``read_storage_state`` the bound options give."""
    return {"max_bytes": max_state_mb << 20, "max_items": max_state_items}
