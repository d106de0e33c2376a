"""Storage-state files are bounded before they are read whole: their size from the file
system, their items counted in their bytes before any is parsed, with an error that names
the bound and what raises it in each front end's words (Python, the command line, MCP)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import ego
from ego.cli.common import STATE_ITEMS_DEFAULT, STATE_MB_DEFAULT
from ego.errors import StorageStateError, StorageStateTooLargeError
from ego.mcp.wording import mcp_message
from ego.page.storage_state import MAX_STATE_BYTES, MAX_STATE_ITEMS, read_storage_state
from tests.helpers.commands import ego_async, ego_env

#: How long a refusal may take at most: the bound is on a stuck or runaway read (reading the
#: 250 MB file whole took minutes and 800 MB), never a speed target.
REFUSED_WITHIN = 120


def _state(path: Path, items: list[dict[str, str]]) -> Path:
    state = {
        "cookies": [],
        "origins": [{"origin": "http://127.0.0.1:9", "localStorage": items}],
    }
    path.write_text(json.dumps(state))
    return path


async def test_a_huge_file_is_refused_before_it_is_read(huge_storage_state: Path) -> None:
    assert huge_storage_state.stat().st_size > 250_000_000
    with pytest.raises(StorageStateTooLargeError) as raised:
        await asyncio.wait_for(asyncio.to_thread(read_storage_state, huge_storage_state), 120)
    refusal = raised.value
    assert (refusal.bound, refusal.most) == ("bytes", MAX_STATE_BYTES)
    assert refusal.found == huge_storage_state.stat().st_size
    message = str(refusal)
    assert f"the storage state {huge_storage_state} is 2" in message
    assert "may be at most 64.0 MB" in message
    assert "nothing of it was loaded" in message
    assert "ego.read_storage_state(path, max_bytes=...) and pass that as storage_state=" in message
    assert "\n" not in message
    # Each front end says what raises it in its own words.
    assert refusal.worded("raise it").endswith("nothing of it was loaded: raise it")
    assert "the operator raises the bound with ego mcp --max-storage-state MB" in mcp_message(
        refusal
    )


def test_items_are_counted_before_any_is_parsed(tmp_path: Path) -> None:
    many = _state(tmp_path / "many.json", [{"name": f"k{n}", "value": ""} for n in range(30)])
    with pytest.raises(StorageStateTooLargeError) as raised:
        read_storage_state(many, max_items=10)
    assert raised.value.bound == "items"
    assert "holds more than 10 items (cookies, origins and localStorage entries)" in str(
        raised.value
    )
    assert "max_items=" in str(raised.value)
    # A brace inside a value (JSON kept in localStorage) is not an item, nor an escaped quote.
    braces = '{"a": [{"b": {}}]} \\" {{{'
    few = _state(tmp_path / "few.json", [{"name": "json", "value": braces}])
    assert read_storage_state(few, max_items=2)["origins"][0]["localStorage"][0]["value"] == braces
    # Within raised bounds a file loads; a mapping (already in memory) is not bounded.
    assert len(read_storage_state(many, max_items=31)["origins"][0]["localStorage"]) == 30
    assert read_storage_state(json.loads(many.read_text()), max_items=1)["origins"]


def test_a_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    for special in (tmp_path, Path("/dev/zero")):  # a folder; a file with no size and no end
        with pytest.raises(StorageStateError, match="not a regular file"):
            read_storage_state(special)


def test_the_command_lines_defaults_are_the_bounds() -> None:
    assert STATE_MB_DEFAULT << 20 == MAX_STATE_BYTES
    assert STATE_ITEMS_DEFAULT == MAX_STATE_ITEMS


@pytest.mark.parametrize("command", ["run", "mcp", "batch"])
async def test_each_command_refuses_it_in_one_line_naming_its_option(
    command: str, huge_storage_state: Path, tmp_path: Path
) -> None:
    given = {
        "run": ["run", "demo-shop", "get_product", "--arg", "id=1", "--new-browser"],
        "mcp": ["mcp"],
        "batch": [
            "batch", "demo-shop", "get_product", "--input", str(tmp_path / "in.jsonl"),
            "--output", str(tmp_path / "out.jsonl"), "--contexts",
        ],
    }[command]  # fmt: skip
    (tmp_path / "in.jsonl").write_text('{"id": 1}\n')
    result = await ego_async(
        *given,
        "--storage-state",
        str(huge_storage_state),
        env=ego_env(tmp_path / "profiles"),
        cwd=tmp_path,
        timeout=REFUSED_WITHIN,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "may be at most 64.0 MB" in result.stderr
    assert "raise the bound with --max-storage-state MB" in result.stderr
    assert "read_storage_state" not in result.stderr  # the Python fix is not the CLI's
    # The item bound has its option too.
    if command == "run":
        three = _state(tmp_path / "three.json", [{"name": f"k{n}", "value": ""} for n in range(3)])
        again = await ego_async(
            *given, "--storage-state", str(three), "--max-storage-state-items", "2",
            env=ego_env(tmp_path / "profiles"), cwd=tmp_path, timeout=REFUSED_WITHIN,
        )  # fmt: skip
        assert again.returncode != 0
        assert "holds more than 2 items" in again.stderr
        assert "raise the bound with --max-storage-state-items N" in again.stderr


async def test_a_context_is_not_made_from_a_huge_file(
    browser: ego.Browser, huge_storage_state: Path
) -> None:
    before = await browser.connection.send("Target.getBrowserContexts")
    with pytest.raises(StorageStateTooLargeError, match="storage_state="):
        await asyncio.wait_for(
            browser.new_context(storage_state=huge_storage_state), REFUSED_WITHIN
        )
    after = await browser.connection.send("Target.getBrowserContexts")
    assert after == before
