"""A trace's secrets, redacted as a recording's are (:mod:`ego.replay.secrets`), by name and
then by value, with the recording's own code.

Requests lose their cookies, credential headers and secret-named values exactly as a HAR
entry does (:func:`~ego.replay.secrets.strip_entry`). Every value redacted by name anywhere in
the trace (a header's, a cookie's, a secret-named field of a request, an answer or a tool's
args, the text typed into a password field or a field named like a secret) is noted in one
:class:`~ego.replay.secret_values.SecretValues` for the whole trace and cut out of every other
text the trace writes: URLs, console lines, snapshot lines, errors, results. A value noted
only after a line holding it was written is cut out of that line when the trace closes
(:class:`~ego.trace.file.TraceFile` rewrites the file then).
"""

from __future__ import annotations

import re
from typing import Any, Final

from ..replay.har import Entry
from ..replay.redaction import redact_json, redact_url
from ..replay.secret_names import REDACTED, is_secret_name
from ..replay.secret_values import SecretValues
from ..replay.secrets import strip_entry

__all__ = ["IMAGE", "REDACTED", "TYPING_VERBS", "TraceSecrets"]

#: The key of a screenshot's data (base64 JPEG): never text to redact.
IMAGE: Final = "jpeg"
#: The verbs whose ``text`` argument is typed into their target.
TYPING_VERBS: Final = frozenset({"type", "fill"})
_WORD: Final = re.compile(r"[A-Za-z0-9_-]+")


class TraceSecrets:
    """The secrets of one trace (see the module docstring)."""

    def __init__(self) -> None:
        self.values = SecretValues()

    def request(self, entry: Entry) -> Entry:
        """A request as a recording keeps it: its values noted, then stripped by name and by
        value (in place)."""
        self.values.collect(entry)
        strip_entry(entry)
        self.values.redact(entry)
        return entry

    def text(self, text: str) -> str:
        """``text`` with every noted value cut out."""
        return self.values.redact_text(text)

    def url(self, url: str) -> str:
        """A URL with its secret-named parameters redacted, then every noted value cut out."""
        return self.text(redact_url(url))

    def data(self, value: Any, *, request: bool = True) -> Any:
        """JSON data (a tool's args with ``request``, its result without): the values under
        secret names noted and redacted, then every noted value cut out of its strings."""
        self.values.collect_json(value, request=request)
        redacted, _ = redact_json(value, request=request)
        return self.cut(redacted)

    def cut(self, value: Any) -> Any:
        """A copy of JSON-ready ``value`` with every noted value cut out of its strings."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: item if key == IMAGE else self.cut(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.cut(item) for item in value]
        return value

    def typed(self, text: str, selector: str | None, name: str, input_type: str | None) -> str:
        """The ``text`` an action typed: REDACTED (and noted) when it went into a password
        field or one whose selector or accessible name reads as a secret's."""
        words = [name, *(_WORD.findall(selector or ""))]
        if input_type == "password" or any(is_secret_name(word) for word in words if word):
            self.values.add(text, name or selector or "typed")
            return REDACTED
        return self.text(text)
