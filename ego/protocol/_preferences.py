"""Profile preferences ego sets before a Chrome it starts reads them.

Page preloading is turned off (the setting chrome://settings/performance calls "Preload
pages": ``net.network_prediction_options`` = 2, never). With it on, a page's speculation
rules (``<script type=speculationrules>``, a ``Speculation-Rules`` header) make Chrome fetch
another page's document ahead of any navigation, and even render it, and a later navigation
to that URL shows the fetched document without a new request. Measured on Chromium 156: that
fetch, and the navigation that uses it, reach no ``Fetch`` interception of the page's session,
the browser's or its tab target's, so no request guard can refuse it; with the setting off,
Chrome reports the attempt as ``PrefetchNotEligiblePreloadingDisabled`` and sends nothing, and
the navigation is an ordinary request again.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Final

__all__ = ["NETWORK_PREDICTION_NEVER", "turn_off_preloading"]

#: ``net.network_prediction_options``: 0 always, 1 on Wi-Fi only (older Chromes), 2 never.
NETWORK_PREDICTION_NEVER: Final = 2


def turn_off_preloading(user_data_dir: Path) -> None:
    """Set "Preload pages" off in the profile at ``user_data_dir`` (its ``Default`` profile),
    keeping every other preference it has.

    A preferences file Chrome could not read either (not JSON, not an object) is replaced,
    as Chrome would replace it with its defaults.

    Raises:
        OSError: the file cannot be written.
    """
    folder = user_data_dir / "Default"
    path = folder / "Preferences"
    preferences: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            preferences = loaded
    net = preferences.get("net")
    if not isinstance(net, dict):
        net = preferences["net"] = {}
    if net.get("network_prediction_options") == NETWORK_PREDICTION_NEVER:
        return
    net["network_prediction_options"] = NETWORK_PREDICTION_NEVER
    folder.mkdir(parents=True, exist_ok=True)
    # Written beside and renamed into place: a Chrome started later never reads half a file.
    handle, temporary = tempfile.mkstemp(prefix=".Preferences-", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(preferences, file)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
