"""Helpers to build throwaway learnings sites under ``tmp_path`` for the learning tests.

``make_site(root, "shop", domains=[...], browser_tools={"echo": tool(ECHO)})`` writes
``root/shop/manifest.json`` plus every tool file and note it names, and returns the site folder.
Tests never depend on the project's shipped ``learnings/``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ego.learning.catalog.registry import Learnings
from ego.learning.plan.draft import ToolDraft
from ego.learning.plan.save_plan import plan_browser_tool
from ego.learning.save.store import write_tool
from ego.protocol.session import Session

__all__ = [
    "ECHO",
    "WHERE",
    "CdpSpy",
    "Tool",
    "make_site",
    "tool",
    "write_manifest",
]

#: A browser tool that hands its args back unchanged.
ECHO = "async (args) => args\n"

#: A browser tool that tells where it ran.
WHERE = "async function (args) {\n  return {href: location.href, ready: document.readyState};\n}\n"


@dataclass
class Tool:
    """A tool to write: its source (None: declare it but write no file) and manifest entry."""

    source: str | None
    path: str | None = None
    entry: dict[str, Any] = field(default_factory=dict)


def tool(source: str | None, path: str | None = None, **entry: Any) -> Tool:
    """A tool for :func:`make_site`; ``entry`` goes into the manifest (``sideEffect=...``)."""
    return Tool(source, path, entry)


def write_manifest(site_dir: Path, manifest: Any) -> Path:
    """Write ``manifest`` (any JSON, or raw text when a str) as ``site_dir/manifest.json``."""
    site_dir.mkdir(parents=True, exist_ok=True)
    path = site_dir / "manifest.json"
    text = manifest if isinstance(manifest, str) else json.dumps(manifest, indent=2)
    path.write_text(text, encoding="utf-8")
    return path


def make_site(
    root: Path,
    site_id: str,
    *,
    domains: list[str],
    name: str | None = None,
    browser_tools: dict[str, Tool] | None = None,
    python_tools: dict[str, Tool] | None = None,
    notes: dict[str, str] | None = None,
    start_url: str | None = None,
    manifest_id: str | None = None,
    **extra: Any,
) -> Path:
    """Write a site folder ``root/site_id`` and return it.

    Browser tools default to ``browser-tools/<name>.js``, Python tools to ``tools/<name>.py``;
    ``notes`` maps a path (``notes/x.md``) to its text.
    """
    site_dir = root / site_id
    manifest: dict[str, Any] = {
        "id": manifest_id if manifest_id is not None else site_id,
        "name": name if name is not None else f"Site {site_id}",
        "domains": domains,
        **extra,
    }
    if start_url is not None:
        manifest["startUrl"] = start_url
    for key, tools, folder, suffix in (
        ("browserTools", browser_tools, "browser-tools", "js"),
        ("pythonTools", python_tools, "tools", "py"),
    ):
        if tools is None:
            continue
        declared: dict[str, Any] = {}
        for tool_name, spec in tools.items():
            path = spec.path or f"{folder}/{tool_name}.{suffix}"
            declared[tool_name] = {"path": path, **spec.entry}
            if spec.source is not None:
                file = site_dir / path
                file.parent.mkdir(parents=True, exist_ok=True)
                file.write_text(spec.source, encoding="utf-8")
        manifest[key] = declared
    if notes:
        manifest["notes"] = list(notes)
        for path, text in notes.items():
            file = site_dir / path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text, encoding="utf-8")
    write_manifest(site_dir, manifest)
    return site_dir


class CdpSpy:
    """Records every CDP command sent on any session while installed (via monkeypatch): the
    one place a session writes a command, whichever way it was sent.

    Used to prove that a refused call sent nothing at all to the browser.
    """

    def __init__(self) -> None:
        self.methods: list[str] = []
        self._original = Session._post

    def install(self, monkeypatch: pytest.MonkeyPatch) -> CdpSpy:
        original = self._original
        methods = self.methods

        def post(self: Session, method: str, *args: Any) -> Any:
            methods.append(method)
            return original(self, method, *args)

        monkeypatch.setattr(Session, "_post", post)
        return self


def save(workspace: Path, tool: str) -> None:
    """Plan and write one browser tool into the site ``shop`` of ``workspace``."""
    learnings = Learnings(workspace=workspace, project=workspace / "no-project")
    draft = ToolDraft(
        site_id="shop",
        tool=tool,
        source=f"async () => {json.dumps(tool)}",
        description=f"returns {tool}",
        domains=["shop.example"],
    )
    write_tool(plan_browser_tool(learnings, draft))
