"""The gesture tasks of ``real_libraries.py``: a person's hands on real libraries, each
written twice, as ego's newcomer writes it from README.md (``drag_to``, ``dblclick``,
``scroll(until=)``, ``tab.keyboard``, ``tab.mouse``, ``text=`` and ``label=`` selectors,
``iframe >> body``) and as Playwright for Python's documented style does (``drag_to``,
``get_by_text``, ``get_by_label``, ``frame_locator``, ``dblclick``, ``mouse.wheel``, and a
wheel loop for a virtualized grid, Playwright having no scroll-until). The pages are
``_real_libs_gesture_pages.py``'s.
"""

from __future__ import annotations

import json
from typing import Any

from _real_libs_tasks import Task

import ego

RENAMED = "Renamed task"
WRITTEN = "Hello from the editor"
#: Where the map's first centre is on screen, and where a drag takes the point under it.
MAP_FROM = {"x": 200, "y": 150}
MAP_TO = {"x": 60, "y": 80}


def _is(expression: str, expected: str) -> str:
    return f"({expression}) === {expected} || 'it is ' + JSON.stringify({expression})"


# --------------------------------------------------------------------------- SortableJS


async def ego_reorder(tab: ego.Tab) -> None:
    await tab.drag_to("text=Write the report", "text=Call the supplier")


async def pw_reorder(page: Any) -> None:
    await page.get_by_text("Write the report").drag_to(page.get_by_text("Call the supplier"))


async def ego_board(tab: ego.Tab) -> None:
    await tab.drag_to("text=Design the logo", "label=Done")


async def pw_board(page: Any) -> None:
    await page.get_by_text("Design the logo").drag_to(page.get_by_label("Done"))


# --------------------------------------------------------------------------- AG Grid


async def ego_far_row(tab: ego.Tab) -> None:
    await tab.scroll("role=grid", until='text="Task 750"')
    await tab.click('text="Task 750"')


async def pw_far_row(page: Any) -> None:
    cell = page.get_by_role("gridcell", name="Task 750", exact=True)
    await page.get_by_role("grid").hover()
    while not await cell.is_visible():
        await page.mouse.wheel(0, 400)
    await cell.click()


async def ego_rename(tab: ego.Tab) -> None:
    await tab.dblclick('text="Task 3"')
    await tab.keyboard.press("ControlOrMeta+A")
    await tab.keyboard.type(RENAMED)
    await tab.press("Enter")


async def pw_rename(page: Any) -> None:
    await page.get_by_role("gridcell", name="Task 3", exact=True).dblclick()
    await page.keyboard.press("ControlOrMeta+A")
    await page.keyboard.type(RENAMED)
    await page.keyboard.press("Enter")


# --------------------------------------------------------------------------- TinyMCE


async def ego_write(tab: ego.Tab) -> None:
    await tab.type("iframe >> body", WRITTEN)


async def pw_write(page: Any) -> None:
    await page.frame_locator("iframe").locator("body").fill(WRITTEN)


async def ego_bold(tab: ego.Tab) -> None:
    await tab.click("iframe >> text=Draft text")
    await tab.press("ControlOrMeta+A")
    await tab.click('role=button[name="Bold"]')


async def pw_bold(page: Any) -> None:
    await page.frame_locator("iframe").get_by_text("Draft text").click()
    await page.keyboard.press("ControlOrMeta+A")
    await page.get_by_role("button", name="Bold").click()


# --------------------------------------------------------------------------- Leaflet


async def ego_pan(tab: ego.Tab) -> None:
    await tab.drag_to("#map", "#map", source_position=MAP_FROM, target_position=MAP_TO)


async def pw_pan(page: Any) -> None:
    the_map = page.locator("#map")
    await the_map.drag_to(the_map, source_position=MAP_FROM, target_position=MAP_TO)


async def ego_zoom(tab: ego.Tab) -> None:
    await tab.hover("#map")
    await tab.mouse.wheel(0, -300)


async def pw_zoom(page: Any) -> None:
    await page.locator("#map").hover()
    await page.mouse.wheel(0, -300)


_EDITOR = "tinymce.activeEditor"
_READY = f"window.tinymce && {_EDITOR} && {_EDITOR}.initialized && "

GESTURE_TASKS = [
    Task(
        "sortable: drag an item below another", "/sortable", ego_reorder, pw_reorder,
        "(order('priorities').indexOf('Write the report')"
        " > order('priorities').indexOf('Call the supplier')) || order('priorities').join(', ')",
    ),
    Task(
        "sortable: drag a card to the Done list", "/sortable", ego_board, pw_board,
        "order('done').includes('Design the logo') || order('done').join(', ')",
    ),
    Task(
        "ag-grid: reach row 750 of 1,000, click it", "/grid", ego_far_row, pw_far_row,
        _is("window.clicked", "'Task 750'"),
    ),
    Task(
        "ag-grid: double-click a cell, rename it", "/grid", ego_rename, pw_rename,
        _is("grid.getDisplayedRowAtIndex(2).data.task", json.dumps(RENAMED)),
    ),
    Task(
        "tinymce: replace the text in its iframe", "/tinymce", ego_write, pw_write,
        _READY + _is(f"{_EDITOR}.getContent({{format: 'text'}}).trim()", json.dumps(WRITTEN)),
    ),
    Task(
        "tinymce: select all, make it bold", "/tinymce", ego_bold, pw_bold,
        _READY + _is(f"{_EDITOR}.getContent()", "'<p><strong>Draft text to replace.</strong></p>'"),
    ),
    Task(
        "leaflet: pan the map by dragging", "/leaflet", ego_pan, pw_pan,
        # Leaflet's inertia carries a quick drag further: the map must have moved at least
        # as far as the drag, the same way.
        f"(startAt().x <= 300 - {MAP_FROM['x'] - MAP_TO['x']} + 2"
        f" && startAt().y <= 200 - {MAP_FROM['y'] - MAP_TO['y']} + 2)"
        " || 'the first centre is at ' + JSON.stringify(startAt())",
    ),
    Task(
        "leaflet: zoom in with the wheel", "/leaflet", ego_zoom, pw_zoom,
        "map.getZoom() > start.zoom || 'zoom ' + map.getZoom()",
    ),
]  # fmt: skip
