"""Every HAR ego reads or writes is bounded: entries and bytes, checked before the file is parsed
whole, with progress for a large file; a recording leaves out what goes over its bounds and
says so; a ``cases.json`` has a size bound too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ego
from ego.demo import DemoServer
from ego.errors import HarTooLargeError, InvalidCasesError
from ego.learning.cases.format import MAX_CASES_BYTES, load_cases
from ego.learning.catalog.registry import Learnings
from ego.learning.suggest import suggest
from ego.replay import Har, HarBounds, HarProgress, build_entry
from ego.replay.har_bounds import LARGE_HAR_BYTES, MAX_HAR_ENTRIES
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import ego_async, ego_env, ego_sync, http_endpoint

ORIGIN = "http://127.0.0.1:8851"


def _many_entries(path: Path, count: int) -> Path:
    """A HAR of ``count`` small JSON calls, written as text (fast for 100,000)."""
    entry = (
        '{{"startedDateTime":"2025-01-01T00:00:00.000Z","time":1,"_resourceType":"fetch",'
        '"request":{{"method":"GET","url":"' + ORIGIN + '/api/items/{n}","headers":[]}},'
        '"response":{{"status":200,"headers":[{{"name":"content-type","value":'
        '"application/json"}}],"content":{{"mimeType":"application/json",'
        '"text":"{{\\"id\\":{n},\\"name\\":\\"item number {n} of a long list\\"}}"}}}}}}'
    )
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[')
        handle.write(",".join(entry.format(n=n) for n in range(count)))
        handle.write("]}}")
    return path


def _error(result: object) -> dict[str, str]:
    stderr = getattr(result, "stderr", "")
    line = [line for line in stderr.splitlines() if line.startswith("{")][-1]
    found: dict[str, str] = json.loads(line)
    return found


def test_a_100000_entry_har_is_refused_by_ego_suggest_with_progress(tmp_path: Path) -> None:
    har = _many_entries(tmp_path / "big.har", 100_000)
    assert har.stat().st_size > LARGE_HAR_BYTES  # large enough for progress lines
    env = ego_env(tmp_path / "profiles", workspace=tmp_path / "ws")
    result = ego_sync("suggest", "big", "--har", str(har), "--json", env=env, timeout=60)
    assert result.returncode == 2, result
    error = _error(result)
    assert error["type"] == "HarTooLargeError"
    assert f"more than {MAX_HAR_ENTRIES:,} entries" in error["error"]
    assert "--max-har-entries N" in error["error"]  # the fix in the command line's words
    progress = [line for line in result.stderr.splitlines() if "scanned" in line]
    assert progress, result  # a progress line while the large file streamed
    assert progress[0].startswith("reading big.har (")
    assert not (tmp_path / "ws" / "learnings" / ".drafts" / "big").exists()


def test_a_har_over_the_byte_bound_is_refused_unread(tmp_path: Path) -> None:
    har = _many_entries(tmp_path / "small.har", 20)
    env = ego_env(tmp_path / "profiles", workspace=tmp_path / "ws")
    result = ego_sync(
        "suggest", "small", "--har", str(har), "--max-har-bytes", "1K", "--json", env=env
    )
    assert result.returncode == 2, result
    error = _error(result)
    assert error["type"] == "HarTooLargeError"
    assert "more than the bound of 1,024" in error["error"]
    assert "--max-har-bytes SIZE" in error["error"]
    with pytest.raises(HarTooLargeError) as raised:
        Har.load(har, bounds=HarBounds(max_bytes=1024))
    assert (raised.value.bound, raised.value.limit) == ("bytes", 1024)


def test_a_raised_bound_reads_the_file_and_reports_its_progress(tmp_path: Path) -> None:
    har = Har()
    body = json.dumps({"items": ["x" * 1000] * 6000})  # 6 MB a call
    for number in range(3):
        har.add(
            build_entry(
                f"{ORIGIN}/api/page/{number}",
                body,
                headers={"content-type": "application/json"},
                resource_type="fetch",
            )
        )
    path = har.save(tmp_path / "bodies.har")
    assert path.stat().st_size > LARGE_HAR_BYTES
    seen: list[HarProgress] = []
    report = suggest(
        "bodies",
        [path],
        learnings=Learnings(workspace=tmp_path / "ws"),
        write=False,
        bounds=HarBounds(max_entries=3),
        progress=seen.append,
    )
    assert [d.endpoint for d in report.drafts] == ["GET /api/page/{page_id}"]
    assert {p.phase for p in seen} == {"scanning", "loading"}
    assert seen[-1].done == seen[-1].total == 3
    with pytest.raises(HarTooLargeError):
        suggest("bodies", [path], write=False, bounds=HarBounds(max_entries=2))


def test_a_body_file_a_har_names_counts_against_its_bound(tmp_path: Path) -> None:
    (tmp_path / "body.bin").write_bytes(b"\0" * 4096)
    entry = build_entry(f"{ORIGIN}/x.bin", b"", headers={"content-type": "image/png"})
    data = Har(entries=[entry]).to_dict()
    data["log"]["entries"][0]["response"]["content"] = {
        "mimeType": "image/png",
        "_file": "body.bin",
    }
    path = tmp_path / "attached.har"
    path.write_text(json.dumps(data))
    assert Har.load(path).entries[0].response.body() == b"\0" * 4096
    with pytest.raises(HarTooLargeError, match=r"with its content\._file bodies"):
        Har.load(path, bounds=HarBounds(max_bytes=path.stat().st_size + 100))


def test_a_cases_file_over_its_bound_is_refused_unread(tmp_path: Path) -> None:
    site = tmp_path / "ws" / "learnings" / "big-cases"
    (site / "tests").mkdir(parents=True)
    (site / "manifest.json").write_text(
        json.dumps({"id": "big-cases", "name": "x", "domains": ["x.example"]})
    )
    (site / "tests" / "cases.json").write_bytes(b" " * (MAX_CASES_BYTES + 1))
    learnings = Learnings(workspace=tmp_path / "ws")
    with pytest.raises(InvalidCasesError, match="larger than"):
        load_cases(learnings.find("big-cases"))


@pytest.mark.chrome
async def test_ego_record_leaves_out_what_goes_over_its_bounds_and_says_so(
    ported_browser: ego.Browser, tmp_path: Path
) -> None:
    endpoint = http_endpoint(websocket_url(ported_browser))
    env = ego_env(tmp_path / "profiles")
    har = tmp_path / "shop.har"
    with DemoServer(port=0) as shop:
        result = await ego_async(
            "record",
            shop.url,
            "--har",
            str(har),
            "--settle",
            "0.3",
            "--max-har-entries",
            "2",
            "--endpoint",
            endpoint,
            env=env,
        )
    assert result.returncode == 0, result
    data = result.json()
    assert data["entries"] == 2
    assert data["omitted"]["entries"] > 0
    assert "left out to stay within the recording's bounds" in result.stderr
    written = json.loads(har.read_text())["log"]
    assert len(written["entries"]) == 2
    assert written["_omitted"]["entries"] == data["omitted"]["entries"]
    assert written["_omitted"]["maxEntries"] == 2
    assert "left out" in written["comment"]


@pytest.mark.chrome
async def test_a_recordings_byte_bound_leaves_bodies_out(
    browser: ego.Browser, tmp_path: Path
) -> None:
    with DemoServer(port=0) as shop:
        async with browser.isolated_context() as context:
            tab = await context.new_tab()
            bounds = HarBounds(max_bytes=4096)
            async with tab.record_har(tmp_path / "small.har", bounds=bounds) as recording:
                await tab.navigate(shop.url)
                await recording.wait_idle()
    assert recording.omitted.bodies > 0
    har = Har.load(tmp_path / "small.har")
    assert har.extra["_omitted"]["bodies"] == recording.omitted.bodies
    assert any(entry.response.extra.get("_bodyOmitted") for entry in har.entries)


def test_the_docs_give_each_bound_with_its_default_and_its_flag() -> None:
    from ego.replay.har_bounds import MAX_HAR_BYTES

    root = Path(__file__).resolve().parent.parent
    loop = " ".join((root / "docs" / "learning-loop.md").read_text().split())
    replay = " ".join((root / "docs" / "replay.md").read_text().split())
    assert f"| {MAX_HAR_ENTRIES:,} (`ego.replay.MAX_HAR_ENTRIES`) | `--max-har-entries N` |" in loop
    assert MAX_HAR_BYTES == 256 * 1024 * 1024
    assert "| 256 MiB (`ego.replay.MAX_HAR_BYTES`) | `--max-har-bytes SIZE`" in loop
    assert f"| {MAX_CASES_BYTES // 1024 // 1024} MiB (`ego.learning.cases.format" in loop
    assert f"over {LARGE_HAR_BYTES // 1024 // 1024} MiB on stderr" in loop
    assert "`HarBounds(max_entries=50_000, max_bytes=256 MiB)`" in replay


@pytest.mark.chrome
async def test_ego_test_fails_a_case_whose_har_is_over_the_bound(
    ported_browser: ego.Browser, tmp_path: Path
) -> None:
    endpoint = http_endpoint(websocket_url(ported_browser))
    env = ego_env(tmp_path / "profiles")
    result = await ego_async(
        "test", "wikipedia", "--max-har-entries", "2", "--endpoint", endpoint, env=env
    )
    assert result.returncode == 3, result
    cases = result.json()["results"]
    assert cases
    for case in cases:
        assert case["status"] == "failed"
        assert "holds more than 2 entries" in case["reason"]
