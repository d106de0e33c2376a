"""Concurrent changes to one site, saved files' modes, and one batch run per output.

Saves here go through the planning and writing steps directly (no browser check), which is
where the read-modify-write of a manifest happens; the browser checks run before the lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ego.batch.lock import hold_output
from ego.demo import DemoServer
from ego.errors import BatchFileError, SiteBusyError
from ego.learning.catalog.registry import Learnings
from ego.learning.plan.draft import ToolDraft
from ego.learning.plan.locks import LOCK_TIMEOUT, site_lock
from ego.learning.plan.save_plan import plan_browser_tool
from ego.learning.save import store
from ego.learning.save.notes import save_note
from ego.learning.save.store import write_tool
from tests.helpers.batches import run_batch_cli, start_batch, write_jsonl
from tests.helpers.learnings import save
from tests.helpers.paths import POOL_LEARNINGS
from tests.helpers.pool import HoldServer

ROOT = Path(__file__).resolve().parent.parent


def tools_kept(workspace: Path) -> set[str]:
    manifest = json.loads((workspace / "learnings" / "shop" / "manifest.json").read_text())
    return set(manifest["browserTools"])


def test_a_save_waits_for_the_one_holding_the_site_and_keeps_both_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two saves of one site, interleaved on purpose, not by luck.

    A reads the manifest under the lock and then waits until B has either read the manifest
    too (no lock: both hold the old one and the later write drops a tool) or is seen waiting
    for the lock (a probe that does not wait finds it held). Only then does A write.
    """
    save(tmp_path, "first")  # the site exists: both saves read and merge its manifest
    a_read, b_progress = threading.Event(), threading.Event()
    threads: dict[str, threading.Thread] = {}
    real_lock, real_overlay = store.site_lock, store.overlay

    @contextlib.contextmanager
    def watched_lock(root: Path, name: str, *, timeout: float = LOCK_TIMEOUT) -> Iterator[Path]:
        if threading.current_thread() is threads.get("b"):
            try:
                with real_lock(root, name, timeout=0):
                    pass  # free: B goes on to read at once
            except SiteBusyError:
                b_progress.set()  # A holds it: B waits for it below
        with real_lock(root, name, timeout=timeout) as path:
            yield path

    def watched_overlay(current: dict[str, Any], planned: dict[str, Any]) -> dict[str, Any]:
        merged = real_overlay(current, planned)
        if threading.current_thread() is threads["a"]:
            a_read.set()
            assert b_progress.wait(timeout=30), "B neither read the manifest nor waited"
        else:
            b_progress.set()
        return merged

    monkeypatch.setattr(store, "site_lock", watched_lock)
    monkeypatch.setattr(store, "overlay", watched_overlay)
    errors: list[BaseException] = []

    def worker(tool: str) -> None:
        try:
            save(tmp_path, tool)
        except BaseException as exc:  # reported below, with the tool it belongs to
            errors.append(exc)

    threads["a"] = threading.Thread(target=worker, args=("tool_a",))
    threads["a"].start()
    assert a_read.wait(timeout=30), errors
    threads["b"] = threading.Thread(target=worker, args=("tool_b",))
    threads["b"].start()
    for thread in threads.values():
        thread.join(timeout=60)
    assert not errors, errors
    assert tools_kept(tmp_path) == {"first", "tool_a", "tool_b"}


_SAVER = """
import sys
from pathlib import Path
from tests.helpers.learnings import save
for name in sys.argv[2:]:
    save(Path(sys.argv[1]), name)
"""


def test_four_processes_saving_different_tools_keep_all_of_them(tmp_path: Path) -> None:
    save(tmp_path, "first")  # the site exists: every process merges into its manifest
    batches = [[f"p{p}_tool_{i}" for i in range(4)] for p in range(4)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _SAVER, str(tmp_path), *names],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for names in batches
    ]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    assert tools_kept(tmp_path) == {"first", *(name for names in batches for name in names)}


def test_notes_and_tools_saved_at_once_are_all_kept(tmp_path: Path) -> None:
    save(tmp_path, "first")
    learnings = Learnings(workspace=tmp_path, project=tmp_path / "no-project")
    start = threading.Barrier(8)
    errors: list[BaseException] = []

    def note(i: int) -> None:
        start.wait(timeout=30)
        try:
            save_note(learnings, "shop", f"note_{i}", f"# Note {i}\n")
        except BaseException as exc:
            errors.append(exc)

    def tool(i: int) -> None:
        start.wait(timeout=30)
        try:
            save(tmp_path, f"tool_{i}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=note, args=(i,)) for i in range(4)]
    threads += [threading.Thread(target=tool, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    manifest = json.loads((tmp_path / "learnings" / "shop" / "manifest.json").read_text())
    assert set(manifest["browserTools"]) == {"first", *(f"tool_{i}" for i in range(4))}
    assert set(manifest["notes"]) == {f"notes/note_{i}.md" for i in range(4)}


def test_a_lock_held_too_long_is_a_site_busy_error(tmp_path: Path) -> None:
    root = tmp_path / "learnings"
    with (
        site_lock(root, "shop"),
        pytest.raises(SiteBusyError) as caught,
        site_lock(root, "shop", timeout=0.1),
    ):
        pass
    assert caught.value.lock_file.endswith("shop.lock")
    assert "try again" in str(caught.value)
    # The lock folder is hidden: it is never listed as a site.
    assert [entry.site_id for entry in Learnings(roots=[root]).sites()] == []


@pytest.fixture
def umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def modes(folder: Path) -> dict[str, int]:
    return {
        path.relative_to(folder).as_posix(): stat.S_IMODE(path.stat().st_mode)
        for path in [folder, *folder.rglob("*")]
        if ".ego-locks" not in path.parts
    }


@pytest.mark.usefixtures("umask")
def test_saved_files_follow_the_umask(tmp_path: Path) -> None:
    save(tmp_path, "first")  # a new site: assembled in a temporary folder, renamed in
    save(tmp_path, "first_v2")  # an existing one: files replaced through temporary files
    learnings = Learnings(workspace=tmp_path, project=tmp_path / "no-project")
    save_note(learnings, "shop", "howto", "# How to\n")
    site = tmp_path / "learnings" / "shop"
    found = modes(site)
    assert found["."] == 0o755
    for name, mode in found.items():
        expected = 0o755 if (site / name).is_dir() else 0o644
        assert mode == expected, (name, oct(mode))

    os.umask(0o077)
    save(tmp_path / "private", "first")
    private = modes(tmp_path / "private" / "learnings" / "shop")
    assert private["."] == 0o700
    assert private["manifest.json"] == 0o600


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer(port=0) as server:
        yield server


def test_a_held_batch_output_is_refused(tmp_path: Path) -> None:
    output = tmp_path / "results.jsonl"
    with hold_output(output), pytest.raises(BatchFileError) as caught, hold_output(output):
        pass
    assert f"pid {os.getpid()}" in str(caught.value)
    with hold_output(output):  # released: the next run gets it
        pass


@pytest.mark.chrome
def test_two_batch_runs_on_one_output_never_run_an_input_twice(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "learnings").mkdir(parents=True)
    shutil.copytree(POOL_LEARNINGS / "pool-test", workspace / "learnings" / "pool-test")
    holder = HoldServer(hold_only={"b"})  # the first run is held on "b" until released
    try:
        source, output = tmp_path / "items.jsonl", tmp_path / "results.jsonl"
        write_jsonl(source, [{"id": "a"}, {"id": "b"}, {"id": "c"}])
        args = ["pool-test", "hold_read", "--input", str(source), "--output", str(output)]
        args += ["--url", holder.url(), "--concurrency", "1"]
        env = {"EGO_WORKSPACE": str(workspace)}
        first = start_batch(args, env)
        try:
            assert holder.wait_arrived("b")
            code, _, err = run_batch_cli(args, env)
            assert code == 2, err
            assert f"in use by another ego batch run (pid {first.pid} " in err
            holder.release()
            _, first_err = first.communicate(timeout=120)
            assert first.returncode == 0, first_err
        finally:
            if first.poll() is None:
                first.kill()
                first.communicate()
        assert holder.counts == Counter({"a": 1, "b": 1, "c": 1})
        assert sorted(json.loads(line)["index"] for line in output.read_text().splitlines()) == [
            0,
            1,
            2,
        ]
    finally:
        holder.close()


def test_two_saves_of_one_tool_planned_together_both_keep_their_changes(tmp_path: Path) -> None:
    save(tmp_path, "search")
    learnings = Learnings(workspace=tmp_path, project=tmp_path / "no-project")
    source = 'async () => "search"'
    # Both are planned from the same entry, as two agents saving at once would.
    writes = plan_browser_tool(
        learnings, ToolDraft("shop", "search", source, None, side_effect="write")
    )
    describes = plan_browser_tool(learnings, ToolDraft("shop", "search", source, "finds products"))
    write_tool(writes)
    write_tool(describes)
    manifest = json.loads((tmp_path / "learnings" / "shop" / "manifest.json").read_text())
    entry = manifest["browserTools"]["search"]
    assert entry["sideEffect"] == "write"  # not reset to "read" by the second save
    assert entry["description"] == "finds products"
