"""``python -m ego.demo [--port 8765]``: serve the demo shop until Ctrl+C."""

from __future__ import annotations

import argparse
import sys
import threading

from ..errors import ListenError
from .server import DemoServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ego.demo", description=__doc__)
    parser.add_argument("--port", type=int, default=8765, help="port (0 picks a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind")
    parser.add_argument("--quiet", action="store_true", help="do not log requests")
    parser.add_argument(
        "--changed-api", action="store_true", help="serve the shop with its API changed"
    )
    parser.add_argument(
        "--changed-pages",
        action="store_true",
        help="serve the order desk redesigned (its search button renamed, a field moved)",
    )
    options = parser.parse_args(argv)
    server = DemoServer(
        options.port,
        host=options.host,
        verbose=not options.quiet,
        api_changed=options.changed_api,
        pages_changed=options.changed_pages,
    )
    try:
        server.start()
    except ListenError as exc:
        print(f"python -m ego.demo: ListenError: {exc.command_line}", file=sys.stderr)
        return 1
    with server:
        print(f"demo shop at {server.url} (also {server.local_url}); log in with demo / demo")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("stopped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
