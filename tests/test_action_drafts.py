"""Drafting a tool from recorded page actions, without a browser: args and constants, waits,
the side effect from the HAR beside the flow, and values that stay literals."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from ego.errors import HarFormatError
from ego.learning.heal.steps import recorded_elements
from ego.learning.suggest.actions import suggest_actions_from
from ego.learning.suggest.flow import FLOW_FORMAT
from ego.replay.har import Har, build_entry

SHOP = "http://shop.example"


def step(verb: str, url: str, target: str | None = None, **more: Any) -> dict[str, Any]:
    return {"verb": verb, "target": target, "url": url, **more}


def field(name: str, role: str = "textbox") -> dict[str, Any]:
    return {"role": role, "name": name, "tag": "input", "input_type": "text"}


def write_flow(
    folder: Path, name: str, words: str, *, har_method: str | None = "GET", sort: str = "price"
) -> Path:
    """A recorded search: open /find, type ``words``, press Enter, read the results."""
    flow = {
        "format": FLOW_FORMAT,
        "steps": [
            step("navigate", "about:blank", f"{SHOP}/find"),
            step("type", f"{SHOP}/find", "#q", selector='role=textbox[name="Words"]',
                 element=field("Words"), value=words),
            step("select", f"{SHOP}/find", "#sort", selector='role=combobox[name="Sort"]',
                 element=field("Sort", "combobox"), value=sort),
            step("press", f"{SHOP}/find", None, value="Enter"),
        ],
        "read": {"verb": "snapshot", "text": "list\n  listitem: Lamp", "url": f"{SHOP}/hits?q=x",
                 "selector": "#hits", "target": "#hits", "find": None},
        "end_url": f"{SHOP}/hits?q=x",
        "har": None,
    }  # fmt: skip
    if har_method is not None:
        har = Har()
        har.add(build_entry(f"{SHOP}/find", "<form></form>"))
        har.add(build_entry(f"{SHOP}/hits?q=x", "<ul></ul>", method=har_method))
        har.save(folder / f"{name}.har")
        flow["har"] = f"{name}.har"
    path = folder / f"{name}.actions.json"
    path.write_text(json.dumps(flow), encoding="utf-8")
    return path


def test_a_flow_that_only_reads_is_a_read_with_args_a_wait_and_a_case(tmp_path: Path) -> None:
    report = suggest_actions_from("shop", [write_flow(tmp_path, "one", "lamp")])
    (draft,) = report.drafts
    assert draft.tool == "find"
    assert draft.kind == "python"
    assert draft.side_effect == "read"
    assert draft.args["words"]["examples"] == ["lamp"]
    assert draft.args["sort"]["examples"] == ["price"]
    assert "await tab.press('Enter')" in draft.source
    assert "await tab.wait_for(url='/hits', timeout=PAGE_SECONDS)" in draft.source
    assert draft.returns == {"type": "string"}
    (case,) = draft.cases
    assert case.case["args"] == {"words": "lamp", "sort": "price"}
    assert case.case["expect"] == "list\n  listitem: Lamp"
    assert report.manifest is not None
    assert report.manifest["domains"] == ["shop.example"]


def test_two_recordings_keep_what_they_share_as_a_constant(tmp_path: Path) -> None:
    flows = [write_flow(tmp_path, "one", "lamp"), write_flow(tmp_path, "two", "desk")]
    (draft,) = suggest_actions_from("shop", flows).drafts
    assert set(draft.args) == {"words"}
    assert draft.constants == {"step 3 select": "price"}
    assert "await tab.select('role=combobox[name=\"Sort\"]', 'price')" in draft.source


def test_a_flow_that_posts_or_has_no_har_is_drafted_irreversible(tmp_path: Path) -> None:
    posted = suggest_actions_from("shop", [write_flow(tmp_path, "one", "x", har_method="POST")])
    (draft,) = posted.drafts
    assert draft.side_effect == "irreversible"
    assert any("POST /hits" in note for note in draft.notes)
    unknown = suggest_actions_from("shop", [write_flow(tmp_path, "two", "x", har_method=None)])
    (blind,) = unknown.drafts
    assert blind.side_effect == "irreversible"
    assert blind.cases == []
    assert any("no HAR" in note for note in blind.notes)


def test_recorded_text_stays_a_literal_in_the_source(tmp_path: Path) -> None:
    hostile = "x')\nimport os; os.system('true')  # \"\"\""
    flows = [write_flow(tmp_path, name, name, sort=hostile) for name in ("one", "two")]
    (draft,) = suggest_actions_from("shop", flows).drafts
    assert draft.constants == {"step 3 select": hostile}
    tree = ast.parse(draft.source)
    imported = [
        alias.name for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names
    ]
    assert imported == ["re"]
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert hostile in strings


def test_each_step_comment_names_the_element_recorded_and_heal_reads_it_back(
    tmp_path: Path,
) -> None:
    """The comment keeps the role and name ego heal looks for; what the page named stays on the
    comment's line (a name JSON-escaped, a role that is no plain word left out)."""
    hostile = 'Words")\u2028\nimport os; os.system("true")'
    path = write_flow(tmp_path, "one", "lamp")
    flow = json.loads(path.read_text(encoding="utf-8"))
    flow["steps"][1]["element"]["name"] = hostile
    flow["steps"][2]["element"]["role"] = "combobox\nimport os"
    path.write_text(json.dumps(flow), encoding="utf-8")
    (draft,) = suggest_actions_from("shop", [path]).drafts
    tree = ast.parse(draft.source)
    imported = [
        alias.name for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names
    ]
    assert imported == ["re"]
    comments = [line.strip() for line in draft.source.split("\n") if "# step" in line]
    assert comments[0].startswith("# step 2: type '#q' (textbox \"Words\\\")")
    assert comments[1] == "# step 3: select '#sort'"
    assert recorded_elements(draft.source) == {2: ("textbox", hostile)}


def test_a_file_that_is_no_flow_is_refused_with_its_name(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"log": {}}', encoding="utf-8")
    with pytest.raises(HarFormatError, match=r"other\.json: not a recording of page actions"):
        suggest_actions_from("shop", [other])


def test_actions_a_draft_does_not_replay_are_named_in_its_notes(tmp_path: Path) -> None:
    path = write_flow(tmp_path, "one", "lamp")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["left_out"] = ["dblclick #row-3", "mouse.wheel"]
    path.write_text(json.dumps(data), encoding="utf-8")
    (draft,) = suggest_actions_from("shop", [path]).drafts
    said = [note for note in draft.notes if "does not replay" in note]
    assert len(said) == 2
    assert "dblclick #row-3" in said[0]
    assert "mouse.wheel" in said[1]


def test_a_flow_that_read_nothing_returns_null_and_its_note_says_how_to_read(
    tmp_path: Path,
) -> None:
    path = write_flow(tmp_path, "blind", "lamp")
    flow = json.loads(path.read_text(encoding="utf-8"))
    flow["read"] = None  # an evaluate at the end: the action log does not report it
    path.write_text(json.dumps(flow), encoding="utf-8")
    (draft,) = suggest_actions_from("shop", [path]).drafts
    assert draft.returns is None
    (note,) = [n for n in draft.notes if "read nothing" in n]
    assert "end the flow with a snapshot" in note
    assert "take_snapshot" in note
