"""Record and replay: serve a tab from a HAR file at the real URLs, with no network.

- :func:`replay` / :class:`Replayer`: answer a tab's requests from a HAR through CDP's Fetch
  domain, so the page has the real origin, localStorage and CSP.
- :func:`record` / :class:`Recorder`: record what a live tab loads into a HAR, cookies and
  credentials stripped and secret values in URLs and bodies redacted.
- :class:`Har` and :func:`build_entry`: the HAR 1.2 model, for loading, saving and building
  HAR files by hand.
- :class:`HarBounds` and :func:`reading_hars`: how large a HAR ego reads or records.

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
from .har_bounds import (
    MAX_HAR_BYTES,
    MAX_HAR_ENTRIES,
    HarBounds,
    HarProgress,
    reading_hars,
)
from .matching import Matcher, QueryMode
from .recorder import Omitted, Recorder, record
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
    "MAX_HAR_BYTES",
    "MAX_HAR_ENTRIES",
    "REDACTED",
    "Content",
    "Entry",
    "Har",
    "HarBounds",
    "HarProgress",
    "HarRequest",
    "HarResponse",
    "Header",
    "Matcher",
    "Omitted",
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
    "reading_hars",
    "record",
    "replay",
    "strip_har",
]
