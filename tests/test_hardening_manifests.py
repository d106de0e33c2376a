"""Hardening of manifests (issue 12): whatever a manifest holds, only its own site breaks.

Broken shapes of JSON, schemas that would fetch URLs, patterns that backtrack forever, odd
names and links out of the learnings root: each is one site's reported problem, and every
other site and front end keeps working. No browser is needed here.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ego.errors import (
    InvalidArgsError,
    InvalidManifestError,
    UnknownSiteError,
    UnknownToolError,
    UnsafePathError,
)
from ego.learning.catalog.manifest import (
    MAX_MANIFEST_BYTES,
    MAX_MANIFEST_DEPTH,
    BrowserToolSpec,
    load_manifest,
)
from ego.learning.catalog.registry import MAX_SITE_ID, Learnings
from ego.learning.catalog.schemas import (
    MAX_PATTERN_LENGTH,
    MAX_SCHEMA_DEPTH,
    mismatch,
    schema_problems,
)
from ego.learning.catalog.validate import validate_learnings
from ego.learning.describe.context import build_context
from tests.helpers.commands import ego_env, ego_sync
from tests.helpers.learnings import ECHO, make_site, tool, write_manifest
from tests.helpers.paths import ROOT
from tests.helpers.skills import problems_of, write_skill

GOOD_URL = "https://good.test/page"


def _good(root: Path) -> Path:
    return make_site(root, "good", domains=["good.test"], browser_tools={"echo": tool(ECHO)})


def _manifest(site_id: str = "broken", **tool_entry: Any) -> dict[str, Any]:
    return {
        "id": site_id,
        "name": "Broken",
        "domains": ["broken.test"],
        "browserTools": {"echo": {"path": "browser-tools/echo.js", **tool_entry}},
    }


def _raw(middle: str) -> str:
    """A manifest's text with ``middle`` spliced in as the value of ``extra``."""
    return '{"id": "broken", "name": "Broken", "domains": ["broken.test"], "extra": ' + middle + "}"


BAD_MANIFESTS: dict[str, Any] = {
    "args true": _manifest(args=True),
    "args -1": _manifest(args=-1),
    "args string": _manifest(args="x"),
    "args list": _manifest(args=[1]),
    "returns -1": _manifest(returns=-1),
    "returns string": _manifest(returns="x"),
    "returns list": _manifest(returns=[1]),
    "args $schema number": _manifest(args={"$schema": 5, "type": "object"}),
    "args $schema list": _manifest(args={"$schema": [1], "type": "object"}),
    "args $schema object": _manifest(args={"$schema": {}, "properties": {}}),
    "args $schema unknown": _manifest(args={"$schema": "https://nope.test/s", "type": "object"}),
    "returns $schema list": _manifest(returns={"$schema": [1]}),
    "compact entry $schema": _manifest(args={"q": {"type": "string", "$schema": 5}}),
    "args type number": _manifest(args={"type": 5}),
    "nested 5000 deep": _raw("[" * 5000 + "]" * 5000),
    "nested past the bound": _raw("[" * MAX_MANIFEST_DEPTH + "]" * MAX_MANIFEST_DEPTH),
    "schema past its bound": _manifest(
        args={
            "type": "object",
            "properties": {"a": json.loads('{"not": ' * MAX_SCHEMA_DEPTH + "{}" + "}" * 64)},
        }
    ),
    "5000-digit integer": _raw("1" * 5000),
    "NaN": _raw("NaN"),
    "larger than the bound": _raw(json.dumps("x" * MAX_MANIFEST_BYTES)),
    "a JSON array": "[1, 2]",
    "tools not an object": {**_manifest(), "browserTools": [1]},
    "a tool not an object": {**_manifest(), "browserTools": {"echo": 5}},
}


@pytest.fixture
def two_sites(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "learnings"
    _good(root)
    return root, root / "broken"


@pytest.mark.parametrize("case", list(BAD_MANIFESTS))
def test_a_bad_manifest_is_only_its_own_sites_problem(
    two_sites: tuple[Path, Path], case: str
) -> None:
    root, broken = two_sites
    write_manifest(broken, BAD_MANIFESTS[case])
    with pytest.raises(InvalidManifestError) as info:
        load_manifest(broken)
    assert info.value.site_id == "broken"
    assert info.value.problems
    assert all("\n" not in problem and len(problem) < 2000 for problem in info.value.problems)

    learnings = Learnings(roots=[root])
    entries = {entry.site_id: entry for entry in learnings.sites()}
    assert entries["good"].valid
    assert not entries["broken"].valid
    assert entries["broken"].problems == info.value.problems
    with pytest.raises(InvalidManifestError):
        learnings.site("broken")
    context = build_context(learnings, GOOD_URL)
    assert [site.site_id for site in context.sites] == ["good"]
    assert {problem.where for problem in validate_learnings(learnings)} == {
        str(broken / "manifest.json")
    }


def test_the_documented_bounds_are_what_is_refused(tmp_path: Path) -> None:
    site = tmp_path / "broken"
    write_manifest(site, BAD_MANIFESTS["larger than the bound"])
    with pytest.raises(InvalidManifestError, match=f"larger than {MAX_MANIFEST_BYTES} bytes"):
        load_manifest(site)
    write_manifest(site, BAD_MANIFESTS["nested past the bound"])
    with pytest.raises(InvalidManifestError, match=f"more than {MAX_MANIFEST_DEPTH} levels"):
        load_manifest(site)
    # One level less than the bound (the top-level object is one) still loads.
    inside = MAX_MANIFEST_DEPTH - 1
    write_manifest(site, _raw("[" * inside + "]" * inside))
    assert load_manifest(site).id == "broken"


def test_front_ends_keep_working_beside_a_broken_site(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    learnings = workspace / "learnings"
    _good(learnings)
    write_manifest(learnings / "broken", _manifest(args=True))
    env = ego_env(tmp_path / "profiles", workspace=workspace)

    sites = ego_sync("sites", "--json", env=env, cwd=tmp_path)
    assert sites.returncode == 0, sites
    listed = {site["site_id"]: site for site in sites.json()["sites"]}
    assert listed["good"]["valid"] is True
    assert listed["broken"]["valid"] is False
    assert any("args" in problem for problem in listed["broken"]["problems"])

    tools = ego_sync("tools", GOOD_URL, "--json", env=env, cwd=tmp_path)
    assert tools.returncode == 0, tools
    assert {tool["site_id"] for tool in tools.json()["tools"]} == {"good"}

    checked = ego_sync("validate", str(learnings), "--json", env=env, cwd=tmp_path)
    assert checked.returncode == 3, checked  # problems found, reported, no traceback
    problems = checked.json()["problems"]
    assert problems
    assert all("broken" in line for line in problems)
    for result in (sites, tools, checked):
        assert "Traceback" not in result.stderr, result


async def test_the_mcp_server_builds_beside_a_broken_site(tmp_path: Path) -> None:
    from ego.mcp.holder import BrowserHolder
    from ego.mcp.server import build_server

    _good(tmp_path)
    write_manifest(tmp_path / "broken", _manifest(args=[1]))
    learnings = Learnings(roots=[tmp_path])
    holder = BrowserHolder(endpoint=None, profile=None, headless=True, learnings=learnings)
    names = {tool.name for tool in await build_server(holder).list_tools()}
    assert "good__echo" in names
    assert not any(name.startswith("broken__") for name in names)


# -- no network from schemas -------------------------------------------------------------------


@pytest.fixture
def reached_out(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every name lookup and socket connection made during the test, in order.

    Loading a manifest or checking args never needs the network: one that reaches for it (a
    ``$schema`` or ``$ref`` fetched) is what could make it slow, so a test asserts this list
    empty where it once timed the work, which no load on the machine can fail.
    """
    made: list[object] = []
    connect, lookup = socket.socket.connect, socket.getaddrinfo

    def recorded_connect(self: socket.socket, address: Any) -> None:
        made.append(address)
        connect(self, address)

    def recorded_lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        made.append(host)
        return lookup(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", recorded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", recorded_lookup)
    return made


@pytest.fixture
def counting_server() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that serves a valid schema to anyone and counts who asked."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _spec(args: dict[str, Any]) -> BrowserToolSpec:
    return BrowserToolSpec(name="echo", path="browser-tools/echo.js", args=args)


def test_a_remote_ref_is_a_manifest_problem_never_a_fetch(
    tmp_path: Path, counting_server: tuple[str, list[str]]
) -> None:
    base, hits = counting_server
    url = f"{base}/x.json"
    remote = {"type": "object", "properties": {"a": {"$ref": url}}}
    root = tmp_path / "learnings"
    _good(root)
    write_manifest(root / "broken", _manifest(args=remote))
    write_manifest(root / "returns", {**_manifest("returns", returns={"$ref": url})})
    learnings = Learnings(roots=[root])
    entries = {entry.site_id: entry for entry in learnings.sites()}
    for site_id in ("broken", "returns"):
        assert not entries[site_id].valid
        assert any(
            url in problem and "never fetches" in problem for problem in entries[site_id].problems
        )
    assert entries["good"].valid

    # A spec that never went through a manifest check: its args are refused, not fetched.
    with pytest.raises(InvalidArgsError):
        learnings.check_args("good", _spec(remote), {"a": "text"})
    assert mismatch({"$ref": url}, "text")  # the returns check: a mismatch, not a fetch
    assert mismatch({"$ref": f"file://{tmp_path}/nothing.json"}, "text")
    assert hits == []


def test_a_remote_ref_in_a_skill_is_a_problem(
    tmp_path: Path, counting_server: tuple[str, list[str]]
) -> None:
    base, hits = counting_server
    folder = write_skill(
        tmp_path, params={"type": "object", "properties": {"q": {"$ref": f"{base}/q.json"}}}
    )
    assert any("never fetches" in problem for problem in problems_of(folder))
    assert hits == []


@pytest.mark.parametrize(
    ("ref", "needle"),
    [
        ("#/$defs/nope", "does not resolve inside the schema"),
        ("file:///etc/hostname", "never fetches"),
        ("other.json", "does not resolve"),
    ],
)
def test_refs_that_do_not_resolve_locally_are_reported_at_load(
    tmp_path: Path, ref: str, needle: str
) -> None:
    site = tmp_path / "broken"
    write_manifest(site, _manifest(args={"type": "object", "properties": {"a": {"$ref": ref}}}))
    with pytest.raises(InvalidManifestError) as info:
        load_manifest(site)
    assert any(needle in problem and ref in problem for problem in info.value.problems)


def test_local_refs_keep_working(tmp_path: Path) -> None:
    args = {
        "$id": "https://ego.invalid/args",
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/word"},
            "b": {"$ref": "https://ego.invalid/args#/$defs/word"},
            "c": {"$ref": "#/properties/a"},
        },
        "$defs": {"word": {"type": "string", "minLength": 2}},
        "additionalProperties": False,
    }
    make_site(tmp_path, "refs", domains=["refs.test"], browser_tools={"t": tool(ECHO, args=args)})
    learnings = Learnings(roots=[tmp_path])
    _, spec = learnings.tool("refs", "t")
    assert learnings.check_args("refs", spec, {"a": "ok", "b": "ok", "c": "ok"})
    for bad in ({"a": "x"}, {"b": 1}, {"c": "x"}):
        with pytest.raises(InvalidArgsError):
            learnings.check_args("refs", spec, bad)


def test_a_ref_loop_is_invalid_args_not_a_crash(tmp_path: Path) -> None:
    args = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/loop"}},
        "$defs": {"loop": {"$ref": "#/$defs/loop"}},
    }
    make_site(tmp_path, "loop", domains=["loop.test"], browser_tools={"t": tool(ECHO, args=args)})
    learnings = Learnings(roots=[tmp_path])
    _, spec = learnings.tool("loop", "t")
    with pytest.raises(InvalidArgsError, match="could not be checked"):
        learnings.check_args("loop", spec, {"a": 1})


# -- bounded validation ------------------------------------------------------------------------

_RUNAWAY = r"^(a+)+$"

# Against 35 a's and a "!", a backtracking matcher takes about 2**35 steps (Python's re: some
# 20 minutes): a check that finishes at all within the child's 30 s does not backtrack, however
# loaded the machine is.
_CHECK = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from ego.errors import InvalidArgsError
    from ego.learning.catalog.registry import Learnings
    root = Path(sys.argv[1])
    learnings = Learnings(roots=[root])
    out = {}
    for tool_name, args in (("p", {"a": "a" * 35 + "!"}), ("pp", {"a" * 35 + "!": 1})):
        _, spec = learnings.tool("slow", tool_name)
        try:
            learnings.check_args("slow", spec, args)
            outcome = "passed"
        except InvalidArgsError:
            outcome = "InvalidArgsError"
        out[tool_name] = outcome
    print(json.dumps(out))
    """
)


def test_a_runaway_pattern_is_checked_in_bounded_time(tmp_path: Path) -> None:
    pattern_args = {"type": "object", "properties": {"a": {"type": "string", "pattern": _RUNAWAY}}}
    keyed_args = {
        "type": "object",
        "patternProperties": {_RUNAWAY: {"type": "integer"}},
        "additionalProperties": False,
    }
    make_site(
        tmp_path,
        "slow",
        domains=["slow.test"],
        browser_tools={"p": tool(ECHO, args=pattern_args), "pp": tool(ECHO, args=keyed_args)},
    )
    # In a child process, so that a regression fails within the timeout instead of freezing.
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHECK, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    except subprocess.TimeoutExpired:
        pytest.fail("checking args against ^(a+)+$ did not finish within 30 s")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"p": "InvalidArgsError", "pp": "InvalidArgsError"}


def test_normal_patterns_still_work(tmp_path: Path) -> None:
    args = {
        "type": "object",
        "properties": {"word": {"type": "string", "pattern": "^[a-z]+$"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
    }
    make_site(tmp_path, "re", domains=["re.test"], browser_tools={"t": tool(ECHO, args=args)})
    learnings = Learnings(roots=[tmp_path])
    _, spec = learnings.tool("re", "t")
    assert learnings.check_args("re", spec, {"word": "abc", "x-n": 1}) == {"word": "abc", "x-n": 1}
    for bad, field in (
        ({"word": "ab1"}, "word"),
        ({"word": "abc\n"}, "word"),  # $ is the end of the text, as in JSON Schema
        ({"x-n": "one"}, "x-n"),
        ({"other": 1}, "other"),
        ({"x-n": 1, "other": 1}, "other"),  # x-n is allowed by its pattern
    ):
        with pytest.raises(InvalidArgsError) as info:
            learnings.check_args("re", spec, bad)
        assert info.value.field == field
    with pytest.raises(InvalidArgsError):
        learnings.check_args("re", spec, {"word": "a\ud800"})  # a lone surrogate is no letter


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "(?=a)b"},
        {"type": "string", "pattern": r"(a)\1"},
        {"type": "string", "pattern": "a" * (MAX_PATTERN_LENGTH + 1)},
        {"type": "object", "patternProperties": {"(?<=x)y": True}},
    ],
)
def test_a_pattern_re2_cannot_run_is_reported(tmp_path: Path, schema: dict[str, Any]) -> None:
    site = tmp_path / "broken"
    write_manifest(site, _manifest(args={"type": "object", "properties": {"a": schema}}))
    with pytest.raises(InvalidManifestError) as info:
        load_manifest(site)
    pattern = schema.get("pattern") or next(iter(schema["patternProperties"]))
    assert any(repr(pattern)[:40] in problem for problem in info.value.problems), info.value


def test_unevaluated_properties_beside_pattern_properties_is_refused() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^a": True},
        "unevaluatedProperties": False,
    }
    assert any("unevaluatedProperties" in problem for problem in schema_problems(schema))


# -- names -------------------------------------------------------------------------------------


@pytest.mark.parametrize("site_id", [5, None, 1.5, ["good"], {"good": 1}, b"good", ("good",)])
def test_a_site_id_that_is_not_a_string_is_an_unknown_site(tmp_path: Path, site_id: Any) -> None:
    _good(tmp_path)
    learnings = Learnings(roots=[tmp_path])
    with pytest.raises(UnknownSiteError):
        learnings.find(site_id)
    with pytest.raises(UnknownSiteError):
        learnings.tool(site_id, "echo")


@pytest.mark.parametrize("name", [5, None, ["echo"], {"echo": 1}, b"echo"])
def test_a_tool_name_that_is_not_a_string_is_an_unknown_tool(tmp_path: Path, name: Any) -> None:
    _good(tmp_path)
    with pytest.raises(UnknownToolError):
        Learnings(roots=[tmp_path]).tool("good", name)


def test_long_site_ids_are_unknown_not_an_os_error(tmp_path: Path) -> None:
    _good(tmp_path)
    learnings = Learnings(roots=[tmp_path])
    for site_id in ("a" * 10_000, "a" * (MAX_SITE_ID + 1)):
        with pytest.raises(UnknownSiteError):
            learnings.find(site_id)
    # A folder that long exists on disk, but is no site.
    long_id = "a" * (MAX_SITE_ID + 1)
    make_site(tmp_path, long_id, domains=["long.test"])
    assert not {entry.site_id: entry for entry in learnings.sites()}[long_id].valid


def test_a_trailing_newline_is_not_part_of_a_valid_name(tmp_path: Path) -> None:
    make_site(tmp_path, "good\n", domains=["good.test"], browser_tools={"echo": tool(ECHO)})
    make_site(tmp_path, "tools", domains=["tools.test"], browser_tools={"echo\n": tool(ECHO)})
    learnings = Learnings(roots=[tmp_path])
    with pytest.raises(UnknownSiteError):
        learnings.find("good\n")
    entries = {entry.site_id: entry for entry in learnings.sites()}
    assert not entries["good\n"].valid
    assert not entries["tools"].valid


# -- links -------------------------------------------------------------------------------------


def test_a_site_folder_linked_outside_the_root_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "learnings", tmp_path / "elsewhere"
    _good(root)
    make_site(outside, "linked", domains=["linked.test"], browser_tools={"echo": tool(ECHO)})
    (root / "linked").symlink_to(outside / "linked", target_is_directory=True)
    learnings = Learnings(roots=[root])
    entry = {entry.site_id: entry for entry in learnings.sites()}["linked"]
    assert not entry.valid
    assert "outside the learnings root" in entry.problems[0]
    with pytest.raises(InvalidManifestError, match="outside the learnings root"):
        learnings.site("linked")
    assert learnings.find("good").valid


def test_a_manifest_linked_outside_the_root_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "learnings", tmp_path / "elsewhere"
    site = make_site(root, "linked", domains=["linked.test"])
    moved = outside / "manifest.json"
    outside.mkdir()
    (site / "manifest.json").rename(moved)
    (site / "manifest.json").symlink_to(moved)
    with pytest.raises(InvalidManifestError, match=r"manifest\.json links to"):
        Learnings(roots=[root]).site("linked")


def test_links_inside_the_root_are_fine(tmp_path: Path) -> None:
    root = tmp_path / "learnings"
    store = make_site(
        root / "_store", "inner", domains=["inner.test"], browser_tools={"echo": tool(ECHO)}
    )
    (root / "inner").symlink_to(store, target_is_directory=True)
    learnings = Learnings(roots=[root])
    entry = learnings.find("inner")
    assert entry.valid, entry.problems
    _, spec = learnings.tool("inner", "echo")
    assert isinstance(spec, BrowserToolSpec)
    assert learnings.browser_source("inner", spec).expression


def test_a_tool_file_linked_outside_its_site_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "learnings"
    site = make_site(root, "leaky", domains=["leaky.test"], browser_tools={"echo": tool(None)})
    secret = tmp_path / "secret.js"
    secret.write_text(ECHO)
    (site / "browser-tools").mkdir()
    (site / "browser-tools" / "echo.js").symlink_to(secret)
    learnings = Learnings(roots=[root])
    _, spec = learnings.tool("leaky", "echo")
    assert isinstance(spec, BrowserToolSpec)
    with pytest.raises(UnsafePathError):
        learnings.browser_source("leaky", spec)


def test_every_bad_manifest_loads_without_the_network(
    tmp_path: Path, reached_out: list[object]
) -> None:
    """All the shapes above, one root: listing them finds each invalid, and reaches for
    nothing that could make it slow (an unknown ``$schema`` is not fetched)."""
    root = tmp_path / "learnings"
    _good(root)
    for index, manifest in enumerate(BAD_MANIFESTS.values()):
        text = manifest if isinstance(manifest, str) else json.dumps(manifest)
        write_manifest(root / f"bad{index}", text.replace('"broken"', f'"bad{index}"'))
    entries = Learnings(roots=[root]).sites()
    assert [entry.site_id for entry in entries if entry.valid] == ["good"]
    assert len(entries) == len(BAD_MANIFESTS) + 1
    assert reached_out == []


# -- a seeded fuzz over manifests and args ------------------------------------------------------

_KEYWORDS = [
    *("type", "properties", "required", "additionalProperties", "items", "pattern"),
    *("patternProperties", "$ref", "$defs", "$schema", "$id", "enum", "const", "minimum"),
    *("anyOf", "allOf", "oneOf", "not", "if", "then", "else", "format", "examples", "default"),
    *("minLength", "unevaluatedProperties", "dependentSchemas", "prefixItems", "contains"),
    *("propertyNames", "$dynamicRef", "$anchor"),
]
_LEAVES = [
    *(True, False, None, -1, 0, 1.5, 10**20, "x", "object", "string", "#", "#/$defs/a"),
    *("http://127.0.0.1:9/x", _RUNAWAY, "(?=a)", "[", "\u2028", "a\n"),
]


def _value(rng: Any, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.3:
        return rng.choice(_LEAVES) if roll < 0.95 else []
    if roll < 0.5:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = [*_KEYWORDS, "a", "b"]
    return {rng.choice(keys): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _schema(rng: Any) -> Any:
    if rng.random() < 0.1:
        return _value(rng)
    schema: dict[str, Any] = {"type": "object"} if rng.random() < 0.7 else {}
    for _ in range(rng.randint(0, 4)):
        prop = {"type": rng.choice(["string", "integer"]), rng.choice(_KEYWORDS): _value(rng, 2)}
        schema[rng.choice(_KEYWORDS)] = _value(rng) if rng.random() < 0.5 else {"a": prop}
    return schema


def test_seeded_fuzz_of_manifests_and_args(
    tmp_path: Path, counting_server: tuple[str, list[str]], reached_out: list[object]
) -> None:
    """Random args/returns schemas and args: only ego errors, no fetch, no slow check (nothing
    reaches for the network; patterns run on RE2, see the runaway pattern test)."""
    import random

    rng = random.Random(12)
    base, hits = counting_server
    _LEAVES.append(f"{base}/fuzz.json")
    try:
        valid = 0
        for case in range(120):
            root = tmp_path / str(case)
            _good(root)
            returns = _schema(rng) if rng.random() < 0.5 else _value(rng)
            make_site(
                root,
                "fuzz",
                domains=["fuzz.test", "good.test"],
                browser_tools={"t": tool(ECHO, args=_schema(rng), returns=returns)},
            )
            learnings = Learnings(roots=[root])
            assert learnings.find("good").valid
            assert "good" in [site.site_id for site in build_context(learnings, GOOD_URL).sites]
            if not learnings.find("fuzz").valid:
                continue
            valid += 1
            _, spec = learnings.tool("fuzz", "t")
            for _ in range(5):
                args = _value(rng)
                try:
                    learnings.check_args(
                        "fuzz", spec, args if isinstance(args, dict) else {"a": args}
                    )
                except InvalidArgsError:
                    pass
            if spec.returns is not None:
                assert isinstance(mismatch(spec.returns, _value(rng)), str)
        assert valid >= 3  # the generator does reach the args check
        assert hits == []
        assert reached_out == []
    finally:
        _LEAVES.pop()
