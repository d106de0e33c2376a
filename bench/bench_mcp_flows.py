"""What an agent pays per step over MCP: calls, characters returned and time of two flows on
the demo shop, and the size of the tool list, for ``ego mcp`` and (when npm can get it)
playwright-mcp, measured in the same run.

Run from the project root::

    .venv/bin/python bench/bench_mcp_flows.py [--runs N] [--no-playwright] [--json PATH]

Everything goes through the MCP SDK's stdio client, as an agent's client would: each run
starts a fresh server (``python -m ego mcp``, or ``npx @playwright/mcp@0.0.83
--executable-path /usr/bin/chromium --headless --isolated``, installed into the git-ignored
``bench/.npm``), makes one untimed call that starts its browser, then the flow. The demo shop
(``ego.demo.DemoServer``) is served from this process.

The flows, all on the task "search the shop for desk, open the first result, add it to the
cart, read the cart's count":

* **ego site tools**: ``learn_context`` (compact), ``demo-shop__search_products``,
  ``demo-shop__add_to_cart`` with the first result's id, ``demo-shop__get_cart``;
* **ego page tools**: ``navigate``, ``take_snapshot`` once (``find`` the search box), then
  ``type`` and ``press_key`` Enter, ``click`` the first result and ``click`` "Add to cart",
  each act using the refs and reading the count from the notes the replies carry;
* **playwright-mcp, snapshots**: ``browser_navigate``, ``browser_type``,
  ``browser_press_key`` Enter, ``browser_click`` twice, each reply carrying its snapshot;
* **playwright-mcp, browser_find** (``--snapshot-mode none``): the same actions, each target
  found first with ``browser_find``, and the count read with it at the end.

"Characters" are those of the text blocks a reply carries (what a model reads); ego's replies
also carry the same facts as structured content, counted apart. "Time" is the median over the
runs of the flow's wall time. The tool list is measured as the issue measured it: each tool's
name, description and input schema as compact JSON, summed; ego's is also checked to be the
same, byte for byte, before and after the flows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from ego.demo import DemoServer

ROOT = Path(__file__).resolve().parent.parent
NPM_DIR = ROOT / "bench" / ".npm"
PLAYWRIGHT_MCP = "@playwright/mcp@0.0.83"
CHROMIUM = "/usr/bin/chromium"

#: The issue's targets.
SITE_FLOW_MAX = 3000

_REF = r"\[ref=([a-z0-9]+)\]"
#: A playwright-mcp link to a product page: its line, then its /url line.
_PW_PRODUCT = r'link "[^"]*" \[ref=([a-z0-9]+)\][^\n]*\n\s*- /url: /product/'


@dataclass
class Flow:
    """One flow's calls: each call's name, text characters, structured characters, seconds."""

    name: str
    calls: list[tuple[str, int, int, float]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def text(self) -> int:
        return sum(call[1] for call in self.calls)

    @property
    def structured(self) -> int:
        return sum(call[2] for call in self.calls)


class Agent:
    """One server, called through the SDK's client session; every reply is counted."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.flow: Flow | None = None

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        started = time.perf_counter()
        result = await asyncio.wait_for(self.session.call_tool(name, arguments or {}), 120)
        took = time.perf_counter() - started
        text = _text(result)
        if result.is_error:
            raise RuntimeError(f"{name} {arguments} failed: {text}")
        structured = result.structured_content
        shaped = len(json.dumps(structured, ensure_ascii=False)) if structured else 0
        if self.flow is not None:
            self.flow.calls.append((name, len(text), shaped, took))
        return text

    async def tool_list(self) -> list[dict[str, Any]]:
        listed = await asyncio.wait_for(self.session.list_tools(), 60)
        return [
            {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
            for t in listed.tools
        ]


def _text(result: CallToolResult) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, TextContent))


def _size(tools: list[dict[str, Any]]) -> int:
    return sum(len(json.dumps(tool, ensure_ascii=False, separators=(",", ":"))) for tool in tools)


def _find(pattern: str, text: str, what: str) -> str:
    match = re.search(pattern, text)
    if match is None:
        raise RuntimeError(f"no {what} in the reply:\n{text}")
    return match.group(1)


# ------------------------------------------------------------------------------ the flows


async def ego_site_flow(agent: Agent, shop: DemoServer) -> None:
    await agent.call("learn_context", {"url": shop.url})
    found = await agent.call("demo-shop__search_products", {"query": "desk"})
    first = json.loads(found)["products"][0]["id"]
    await agent.call("demo-shop__add_to_cart", {"product_id": first})
    cart = json.loads(await agent.call("demo-shop__get_cart", {}))
    if cart.get("count") != 1:
        raise RuntimeError(f"the cart holds {cart!r}, not one item")


async def ego_page_flow(agent: Agent, shop: DemoServer) -> None:
    await agent.call("navigate", {"url": shop.url})
    found = await agent.call("take_snapshot", {"find": "Search products"})
    box = _find(r'searchbox "Search products" ' + _REF, found, "search box")
    await agent.call("type", {"ref": box, "text": "desk"})
    results = await agent.call("press_key", {"key": "Enter"})
    first = _find(r'link "[^"]*" ' + _REF + " -> /product/", results, "first result")
    product = await agent.call("click", {"ref": first})
    add = _find(r'button "Add to cart" ' + _REF, product, "Add to cart button")
    added = await agent.call("click", {"ref": add})
    count = _find(r'\+ link "Cart \(([0-9]+)\)"', added, "cart count")
    if count != "1":
        raise RuntimeError(f"the cart says {count}, not 1")


async def playwright_snapshot_flow(agent: Agent, shop: DemoServer) -> None:
    await agent.call("browser_navigate", {"url": shop.url})
    page = await agent.call("browser_snapshot")
    box = _find(r'searchbox "Search products" ' + _REF, page, "search box")
    await agent.call("browser_type", {"target": box, "text": "desk"})
    await agent.call("browser_press_key", {"key": "Enter"})
    results = await agent.call("browser_snapshot")
    first = _find(_PW_PRODUCT, results, "first result")
    await agent.call("browser_click", {"target": first})
    product = await agent.call("browser_snapshot")
    add = _find(r'button "Add to cart" ' + _REF, product, "Add to cart button")
    await agent.call("browser_click", {"target": add})
    added = await agent.call("browser_snapshot")
    count = _find(r'link "Cart \(([0-9]+)\)"', added, "cart count")
    if count != "1":
        raise RuntimeError(f"the cart says {count}, not 1")


async def playwright_find_flow(agent: Agent, shop: DemoServer) -> None:
    await agent.call("browser_navigate", {"url": shop.url})
    found = await agent.call("browser_find", {"text": "Search products"})
    box = _find(r'searchbox "Search products" ' + _REF, found, "search box")
    await agent.call("browser_type", {"target": box, "text": "desk"})
    await agent.call("browser_press_key", {"key": "Enter"})
    found = await agent.call("browser_find", {"text": "/product/"})
    first = _find(_PW_PRODUCT, found, "first result")
    await agent.call("browser_click", {"target": first})
    found = await agent.call("browser_find", {"text": "Add to cart"})
    add = _find(r'button "Add to cart" ' + _REF, found, "Add to cart button")
    await agent.call("browser_click", {"target": add})
    found = await agent.call("browser_find", {"text": "Cart ("})
    count = _find(r'link "Cart \(([0-9]+)\)"', found, "cart count")
    if count != "1":
        raise RuntimeError(f"the cart says {count}, not 1")


# ----------------------------------------------------------------------------- the servers


@dataclass(frozen=True)
class Server:
    """How to start one contender, and the untimed call that starts its browser."""

    label: str
    command: list[str]
    warm: tuple[str, dict[str, Any]]
    #: Where it runs (playwright-mcp writes its snapshot files there).
    cwd: Path
    env: dict[str, str] | None = None


def ego_server(shop: DemoServer, state: Path) -> Server:
    env = dict(os.environ)
    env["EGO_STATE_DIR"] = str(state)
    env["EGO_PROFILES_DIR"] = str(state / "profiles")
    return Server(
        "ego",
        [sys.executable, "-m", "ego", "mcp", "--start-url", f"demo-shop={shop.url}"],
        ("list_tabs", {}),
        state,
        env,
    )


def playwright_server(binary: Path, folder: Path, *extra: str) -> Server:
    command = [str(binary), "--executable-path", CHROMIUM, "--headless", "--isolated", *extra]
    if os.geteuid() == 0:
        command.append("--no-sandbox")
    return Server("playwright-mcp", command, ("browser_tabs", {"action": "list"}), folder)


def playwright_binary(install: bool) -> Path | None:
    """playwright-mcp in bench/.npm, installed there first when asked and npm can get it."""
    binary = NPM_DIR / "node_modules" / ".bin" / "playwright-mcp"
    if binary.exists() or not install:
        return binary if binary.exists() else None
    npm = shutil.which("npm")
    if npm is None or not Path(CHROMIUM).exists():
        print("playwright-mcp: skipped (no npm or no /usr/bin/chromium)", file=sys.stderr)
        return None
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(NPM_DIR), PLAYWRIGHT_MCP],
            check=True,
            capture_output=True,
            timeout=300,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"playwright-mcp: skipped (npm could not install it: {exc})", file=sys.stderr)
        return None
    return binary if binary.exists() else None


async def tool_list(server: Server) -> list[dict[str, Any]]:
    """The tools ``server`` lists, with no call made."""
    params = StdioServerParameters(
        command=server.command[0], args=server.command[1:], env=server.env, cwd=server.cwd
    )
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), 60)
            return await Agent(session).tool_list()


async def run_flow(
    server: Server,
    name: str,
    flow: Callable[[Agent, DemoServer], Awaitable[None]],
    shop: DemoServer,
    lists: list[list[dict[str, Any]]] | None = None,
) -> Flow:
    """One fresh server, its browser started, then ``flow`` timed; with ``lists``, the tool
    list is read before and after the flow into it."""
    params = StdioServerParameters(
        command=server.command[0], args=server.command[1:], env=server.env, cwd=server.cwd
    )
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), 60)
            agent = Agent(session)
            if lists is not None:
                lists.append(await agent.tool_list())
            await agent.call(*server.warm)
            measured = Flow(name)
            agent.flow = measured
            started = time.perf_counter()
            await flow(agent, shop)
            measured.seconds = time.perf_counter() - started
            agent.flow = None
            if lists is not None:
                lists.append(await agent.tool_list())
    return measured


# ----------------------------------------------------------------------------- the report


def _row(label: str, flows: list[Flow]) -> dict[str, Any]:
    last = flows[-1]
    return {
        "flow": label,
        "calls": len(last.calls),
        "text": last.text,
        "structured": last.structured,
        "seconds": statistics.median(flow.seconds for flow in flows),
        "per_call": [(name, chars, seconds) for name, chars, _, seconds in last.calls],
    }


def _sizes(label: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    site = [tool for tool in tools if "__" in tool["name"]]
    generic = [tool for tool in tools if "__" not in tool["name"]]
    return {
        "server": label,
        "tools": len(tools),
        "chars": _size(tools),
        "generic_tools": len(generic),
        "generic_chars": _size(generic),
        "site_tools": len(site),
        "site_chars": _size(site),
    }


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh servers per flow")
    parser.add_argument("--no-playwright", action="store_true", help="ego only")
    parser.add_argument("--no-install", action="store_true", help="never run npm")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()

    rows: list[dict[str, Any]] = []
    sizes: list[dict[str, Any]] = []
    checks: list[str] = []
    with DemoServer() as shop, tempfile.TemporaryDirectory(prefix="ego-bench-") as folder:
        ego = ego_server(shop, Path(folder))
        flows: dict[str, list[Flow]] = {"site": [], "page": []}
        lists: list[list[dict[str, Any]]] = []
        for run in range(options.runs):
            seen = lists if run == 0 else None
            flows["site"].append(await run_flow(ego, "site", ego_site_flow, shop, seen))
            flows["page"].append(await run_flow(ego, "page", ego_page_flow, shop, seen))
        rows.append(_row("ego site tools (learn_context, 3 site tools)", flows["site"]))
        rows.append(_row("ego page tools (one take_snapshot, notes after)", flows["page"]))
        sizes.append(_sizes("ego mcp", lists[0]))
        # The groups that hold what playwright-mcp's tools do: tabs, pages, input, network.
        like = Server(
            "ego", [*ego.command, "--tools", "pages,input,network"], ego.warm, ego.cwd, ego.env
        )
        sizes.append(_sizes("ego mcp --tools pages,input,network", await tool_list(like)))
        same = all(json.dumps(tools) == json.dumps(lists[0]) for tools in lists)
        answer = "yes" if same else "NO"
        checks.append(f"ego's tools/list byte-identical before and after both flows: {answer}")

        binary = None if options.no_playwright else playwright_binary(not options.no_install)
        if binary is not None:
            full = playwright_server(binary, Path(folder))
            bare = playwright_server(binary, Path(folder), "--snapshot-mode", "none")
            snapshots: list[Flow] = []
            finds: list[Flow] = []
            pw_lists: list[list[dict[str, Any]]] = []
            for run in range(options.runs):
                seen = pw_lists if run == 0 else None
                snapshots.append(
                    await run_flow(full, "pw-snap", playwright_snapshot_flow, shop, seen)
                )
                finds.append(await run_flow(bare, "pw-find", playwright_find_flow, shop))
            rows.append(_row("playwright-mcp, snapshots", snapshots))
            rows.append(_row("playwright-mcp, browser_find (--snapshot-mode none)", finds))
            sizes.append(_sizes("playwright-mcp", pw_lists[0]))
            shutil.rmtree(Path(folder) / ".playwright-mcp", ignore_errors=True)

    print(f"{options.runs} fresh server(s) per flow; the demo shop; text = characters of the")
    print("text blocks; structured = ego's structured content (the same facts), counted apart.\n")
    print("| flow | calls | characters returned | structured | time (median) |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        structured = f"{row['structured']:,}" if row["structured"] else "-"
        print(
            f"| {row['flow']} | {row['calls']} | {row['text']:,} | {structured} "
            f"| {row['seconds']:.2f} s |"
        )
    print("\nper call (characters, milliseconds; the last run):")
    for row in rows:
        calls = ", ".join(
            f"{name} {chars:,} ({ms * 1000:.0f} ms)" for name, chars, ms in row["per_call"]
        )
        print(f"  {row['flow']}: {calls}")
    print("\n| tool list | tools | characters | generic tools | generic chars | site tools |")
    print("| --- | --- | --- | --- | --- | --- |")
    for size in sizes:
        print(
            f"| {size['server']} | {size['tools']} | {size['chars']:,} | "
            f"{size['generic_tools']} | {size['generic_chars']:,} | "
            f"{size['site_tools']} ({size['site_chars']:,}) |"
        )
    print()
    for check in checks:
        print(check)
    site, page = rows[0], rows[1]
    print(
        f"target: site-tools flow <= {SITE_FLOW_MAX:,} characters: {site['text']:,} "
        f"{'PASS' if site['text'] <= SITE_FLOW_MAX else 'MISS'}"
    )
    if len(rows) == 4:
        best = min(rows[2]["text"], rows[3]["text"])
        print(
            f"target: site-tools flow < playwright-mcp's best flow ({best:,}): "
            f"{site['text']:,} {'PASS' if site['text'] < best else 'MISS'}"
        )
        best = rows[3]["text"]
        print(
            f"target: page-tools flow < playwright-mcp's browser_find flow ({best:,}): "
            f"{page['text']:,} {'PASS' if page['text'] < best else 'MISS'}"
        )
        pw = sizes[2]["chars"]
        generic = sizes[0]["generic_chars"]
        print(
            f"target: ego's generic tools <= playwright-mcp's tool list ({pw:,}): "
            f"{generic:,} {'PASS' if generic <= pw else 'MISS'}"
        )
    if options.json is not None:
        options.json.write_text(json.dumps({"flows": rows, "tool_lists": sizes}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
