"""Snapshot-only references in a tool's source: refused when real, left alone when not.

No browser: :func:`ego.learning.catalog.jslint.find_snapshot_refs` reads the text, and
:func:`check_source` turns findings into a SnapshotReferenceError.
"""

from __future__ import annotations

import pytest

from ego.errors import SaveRefusedError, SnapshotReferenceError
from ego.learning.catalog.jslint import check_source, find_snapshot_refs
from ego.learning.catalog.naming import check_site_id, check_tool_name

REFUSED = {
    "ref attribute selector": "async () => document.querySelector('[ref=e12]').click()",
    "quoted ref attribute": "async () => document.querySelector('button[ref=\"e5\"]').textContent",
    "aria-ref selector": "async () => document.querySelector('[aria-ref=e7]').click()",
    "aria-ref locator text": "async () => { const s = 'aria-ref=e9'; return s; }",
    "bare ref as selector": "async () => document.querySelector('e123').click()",
    "bare ref as id selector": 'async () => document.querySelectorAll("#e42").length',
    "bare ref via closest": "async (a) => a.el.closest(`e3`)",
    "ref key in a call object": "async () => ({action: 'click', ref: 'e15'})",
    "quoted ref key": 'async () => ({"ref": "e15", "element": "Submit"})',
    "elementFromPoint": "async () => document.elementFromPoint(120, 48).click()",
    "elementsFromPoint": "async () => document.elementsFromPoint(1, 2).length",
    "CDP mouse event": "async () => ({method: 'Input.dispatchMouseEvent', x: 5})",
    "clientX literal": (
        "async () => {\n  const el = document.body;\n"
        "  el.dispatchEvent(new MouseEvent('click', {clientX: 312, clientY: 90}));\n}"
    ),
    "quoted pageY literal": 'async () => ({"pageY": 512})',
    "click coordinates": (
        "async () => {\n  const point = {x: 640, y: 360};\n"
        "  document.body.dispatchEvent(new PointerEvent('pointerdown', point));\n}"
    ),
}

ALLOWED = {
    "stable selectors": (
        "async ({q}) => {\n  const box = document.querySelector('#search input[name=q]');\n"
        "  box.value = q;\n  document.querySelector('[data-testid=\"submit\"]').click();\n"
        "  return [...document.querySelectorAll('.result a')].map((a) => a.href);\n}"
    ),
    "the site's API": (
        "async ({id}) => {\n  const r = await fetch(`/api/products/${id}`);\n"
        "  return r.ok ? r.json() : {error: `not found: ${id}`};\n}"
    ),
    "words in comments": (
        "// Do not use elementFromPoint or ref=e12 from a snapshot; aria-ref breaks too.\n"
        "/* clientX: 100, Input.dispatchMouseEvent */\n"
        "async () => document.title"
    ),
    "event coordinates read, not written": (
        "async () => new Promise((resolve) => {\n"
        "  document.addEventListener('click', (e) => resolve({x: e.clientX, y: e.clientY}),"
        " {once: true});\n  document.body.click();\n})"
    ),
    "zero coordinates on a synthetic event": (
        "async () => document.querySelector('#go')"
        ".dispatchEvent(new MouseEvent('click', {bubbles: true, clientX: 0, clientY: 0}))"
    ),
    "data-ref attribute and ref in a URL": (
        "async () => {\n  const ids = [...document.querySelectorAll('[data-ref]')]"
        ".map((el) => el.dataset.ref);\n"
        "  const r = await fetch('/landing?ref=e5&utm=mail');\n  return {ids, ok: r.ok};\n}"
    ),
    "variables named e1 and ref": (
        "async () => {\n  const ref = document.querySelector('.e1');\n  let e12 = 3;\n"
        "  try { ref.focus(); } catch (e1) { return String(e1); }\n  return e12;\n}"
    ),
    "chart points without clicks": (
        "async () => {\n  const origin = {x: 10, y: 20};\n"
        "  return [...document.querySelectorAll('circle')]"
        ".map((c) => ({x: +c.getAttribute('cx') - origin.x, y: origin.y}));\n}"
    ),
    "regex literal with quotes": (
        "async () => {\n  const re = /ref=e12|'/g;\n"
        "  return document.title.replace(re, '').split(/\\//);\n}"
    ),
    "division is not a regex": (
        "async () => { const a = 4, b = 2; return a / b / 1 + '[ref]'.length; }"
    ),
    "template literal with nested code": (
        "async ({n}) => `${n > 1 ? `${n} items` : 'one item'} in ${document.title}`"
    ),
    "getBoundingClientRect measured, not clicked": (
        "async () => { const r = document.querySelector('main').getBoundingClientRect();"
        " return {x: r.x, y: r.y, w: r.width}; }"
    ),
}


@pytest.mark.parametrize("source", REFUSED.values(), ids=REFUSED.keys())
def test_snapshot_references_are_found(source: str) -> None:
    assert find_snapshot_refs(source), source
    with pytest.raises(SnapshotReferenceError) as caught:
        check_source("shop", "tool", source)
    error = caught.value
    assert error.reason == "snapshot refs"
    assert error.problems
    assert all(p.startswith("line ") for p in error.problems)
    assert "stable selectors" in str(error)
    assert "nothing was written" in str(error)


@pytest.mark.parametrize("source", ALLOWED.values(), ids=ALLOWED.keys())
def test_normal_code_is_not_refused(source: str) -> None:
    assert find_snapshot_refs(source) == []
    assert check_source("shop", "tool", source).strip()


def test_findings_name_their_lines() -> None:
    source = (
        "async () => {\n"
        "  const ok = document.querySelector('#main');\n"
        "  document.querySelector('[ref=e4]').click();\n"
        "  return document.elementFromPoint(10, 10);\n"
        "}\n"
    )
    findings = find_snapshot_refs(source)
    assert findings[0].startswith("line 3: ephemeral element ref")
    assert findings[1].startswith("line 4: pixel coordinates: elementFromPoint(")
    assert len(findings) == 2


@pytest.mark.parametrize(
    "source",
    ["", "   \n", "42", "document.title", "const x = 1;"],
    ids=["empty", "blank", "number", "expression", "statement"],
)
def test_source_must_be_a_function(source: str) -> None:
    with pytest.raises(SaveRefusedError) as caught:
        check_source("shop", "tool", source)
    assert caught.value.reason == "source"


@pytest.mark.parametrize(
    "source",
    [
        "async (args) => args",
        "args => args.q",
        "async function (args) { return args; }",
        "function named(args) { return 1; }",
        "// a note first\nasync ({q}) => q",
        "const P = 1;\nexport default async function f(a) { return P; }",
    ],
)
def test_function_shapes_are_accepted(source: str) -> None:
    assert check_source("shop", "tool", source)


@pytest.mark.parametrize("tool", ["", "1st", "get-posts", "a b", "x" * 65, "tool.js", "ä"])
def test_tool_names_must_be_identifiers(tool: str) -> None:
    with pytest.raises(SaveRefusedError) as caught:
        check_tool_name("shop", tool)
    assert caught.value.reason == "name"
    assert "identifier" in str(caught.value)


@pytest.mark.parametrize("site_id", ["", "X-com", "_private", ".hidden", "a/b", "a b", "-x"])
def test_site_ids_must_be_folder_names(site_id: str) -> None:
    with pytest.raises(SaveRefusedError) as caught:
        check_site_id(site_id)
    assert caught.value.reason == "site id"
