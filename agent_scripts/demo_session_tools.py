"""The session rules: NEEDS_LOGIN, a login by hand, and an irreversible tool that needs confirm.

    python agent_scripts/demo_session_tools.py                # headless: show the contract
    python agent_scripts/demo_session_tools.py --headed --wait-login 120

``get_orders`` is an ``auth: session`` tool. In a fresh profile it signals NEEDS_LOGIN, which
ego raises as ``NeedsLoginError``: the recovery is a person logging in by hand (demo / demo)
in that browser, never a script. With ``--headed --wait-login N`` the script opens the login
page in a window, waits up to N seconds for the person, then reads the orders. It also shows
that ``post_review`` (irreversible) is refused without ``confirm=True``, and that
``fill_contact_form`` (a ``write`` tool that drives the page) needs its tab on /contact.
Exits 1 when something behaves differently.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

import ego
from ego.demo import DemoServer
from ego.errors import ConfirmationRequiredError, EgoError, NeedsLoginError

SITE = "demo-shop"


def fail(message: str) -> int:
    print(f"FAILED: {message}", file=sys.stderr)
    return 1


async def wait_for_login(site: Any, tab: ego.Tab, seconds: float) -> bool:
    """Poll ``whoami`` (a read tool that never throws NEEDS_LOGIN) while the person logs in."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            who: dict[str, Any] = await site.run_browser_tool(SITE, "whoami", {}, tab=tab)
        except ego.ContextDestroyedError:
            who = {"logged_in": False}  # the page navigated (the form was sent): ask again
        if who.get("logged_in"):
            print(f"logged in as {who['username']}")
            return True
        await asyncio.sleep(2)
    return False


async def main(headed: bool, wait_login: float, port: int) -> int:
    async with DemoServer(port=port) as demo, ego.launch(headless=not headed) as browser:
        site = browser.site
        site.set_start_url(SITE, demo.url)
        tab = await browser.new_tab(demo.url)

        who: dict[str, Any] = await site.run_browser_tool(SITE, "whoami", {}, tab=tab)
        print(f"whoami: {who}")

        try:
            orders: dict[str, Any] = await site.run_browser_tool(SITE, "get_orders", {}, tab=tab)
        except NeedsLoginError as exc:
            print(f"get_orders -> NeedsLoginError, as designed: {exc}")
            if not wait_login:
                print("(run with --headed --wait-login 120 to log in by hand with demo / demo)")
                orders = {}
            else:
                await tab.navigate(demo.url_for("/login?next=/account"))
                await tab.activate()
                print(f"log in by hand in the window: {demo.url_for('/login')} (demo / demo)")
                if not await wait_for_login(site, tab, wait_login):
                    return fail(f"nobody logged in within {wait_login:g} s")
                orders = await site.run_browser_tool(SITE, "get_orders", {}, tab=tab)
        else:
            if not who.get("logged_in"):
                return fail("get_orders worked although whoami saw no session")
        for order in orders.get("orders", []):
            when, status = order["date"], order["status"]
            print(f"  order {order['id']} ({when}, {status}): ${order['total']:.2f}")

        review = {"product_id": 5, "rating": 5, "text": "Wonderful star charts."}
        try:
            await site.run_browser_tool(SITE, "post_review", review, tab=tab)
        except ConfirmationRequiredError as exc:
            print(f"post_review without confirm -> refused before running: {exc}")
        else:
            return fail("post_review ran without confirm=True")
        if demo.state.reviews:
            return fail("a review was published without confirmation")

        on_home: dict[str, Any] = await site.run_browser_tool(
            SITE,
            "fill_contact_form",
            {"name": "Ada", "email": "ada@example.com", "message": "Hi"},
            tab=tab,
        )
        print(f"fill_contact_form on {tab.url}: {on_home}")
        await tab.navigate(demo.url_for("/contact"))
        sent: dict[str, Any] = await site.run_browser_tool(
            SITE,
            "fill_contact_form",
            {"name": "Ada", "email": "ada@example.com", "message": "Do you ship to Norway?"},
            tab=tab,
        )
        print(f"fill_contact_form on /contact: {sent}")
        stored = demo.state.contact_messages
        if sent.get("status") != "sent" or not stored or stored[-1]["name"] != "Ada":
            return fail(f"the message did not arrive: {sent}, server has {stored}")
        print(f"the shop received: {stored[-1]}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--headed", action="store_true", help="open a real window")
    parser.add_argument(
        "--wait-login", type=float, default=0.0, help="seconds to wait for a login by hand"
    )
    parser.add_argument("--port", type=int, default=0, help="demo shop port (0: any free one)")
    options = parser.parse_args()
    if options.wait_login and not options.headed:
        parser.error("--wait-login needs --headed: a person must see the window to log in")
    try:
        sys.exit(asyncio.run(main(options.headed, options.wait_login, options.port)))
    except EgoError as exc:
        print(f"FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
