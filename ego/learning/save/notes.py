"""Saving a note: markdown knowledge for agents, kept as ``notes/<name>.md`` of a site.

The note goes to the agent workspace like a tool does (a project-only site is copied there
first); a replaced note's text is kept in ``notes/.history/<name>/``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..catalog.naming import check_note_name, check_site_id, refuse
from ..catalog.registry import Learnings
from ..plan.history import json_fields, write_atomic
from ..plan.locks import site_lock
from ..plan.save_plan import candidate_manifest, find_base, validate_candidate, workspace_root
from .store import assemble_and_rename, manifest_bytes, overlay

__all__ = ["SavedNote", "save_note"]


@dataclass(frozen=True)
class SavedNote:
    """What a note save did.

    Attributes:
        site_id: the site.
        name: the note's name (its file is ``notes/<name>.md``).
        file: the note file.
        manifest: the site's manifest.
        created_site: the site did not exist before.
        shadowed: the site existed only in the project; a workspace copy now shadows it.
        replaced: a note of that name existed; its text was kept in ``notes/.history/``.
        previous_file: where the replaced text was kept, or None.
    """

    site_id: str
    name: str
    file: Path
    manifest: Path
    created_site: bool
    shadowed: bool
    replaced: bool
    previous_file: Path | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready data (for the CLI and MCP): the fields, with paths as strings."""
        return asdict(self, dict_factory=json_fields)


def _keep_note(site_dir: Path, path: str, stem: str) -> Path | None:
    old = site_dir / path
    if not old.is_file():
        return None
    folder = site_dir / "notes" / ".history" / stem
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    target = folder / f"{stamp}.md"
    counter = 0
    while target.exists():
        counter += 1
        target = folder / f"{stamp}-{counter}.md"
    write_atomic(target, old.read_bytes())
    return target


def save_note(
    learnings: Learnings,
    site_id: str,
    name: str,
    text: str,
    *,
    domains: Sequence[str] | None = None,
    page_url: str | None = None,
    site_name: str | None = None,
) -> SavedNote:
    """Keep a note (markdown knowledge for agents) as ``notes/<name>.md`` of a site.

    The note is written first, then listed in the manifest (if it is not listed already), so
    a crash in between leaves an unlisted file and a valid site. A replaced note's text is
    kept in ``notes/.history/<name>/``. A new site needs ``domains`` or a ``page_url``.

    Args:
        learnings: the roots; the note is written under their workspace root.
        site_id: the site's id.
        name: the note's name (letters, digits, ``_``, ``-``; a trailing ``.md`` is dropped).
        text: the markdown; a first ``# Title`` line names it in ``learn_context``.
        domains: the site's domains, for a new site (or to add to an existing one).
        page_url: a page of the site: gives a new site its domain and start URL.
        site_name: a new site's display name (defaults to its id).

    Raises:
        WorkspaceRequiredError: no workspace root.
        SaveRefusedError: the site id or name is invalid, the text is empty, the site is new
            and has no domains, or its manifest is broken; nothing was written.
        SiteBusyError: another save kept the site's lock too long; nothing was written.
        OSError: the write failed (the site stays consistent).
    """
    workspace_root(learnings)
    check_site_id(site_id, name=str(name))
    stem = check_note_name(site_id, name)
    if not isinstance(text, str) or not text.strip():
        raise refuse(site_id, stem, "source", ["the note is empty"])
    root = workspace_root(learnings)
    # Refusals that need no lock come first, so that a refused save creates nothing.
    candidate_manifest(
        find_base(learnings, site_id, stem),
        site_id,
        stem,
        domains=domains,
        page_url=page_url,
        site_name=site_name,
    )
    with site_lock(root, site_id):
        return _write_note(learnings, root, site_id, stem, text, domains, page_url, site_name)


def _write_note(
    learnings: Learnings,
    root: Path,
    site_id: str,
    stem: str,
    text: str,
    domains: Sequence[str] | None,
    page_url: str | None,
    site_name: str | None,
) -> SavedNote:
    base = find_base(learnings, site_id, stem)
    raw = candidate_manifest(
        base, site_id, stem, domains=domains, page_url=page_url, site_name=site_name
    )
    path = f"notes/{stem}.md"
    notes = list(raw.get("notes") or [])
    if path not in notes:
        notes.append(path)
    raw["notes"] = notes
    validate_candidate(site_id, stem, raw)
    data = (text if text.endswith("\n") else text + "\n").encode("utf-8")
    if base.kind in ("new", "project"):
        kept: list[Path] = []

        def fill(staging: Path) -> None:
            previous = _keep_note(staging, path, stem)
            if previous is not None:
                kept.append(previous.relative_to(staging))
            write_atomic(staging / path, data)
            write_atomic(staging / "manifest.json", manifest_bytes(raw))

        target = assemble_and_rename(site_id, root, base.directory, fill)
        previous_file = target / kept[0] if kept else None
        return SavedNote(
            site_id=site_id,
            name=stem,
            file=target / path,
            manifest=target / "manifest.json",
            created_site=base.kind == "new",
            shadowed=base.kind == "project",
            replaced=bool(kept),
            previous_file=previous_file,
        )
    assert base.directory is not None
    site_dir = base.directory
    # Re-read: only the note's listing (and any name or domains asked for) changes.
    current = json.loads((site_dir / "manifest.json").read_text(encoding="utf-8"))
    merged = overlay(current, raw)
    listed = list(merged.get("notes") or [])
    if path not in listed:
        listed.append(path)
    merged["notes"] = listed
    if merged != current:
        validate_candidate(site_id, stem, merged)
    previous = _keep_note(site_dir, path, stem)
    write_atomic(site_dir / path, data)
    if merged != current:
        write_atomic(site_dir / "manifest.json", manifest_bytes(merged))
    return SavedNote(
        site_id=site_id,
        name=stem,
        file=site_dir / path,
        manifest=site_dir / "manifest.json",
        created_site=False,
        shadowed=False,
        replaced=previous is not None,
        previous_file=previous,
    )
