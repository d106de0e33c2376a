"""Tools drafted from page actions: ``ego suggest SITE --actions FILE``.

Where a site has no API to call (its pages are rendered on the server), what worked is the
sequence of page actions the agent made, kept by ``tab.record_actions()`` as a flow
(:mod:`.flow`). :func:`suggest_actions` drafts one Python tool per flow (recordings of the same
flow, the same steps on the same elements, make one tool), a ``run(ctx, args)`` driving the
tab's verbs as a person would:

- it opens the flow's first page, then runs each step on its durable selector (the role and
  name, the label, the text or the CSS the recording checked), never on a ref;
- each value typed or chosen is an arg with the recorded value as its example; with two
  recordings or more, a value that was the same in every one stays a constant; a secret
  (a password) is an arg with no example;
- after a step that led to another page it waits for that page's URL, and before the read for
  the element it reads: the waits a person makes;
- it returns what the agent read at the end (a snapshot of an element, or of the lines
  holding a text, refs removed), with a ``returns`` schema from the recorded read.

The side effect comes from the HAR recorded alongside: a flow that sent anything but
GET or HEAD (a form that posts) is a write, drafted ``irreversible`` unless the user says
otherwise when saving; a flow without a HAR is drafted ``irreversible`` too, with a note. The
HAR gives the draft its offline case: the flow replayed at the page's real origin, expecting
what the agent read. Drafts go where other drafts go (:mod:`.drafts`) and are kept through
the same save gate.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from ...errors import HarFormatError
from ...replay.har import Har
from ...replay.secrets import REDACTED
from ..catalog.matching import domain_of
from ..catalog.registry import Learnings
from .action_source import FlowPlan, FlowValue, flow_source
from .drafting import CaseDraft, DraftedTool, SuggestReport
from .drafts import SiteSoFar, write_drafts
from .flow import ACTING_VERBS, FlowStep, RecordedFlow, load_flow
from .values import schema_of

__all__ = ["ActionsReport", "draft_flow", "suggest_actions", "suggest_actions_from"]

#: The longest tool name drafted from a flow.
MAX_NAME: Final = 40
_READ_ONLY_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
_VALUE_VERBS: Final = frozenset({"type", "fill", "select"})


@dataclass
class ActionsReport(SuggestReport):
    """What :func:`suggest_actions_from` drafted: one tool per flow (``hars`` are the flow
    files read)."""

    def format(self) -> str:
        """A few lines for a person."""
        lines = [
            f"{len(self.drafts)} flow(s) of page actions on {self.site_id} drafted as Python "
            f"tools from {len(self.hars)} recording(s):"
        ]
        for draft in self.drafts:
            args = ", ".join(draft.args) or "no args"
            lines.append(
                f"  {draft.tool}: {draft.endpoint} ({draft.side_effect}; {args}; "
                f"{len(draft.cases)} case(s))"
            )
            lines += [f"    note: {note}" for note in draft.notes]
        if self.manifest is not None:
            lines.append(f"a manifest is drafted for the new site: domains {self.domains}")
        if self.drafts_dir is not None:
            lines.append(f"drafts in {self.drafts_dir}; none is live until saved")
        return "\n".join(lines)


def suggest_actions(
    site_id: str,
    flow_paths: list[str | os.PathLike[str]] | str | os.PathLike[str],
    *,
    learnings: Learnings | None = None,
    workspace: str | os.PathLike[str] | None = None,
    write: bool = True,
    name: str | None = None,
) -> ActionsReport:
    """Draft Python tools for ``site_id`` from recordings of page actions
    (``tab.record_actions``)::

        report = ego.suggest_actions("shop", ["order.actions.json"], workspace="~/agent")
        print(report.format())

    Args:
        site_id: the site the tools are for. A site with no learning yet gets a manifest
            drafted from the first page's host.
        flow_paths: one recording or several (recordings of the same flow make one tool,
            and a value they all share stays a constant).
        learnings: the roots (the site's domains and tools are read there; drafts go to their
            workspace). By default the workspace's (``workspace`` or ``EGO_WORKSPACE``) and
            the project's.
        workspace: the agent workspace, when ``learnings`` is not given.
        write: write the drafts (the default); False only reports.
        name: the tool's name, with one flow (default: from its first page's path).

    Raises:
        HarFormatError: a recording, or the HAR beside it, cannot be read.
        WorkspaceRequiredError: ``write`` and no workspace.
        ValueError: no recording, one with no step, or a ``name`` that is no identifier.
    """
    known = SiteSoFar.of(site_id, learnings, workspace)
    paths = [flow_paths] if isinstance(flow_paths, str | os.PathLike) else list(flow_paths)
    report = suggest_actions_from(
        site_id, paths, domains=known.domains, existing_tools=set(known.tools), name=name
    )
    if write:
        write_drafts(known.learnings, report)
    return report


def suggest_actions_from(
    site_id: str,
    flow_paths: list[str | os.PathLike[str]],
    *,
    domains: list[str] | None = None,
    existing_tools: set[str] | frozenset[str] = frozenset(),
    name: str | None = None,
) -> ActionsReport:
    """Draft a Python tool per flow of page actions (see the module docstring). Writes
    nothing.

    Args:
        site_id: the site the tools are for.
        flow_paths: the flow files (``tab.record_actions``); those of the same flow make one
            tool.
        domains: the site's domains; None when the site has no learning yet (a manifest is
            drafted from the first flow's host).
        existing_tools: the site's tools (a draft never takes one's name).
        name: the tool's name (with one flow), instead of one made from its first page.

    Raises:
        HarFormatError: a flow file, or the HAR beside it, cannot be read.
        ValueError: no flow given, a flow has no step, or ``name`` is not an identifier.
    """
    if not flow_paths:
        raise ValueError("give at least one recording of page actions")
    if name is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", name):
        raise ValueError(f"the tool name {name!r} is not an identifier (letters, digits, _)")
    flows = [load_flow(path) for path in flow_paths]
    for flow in flows:
        if not flow.steps:
            raise HarFormatError(
                f"{flow.path}: the recording holds no page action to draft from",
                path=str(flow.path),
            )
    groups: dict[tuple[Any, ...], list[RecordedFlow]] = {}
    for flow in flows:
        groups.setdefault(_shape(flow), []).append(flow)
    first = _start_url(flows[0])
    manifest = None
    if domains is None:
        host = domain_of(first)
        domains = [host] if host else []
        manifest = {"id": site_id, "name": site_id, "domains": domains, "startUrl": first}
    report = ActionsReport(
        site_id,
        list(domains),
        manifest=manifest,
        hars=[flow.path for flow in flows if flow.path is not None],
    )
    taken = set(existing_tools)
    for group in groups.values():
        tool = name if name is not None and len(groups) == 1 else _tool_name(group[0], taken)
        taken.add(tool)
        report.drafts.append(draft_flow(site_id, tool, group))
    return report


def draft_flow(site_id: str, tool: str, flows: list[RecordedFlow]) -> DraftedTool:
    """The Python tool that replays ``flows`` (recordings of one flow) with args.

    Raises:
        HarFormatError: the HAR beside a flow cannot be read.
    """
    flow = flows[0]
    start = _start_url(flow)
    plan = FlowPlan(tool, start, _acting_steps(flow))
    _plan_values(plan, flows)
    _plan_waits(plan, flow)
    returns = schema_of([flow.read.text]) if flow.read is not None else None
    if flow.read is None:
        plan.notes.append(
            "the agent read nothing after the last step, so the tool returns null (an "
            "evaluate is not recorded: end the flow with a snapshot of what it should return, "
            "tab.snapshot(selector=...) or MCP take_snapshot)"
        )
    side_effect, posted = _side_effect(flows)
    if posted:
        plan.notes.append(
            f"the flow sent {posted}: a write, drafted irreversible; say otherwise when "
            "saving (--side-effect write, or read for a search that posts)"
        )
    elif side_effect == "irreversible":
        plan.notes.append(
            "no HAR was recorded with the flow (record_actions(har=True)), so what it sent is "
            "unknown: drafted irreversible"
        )
    for action in flow.left_out:
        plan.notes.append(
            f"the flow also did {action}, which a drafted tool does not replay (it replays "
            "navigate, click, type, select, check, uncheck and press): check the tool does "
            "without it, or add it to the tool's file by hand"
        )
    unchecked = [i for i, step in enumerate(plan.steps) if not step.checked and step.selector]
    for index in unchecked:
        plan.notes.append(
            f"step {index + 1} ({plan.steps[index].verb}) acts on "
            f"{plan.steps[index].selector!r}, the element's role and name: its page went "
            "before the selector could be checked to find it alone"
        )
    args = {
        value.name: _arg_schema(value, plan.steps[value.step])
        for value in plan.values.values()
        if value.name is not None
    }
    example = {
        value.name: (REDACTED if value.secret else value.values[0])
        for value in plan.values.values()
        if value.name is not None
    }
    drafted = DraftedTool(
        site_id=site_id,
        tool=tool,
        endpoint=_summary(plan, flow),
        origin=_origin(start),
        description=_description(plan, flow),
        args=args,
        returns=returns,
        side_effect=side_effect,
        auth="none",
        source=flow_source(plan, flow),
        calls=len(flows),
        constants={
            f"step {v.step + 1} {plan.steps[v.step].verb}": v.values[0]
            for v in plan.values.values()
            if v.constant and not v.secret
        },
        notes=plan.notes,
        kind="python",
    )
    har_path = flow.har_path()
    if har_path is not None:
        har = Har.load(har_path)
        case: dict[str, Any] = {
            "name": f"{tool}: the recorded flow",
            "har": f"{tool}.har",
            "url": start,
            "tool": tool,
            "args": example,
        }
        if flow.read is not None:
            case["expect"] = flow.read.text
        drafted.cases.append(CaseDraft(case, f"{tool}.har", har))
    else:
        plan.notes.append("no HAR beside the flow: no offline case; try the tool live")
    return drafted


# -- reading the flows ------------------------------------------------------------------------


def _acting_steps(flow: RecordedFlow) -> list[FlowStep]:
    return [step for step in flow.steps if step.verb in ACTING_VERBS]


def _shape(flow: RecordedFlow) -> tuple[Any, ...]:
    """What makes two recordings the same flow: the same steps on the same elements."""
    steps = tuple(
        (s.verb, s.selector or s.target if s.verb != "navigate" else _path(s.target or ""))
        for s in _acting_steps(flow)
    )
    read = (flow.read.selector, flow.read.find) if flow.read is not None else None
    return (*steps, read)


def _start_url(flow: RecordedFlow) -> str:
    first = flow.steps[0]
    if first.verb == "navigate" and first.target:
        return first.target
    return first.url


def _path(url: str) -> str:
    return urlsplit(url).path or "/"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _tool_name(flow: RecordedFlow, taken: set[str]) -> str:
    """``desk_order`` from the first page's path (``/desk/order``), kept apart from the
    site's tools."""
    words = re.findall(r"[a-z][a-z0-9]*", _path(_start_url(flow)).lower())[-3:] or ["flow"]
    name = "_".join(words)[:MAX_NAME].rstrip("_")
    candidate, counter = name, 1
    while candidate in taken:
        counter += 1
        candidate = f"{name}_{counter}"
    return candidate


def _arg_name(step: FlowStep, taken: set[str]) -> str:
    element = step.element or {}
    label = str(element.get("name") or "") or re.sub(r"^[#.]", "", step.target or "")
    base = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")[:MAX_NAME].strip("_") or "value"
    if base[0].isdigit():
        base = f"value_{base}"
    candidate, counter = base, 1
    while candidate in taken:
        counter += 1
        candidate = f"{base}_{counter}"
    taken.add(candidate)
    return candidate


def _plan_values(plan: FlowPlan, flows: list[RecordedFlow]) -> None:
    """Each typed or chosen value: an arg, or a constant when every recording (two or more)
    gave the same."""
    taken: set[str] = set()
    others = [_acting_steps(flow) for flow in flows]
    for index, step in enumerate(plan.steps):
        if step.verb not in _VALUE_VERBS:
            continue
        values = [steps[index].value for steps in others if index < len(steps)]
        secret = any(steps[index].secret for steps in others if index < len(steps))
        value = FlowValue(index, values, secret)
        same = len(flows) > 1 and all(v == values[0] for v in values)
        if secret or not same:
            value.name = _arg_name(step, taken)
        plan.values[index] = value


def _plan_waits(plan: FlowPlan, flow: RecordedFlow) -> None:
    """After a step that led to another page: wait for that page's URL."""
    steps = plan.steps
    for index, step in enumerate(steps):
        if step.verb == "navigate":
            continue
        following = steps[index + 1].url if index + 1 < len(steps) else _end(flow)
        if _same_page(step.url, following):
            continue
        wanted = _path(following)
        if wanted in step.url:
            parts = urlsplit(following)
            wanted = parts.path + (f"?{parts.query}" if parts.query else "")
        if wanted in step.url:
            plan.notes.append(
                f"step {index + 1} led to {following} whose URL the page had already: the "
                "tool waits for the next element only"
            )
            continue
        plan.waits[index] = wanted


def _end(flow: RecordedFlow) -> str:
    return flow.read.url if flow.read is not None else flow.end_url


def _same_page(before: str, after: str) -> bool:
    one, two = urlsplit(before), urlsplit(after)
    return (one.scheme, one.netloc, one.path, one.query) == (
        two.scheme,
        two.netloc,
        two.path,
        two.query,
    )


def _side_effect(flows: list[RecordedFlow]) -> tuple[str, str]:
    """``read`` when every HAR shows only GET and HEAD requests, else ``irreversible``; and
    the first request that was no read (``POST /desk/order/done``), or ``""``."""
    for flow in flows:
        har_path = flow.har_path()
        if har_path is None:
            return "irreversible", ""
        for entry in Har.load(har_path).entries:
            method = entry.request.method.upper()
            if method not in _READ_ONLY_METHODS:
                return "irreversible", f"{method} {_path(entry.request.url)}"
    return "read", ""


def _arg_schema(value: FlowValue, step: FlowStep) -> dict[str, Any]:
    element = step.element or {}
    label = str(element.get("name") or step.target or "")
    what = "typed into" if step.verb in ("type", "fill") else "chosen in"
    schema: dict[str, Any] = {}
    if any(isinstance(v, list) for v in value.values):
        schema = {"type": "array", "items": {"type": "string"}}
    else:
        schema = {"type": "string"}
    schema["required"] = True
    schema["description"] = f"what is {what} the field {label!r}"
    if value.secret:
        schema["description"] += " (a secret the recording redacted: give the real value)"
    else:
        schema["examples"] = list(dict.fromkeys(str(v) for v in value.values))[:3]
        if schema["type"] == "array":
            schema["examples"] = [v for v in value.values if isinstance(v, list)][:3]
    return schema


# -- writing the tool -------------------------------------------------------------------------


def _summary(plan: FlowPlan, flow: RecordedFlow) -> str:
    pages = list(dict.fromkeys([_path(plan.start), *(_path(s.url) for s in plan.steps[1:])]))
    end = _path(_end(flow))
    if end not in pages:
        pages.append(end)
    return f"page actions over {' -> '.join(pages)} ({len(plan.steps)} steps)"


def _description(plan: FlowPlan, flow: RecordedFlow) -> str:
    host = urlsplit(plan.start).netloc
    args = [v.name for v in plan.values.values() if v.name]
    given = f" with {', '.join(args)}" if args else ""
    read = ""
    if flow.read is not None:
        read = "; returns what the page showed"
        if flow.read.selector:
            read += f" of {flow.read.selector}"
    return (
        f"Goes through {_path(plan.start)} on {host}{given} as a person would{read}. Drafted "
        "by ego suggest from recorded page actions: say what it is for and when to use it."
    )
