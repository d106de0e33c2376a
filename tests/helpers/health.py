"""Helpers for the health tests: a run record of the test's own, and a tool whose outcome the
page decides.

``isolated_store`` points ego's state folder (where the record lives) at the test's temporary
folder, after writing out what earlier tests recorded, so that counts start at zero.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import ego
from ego.learning.health.recorder import flush
from ego.learning.health.store import STORE_NAME
from tests.helpers.page_server import PageServer

__all__ = ["MOODY", "close_tabs", "isolated_store", "mood_pages"]

#: A browser tool that answers as the page's ``data-mode`` says: ok, SKILL_BROKEN,
#: NEEDS_LOGIN, or a plain JavaScript error.
MOODY = """async () => {
  const mode = document.body.dataset.mode;
  if (mode === 'broken') throw new Error('SKILL_BROKEN: no #title on the page');
  if (mode === 'login') return {error: 'NEEDS_LOGIN: logged out'};
  if (mode === 'error') throw new TypeError('the page is in a mood');
  return {title: document.title};
}
"""


def isolated_store(monkeypatch: pytest.MonkeyPatch, folder: Path) -> Iterator[Path]:
    """Make ``folder`` ego's state folder for the test; yield the record's path.

    Earlier runs are written to their own store first, and this test's runs are written
    before the folder is given back.
    """
    assert flush(), "the run record's writer did not finish the earlier runs"
    monkeypatch.setenv("EGO_STATE_DIR", str(folder))
    yield folder / STORE_NAME
    assert flush(), "the run record's writer did not finish this test's runs"


def mood_pages(server: PageServer, prefix: str, host: str = "127.0.0.1") -> dict[str, str]:
    """Serve one page per mood under ``/<prefix>/``; the URL of each, on ``host`` (a
    ``*.localhost`` name of its own keeps other tests' tabs off the site's domain)."""
    pages = {}
    for mode in ("ok", "broken", "login", "error"):
        url = server.route(
            f"/{prefix}/{mode}", f"<!doctype html><title>{mode}</title><body data-mode={mode}>"
        )
        pages[mode] = url.replace("127.0.0.1", host, 1)
    return pages


async def close_tabs(browser: ego.Browser, marker: str) -> None:
    """Close the tabs whose URL holds ``marker`` in the session's shared browser.

    A pool, a command or an MCP server attached to it leaves the tabs it opened open (as it
    does in a browser `ego launch` keeps); another test's tab on this server's host would be
    taken for its site's tab.
    """
    for tab in await browser.tabs():
        if marker in tab.url:
            await tab.close()
