"""The fuzz's cases: seeded inputs over manifests, names, args, tool sources and results.

``generate(seed, count)`` gives the same cases for the same seed (``random.Random(seed)``, no
other dependency). A :class:`Case` is data only: what to write into a learnings site and
which public calls to make with what; :mod:`tests.fuzz_run` runs and classifies them.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from random import Random
from typing import Any

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
BAD_PATHS = [
    "../t.js", "/etc/hostname", "a\\b.js", "", " ", "browser-tools/../../t.js", "t\x00.js",
    "~/t.js", "C:/t.js", ".", "browser-tools", "missing.js", "x" * 300 + ".js",
    ("d/" * 400) + "t.js", "t\n.js", "\udcff.js", "\ud800.js", "./browser-tools/t.js",
    "browser-tools//t.js", "manifest.json", "file:///etc/hostname",
]
SYMLINKS = ["site-out", "manifest-out", "tool-out", "manifest-loop", "manifest-dangling",
            "manifest-dir", "site-root", "tool-dir", "notes-out", "manifest-devnull"]
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


def _manifest_case(rng: Random, site_id: str, slow_left: int) -> tuple[str, str, dict[str, Any]]:
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
    if kind == "tool-field":
        name, value = rng.choice(TOOL_FIELDS), rng.choice(ODD_JSON)
        tool[name] = value
        detail = f"{name}={value.text}"
    elif kind == "schema-type":
        where, value = rng.choice(["args", "returns"]), rng.choice(ODD_JSON)
        tool[where] = {"$schema": value, "type": "object"}
        detail = f"{where}.$schema={value.text}"
    elif kind == "top-field":
        name, value = rng.choice(TOP_FIELDS), rng.choice(ODD_JSON)
        manifest[name] = value
        detail = f"{name}={value.text}"
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
    elif kind == "bad-path":
        path = rng.choice(BAD_PATHS)
        tool["path"] = path
        detail = short(path, 40)
    elif kind == "symlink":
        link = rng.choice(SYMLINKS)
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
    return kind, detail, spec


def _deep_value(depth: int, leaf: Any, rng: Random) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return value


def _args_case(rng: Random) -> tuple[str, str, dict[str, Any]]:
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
    return kind, detail, {"tool": tool, "args": args}


def _name_case(rng: Random, index: int) -> tuple[str, str, dict[str, Any]]:
    kind = rng.choice(["site-id", "tool-name", "folder"])
    if kind == "site-id":
        value = rng.choice(SITE_IDS)
        return kind, short(value, 40), {"site_id": value, "tool": "echo"}
    if kind == "tool-name":
        value = rng.choice(TOOL_NAMES)
        return kind, short(value, 40), {"site_id": "fzargs", "tool": value}
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
    return kind, short(folder, 40), spec


def _source_case(rng: Random) -> tuple[str, str, dict[str, Any]]:
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
    else:
        source = rng.choice(SOURCES[kind])
        detail = short(source, 40)
    spec = {"source": source.replace("@C", COUNT_JS), "counts": "@C" in source or kind == "throws"}
    return kind, detail, {**spec, "cache": rng.random() < 0.8, "calls": 2}


def _result_case(rng: Random) -> tuple[str, str, dict[str, Any]]:
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
    return kind, f"{place} {short(leaf, 40)} via {via}", spec


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
            kind, detail, spec = _manifest_case(rng, f"c{index:04d}", slow_left)
        elif family == "name":
            kind, detail, spec = _name_case(rng, index)
        elif family == "args":
            kind, detail, spec = _args_case(rng)
        elif family == "source":
            kind, detail, spec = _source_case(rng)
        else:
            kind, detail, spec = _result_case(rng)
        slow = kind == "runaway-pattern"
        slow_left -= slow
        cases.append(Case(index, family, kind, detail, spec, slow))
    return cases
