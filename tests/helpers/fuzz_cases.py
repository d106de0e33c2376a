"""The fuzz's cases: seeded inputs over manifests, names, args, tool sources and results.

``generate(seed, count)`` gives the same cases for the same seed (``random.Random(seed)``, no
other dependency). A :class:`Case` is data only: what to write into a learnings site, which
public calls to make with what, and how those calls must end (``expect``: ``"ok"``, or the
name of the ego error they must raise); :mod:`tests.helpers.fuzz_run` runs and classifies them.

The expectations come from the rules the docs give (docs/learnings.md, docs/architecture.md),
written down beside each pool of inputs: a manifest that breaks the schema makes its site
invalid, a path that leaves the site folder is unsafe, args that are not JSON or fail the
tool's schema are refused, a tool that throws is a tool error, a value JSON cannot carry
cannot come back by value from a tool (``tab.evaluate`` describes it instead).

The families and what they hold:

- ``manifest``: wrong JSON types for ``args``, ``returns``, ``$schema``, the tool maps,
  ``timeout``, ``sideEffect`` and the top-level fields; JSON nested thousands deep; integers
  of thousands of digits; strings of megabytes; remote, file and missing ``$ref``; broken and
  runaway regex patterns; bad tool paths; symlinks out of the root, to themselves, nowhere;
  files that are not JSON at all.
- ``name``: site ids and tool names with a trailing newline, very long, not strings,
  unicode, path-like; site folders named so.
- ``args``: deep nesting, lone surrogates, huge ints, values and keys that are not JSON,
  cycles, args that are not an object.
- ``source``: tool files that are not a function, do not parse, or throw odd values
  (Symbol, undefined, cycles, throwing getters).
- ``result``: lone surrogates in values, keys, nesting and error messages; the cache's own
  signal objects; huge BigInts, Symbols, functions, cycles, Dates, DOM nodes, deep nesting.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from random import Random
from typing import Any

import jsonschema

__all__ = [
    "COUNTING_TOOL",
    "COUNT_JS",
    "FAMILIES",
    "PAGE_HTML",
    "READ_COUNT_JS",
    "SLOW_CAP",
    "Case",
    "Link",
    "Raw",
    "base_manifest",
    "dump",
    "generate",
    "short",
]

FAMILIES = ("manifest", "name", "args", "source", "result")
#: Cases that cost seconds when the bug is there (a backtracking regex); at most this many.
SLOW_CAP = 2
RUNAWAY_LENGTH = 28  # "a" * 28 + "!" against ^(a+)+$: ~10 s of backtracking in Python's re

COUNT_JS = "window.__fzn = (window.__fzn || 0) + 1;"
READ_COUNT_JS = "(() => { const n = window.__fzn || 0; window.__fzn = 0; return n; })()"
COUNTING_TOOL = f"async (args) => {{ {COUNT_JS} return {{ran: true, args}}; }}\n"
PAGE_HTML = "<!doctype html><title>fuzz</title><p id=p>fuzz page</p><ul><li>a</li><li>b</li></ul>"


# --- cases ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """JSON text put into a manifest as it is (deep nesting, huge numbers, NaN)."""

    text: str


@dataclass(frozen=True)
class Link:
    """A symlink to write; ``@outside`` and ``@root`` name the folder beside the root and
    the root itself."""

    target: str


@dataclass(frozen=True)
class Case:
    """One fuzz input: ``family/kind`` says what it exercises, ``spec`` what to do."""

    index: int
    family: str
    kind: str
    detail: str
    spec: dict[str, Any] = field(repr=False)
    slow: bool = False
    #: How the case's own calls (the tool run, or the evaluate) end: ``"ok"``, or the class
    #: name of the ego error each of them raises.
    expect: str = "ok"

    @property
    def label(self) -> str:
        return f"{self.family}/{self.kind}"


def short(value: Any, limit: int = 70) -> str:
    """``value`` as a short printable text (long values end with their length)."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 10_000:
        text = f"int of {value.bit_length()} bits"
    elif value is None or isinstance(value, (int, float, bytes, list, tuple, dict, set, Decimal)):
        try:
            text = repr(value)
        except (ValueError, RecursionError):
            text = type(value).__name__
    else:
        text = type(value).__name__
    text = text.encode("unicode_escape", "backslashreplace").decode("ascii")
    return text if len(text) <= limit else f"{text[: limit - 12]}...({len(text)} chars)"


def dump(value: Any) -> str:
    """JSON text of ``value``, with :class:`Raw` parts inserted verbatim."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump(v) for v in value) + "]"
    return json.dumps(value)


def _deep_json(depth: int, rng: Random) -> Raw:
    if rng.random() < 0.5:
        return Raw("[" * depth + "1" + "]" * depth)
    return Raw('{"items":' * depth + '{"type":"string"}' + "}" * depth)


#: Values of the wrong (or a strange) JSON type for any manifest field.
# fmt: off
# The pools cases draw from, kept compact: one line per few values.

#: Values of the wrong (or a strange) JSON type for any manifest field.
ODD_JSON = [Raw(text) for text in [
    "true", "false", "null", "-1", "0", "1.5", '"x"', "[1]", "[]", "{}", '"\\ud800"', "1e999",
    "-0", "NaN", "Infinity", '{"type": 5}', '{"type": "nope"}', '{"a": 1}', '{"a": true}',
    '{"a": {"type": "nope"}}', '{"type": "object", "properties": 5}', '{"type": "array"}',
    '{"type": "object", "required": "x"}', '{"type": ["object", "null"]}',
    '{"type": "object", "additionalProperties": 5}', '{"__proto__": {"type": "string"}}',
    '{"type": "object", "minProperties": -1}',
    '{"type": "object", "properties": {"a": {"default": 1e400}}}',
    '{"$schema": 5, "type": "object"}', '{"$schema": [], "type": "object"}',
    '{"$schema": "nope", "type": "object"}', '{"$schema": {"a": 1}}',
    '{"$id": 5, "type": "object"}', '{"$defs": 5, "type": "object"}',
]]
TOOL_FIELDS = ["args", "returns", "timeout", "sideEffect", "auth", "description", "path"]
TOP_FIELDS = ["id", "name", "domains", "notes", "browserTools", "pythonTools", "startUrl",
              "version", "description"]
#: How the run ends when a tool field holds an ODD_JSON value (by its text); any value not
#: named makes the manifest invalid. args: a compact map or an object schema; returns: any
#: JSON Schema (not checked on these runs); timeout: a number over 0 (1e999 reads as
#: infinity); a path that parses still has to name a file, and a lone surrogate cannot.
TOOL_FIELD_ENDS: dict[str, dict[str, str]] = {
    "args": dict.fromkeys(['{}', '{"__proto__": {"type": "string"}}',
                           '{"type": "object", "properties": {"a": {"default": 1e400}}}'], "ok"),
    "returns": dict.fromkeys(["true", "false", "{}", '{"a": 1}', '{"a": true}',
                              '{"a": {"type": "nope"}}', '{"type": "array"}',
                              '{"type": ["object", "null"]}', '{"__proto__": {"type": "string"}}',
                              '{"type": "object", "properties": {"a": {"default": 1e400}}}'],
                             "ok"),
    "timeout": dict.fromkeys(["1.5", "1e999"], "ok"),
    "description": dict.fromkeys(['"x"', '"\\ud800"'], "ok"),
    "path": {'"x"': "ToolLoadError", '"\\ud800"': "UnsafePathError"},
}
#: The same for the top-level fields. A site whose browserTools is empty declares no tool.
TOP_FIELD_ENDS: dict[str, dict[str, str]] = {
    "name": dict.fromkeys(['"x"', '"\\ud800"'], "ok"),
    "description": dict.fromkeys(['"x"', '"\\ud800"'], "ok"),
    "version": dict.fromkeys(['"x"', '"\\ud800"', "-1", "0", "-0"], "ok"),
    "notes": {"[]": "ok"},
    "pythonTools": {"{}": "ok"},
    "browserTools": {"{}": "UnknownToolError"},
}
#: Tool paths and how the run ends: absolute, ``..``, a backslash, NUL, a leading ``~`` or
#: blank, a drive or a lone surrogate is unsafe; an empty one breaks the schema; the rest stay
#: in the folder and must name a readable tool file.
BAD_PATHS = [
    ("../t.js", "UnsafePathError"), ("/etc/hostname", "UnsafePathError"),
    ("a\\b.js", "UnsafePathError"), ("", "InvalidManifestError"), (" ", "UnsafePathError"),
    ("browser-tools/../../t.js", "UnsafePathError"), ("t\x00.js", "UnsafePathError"),
    ("~/t.js", "UnsafePathError"), ("C:/t.js", "UnsafePathError"), (".", "ToolLoadError"),
    ("browser-tools", "ToolLoadError"), ("missing.js", "ToolLoadError"),
    ("x" * 300 + ".js", "ToolLoadError"), (("d/" * 400) + "t.js", "ToolLoadError"),
    ("t\n.js", "ToolLoadError"), ("\udcff.js", "ToolLoadError"),
    ("\ud800.js", "UnsafePathError"), ("./browser-tools/t.js", "ok"),
    ("browser-tools//t.js", "ok"), ("manifest.json", "ToolLoadError"),
    ("file:///etc/hostname", "ToolLoadError"),
]
#: Links and how the run ends: a manifest or site folder that leads elsewhere (or nowhere)
#: makes the site invalid, a tool file that does is unsafe; a note's link is only read when
#: the note is.
SYMLINKS = {
    "site-out": "InvalidManifestError", "manifest-out": "InvalidManifestError",
    "tool-out": "UnsafePathError", "manifest-loop": "InvalidManifestError",
    "manifest-dangling": "InvalidManifestError", "manifest-dir": "InvalidManifestError",
    "site-root": "InvalidManifestError", "tool-dir": "UnsafePathError", "notes-out": "ok",
    "manifest-devnull": "InvalidManifestError",
}
_REF = "@REF@/ref/"
REMOTE_REFS: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]] = [
    ("args-prop", {"a": {"$ref": _REF + "a.json"}}, None),
    ("args-full", {"type": "object", "properties": {"a": {"$ref": _REF + "b.json"}}}, None),
    ("args-schema", {"$schema": _REF + "meta.json", "type": "object"}, None),
    ("args-id", {"type": "object", "$id": _REF + "base/",
                 "properties": {"a": {"$ref": "c.json"}}}, None),
    ("args-file", {"a": {"$ref": "file:///etc/hostname"}}, None),
    ("args-urn", {"a": {"$ref": "urn:ego:nothing"}}, None),
    ("args-local-missing", {"a": {"$ref": "#/$defs/nope"}}, None),
    ("args-dynamic", {"type": "object",
                      "properties": {"a": {"$dynamicRef": _REF + "d.json"}}}, None),
    ("args-404", {"a": {"$ref": _REF + "missing-404"}}, None),
    ("returns", None, {"$ref": _REF + "r.json"}),
    ("returns-prop", None, {"type": "object", "properties": {"ran": {"$ref": _REF + "s.json"}}}),
]
BAD_PATTERNS = ["(", "[z-a]", "(?<x", "*", "\\", "a{2,1}", "(?P<n>a)(?P<n>b)", "\\p{L}",
                "a" * 100_000, "(?i)" * 50 + "a", "[[:alpha:]]"]
#: The patterns above that RE2 takes (and that match the "aaa" the cases send); the others
#: make the manifest invalid.
RE2_TAKES = {"(?i)" * 50 + "a", "[[:alpha:]]"}
RAW_MANIFESTS: list[str | bytes] = [
    "", "{", "null", "[]", "1", '"x"', "\x00", "{}", "NaN", '{"id": 1}',
    '{"id": "@SITE@", "id": "other"}', "\ufeff{}", b"\xff\xfe{", b'{"id": "\xc3"}',
    "[" * 100_000, '{"a":' * 3000 + "1" + "}" * 3000,
]

SITE_IDS: list[Any] = [
    "fzargs\n", "fzargs ", " fzargs", "FZARGS", "fzargs\x00", "fzargs/", "../fzargs", "fzargs/..",
    ".", "..", "", "_x", ".x", "-x", "a" * 300, "a" * 10_000, "\ud800", "\U0001f600", "\u00fc",
    "a\\b", "/etc", "~", "fzargs\r", "fzargs\u2028", 5, None, 1.5, b"fzargs", ["fzargs"],
    {"id": 1}, True,
]
TOOL_NAMES: list[Any] = [
    "echo\n", "echo ", "ECHO", "", "a" * 10_000, "\ud800", "\U0001f600", "__proto__",
    "constructor", "toString", "../echo", "echo.js", "echo\x00", 5, None, b"echo", ["echo"],
]
FOLDER_NAMES = ["bad\n", "ok-1", "a" * 200, "x y", "\u00fc", "\U0001f600", "-lead", "UPPER",
                "a.b", "trail.", "\udcff", "tab\t", "fz\r"]
#: The site-id rule (docs/learnings.md): a folder named otherwise is not a site.
SITE_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")

#: How a tool file that is not a usable function ends. Sources ego can tell are no function
#: before sending anything are a ToolLoadError; the others throw in the page when called.
SOURCE_ENDS = {
    "not-function": {"({})": "BrowserToolError"},
    "syntax": {
        "async function (": "BrowserToolError", "export default 5": "BrowserToolError",
        "async () => `": "BrowserToolError", "async () => { return 1 }}": "BrowserToolError",
        "import x from 'y';\nexport default async () => x": "BrowserToolError",
        "\u2028async () => 1": "ok",
        "export default async function () { return 1 }\nexport default 2": "BrowserToolError",
        "async () => {\n//# sourceURL=evil\nreturn 1}": "ok",
        "async () => '\\": "BrowserToolError",
    },
    "shape": {
        "function* () { yield 1 }": "ok", "async function* () { yield 1 }": "ok",
        "(function () { @C return typeof this })": "ok",
        "async (a, b, c) => { @C return [a, b] }": "ok",
        "(async () => { @C return 1 }).bind(null)": "ok",
        "async () => { @C throw new Error('NEEDS_LOGIN') }": "NeedsLoginError",
    },
}
SOURCES = {
    "not-function": ["42", "'x'", "null", "undefined", "({})", "[]", "class A {}", "Symbol()",
                     "document.body", "10n", "new Promise(() => {})", "NaN"],
    "syntax": ["async function (", "}{", "export default", "export default 5", "",
               "// only a comment", "/* unterminated", "\ufeff", "async () => `", "=>",
               "#!/usr/bin/env node\nasync () => 1", "async () => { return 1 }}",
               "import x from 'y';\nexport default async () => x", "\u2028async () => 1",
               "export default async function () { return 1 }\nexport default 2",
               "async () => {\n//# sourceURL=evil\nreturn 1}", "async () => '\\"],
    # @C: where the run counter goes (a generator's body runs only when iterated).
    "shape": ["function* () { yield 1 }", "async function* () { yield 1 }",
              "(function () { @C return typeof this })", "async (a, b, c) => { @C return [a, b] }",
              "Object.freeze(async () => { @C return 1 })", "new Function('@C return 1')",
              "(async () => { @C return 1 }).bind(null)",
              "async () => { @C throw new Error('NEEDS_LOGIN') }"],
}
_CYCLE = "(() => { const o = {}; o.self = o; return o })()"
THROWN = [
    "Symbol('s')", "undefined", "null", "0", "''", "{}", "[1, 2]", "new Date(NaN)", _CYCLE,
    "Object.create(null)", "document.body", "function f() {}", "10n ** 5000n",
    "new Error('\\ud800')", "Object.assign(new Error('m'), {name: {}})",
    "new Proxy({}, {get() { throw new Error('trap') }})",
    "(() => { const e = new Error('x');"
    " Object.defineProperty(e, 'message', {get() { throw 1 }}); return e })()",
    "Object.defineProperty(new Error('x'), 'stack', {get() { throw Symbol() }})",
    "new AggregateError([Symbol()], 'agg')", "({message: Symbol(), stack: 5})",
    "Promise.reject(1)", "({message: '\\udc00', stack: '\\ud800'})",
    "new Error('x'.repeat(100000))",
]
STRING_LEAVES = ["'a\\ud800b'", "'\\ud83d\\ude00'.slice(0, 1)", "'\\udc00'",
                 "String.fromCharCode(0xd800)", "'x'.repeat(1000) + '\\ud83d'",
                 "'\\u2028\\u0000'", "'\\ufffe\\uffff'"]
SIGNALS = [f"{{__ego_cache__: {value}}}" for value in [
    "'NEEDS_STORE'", "'NO_STORAGE'", "'NO_EVAL'", "'stored'", "'x'", "1", "'NEEDS_STORE', x: 1",
]] + ["'stored'"]
VALUE_LEAVES = [
    "1n", "2n ** 64n", "10n ** 4400n", "-(10n ** 5000n)", "Symbol()", "Symbol.iterator",
    "function () {}", "() => 1", "class {}", _CYCLE,
    "(() => { const a = []; a.push(a); return a })()", "new Date(0)", "new Date(NaN)",
    "document.body", "document", "window", "document.querySelectorAll('li')", "new Map([[1, 2]])",
    "new Set([1])", "new WeakMap()", "new Proxy({}, {})", "new Proxy({}, {ownKeys() { throw 1 }})",
    "({get x() { throw new Error('getter') }})", "({toJSON() { throw new Error('toJSON') }})",
    "({toJSON() { return '\\ud800' }})", "new Uint8Array(3)", "new ArrayBuffer(8)", "/re/g",
    "new Error('e')", "Promise.resolve(Symbol())", "NaN", "Infinity", "-0", "undefined", "null",
    "'x'.repeat(2000000)", "Array(100000).fill(1)", "[, , 1]", "Object.create(null)",
    "Object.fromEntries(Array.from({length: 10000}, (_, i) => ['k' + i, i]))",
    "(() => { let a = 1; for (let i = 0; i < 100; i++) a = [a]; return a })()",
    "(() => { let a = 1; for (let i = 0; i < 1500; i++) a = [a]; return a })()",
    "(() => { let a = 1; for (let i = 0; i < 20000; i++) a = {a}; return a })()",
]
#: The leaves a tool cannot send back by value (a tool call takes the raw path: one
#: ``Runtime.evaluate`` with ``returnByValue``), with where they fail: ``"any"`` anywhere in the
#: result; ``"nested"`` inside an object or array (Chrome sends a bare BigInt as its digits);
#: ``"bare"`` only as the whole result (the promise is awaited, and its Symbol cannot come
#: back; inside an object a Promise is just ``{}``). Every other leaf comes back, and
#: ``tab.evaluate`` describes even these.
NOT_BY_VALUE = {
    **dict.fromkeys(["1n", "2n ** 64n", "10n ** 4400n", "-(10n ** 5000n)"], "nested"),
    **dict.fromkeys([
        "Symbol()", "Symbol.iterator", _CYCLE, "(() => { const a = []; a.push(a); return a })()",
        "window", "new Proxy({}, {ownKeys() { throw 1 }})",
        "({get x() { throw new Error('getter') }})",
        "(() => { let a = 1; for (let i = 0; i < 1500; i++) a = [a]; return a })()",
        "(() => { let a = 1; for (let i = 0; i < 20000; i++) a = {a}; return a })()",
    ], "any"),
    "Promise.resolve(Symbol())": "bare",
}
ARG_LEAVES: list[Callable[[], Any]] = [
    lambda: "\ud800", lambda: "a\udfffb", lambda: 2**63, lambda: 2**64, lambda: -(2**63) - 1,
    lambda: 10**4300, lambda: 10**5000, lambda: float("nan"), lambda: float("inf"), lambda: {1},
    lambda: b"x", lambda: object(), lambda: 1j, lambda: Decimal("1.5"), lambda: (1, 2),
    lambda: {1: 2}, lambda: {None: 1}, lambda: {("a",): 1}, lambda: ..., lambda: "x" * 1_000_000,
    lambda: list(range(100_000)), lambda: "\U0001f600", lambda: "\u2028\x00", lambda: -0.0,
    lambda: 1e308,
]
ARG_DEPTHS = [10, 100, 253, 254, 255, 500, 1000, 3000, 10_000]
# fmt: on


def base_manifest(site_id: str) -> dict[str, Any]:
    """A valid manifest for ``site_id`` with one browser tool ``t`` on 127.0.0.1."""
    return {
        "id": site_id,
        "name": "Fuzz site",
        "domains": ["127.0.0.1"],
        "browserTools": {"t": {"path": "browser-tools/t.js", "description": "counts its runs"}},
    }


#: What a case function gives: kind, detail, spec and the expected end.
Made = tuple[str, str, dict[str, Any], str]

#: The largest manifest.json ego reads (ego.learning.catalog.manifest.MAX_MANIFEST_BYTES, 1 MiB).
MAX_MANIFEST_BYTES = 1 << 20
#: The most digits Python reads in one integer (manifests are read by Python's json).
MAX_INT_DIGITS = 4300


def _manifest_case(rng: Random, site_id: str, slow_left: int) -> Made:
    manifest = base_manifest(site_id)
    tool = manifest["browserTools"]["t"]
    spec: dict[str, Any] = {"folder": site_id, "tool": "t", "args": {}, "files": {}}
    kinds = [
        "tool-field",
        "schema-type",
        "top-field",
        "deep",
        "huge-int",
        "huge-string",
        "remote-ref",
        "bad-pattern",
        "bad-path",
        "symlink",
        "raw",
    ]
    if slow_left > 0:
        kinds.append("runaway-pattern")
    kind = rng.choice(kinds)
    # Most broken manifests make the site invalid; the branches say where it is otherwise.
    expect = "InvalidManifestError"
    if kind == "tool-field":
        name, value = rng.choice(TOOL_FIELDS), rng.choice(ODD_JSON)
        tool[name] = value
        detail = f"{name}={value.text}"
        expect = TOOL_FIELD_ENDS.get(name, {}).get(value.text, expect)
    elif kind == "schema-type":
        where, value = rng.choice(["args", "returns"]), rng.choice(ODD_JSON)
        tool[where] = {"$schema": value, "type": "object"}
        detail = f"{where}.$schema={value.text}"
    elif kind == "top-field":
        name, value = rng.choice(TOP_FIELDS), rng.choice(ODD_JSON)
        manifest[name] = value
        detail = f"{name}={value.text}"
        expect = TOP_FIELD_ENDS.get(name, {}).get(value.text, expect)
    elif kind == "deep":
        depth = rng.choice([300, 900, 1500, 5000, 50_000])
        where = rng.choice(["args", "returns", "extra", "tool-extra", "args-prop"])
        value = _deep_json(depth, rng)
        if where == "args-prop":
            tool["args"] = {"a": value}
        elif where == "extra":
            manifest["extra"] = value
        elif where == "tool-extra":
            tool["extra"] = value
        else:
            tool[where] = value
        detail = f"{where} nested {depth} deep"
    elif kind == "huge-int":
        digits = rng.choice([20, 4300, 4301, 5000, 50_000])
        value = Raw("9" * digits)
        where = rng.choice(["timeout", "version", "extra", "minimum", "returns-const"])
        if where == "minimum":
            tool["args"] = {"a": {"type": "integer", "minimum": value}}
            spec["args"] = {"a": 1}
        elif where == "returns-const":
            tool["returns"] = {"const": value}
        elif where == "timeout":
            tool["timeout"] = value
        else:
            manifest[where] = value
        detail = f"{where}: {digits}-digit integer"
        if digits <= MAX_INT_DIGITS:
            # Read: the arg 1 is below such a minimum; a timeout must fit a float.
            expect = {"minimum": "InvalidArgsError", "timeout": "ok" if digits <= 308 else expect}
            expect = expect.get(where, "ok")
    elif kind == "huge-string":
        size = rng.choice([100_000, 1_000_000, 2_000_000])
        where = rng.choice(["description", "tool-description", "domain", "tool-name", "name"])
        big = "d" * size
        if where == "tool-name":
            manifest["browserTools"] = {big[: size // 10]: tool}
            spec["tool"] = big[: size // 10]
        elif where == "domain":
            manifest["domains"] = [big + ".com", "127.0.0.1"]
        elif where == "tool-description":
            tool["description"] = big
        else:
            manifest[where] = big
        detail = f"{where}: {size} chars"
        # Tool names are at most 64 characters; a manifest over 1 MiB is not read.
        too_big = len(dump(manifest).encode()) > MAX_MANIFEST_BYTES
        expect = "InvalidManifestError" if where == "tool-name" or too_big else "ok"
    elif kind == "remote-ref":
        label, args, returns = rng.choice(REMOTE_REFS)
        if args is not None:
            tool["args"] = args
        if returns is not None:
            tool["returns"] = returns
            spec["check_returns"] = True
        spec["args"] = {"a": "s"} if args is not None and "$schema" not in args else {}
        detail = label
    elif kind == "bad-pattern":
        pattern = rng.choice(BAD_PATTERNS)
        where = rng.choice(["pattern", "patternProperties", "returns"])
        if where == "pattern":
            tool["args"] = {"a": {"type": "string", "pattern": pattern}}
            spec["args"] = {"a": "aaa"}
        elif where == "patternProperties":
            tool["args"] = {"type": "object", "patternProperties": {pattern: {"type": "string"}}}
            spec["args"] = {"aaa": "b"}
        else:
            tool["args"] = {"type": "object"}
            tool["returns"] = {
                "type": "object",
                "properties": {
                    "args": {"type": "object", "properties": {"a": {"pattern": pattern}}}
                },
            }
            spec["args"] = {"a": "aaa"}
            spec["check_returns"] = True
        detail = f"{where} {short(pattern, 30)}"
        expect = "ok" if pattern in RE2_TAKES else expect
    elif kind == "runaway-pattern":
        where = rng.choice(["args", "returns"])
        evil = "a" * RUNAWAY_LENGTH + "!"
        if where == "args":
            tool["args"] = {"a": {"type": "string", "pattern": "^(a+)+$"}}
            spec["args"] = {"a": evil}
        else:
            tool["returns"] = {
                "type": "object",
                "properties": {
                    "args": {"type": "object", "properties": {"a": {"pattern": "^(a+)+$"}}}
                },
            }
            tool["args"] = {"type": "object"}
            spec["args"] = {"a": evil}
            spec["check_returns"] = True
        detail = f"^(a+)+$ on {where}, {len(evil)} chars"
        # RE2 answers at once that the text does not match: refused, not frozen.
        expect = "InvalidArgsError" if where == "args" else "ReturnsMismatchError"
    elif kind == "bad-path":
        path, expect = rng.choice(BAD_PATHS)
        tool["path"] = path
        detail = short(path, 40)
    elif kind == "symlink":
        link = rng.choice(list(SYMLINKS))
        expect = SYMLINKS[link]
        files = spec["files"]
        if link == "site-out":
            spec["folder_link"] = f"@outside/{site_id}"
        elif link == "site-root":
            spec["folder_link"] = "@root"
        elif link == "manifest-out":
            files["manifest.json"] = Link(f"@outside/{site_id}/manifest.json")
        elif link == "manifest-loop":
            files["manifest.json"] = Link("manifest.json")
        elif link == "manifest-dangling":
            files["manifest.json"] = Link("@outside/nothing-here.json")
        elif link == "manifest-dir":
            files["manifest.json"] = Link("@outside")
        elif link == "manifest-devnull":
            files["manifest.json"] = Link("/dev/null")
        elif link == "tool-out":
            files["browser-tools/t.js"] = Link(f"@outside/{site_id}/browser-tools/t.js")
        elif link == "tool-dir":
            files["browser-tools/t.js"] = Link("@outside")
        else:
            manifest["notes"] = ["notes/n.md"]
            files["notes/n.md"] = Link("@outside/secret.md")
        # A valid site of the same id outside the root, for the links that lead there.
        spec["outside_site"] = link in ("site-out", "manifest-out", "tool-out")
        if link.startswith("manifest") and link != "manifest-out":
            spec["manifest_text"] = None
        detail = link
    else:
        text = rng.choice(RAW_MANIFESTS)
        spec["manifest_text"] = text.replace("@SITE@", site_id) if isinstance(text, str) else text
        detail = short(text, 40)
    spec.setdefault("manifest_text", dump(manifest))
    spec["files"].setdefault("browser-tools/t.js", COUNTING_TOOL)
    return kind, detail, spec, expect


def _deep_value(depth: int, leaf: Any, rng: Random) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return value


#: The ``fzargs`` site's tools (each runs an echo): their args as its manifest writes them, and
#: the JSON Schema that stands for (a compact map takes no args it does not name).
_TYPED = {"s": {"type": "string"}, "n": {"type": "integer"}, "a": {}}
_STRICT = {
    "type": "object",
    "properties": {"a": {"type": ["array", "object", "string"]}},
    "additionalProperties": False,
}
ARGS_TOOLS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "echo": ({"type": "object"}, {"type": "object"}),
    "typed": (_TYPED, {"type": "object", "properties": _TYPED, "additionalProperties": False}),
    "strict": (_STRICT, _STRICT),
}
#: The deepest JSON ego sends (containers, the args object being level 1).
MAX_JSON_DEPTH = 254


def is_json(value: Any) -> bool:
    """Whether ego can send ``value`` as JSON: null, booleans, strings with no lone surrogate,
    integers of 64 bits (signed or not), finite floats, lists (tuples too) and objects with
    string keys, nested at most :data:`MAX_JSON_DEPTH` levels, with no cycle."""
    stack: list[tuple[Any, int, frozenset[int]]] = [(value, 1, frozenset())]
    while stack:
        item, level, above = stack.pop()
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, str):
            if any("\ud800" <= char <= "\udfff" for char in item):
                return False
        elif isinstance(item, int):
            if not -(2**63) <= item < 2**64:
                return False
        elif isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                return False
        elif isinstance(item, list | tuple | dict):
            if level > MAX_JSON_DEPTH or id(item) in above:
                return False
            inner = above | {id(item)}
            if isinstance(item, dict):
                if not all(isinstance(key, str) for key in item):
                    return False
                stack.extend((key, level, inner) for key in item)
                children: Any = item.values()
            else:
                children = item
            stack.extend((child, level + 1, inner) for child in children)
        else:
            return False
    return True


def args_end(tool: str, args: Any) -> str:
    """How a run of ``fzargs/<tool>`` with ``args`` ends: refused unless they are a JSON
    object that fits the tool's schema."""
    if not isinstance(args, dict) or not is_json(args):
        return "InvalidArgsError"
    try:
        valid = jsonschema.Draft202012Validator(ARGS_TOOLS[tool][1]).is_valid(args)
    except (ValueError, RecursionError):
        valid = False  # a value jsonschema itself cannot handle is no valid arg either
    return "ok" if valid else "InvalidArgsError"


def _args_case(rng: Random) -> Made:
    tool = rng.choice(["echo", "typed", "strict"])
    kind = rng.choice(["deep", "leaf", "leaf-key", "not-object", "cycle", "names"])
    args: Any
    if kind == "deep":
        depth = rng.choice(ARG_DEPTHS)
        args = {"a": _deep_value(depth, rng.choice(["x", 1, None]), rng)}
        detail = f"nested {depth} deep"
    elif kind == "leaf":
        maker = rng.choice(ARG_LEAVES)
        leaf = maker()
        args = rng.choice([{"a": leaf}, {"a": [leaf]}, {"s": leaf}, {"a": {"b": leaf}}])
        detail = short(leaf, 40)
    elif kind == "leaf-key":
        key = rng.choice(["\ud800", "", "__proto__", "constructor", "\U0001f600", "a" * 100_000])
        args = {key: 1}
        detail = f"key {short(key, 30)}"
    elif kind == "not-object":
        args = rng.choice([[1], "x", 5, True, 1.5, (), b"{}", [{"a": 1}]])
        detail = short(args, 30)
    elif kind == "cycle":
        cyclic: dict[str, Any] = {}
        cyclic["self"] = cyclic
        looped: list[Any] = []
        looped.append(looped)
        args = rng.choice([cyclic, {"a": looped}])
        detail = "cyclic"
    else:
        args = {"s": "x", "n": rng.choice([1, -1, 2**53, 1.0, True, "1"])}
        detail = short(args, 40)
    return kind, f"{detail} to {tool}", {"tool": tool, "args": args}, args_end(tool, args)


def _name_case(rng: Random, index: int) -> Made:
    # No site id or tool name of these pools names a site or tool (the folders below may).
    kind = rng.choice(["site-id", "tool-name", "folder"])
    if kind == "site-id":
        value = rng.choice(SITE_IDS)
        return kind, short(value, 40), {"site_id": value, "tool": "echo"}, "UnknownSiteError"
    if kind == "tool-name":
        value = rng.choice(TOOL_NAMES)
        return kind, short(value, 40), {"site_id": "fzargs", "tool": value}, "UnknownToolError"
    folder = rng.choice(FOLDER_NAMES)
    if folder == "ok-1":
        folder = f"ok-{index}"
    spec = {
        "folder": folder,
        "tool": "t",
        "args": {},
        "manifest_text": dump(base_manifest(folder)),
        "files": {"browser-tools/t.js": COUNTING_TOOL},
    }
    expect = "ok" if SITE_ID.fullmatch(folder) else "UnknownSiteError"
    return kind, short(folder, 40), spec, expect


def _source_case(rng: Random) -> Made:
    kind = rng.choice([*SOURCES, "throws", "throws"])
    if kind == "throws":
        thrown = rng.choice(THROWN)
        how = rng.choice(["throw", "reject", "await-reject"])
        body = {
            "throw": f"throw ({thrown});",
            "reject": f"return Promise.reject({thrown});",
            "await-reject": f"await Promise.reject({thrown});",
        }[how]
        source = f"async (args) => {{ {COUNT_JS} {body} }}\n"
        detail = f"{how} {short(thrown, 40)}"
        expect = "BrowserToolError"  # whatever it throws, and however odd
    else:
        source = rng.choice(SOURCES[kind])
        detail = short(source, 40)
        expect = SOURCE_ENDS[kind].get(source, "ToolLoadError")
    spec = {"source": source.replace("@C", COUNT_JS), "counts": "@C" in source or kind == "throws"}
    return kind, detail, {**spec, "cache": rng.random() < 0.8, "calls": 2}, expect


def _result_case(rng: Random) -> Made:
    kind = rng.choice(["surrogate", "signal", "value", "value", "surrogate-error"])
    via = rng.choice(["tool", "tool", "evaluate"])
    if kind == "signal":
        leaf, place = rng.choice(SIGNALS), "bare"
    elif kind == "surrogate":
        leaf = rng.choice(STRING_LEAVES)
        place = rng.choice(["bare", "value", "array", "key", "nested"])
    elif kind == "surrogate-error":
        leaf = rng.choice(STRING_LEAVES)
        place = rng.choice(["error", "throw", "reject"])
    else:
        leaf = rng.choice(VALUE_LEAVES)
        place = rng.choice(["bare", "bare", "value", "array", "nested", "throw"])
    expression = {
        "bare": f"return ({leaf});",
        "value": f"return {{v: ({leaf})}};",
        "array": f"return [1, ({leaf})];",
        "key": f"return {{[{leaf}]: 1}};",
        "nested": f"return {{a: {{b: [{{c: ({leaf})}}]}}}};",
        "error": f"throw new Error({leaf});",
        "throw": f"throw ({leaf});",
        "reject": f"return Promise.reject({leaf});",
    }[place]
    body = f"async (args) => {{ {COUNT_JS} {expression} }}"
    spec = {"source": body + "\n", "via": via, "calls": 2 if kind == "signal" else 1}
    thrown = "BrowserToolError" if via == "tool" else "JavaScriptError"
    expect = "ok"
    if place in ("error", "throw", "reject"):
        expect = thrown
    elif via == "tool" and kind == "value":
        fails = {"any": True, "nested": place != "bare", "bare": place == "bare"}
        if fails.get(NOT_BY_VALUE.get(leaf, ""), False):
            expect = thrown
    return kind, f"{place} {short(leaf, 40)} via {via}", spec, expect


def generate(seed: int, count: int) -> list[Case]:
    """``count`` cases drawn from ``random.Random(seed)``: the same ones for the same seed.

    Families are drawn with fixed weights; at most :data:`SLOW_CAP` cases are slow ones.
    """
    rng = Random(seed)
    cases = []
    slow_left = SLOW_CAP
    for index in range(count):
        family = rng.choices(FAMILIES, weights=[35, 13, 15, 15, 22])[0]
        if family == "manifest":
            kind, detail, spec, expect = _manifest_case(rng, f"c{index:04d}", slow_left)
        elif family == "name":
            kind, detail, spec, expect = _name_case(rng, index)
        elif family == "args":
            kind, detail, spec, expect = _args_case(rng)
        elif family == "source":
            kind, detail, spec, expect = _source_case(rng)
        else:
            kind, detail, spec, expect = _result_case(rng)
        slow = kind == "runaway-pattern"
        slow_left -= slow
        cases.append(Case(index, family, kind, detail, spec, slow, expect))
    return cases
