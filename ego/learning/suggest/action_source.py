"""The source of a Python tool drafted from page actions (:mod:`.actions` plans it).

The tool is a ``run(ctx, args)`` that opens the flow's first page and runs each step on the
tab, on its durable selector, with its arg or its constant; waits for the next page after a
step that led to one, and for the element it reads before the read; and returns what the
page shows there, as a flow keeps a read (:func:`.flow.outline_text`). Every recorded text
(a URL, a selector, a value) is written as a Python literal (``repr``), never as code.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

from .flow import FlowStep, RecordedFlow

__all__ = ["PAGE_SECONDS", "FlowPlan", "FlowValue", "flow_source"]

#: Seconds the drafted tool waits for each next page.
PAGE_SECONDS: Final = 15.0
#: A role as a step's comment names it.
_ROLE: Final = re.compile(r"[a-z][a-z-]{0,39}")


@dataclass
class FlowValue:
    """A step's value: an arg (``name``) or a constant, with what each recording gave.

    Attributes:
        step: the step's index.
        values: what each recording typed or chose there.
        secret: the recording redacted it.
        name: the arg's name, or None for a constant.
    """

    step: int
    values: list[Any]
    secret: bool
    name: str | None = None
    label: str = ""

    @property
    def constant(self) -> bool:
        return self.name is None


@dataclass
class FlowPlan:
    """What the source is written from.

    Attributes:
        tool: the tool's name.
        start: the flow's first page.
        steps: the acting steps, in order.
        values: each typed or chosen value, by step index.
        waits: the URL to wait for after a step, by step index.
        notes: what a reader should check.
    """

    tool: str
    start: str
    steps: list[FlowStep]
    values: dict[int, FlowValue] = field(default_factory=dict)
    waits: dict[int, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _literal(value: Any) -> str:
    return repr(value)


def flow_source(plan: FlowPlan, flow: RecordedFlow) -> str:
    lines = [
        f'"""{plan.tool}: drafted by ego suggest from recorded page actions.',
        "",
        "Each step acts on the durable selector the recording found for its element; after a",
        "step that leads to another page it waits for that page's URL. Edit it as any Python",
        "tool (docs/learnings.md).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import re",
        "from typing import Any",
        "",
        f"START = {_literal(plan.start)}",
        "#: Seconds each next page may take to come.",
        f"PAGE_SECONDS = {PAGE_SECONDS}",
        "",
        "",
        "async def run(ctx: Any, args: dict[str, Any]) -> Any:",
        "    tab = ctx.tab",
        "    await tab.navigate(START)",
    ]
    for index, step in enumerate(plan.steps):
        if index == 0 and step.verb == "navigate" and step.target == plan.start:
            continue
        lines.append(f"    # step {index + 1}: {step.verb} {_literal(step.target)}{_named(step)}")
        lines += _step_lines(plan, index, step)
        wait = plan.waits.get(index)
        if wait is not None:
            lines.append(f"    await tab.wait_for(url={_literal(wait)}, timeout=PAGE_SECONDS)")
    read = flow.read
    if read is None:
        lines.append("    return None")
    else:
        lines.append("    # what the agent read at the end")
        if read.selector:
            selector = _literal(read.selector)
            lines.append(f"    await tab.wait_for(selector={selector}, timeout=PAGE_SECONDS)")
            lines.append(f"    return shown(await tab.snapshot(selector={selector}))")
        elif read.find:
            lines.append(f"    return shown(await tab.snapshot(find={_find(plan, read.find)}))")
        else:
            lines.append("    return shown(await tab.snapshot())")
    lines += [
        "",
        "",
        "def shown(snapshot: str) -> str:",
        '    """What a snapshot showed: its lines without the header (the URL) and the refs."""',
        '    lines = snapshot.split("\\n")[1:]',
        '    return "\\n".join(re.sub(r" \\[ref=[a-z]?\\d+\\]", "", line) for line in lines)',
        "",
    ]
    return "\n".join(lines)


def _named(step: FlowStep) -> str:
    """`` (button "Look up")``: the element a step acted on as the recording saw it, which
    ``ego heal`` looks for when the step's selector matches nothing."""
    element = step.element or {}
    role, name = element.get("role"), element.get("name")
    # The page named them: a role that is no plain word, or a name as anything but escaped
    # ASCII, could break the comment's line.
    if not isinstance(role, str) or not _ROLE.fullmatch(role) or not isinstance(name, str):
        return ""
    if step.verb == "navigate":
        return ""
    return f" ({role} {json.dumps(name)})"


def _find(plan: FlowPlan, find: str) -> str:
    for value in plan.values.values():
        if value.name is not None and not value.secret and value.values[0] == find:
            return f"str(args[{value.name!r}])"
    return _literal(find)


def _step_lines(plan: FlowPlan, index: int, step: FlowStep) -> list[str]:
    target = _literal(step.selector or step.target)
    if step.verb == "navigate":
        return [f"    await tab.navigate({_literal(step.target)})"]
    if step.verb == "press":
        return [f"    await tab.press({_literal(step.value)})"]
    if step.verb in ("click", "check", "uncheck"):
        return [f"    await tab.{step.verb}({target})"]
    value = plan.values[index]
    given = f"args[{value.name!r}]" if value.name is not None else _literal(value.values[0])
    if step.verb == "select":
        return [f"    await tab.select({target}, {given})"]
    return [f"    await tab.type({target}, str({given}))"]
