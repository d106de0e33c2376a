"""Preparing a tool call: every check that needs no browser, done once, in one place.

A call is prepared in two steps so that work over many inputs (a pool's map, a batch) checks
what all inputs share once: :func:`resolve` finds the site and the declared tool and checks
the confirmation; :func:`bind` checks one input's args and loads the tool's code. The result,
a :class:`ToolCall`, is what :meth:`ego.site.Site.run_call` runs; nothing in a front end
repeats any of these steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from .errors import ConfirmationRequiredError, ToolLoadError
from .learning.catalog.manifest import BrowserToolSpec, Manifest, PythonToolSpec, ToolSpec
from .learning.catalog.registry import Learnings, LoadedSource, SiteEntry
from .learning.health.recorder import record_refusal

if TYPE_CHECKING:
    # Only a save's gate makes a case's call: a tool call does not load them.
    from .learning.cases.format import LearningCase
    from .learning.plan.save_plan import ToolPlan

__all__ = [
    "CallOptions",
    "ToolCall",
    "ToolRef",
    "ToolRefs",
    "bind",
    "case_call",
    "prepare",
    "resolve",
]


@dataclass(frozen=True, slots=True)
class CallOptions:
    """How a tool call runs.

    Attributes:
        timeout: seconds the tool may run (the manifest's ``timeout``, else the tab's).
        confirm: must be True for a tool whose side effect is ``irreversible``.
        check_returns: validate the result against the manifest's ``returns`` schema.
        cache: False runs the plain wrap and leaves localStorage alone.
    """

    timeout: float | None = None
    confirm: bool = False
    check_returns: bool = False
    cache: bool = True


#: The options of a call that names none.
DEFAULTS = CallOptions()


@dataclass(frozen=True, slots=True)
class ToolRef:
    """A declared tool that may run with ``options`` (site found, tool declared, confirmed)."""

    site_id: str
    tool: str
    entry: SiteEntry
    manifest: Manifest
    spec: ToolSpec
    options: CallOptions

    @property
    def subject(self) -> str:
        """``site/tool``, as messages name the tool."""
        return f"{self.site_id}/{self.tool}"


# Not frozen, though nothing changes a call once made: a frozen dataclass sets each field
# through object.__setattr__, and a hot call makes one per call. Measured between calls on
# another Chrome (caches cold, as section 5 of bench/bench_tools.py runs them), the frozen
# one cost about 3.5 us more per call, close to 2% of the whole call.
@dataclass(slots=True)
class ToolCall:
    """A call that passed every check that needs no browser, ready to run in a tab; read-only
    once made (what it holds was checked).

    Attributes:
        ref: the tool and the options.
        args: the checked args.
        source: a browser tool's code, loaded and normalised.
        function: a Python tool's ``run``.
        embedded: the args as the JSON literal a browser tool's call carries.
    """

    ref: ToolRef
    args: dict[str, Any]
    source: LoadedSource | None
    function: Callable[..., Any] | None
    embedded: str


class ToolRefs:
    """The :class:`ToolRef` of each tool called with the default options, kept by what makes
    the calls of one learnings (a :class:`ego.Site` keeps one): a repeat call whose site entry
    and tool spec are the very objects the learnings answer now (the registry keeps them while
    nothing changed; another learnings answers others) takes its ref as it is, its checks
    passed. Emptied when it outgrows its bound."""

    __slots__ = ("_refs",)

    #: How many refs it keeps before it starts afresh.
    LIMIT: Final = 4096

    def __init__(self) -> None:
        self._refs: dict[tuple[str, str, bool], ToolRef] = {}

    def get(self, site_id: str, tool: str, browser_only: bool) -> ToolRef | None:
        """The ref kept for this tool, if any (not checked against the learnings)."""
        return self._refs.get((site_id, tool, browser_only))

    def keep(self, ref: ToolRef, browser_only: bool) -> None:
        """Keep ``ref``, resolved with the default options."""
        if len(self._refs) >= self.LIMIT:
            self._refs.clear()
        self._refs[(ref.site_id, ref.tool, browser_only)] = ref


def resolve(
    learnings: Learnings,
    site_id: str,
    tool: str,
    options: CallOptions = DEFAULTS,
    *,
    browser_only: bool = False,
    refs: ToolRefs | None = None,
) -> ToolRef:
    """Find ``site_id``/``tool`` and check that it may run with ``options``. Reads no tool file.

    Args:
        learnings: where the site is found.
        site_id: the site's id.
        tool: a tool the manifest declares.
        options: how the call runs.
        browser_only: refuse a Python tool (for ``run_browser_tool``).
        refs: the refs kept for ``learnings``' calls: a call with the default options takes
            its ref from there when nothing changed, and keeps it there.

    Raises:
        UnknownSiteError, InvalidManifestError, UnknownToolError: no such usable tool.
        ToolLoadError: ``browser_only`` and the tool is a Python tool.
        ConfirmationRequiredError: an irreversible tool without ``confirm``.
    """
    entry, spec = learnings.tool(site_id, tool)
    if refs is not None and options is DEFAULTS:
        ref = refs.get(site_id, tool, browser_only)
        if ref is not None and ref.entry is entry and ref.spec is spec:
            return ref
    if browser_only and not isinstance(spec, BrowserToolSpec):
        raise ToolLoadError(f"{site_id}/{tool} is a Python tool: call site.run_tool() for it")
    ref = ToolRef(site_id, tool, entry, entry.require(), spec, options)
    try:
        ConfirmationRequiredError.check(ref.subject, spec.side_effect, options.confirm)
    except ConfirmationRequiredError as exc:
        # Recorded apart in the tool's health: it says nothing about whether the tool works.
        record_refusal(learnings, entry, spec, exc)
        raise
    if refs is not None and options is DEFAULTS:
        refs.keep(ref, browser_only)
    return ref


def bind(learnings: Learnings, ref: ToolRef, args: Any) -> ToolCall:
    """Check ``args`` (a JSON object, None for ``{}``) against ``ref``'s schema; load the code.

    Args may be any JSON object nested at most :data:`ego.runtime.js.MAX_JSON_DEPTH` levels deep
    (the args object is level 1).

    Raises:
        InvalidArgsError: the args fail the schema (names the field), are not JSON (a lone
            surrogate, a Python object, a cycle, an integer beyond 64 bits) or nest deeper
            than the limit (names the depth and the limit); nothing is sent.
        UnsafePathError: the tool's path leaves the site folder.
        ToolLoadError: the tool file is missing, empty, or (Python) fails to import.
    """
    spec = ref.spec
    checked, embedded = learnings.checked_args(ref.site_id, spec, args)
    if isinstance(spec, BrowserToolSpec):
        source = learnings.browser_source(ref.site_id, spec, ref.entry)
        return ToolCall(ref, checked, source, None, embedded)
    assert isinstance(spec, PythonToolSpec)
    return ToolCall(ref, checked, None, learnings.python_callable(ref.site_id, spec), embedded)


def prepare(
    learnings: Learnings,
    site_id: str,
    tool: str,
    args: Any,
    options: CallOptions = DEFAULTS,
    *,
    browser_only: bool = False,
    refs: ToolRefs | None = None,
) -> ToolCall:
    """:func:`resolve` then :func:`bind`: one call, every browser-free check done.

    Args:
        refs: as :func:`resolve`'s.

    Raises:
        Everything :func:`resolve` and :func:`bind` raise.
    """
    if refs is not None and options is DEFAULTS:
        # A browser tool called before, its site and source unchanged (one look at the
        # watcher), and resolved then: only the args are left to check.
        hot = learnings.hot_tool(site_id, tool)
        # Only names are in the table (hot_tool answered): another key may not hash.
        ref = refs.get(site_id, tool, browser_only) if hot is not None else None
        if hot is not None and ref is not None and ref.entry is hot[0] and ref.spec is hot[1]:
            checked, embedded = learnings.checked_args(site_id, ref.spec, args)
            return ToolCall(ref, checked, hot[2], None, embedded)
    ref = resolve(learnings, site_id, tool, options, browser_only=browser_only, refs=refs)
    return bind(learnings, ref, args)


def case_call(
    learnings: Learnings,
    case: LearningCase,
    timeout: float,
    candidate: tuple[ToolPlan, LoadedSource] | None = None,
) -> ToolCall:
    """The call an offline case (``tests/cases.json``) makes of its tool.

    It is confirmed (every request is answered by the case's recording, so even an
    irreversible tool sends nothing out) and checks ``returns`` unless the case expects an
    error or says not to.

    Args:
        learnings: where the case's site is.
        case: the case.
        timeout: seconds the tool may run.
        candidate: a planned save and its new source, not written yet: the call runs that
            version of the tool, as the planned manifest declares it (the save gate).

    Raises:
        Everything :func:`prepare` raises.
    """
    options = CallOptions(timeout, True, case.check_returns and case.expect_error is None)
    if candidate is None:
        return prepare(learnings, case.site_id, case.tool, case.args, options)
    plan, source = candidate
    spec = plan.parsed.browser_tools[plan.tool]
    # A site the save creates has no folder yet: its entry is the one the save will write.
    site = (
        SiteEntry(plan.site_id, plan.workspace, plan.workspace / plan.site_id, plan.parsed, None)
        if plan.base == "new"
        else learnings.find(plan.site_id)
    )
    ref = ToolRef(plan.site_id, plan.tool, site, plan.parsed, spec, options)
    checked, embedded = learnings.checked_args(plan.site_id, spec, case.args)
    return ToolCall(ref, checked, source, None, embedded)
