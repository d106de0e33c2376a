"""The extractor cache: tool sources kept in the site's own localStorage, their functions in a
per-document memo (Call, hot Call and Store).

The Call installs, once per document, a small loader function under a non-writable global
named by :data:`SIGNAL_KEY`, and calls it. The loader keeps, in a private memo, the function
the eval produced for each key and version: ``loader(KEY, VER, ...args)`` calls that function
when the memo holds it at ``VER``; otherwise it reads ``KEY`` and ``KEY:ver`` and, when both are
there and the stamp equals ``VER``, rebuilds the function with a synchronous ``eval`` (before
any ``await``, which is what a strict CSP still allows), memoises it and calls it. When the
source is missing or stale the loader answers NEEDS_STORE; only then is the Store snippet,
which carries the full source, sent, and the Call sent again. So a hot run costs a few
hundred bytes whatever the tool's size.

Once a page's document holds the loader (the page notes it in its ``document_memo``, which
every new document starts empty), runs send the hot Call instead: one expression that calls
the loader, so a run of a tool this document already ran is a lookup and a call, with no
localStorage read, no eval and no function to compile. A hot Call that finds no loader (a
navigation the page had not seen yet) answers NO_LOADER, and the full Call follows.

Where the cache cannot work (localStorage throws on opaque origins such as about:blank and
data: URLs, in sandboxed frames, with storage disabled, on a full quota; or eval is blocked)
the run falls back to the plain wrap and returns the same result. Callers see only a debug
log line.

The snippets answer their signals as ``{SIGNAL_KEY: "NEEDS_STORE"}`` (or ``"NO_STORAGE"``,
``"NO_EVAL"``, ``"NO_LOADER"``), where :data:`SIGNAL_KEY` holds a random nonce made once per
process. A tool cannot learn the nonce, so no result of a tool (not even
``{"__ego_cache__": "NEEDS_STORE"}``) is ever taken for a signal, and a tool runs once per call.
Exported snippets (:mod:`ego.skills.portable`) use the fixed, documented
:data:`PORTABLE_SIGNAL_KEY` instead. docs/cache-and-errors.md has the trust model.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from .js import embed_json, wrap_call

if TYPE_CHECKING:
    from ..page.frame import Frame
    from ..page.tab import Tab

__all__ = [
    "LOADER_NOTE",
    "PORTABLE_SIGNAL_KEY",
    "SIGNAL_KEY",
    "RunStats",
    "cache_key",
    "call_snippet",
    "hot_snippet",
    "run_cached",
    "store_snippet",
]

logger = logging.getLogger("ego.runtime.cache")

#: The property of the object the snippets answer with when they did not run the tool, and
#: the global the loader lives under: it carries a nonce made once per process, so that no
#: tool's result can take this form.
SIGNAL_KEY: Final = f"__ego_cache_{secrets.token_hex(8)}__"

#: The signal property (and loader global) of exported snippets, which other agents' bridges
#: read: fixed and documented, so that an export is the same from run to run.
PORTABLE_SIGNAL_KEY: Final = "__ego_cache__"

_NEEDS_STORE: Final = "NEEDS_STORE"
_NO_STORAGE: Final = "NO_STORAGE"
_NO_EVAL: Final = "NO_EVAL"
_NO_LOADER: Final = "NO_LOADER"

Mode = Literal["cached", "stored", "plain"]


def cache_key(namespace: str, name: str) -> str:
    """The localStorage key of a tool: ``ego:<site>:<tool>``."""
    return f"ego:{namespace}:{name}"


@dataclass(slots=True)
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


# The loader, as the Call installs it: ``L(KEY, VER, ...args)`` runs the function of KEY at VER
# with the args, or answers a signal. A closure over a null-prototype memo that page scripts
# cannot reach (no Map or Object.prototype method is involved), keyed by the cache key, one
# entry per key: a new version replaces the old one. Its miss path is the strict one: both keys
# read, the stamp compared, the eval indirect (the tool sees the page's globals). The function
# is called on its own (``this`` is not the memo entry), as the plain wrap calls it.
_LOADER: Final = (
    "(m=>(K,V,...a)=>{const S=t=>({[N]:t});let e=m[K],s,f;"
    "if(e&&e.v===V){f=e.f;return f(...a)}"
    "try{s=localStorage.getItem(K);"
    f"if(!s||localStorage.getItem(K+':ver')!==V)return S('{_NEEDS_STORE}')}}"
    f"catch(_){{return S('{_NO_STORAGE}')}}"
    "try{f=(0,eval)('('+s+'\\n)')}"
    f"catch(x){{return S(x instanceof EvalError?'{_NO_EVAL}':'{_NEEDS_STORE}')}}"
    f"if(typeof f!=='function')return S('{_NEEDS_STORE}');"
    "m[K]={v:V,f};return f(...a)})(Object.create(null))"
)


def _call_parts(signal_key: str) -> tuple[str, str]:
    """The Call's text before the key, and after the arguments (both fixed)."""
    return (
        f'(()=>{{const N="{signal_key}";let L=globalThis[N];'
        # No loader, or something else under its name: install ours (non-writable and
        # non-configurable, also over a configurable property a page script made); where that
        # fails, this call still uses its own.
        f"if(typeof L!=='function'){{L={_LOADER};"
        "try{Object.defineProperty(globalThis,N,"
        "{value:L,writable:!1,enumerable:!1,configurable:!1})}catch(_){}}"
        "return L(",
        ")})()",
    )


def _hot_parts(signal_key: str) -> tuple[str, str]:
    """The hot Call's text before the key, and after the arguments.

    One expression, no function of its own to compile: ``typeof`` of the global name (safe
    when there is none), then a call of the loader.
    """
    return (
        f"typeof {signal_key}==='function'?{signal_key}(",
        f"):{{{signal_key}:'{_NO_LOADER}'}}",
    )


# Built once: a call only splices the key, the stamp and the arguments in.
_PARTS: Final = {False: _call_parts(SIGNAL_KEY), True: _hot_parts(SIGNAL_KEY)}
_TAILS: Final = {hot: parts[1] for hot, parts in _PARTS.items()}

# The snippets up to their arguments, per (key, version, hot): fixed for a tool's version, so
# a call only appends its arguments and the tail. Emptied when it grows past the bound.
_HEADS: dict[tuple[str, str, bool], str] = {}
_MAX_HEADS: Final = 4096


def _head(key: str, version: str, hot: bool) -> str:
    head = _HEADS.get((key, version, hot))
    if head is None:
        if len(_HEADS) >= _MAX_HEADS:
            _HEADS.clear()
        head = f"{_PARTS[hot][0]}{embed_json(key)},{embed_json(version)},"
        _HEADS[(key, version, hot)] = head
    return head


def call_snippet(key: str, version: str, arguments: str, *, signal_key: str = SIGNAL_KEY) -> str:
    """The Call: run the stored function with ``arguments`` (JavaScript argument list).

    Installs the loader in the document when it is not there yet, then has it call the
    function of ``key`` at ``version`` (from its memo, else from localStorage).
    Answers ``{<signal_key>: "NEEDS_STORE"}`` when the stored source is missing, stale,
    unparsable or not a function; ``"NO_STORAGE"`` when localStorage throws; ``"NO_EVAL"``
    when eval is blocked. Otherwise it answers whatever the function returns (a promise is
    awaited by the evaluate). The eval happens synchronously on entry, and indirectly (in
    the global scope) so that the tool sees the page's globals, never the snippet's locals.

    Args:
        key: the localStorage key (see :func:`cache_key`).
        version: the stamp the stored source must carry.
        arguments: the call's JavaScript argument list.
        signal_key: the property the signals are answered under and the loader's global:
            this process's nonce (:data:`SIGNAL_KEY`, what :func:`run_cached` reads), or
            :data:`PORTABLE_SIGNAL_KEY` for an export.
    """
    if signal_key == SIGNAL_KEY:
        return _head(key, version, False) + arguments + _TAILS[False]
    start, tail = _call_parts(signal_key)
    return f"{start}{embed_json(key)},{embed_json(version)},{arguments}{tail}"


def hot_snippet(key: str, version: str, arguments: str) -> str:
    """The hot Call: one expression that has the loader this document holds call the function.

    Answers as :func:`call_snippet` does, or ``{SIGNAL_KEY: "NO_LOADER"}`` when the document
    has no loader (a new document): then the full Call must follow. No localStorage read and
    no eval when the memo holds ``key`` at ``version``.

    Args:
        key: the localStorage key (see :func:`cache_key`).
        version: the stamp the function must carry.
        arguments: the call's JavaScript argument list.
    """
    return _head(key, version, True) + arguments + _TAILS[True]


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


#: What a page's ``document_memo`` holds, under this key, once a full Call answered in its
#: document, which installed the loader there: while the page shows that document, runs send
#: the hot Call. Only a hint: a hot Call in a document without the loader answers NO_LOADER.
#: The memo is the document's own (a new document starts with an empty one), so nothing here
#: outlives the page or needs telling a page from another.
LOADER_NOTE: Final = "ego.runtime.cache:loader"


async def run_cached(
    tab: Tab | Frame,
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
        expression: JavaScript that evaluates to the function (see
            :func:`ego.learning.catalog.tool_source.normalize_source`).
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
    if use_cache:
        # The hot path: one Call, no closures, nothing else built. A stand-in for a page
        # without a ``document_memo`` always gets the full Call. The memo is read before the
        # call: the document the call runs in is the one noted after it.
        memo: dict[str, Any] | None = getattr(tab, "document_memo", None)
        hot = memo is not None and LOADER_NOTE in memo
        head = _HEADS.get((key, version, hot)) or _head(key, version, hot)
        call = head + arguments + _TAILS[hot]
        stats.evaluations += 1
        stats.bytes_sent += len(call) if call.isascii() else len(call.encode("utf-8"))
        # The raw path (describe=False): a tool returns JSON, in one round trip.
        result = await tab.evaluate(call, timeout=timeout, describe=False)
        if not hot and memo is not None:
            memo[LOADER_NOTE] = True
        # Only a one-key object can be a signal: anything else is the tool's result, at once.
        if not isinstance(result, dict) or len(result) != 1:
            return result
        signal = _signal(result)
        if signal is None:
            return result
    else:
        call, signal = "", None
    return await _not_hot(
        tab, key, version, expression, arguments, url, timeout, stats, call, signal
    )


async def _not_hot(
    tab: Tab | Frame,
    key: str,
    version: str,
    expression: str,
    arguments: str,
    url: str | None,
    timeout: float | None,
    stats: RunStats,
    call: str,
    signal: str | None,
) -> Any:
    """What follows a Call that answered ``signal``, or the plain run (``signal`` None)."""

    async def send(code: str) -> Any:
        stats.evaluations += 1
        stats.bytes_sent += len(code.encode("utf-8"))
        # The raw path: a tool returns JSON, and a call must cost one round trip.
        return await tab.evaluate(code, timeout=timeout, describe=False)

    async def plain(reason: str) -> Any:
        stats.mode = "plain"
        stats.fallback = reason
        if reason != "disabled":
            logger.debug("cache for %s not usable here (%s): running the plain wrap", key, reason)
        return await send(wrap_call(expression, arguments, url=url))

    if signal is None:
        return await plain("disabled")
    if signal == _NO_LOADER:
        # A document the page had not counted yet (or whose loader is not ours): the full Call.
        memo: dict[str, Any] | None = getattr(tab, "document_memo", None)
        call = call_snippet(key, version, arguments)
        result = await send(call)
        if memo is not None:
            memo[LOADER_NOTE] = True
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
