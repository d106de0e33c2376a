"""Commands start at once: ``import ego`` and ``ego --help`` load none of the heavy modules,
and a tool call loads only what it needs. The figures themselves are in bench/bench_cli.py;
these tests keep a later import from bringing the cost back unnoticed."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from ego.cli.app import COMMANDS

#: What a bare ``import ego`` must not load: the browser, the learnings (pydantic models,
#: JSON Schema), the pool, the MCP SDK, the skills' YAML.
HEAVY = (
    "asyncio",
    "pydantic",
    "jsonschema",
    "referencing",
    "websockets",
    "psutil",
    "yaml",
    "frontmatter",
    "filelock",
    "mcp",
    "click",
    "ego.api",
    "ego.site",
    "ego.page",
    "ego.pool",
    "ego.learning.catalog.manifest",
    "ego.learning.describe.context",
)


def loaded_by(code: str) -> set[str]:
    """The top modules (and ego's modules) a fresh interpreter has after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def heavy_in(modules: set[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(
        name for name in heavy if name in modules or any(m.startswith(name + ".") for m in modules)
    )


def test_a_bare_import_ego_loads_only_the_exception_types() -> None:
    modules = loaded_by("import ego")
    assert heavy_in(modules) == []
    assert "ego.errors" in modules


def test_a_public_name_imports_its_module_on_first_use() -> None:
    modules = loaded_by("import ego\nego.Tab\nassert ego.launch.__module__ == 'ego.api'")
    assert {"ego.page.tab", "ego.api"} <= modules
    assert "mcp" not in modules
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        importlib.import_module("ego").nonsense  # noqa: B018


def test_ego_help_imports_no_command() -> None:
    modules = loaded_by(
        "import sys\nsys.argv = ['ego', '--help']\nfrom ego.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    heavy = tuple(name for name in HEAVY if name != "click")
    assert heavy_in(modules, heavy) == []
    assert not [m for m in modules if m.startswith("ego.cli.") and m.endswith("_commands")]


def test_a_tool_call_command_leaves_out_what_it_does_not_use() -> None:
    # What `ego run` loads before it runs: the call path, never the MCP SDK, learn_context's
    # models, the skills' YAML, the save lock or the pool.
    modules = loaded_by("import ego.cli.learning_commands, ego.api, ego.calls")
    unused = ("mcp", "yaml", "frontmatter", "filelock", "ego.learning.describe.context", "ego.pool",
              "ego.skills", "ego.learning.save", "ego.replay")  # fmt: skip
    assert heavy_in(modules, unused) == []


def test_ego_mcp_refuses_its_options_before_it_loads_the_mcp_sdk() -> None:
    # A start the options refuse (a pattern that never matches) fails before the server's
    # modules load the SDK.
    modules = loaded_by(
        "import sys\nsys.argv = ['ego', 'mcp', '--blocked-origins', '127.0.0.*']\n"
        "from ego.cli import main\ntry:\n    main()\nexcept SystemExit as exc:\n"
        "    assert exc.code == 2, exc.code"
    )
    assert "ego.mcp.limits" in modules
    assert heavy_in(modules, ("mcp", "ego.mcp.server", "ego.mcp.sdk")) == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_commands_summary_is_its_own_help(name: str) -> None:
    module, attribute, summary = COMMANDS[name]
    command = getattr(importlib.import_module(f"ego.cli.{module}"), attribute)
    first = (command.help or "").split("\n\n")[0].replace("\n", " ").strip()
    assert summary == first
