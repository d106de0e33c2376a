"""Record and replay: serve a tab from a HAR file at the real URLs, with no network.

- :func:`replay` / :class:`Replayer`: answer a tab's requests from a HAR through CDP's Fetch
  domain, so the page has the real origin, localStorage and CSP.
- :func:`record` / :class:`Recorder`: record what a live tab loads into a HAR, cookies and
  credentials stripped and secret values in URLs and bodies redacted.
- :class:`Har` and :func:`build_entry`: the HAR 1.2 model, for loading, saving and building
  HAR files by hand.

See ``docs/replay.md``.
"""

from __future__ import annotations

from .har import (
    Content,
    Entry,
    Har,
    HarRequest,
    HarResponse,
    Header,
    Page,
    PostData,
    build_entry,
)
from .matching import Matcher, QueryMode
from .recorder import Recorder, record
from .replayer import (
    DEFAULT_IGNORE,
    ERROR_REASONS,
    ReplayedRequest,
    Replayer,
    ReplayMode,
    replay,
)
from .secrets import REDACTED, is_secret_header, is_secret_name, strip_har

__all__ = [
    "DEFAULT_IGNORE",
    "ERROR_REASONS",
    "REDACTED",
    "Content",
    "Entry",
    "Har",
    "HarRequest",
    "HarResponse",
    "Header",
    "Matcher",
    "Page",
    "PostData",
    "QueryMode",
    "Recorder",
    "ReplayMode",
    "ReplayedRequest",
    "Replayer",
    "build_entry",
    "is_secret_header",
    "is_secret_name",
    "record",
    "replay",
    "strip_har",
]
