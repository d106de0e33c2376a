"""The extractor cache: tool sources kept in the site's own localStorage (Call and Store).

A run sends the small Call snippet. It reads ``KEY`` and ``KEY:ver``; when both are there
and the stamp equals this run's version it rebuilds the function with a synchronous
``eval`` (before any ``await``, which is what a strict CSP still allows) and calls it. When
the source is missing or stale the Call answers NEEDS_STORE; only then is the Store snippet,
which carries the full source, sent, and the Call sent again. So a hot run costs a few
hundred bytes whatever the tool's size.

Where the cache cannot work (localStorage throws on opaque origins such as about:blank and
data: URLs, in sandboxed frames, with storage disabled, on a full quota; or eval is blocked)
the run falls back to the plain wrap and returns the same result. Callers see only a debug
log line.

The snippets answer their signals as ``{SIGNAL_KEY: "NEEDS_STORE"}`` (or ``"NO_STORAGE"``,
``"NO_EVAL"``), where :data:`SIGNAL_KEY` holds a random nonce made once per process. A tool
cannot learn the nonce, so no result of a tool (not even ``{"__ego_cache__": "NEEDS_STORE"}``)
is ever taken for a signal, and a tool runs once per call. Exported snippets
(:mod:`ego.skills.portable`) use the fixed, documented :data:`PORTABLE_SIGNAL_KEY` instead.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from .js import embed_json, wrap_call

if TYPE_CHECKING:
    from .tab import Tab

__all__ = [
    "PORTABLE_SIGNAL_KEY",
    "SIGNAL_KEY",
    "RunStats",
    "cache_key",
    "call_snippet",
    "run_cached",
    "store_snippet",
]

logger = logging.getLogger("ego.cache")

#: The property of the object the snippets answer with when they did not run the tool: it
#: carries a nonce made once per process, so that no tool's result can take this form.
SIGNAL_KEY: Final = f"__ego_cache_{secrets.token_hex(8)}__"

#: The signal property of exported snippets, which other agents' bridges read: fixed and
#: documented, so that an export is the same from run to run.
PORTABLE_SIGNAL_KEY: Final = "__ego_cache__"

_NEEDS_STORE: Final = "NEEDS_STORE"
_NO_STORAGE: Final = "NO_STORAGE"
_NO_EVAL: Final = "NO_EVAL"

Mode = Literal["cached", "stored", "plain"]


def cache_key(namespace: str, name: str) -> str:
    """The localStorage key of a tool: ``ego:<site>:<tool>``."""
    return f"ego:{namespace}:{name}"


@dataclass
class RunStats:
    """What one run did.

    Attributes:
        mode: ``"cached"`` (the Call ran the stored source), ``"stored"`` (the source was
            stored during this run, then called) or ``"plain"`` (the plain wrap ran it).
        stored: True when this run sent the Store snippet.
        evaluations: how many evaluates the run sent (1 on a hot run).
        bytes_sent: UTF-8 bytes of JavaScript the run sent, all evaluates together.
        fallback: why the plain wrap ran (``"disabled"``, ``"no storage"``, ``"eval
            blocked"``, ``"store failed"``), or ``""``.
    """

    mode: Mode = "cached"
    stored: bool = False
    evaluations: int = 0
    bytes_sent: int = 0
    fallback: str = ""


def _call_parts(signal_key: str) -> tuple[str, str]:
    """The Call snippet's text after the stamp and after the arguments (both fixed)."""
    return (
        f",S=t=>({{{signal_key}:t}});let s,f;"
        "try{s=localStorage.getItem(K);"
        f"if(!s||localStorage.getItem(K+':ver')!==V)return S('{_NEEDS_STORE}')}}"
        f"catch(e){{return S('{_NO_STORAGE}')}}"
        "try{f=(0,eval)('('+s+'\\n)')}"
        f"catch(e){{return S(e instanceof EvalError?'{_NO_EVAL}':'{_NEEDS_STORE}')}}"
        f"if(typeof f!=='function')return S('{_NEEDS_STORE}');"
        "return f(",
        ")})()",
    )


# Built once: a hot call only splices the key, the stamp and the arguments in.
_CALL_PARTS: Final = _call_parts(SIGNAL_KEY)


def call_snippet(key: str, version: str, arguments: str, *, signal_key: str = SIGNAL_KEY) -> str:
    """The Call: run the stored function with ``arguments`` (JavaScript argument list).

    Answers ``{<signal_key>: "NEEDS_STORE"}`` when the stored source is missing, stale,
    unparsable or not a function; ``"NO_STORAGE"`` when localStorage throws; ``"NO_EVAL"``
    when eval is blocked. Otherwise it answers whatever the function returns (a promise is
    awaited by the evaluate). The eval happens synchronously on entry, and indirectly (in
    the global scope) so that the tool sees the page's globals, never the snippet's locals.

    Args:
        key: the localStorage key (see :func:`cache_key`).
        version: the stamp the stored source must carry.
        arguments: the call's JavaScript argument list.
        signal_key: the property the signals are answered under: this process's nonce
            (:data:`SIGNAL_KEY`, what :func:`run_cached` reads), or
            :data:`PORTABLE_SIGNAL_KEY` for an export.
    """
    middle, tail = _CALL_PARTS if signal_key == SIGNAL_KEY else _call_parts(signal_key)
    return f"(()=>{{const K={embed_json(key)},V={embed_json(version)}{middle}{arguments}{tail}"


def store_snippet(
    key: str,
    version: str,
    expression: str,
    url: str | None = None,
    *,
    signal_key: str = SIGNAL_KEY,
) -> str:
    """The Store: write the source and its version stamp, overwriting both keys in place.

    Answers ``"stored"``, or ``{<signal_key>: "NO_STORAGE"}`` when localStorage throws
    (opaque origin, storage disabled, quota exceeded). ``signal_key`` is as in
    :func:`call_snippet`.
    """
    source = expression.rstrip("\n") + (f"\n//# sourceURL={url}" if url else "")
    return (
        f"(()=>{{const K={embed_json(key)},V={embed_json(version)};"
        f"try{{localStorage.setItem(K,{embed_json(source)});localStorage.setItem(K+':ver',V)}}"
        f"catch(e){{try{{localStorage.removeItem(K);localStorage.removeItem(K+':ver')}}catch(_){{}}"
        f"return {{{signal_key}:'{_NO_STORAGE}'}}}}"
        "return 'stored'})()"
    )


def _signal(result: Any) -> str | None:
    # Only this process's snippets know SIGNAL_KEY: a tool's result never matches.
    if isinstance(result, dict) and len(result) == 1:
        value = result.get(SIGNAL_KEY)
        if isinstance(value, str):
            return value
    return None


async def run_cached(
    tab: Tab,
    *,
    key: str,
    version: str,
    expression: str,
    arguments: str,
    url: str | None = None,
    timeout: float | None = None,
    use_cache: bool = True,
    stats: RunStats | None = None,
) -> Any:
    """Run ``expression`` (a function expression) with ``arguments`` in ``tab``, call-first.

    Args:
        tab: where to run.
        key: the localStorage key (see :func:`cache_key`).
        version: the content-derived stamp; a different one makes the Call re-store.
        expression: JavaScript that evaluates to the function (see :func:`ego.js.normalize_source`).
        arguments: the call's JavaScript argument list, e.g. ``'{"q":1}'`` or
            ``'document, {"q":1}'``.
        url: the sourceURL naming the code in JS stacks.
        timeout: seconds each evaluate may take.
        use_cache: False sends the plain wrap only.
        stats: filled in with what the run did.

    Raises:
        Whatever :meth:`ego.Tab.evaluate` raises for the tool's own code.
    """
    stats = stats if stats is not None else RunStats()

    async def send(code: str) -> Any:
        stats.evaluations += 1
        stats.bytes_sent += len(code.encode("utf-8"))
        return await tab.evaluate(code, timeout=timeout)

    async def plain(reason: str) -> Any:
        stats.mode = "plain"
        stats.fallback = reason
        if reason != "disabled":
            logger.debug("cache for %s not usable here (%s): running the plain wrap", key, reason)
        return await send(wrap_call(expression, arguments, url=url))

    if not use_cache:
        return await plain("disabled")
    call = call_snippet(key, version, arguments)
    result = await send(call)
    signal = _signal(result)
    if signal is None:
        return result
    if signal == _NO_STORAGE:
        return await plain("no storage")
    if signal == _NO_EVAL:
        return await plain("eval blocked")
    stored = await send(store_snippet(key, version, expression, url))
    stats.stored = stored == "stored"
    if not stats.stored:
        return await plain("store failed")
    stats.mode = "stored"
    result = await send(call)
    signal = _signal(result)
    if signal is None:
        return result
    # Stored but still not callable (storage that drops writes, eval blocked): give up on it.
    return await plain("eval blocked" if signal == _NO_EVAL else "store did not stick")
