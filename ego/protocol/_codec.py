"""The slow way to turn CDP messages into bytes and back, for what orjson refuses.

:class:`~ego.protocol.transport.Connection` parses and writes every message with orjson and
calls these functions only after orjson has refused one, so the common path pays nothing.

What orjson refuses and Chrome means: an unpaired UTF-16 surrogate. A JavaScript string may
hold one (``'😀'.slice(0, 1)``, text cut in the middle of an emoji); Chrome writes it as a
``\\ud83d`` escape, which is valid JSON but not valid Unicode, and orjson rejects the whole
message. The stdlib's :mod:`json` accepts it and keeps it as the same lone code point in the
``str``. Going out, such a ``str`` is written back as the same escape, and Chrome turns it
into the same lone UTF-16 code unit, so a value read from a page can be sent back unchanged.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["decode_lenient", "encode_lenient"]


def decode_lenient(raw: bytes) -> Any:
    """Parse a message orjson refused: lone surrogates come back as lone code points.

    Raw surrogate bytes (UTF-8 that encodes a surrogate, which Chrome does not send but a
    proxy might) are accepted too.

    Raises:
        ValueError: no decoder accepts the message (it is not JSON).
    """
    try:
        return json.loads(raw.decode("utf-8", errors="surrogatepass"))
    except RecursionError:
        raise ValueError("the message nests too deeply to parse") from None


def encode_lenient(message: Any, error: TypeError) -> bytes:
    """Write a message orjson refused with ``error``, if a lone surrogate was the reason.

    Lone surrogates become ``\\uXXXX`` escapes (as :mod:`json` writes them), which Chrome
    reads back as the same UTF-16 code units.

    Raises:
        TypeError: ``error`` again, when orjson refused the message for another reason (an
            object JSON cannot hold, an integer over 64 bits, nesting deeper than 255).
        ValueError: the message also holds NaN or an infinity, which JSON cannot carry.
    """
    # orjson's only word for this case: "str is not valid UTF-8: surrogates not allowed".
    if "surrogates" not in str(error):
        raise error
    try:
        text = json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except RecursionError:
        raise error from None
    return text.encode("ascii")
