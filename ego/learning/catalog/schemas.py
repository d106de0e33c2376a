"""JSON Schema checks shared by every layer: one safe way to build a validator, check a schema
and word a failure.

Args, returns, skill params, try runs and test expectations are all checked here, so a
failure reads the same wherever it happens: ``at 'field': message``.

Schemas come from learnings that may have been written elsewhere, so a validator built here
is safe to run on any schema :func:`schema_problems` accepts:

- ``$ref`` resolves only inside the schema itself (and the JSON Schema meta-schemas, which
  ship with jsonschema): nothing is fetched over the network or read from a file. A ref that
  does not resolve is a problem of the schema, found before anything runs.
- ``pattern`` and ``patternProperties`` (and ``additionalProperties`` beside them) match with
  RE2, whose time is linear in the text, instead of Python's backtracking ``re``: a pattern
  like ``^(a+)+$`` cannot freeze the event loop. RE2 has no lookaround or backreferences; a
  pattern that needs them is a problem of the schema. ``$`` means the end of the text, as in
  JSON Schema's ECMA-262 regexes (Python's ``$`` also matches before a final newline).
- Patterns are at most :data:`MAX_PATTERN_LENGTH` characters, schemas at most
  :data:`MAX_SCHEMA_DEPTH` levels deep. ``unevaluatedProperties`` together with
  ``patternProperties`` is refused: jsonschema evaluates that pair with Python's ``re``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import re2
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema_specifications import REGISTRY as _SPECIFICATIONS

__all__ = [
    "MAX_PATTERN_LENGTH",
    "MAX_REMEMBERED_SCHEMAS",
    "MAX_SCHEMA_DEPTH",
    "MAX_SHOWN",
    "failing_field",
    "first_error",
    "json_depth",
    "json_type",
    "key_problem",
    "mismatch",
    "pattern_problem",
    "schema_problems",
    "shown",
    "unknown_args",
    "validator",
    "worded",
]

#: The longest ``pattern`` (or ``patternProperties`` key) a schema may hold, in characters.
MAX_PATTERN_LENGTH = 1000
#: The deepest a schema may nest (objects and arrays), counting the schema itself as 1.
MAX_SCHEMA_DEPTH = 64

_LATEST = jsonschema.Draft202012Validator
# An empty registry: a $ref outside the schema finds nothing and retrieves nothing (without a
# registry jsonschema would fetch http(s) and file URLs). The meta-schemas are added by
# jsonschema itself, from the copies it ships.
_LOCAL_ONLY: referencing.Registry[Any] = referencing.Registry()
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a refused pattern is reported as a problem, not on stderr


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    return re2.compile(pattern, options=_RE2_OPTIONS)


def pattern_problem(pattern: Any) -> str:
    """Why ``pattern`` cannot be used in a schema (``""`` when it can).

    It must be a string of at most :data:`MAX_PATTERN_LENGTH` characters that RE2 compiles.
    """
    if not isinstance(pattern, str):
        return f"pattern {pattern!r} is not a string"
    if len(pattern) > MAX_PATTERN_LENGTH:
        return (
            f"pattern {pattern[:40]!r}... is {len(pattern)} characters "
            f"(at most {MAX_PATTERN_LENGTH})"
        )
    try:
        _compiled(pattern)
    except Exception as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        return (
            f"pattern {pattern!r} is not supported: {reason} (patterns run on RE2: no "
            "lookaround or backreferences)"
        )
    return ""


def _search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches anywhere in ``text``, in time linear in ``text``."""
    try:
        compiled = _compiled(pattern)
    except Exception:
        return False  # schema_problems refuses such a pattern; here it matches nothing
    try:
        return compiled.search(text) is not None
    except UnicodeEncodeError:
        # A lone surrogate (text cut inside an emoji) has no UTF-8 form for RE2.
        cleaned = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
        return compiled.search(cleaned) is not None


def _pattern(checker: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if checker.is_type(instance, "string") and not _search(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(checker: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not checker.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from checker.descend(value, subschema, path=key, schema_path=pattern)


def _extras(instance: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key
        for key in instance
        if key not in properties and not any(_search(pattern, key) for pattern in patterns)
    ]


def _additional_properties(checker: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
    # jsonschema's own, with the patternProperties test on RE2.
    if not checker.is_type(instance, "object"):
        return
    extras = _extras(instance, schema)
    if checker.is_type(extra, "object"):
        for key in extras:
            yield from checker.descend(instance[key], extra, path=key)
    elif not extra and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield jsonschema.ValidationError(
                f"{joined} {verb} not match any of the regexes: {patterns}"
            )
        else:
            verb = "was" if len(extras) == 1 else "were"
            joined = ", ".join(repr(each) for each in sorted(extras, key=str))
            yield jsonschema.ValidationError(
                f"Additional properties are not allowed ({joined} {verb} unexpected)"
            )


@cache
def _safe(base: Any) -> Any:
    return jsonschema.validators.extend(
        base,
        {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
        },
    )


def _base_class(schema: Any) -> Any:
    dialect = schema.get("$schema") if isinstance(schema, dict) else None
    if not isinstance(dialect, str):
        return _LATEST
    return jsonschema.validators.validator_for({"$schema": dialect}, default=_LATEST)


def validator(schema: Any) -> Any:
    """A validator for ``schema``, of the draft its ``$schema`` names (the newest otherwise).

    It resolves ``$ref`` only inside ``schema`` and matches patterns with RE2 (see the module
    docstring); check ``schema`` with :func:`schema_problems` before trusting it.
    """
    return _safe(_base_class(schema))(schema, registry=_LOCAL_ONLY)


def json_depth(value: Any, limit: int) -> int:
    """How deep ``value`` nests (a scalar is 0, ``[]`` is 1), counting no further than
    ``limit + 1``; iterative, so any depth is safe to measure."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            if depth > limit:
                return depth
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth) for child in children)
    return deepest


def unknown_args(schema: dict[str, Any], args: dict[str, Any]) -> str:
    """``; unknown arg 'idd' (did you mean 'id'?)`` for the args ``schema`` does not name, or
    ``""``: a misspelt name often shows only as a required arg missing."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return ""
    unknown = [key for key in args if key not in properties]
    if not unknown:
        return ""
    named = []
    for key in unknown:
        close = difflib.get_close_matches(key, [str(name) for name in properties], n=1)
        named.append(f"{key!r:.80}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return f"; unknown arg{'s' if len(unknown) > 1 else ''} {', '.join(named)}"


def key_problem(value: Any, root: str, *, deep: bool = True) -> tuple[str, str] | None:
    """Where ``value`` holds a dict key that is not a string, and why that is refused.

    JSON objects have string keys only, but a dict built in Python may not (``{1: "x"}``),
    and the schema checks stumble on such a key without naming it. The walk is iterative and
    enters each container once, so any depth and a cycle are safe.

    Args:
        value: the args (or params) as given.
        root: what ``value`` is, as messages name it (``"args"``, ``"params"``).
        deep: look into nested dicts and lists too; False checks ``value``'s own keys only.

    Returns:
        None when every key is a string; else the field of the dict that holds the first such
        key (``(args)`` for ``value`` itself, else its path: ``a/0``) and a message naming it.
    """
    # (container, index of its parent in this list, its key there): paths are only spelt
    # out for the one key found, so a deep value costs no quadratic string building.
    trail: list[tuple[Any, int, Any]] = [(value, -1, None)]
    entered: set[int] = set()
    pending = [0]
    while pending:
        at = pending.pop()
        item = trail[at][0]
        if id(item) in entered:
            continue
        entered.add(id(item))
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in pairs:
            if isinstance(item, dict) and not isinstance(key, str):
                field = _trail_path(trail, at) or f"({root})"
                where = "" if at == 0 else f" in {field!r:.200}"
                return field, (
                    f"{root} key {key!r:.80} ({type(key).__name__}){where} is not a string: "
                    f"{root} keys must be strings, as in JSON"
                )
            if deep and isinstance(child, dict | list | tuple):
                trail.append((child, at, key))
                pending.append(len(trail) - 1)
        if not deep:
            break
    return None


def _trail_path(trail: list[tuple[Any, int, Any]], at: int) -> str:
    parts = []
    while at > 0:
        _, parent, key = trail[at]
        parts.append(str(key))
        at = parent
    return "/".join(reversed(parts))


def _resources(resource: Any, resolver: Any) -> Iterator[tuple[Any, Any]]:
    """Every subschema of ``resource`` with the resolver of its base URI."""
    yield resource, resolver
    for sub in resource.subresources():
        yield from _resources(sub, resolver.in_subresource(sub))


def _ref_problem(ref: Any, keyword: str, resolver: Any) -> str:
    if not isinstance(ref, str):
        return f"{keyword} {ref!r} is not a string"
    try:
        resolver.lookup(ref)
    except referencing.exceptions.Unresolvable:
        if urlsplit(ref).scheme:
            return (
                f"{keyword} {ref!r} points outside the schema; ego never fetches schemas "
                "(put it under $defs and use #/$defs/...)"
            )
        return f"{keyword} {ref!r} does not resolve inside the schema"
    except Exception as exc:
        return f"{keyword} {ref!r} does not resolve: {type(exc).__name__}: {exc}"
    return ""


def _structure_problems(schema: Any, base: Any) -> list[str]:
    """Patterns, refs and the unevaluatedProperties/patternProperties pair, over every
    subschema (data under ``enum``, ``const`` or ``default`` is not a subschema)."""
    specification = referencing.jsonschema.specification_with(
        base.META_SCHEMA.get("$id") or base.META_SCHEMA.get("id", ""),
        default=referencing.jsonschema.DRAFT202012,
    )
    resource = specification.create_resource(schema)
    resolver = _SPECIFICATIONS.combine(_LOCAL_ONLY).resolver_with_root(resource)
    problems: list[str] = []
    seen: set[str] = set()
    for sub, sub_resolver in _resources(resource, resolver):
        contents = sub.contents
        if not isinstance(contents, dict):
            continue
        seen.update(
            key for key in ("patternProperties", "unevaluatedProperties") if key in contents
        )
        found = []
        if "pattern" in contents:
            found.append(pattern_problem(contents["pattern"]))
        if isinstance(contents.get("patternProperties"), dict):
            found.extend(pattern_problem(key) for key in contents["patternProperties"])
        for keyword in ("$ref", "$dynamicRef"):
            if keyword in contents:
                found.append(_ref_problem(contents[keyword], keyword, sub_resolver))
        problems.extend(problem for problem in found if problem)
    if seen == {"patternProperties", "unevaluatedProperties"}:
        problems.append(
            "unevaluatedProperties together with patternProperties is not supported "
            "(use additionalProperties)"
        )
    return problems


def schema_problems(schema: Any) -> list[str]:
    """Every reason ``schema`` cannot be used, one line each (empty when it is fine).

    A schema is an object or a boolean, names a known ``$schema`` draft (when it names one),
    passes its draft's meta-schema, nests at most :data:`MAX_SCHEMA_DEPTH` levels, resolves
    every ``$ref`` inside itself, and holds only patterns :func:`pattern_problem` accepts.
    Never raises: a failure of the check itself is a problem too.

    The answer for a schema of the same JSON text is remembered (the last
    :data:`MAX_REMEMBERED_SCHEMAS`): the meta-schema check takes about a millisecond, and
    tools share their schemas (every tool without args has the same one).
    """
    if not isinstance(schema, dict | bool):
        return [f"must be a JSON Schema (an object or true/false), not {_kind_in_words(schema)}"]
    if isinstance(schema, bool):
        return []
    try:
        text: str | None = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = None  # not JSON: checked each time, and said so
    if text is not None:
        known = _remembered.get(text)
        if known is not None:
            return list(known)
    problems = _check_schema(schema)
    if text is not None:
        if len(_remembered) >= MAX_REMEMBERED_SCHEMAS:
            _remembered.clear()
        _remembered[text] = tuple(problems)
    return problems


#: How many schemas' answers :func:`schema_problems` keeps, by their JSON text.
MAX_REMEMBERED_SCHEMAS = 4096
_remembered: dict[str, tuple[str, ...]] = {}


def _check_schema(schema: dict[str, Any]) -> list[str]:
    """:func:`schema_problems` of an object schema, checked now."""
    depth = json_depth(schema, MAX_SCHEMA_DEPTH)
    if depth > MAX_SCHEMA_DEPTH:
        return [f"nests more than {MAX_SCHEMA_DEPTH} levels deep"]
    if "$schema" in schema:
        dialect = schema["$schema"]
        if not isinstance(dialect, str):
            return [f"$schema must be a string (a draft's URI), not {_kind_in_words(dialect)}"]
        if jsonschema.validators.validator_for({"$schema": dialect}, default=None) is None:
            return [f"$schema {dialect!r} is not a JSON Schema draft jsonschema knows"]
    base = _base_class(schema)
    try:
        # The meta-schema check first: the walk below assumes keywords of the right types.
        error = jsonschema.exceptions.best_match(
            base(base.META_SCHEMA, format_checker=base.FORMAT_CHECKER).iter_errors(schema)
        )
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path)
            return [
                f"not a valid JSON Schema: {worded(error)}" + (f" (at {where})" if where else "")
            ]
        return _structure_problems(schema, base)
    except Exception as exc:
        return [f"cannot be checked: {type(exc).__name__}: {_one_line(exc)}"]


def json_type(value: Any) -> str:
    """The JSON Schema type of a value parsed from JSON (anything else counts as a string)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def _kind_in_words(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    if value is None:
        return "null"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return names.get(type(value), type(value).__name__)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] + ("..." if len(text) > 300 else "")


#: The most characters of a value a message shows (longer ones end with "...").
MAX_SHOWN = 120


def shown(value: Any) -> str:
    """``value`` as a message shows it: JSON (``null``, ``true``, ``"text"``), cut to
    :data:`MAX_SHOWN` characters.

    A string holding a lone surrogate is shown with ``\\u`` escapes (it has no UTF-8 form to
    print); what JSON cannot hold (a set, bytes, an integer past Python's digit limit, a
    nesting past the recursion limit) is named by its type.
    """
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = f"<{type(value).__name__}>"
    else:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(value)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "..."


def _listed(values: Any) -> str:
    """``"a"``, ``"a" or "b"``, ``"a", "b" or "c"``: each value :func:`shown`."""
    items = [shown(each) for each in values] if isinstance(values, list) else [shown(values)]
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def _plural(count: Any, word: str) -> str:
    return f"{shown(count)} {word}" + ("" if count == 1 else "s")


def _extra_properties(instance: Any, schema: dict[str, Any]) -> str:
    """``("x" was unexpected)``, and the patterns that matched none of them, if any."""
    extras = sorted(_extras(instance, schema), key=str) if isinstance(instance, dict) else []
    verb = "was" if len(extras) == 1 else "were"
    patterns = schema.get("patternProperties")
    matched = f"; patternProperties: {', '.join(map(shown, patterns))}" if patterns else ""
    return f"({', '.join(shown(each) for each in extras)} {verb} unexpected{matched})"


def worded(error: jsonschema.ValidationError) -> str:
    """The message of ``error``, built from its fields (``validator``, ``validator_value``,
    ``instance``, ``schema``, ``context``) rather than from jsonschema's own text, so that
    the wording is ego's own and a jsonschema upgrade cannot change it.

    Values are in JSON words (:func:`shown`): ``null is not of type "string"``,
    ``"c" is not one of ["a", "b"]``. A failure of a ``propertyNames`` subschema says it is
    about a property name. A keyword without a wording of its own reads
    ``<value> fails <keyword>: <keyword's value>``.
    """
    keyword = error.validator
    value = error.validator_value
    instance = error.instance
    subject = shown(instance)
    if "propertyNames" in error.relative_schema_path:
        subject = f"property name {subject}"
    if keyword is None:  # a ``false`` schema: nothing is allowed here
        return f"{subject} is not allowed here (the schema is false)"
    if keyword == "type":
        return f"{subject} is not of type {_listed(value)}"
    if keyword == "required":
        have = instance if isinstance(instance, dict) else {}
        missing = [name for name in value if name not in have] if isinstance(value, list) else []
        if len(missing) > 1:
            return f"{_listed(missing).replace(' or ', ' and ')} are required properties"
        return f"{shown(missing[0] if missing else value)} is a required property"
    if keyword == "enum":
        return f"{subject} is not one of {shown(value)}"
    if keyword == "const":
        return f"{shown(value)} was expected, not {subject}"
    if keyword == "pattern":
        return f"{subject} does not match {shown(value)}"
    if keyword == "format":
        return f"{subject} is not a valid {shown(value)}"
    if keyword in ("minLength", "maxLength", "minItems", "maxItems"):
        short = keyword.startswith("min")
        unit = "character" if keyword.endswith("Length") else "item"
        bound = "at least" if short else "at most"
        return f"{subject} is too {'short' if short else 'long'} ({bound} {_plural(value, unit)})"
    if keyword in ("minProperties", "maxProperties"):
        if keyword == "minProperties":
            return f"{subject} has too few properties (at least {shown(value)})"
        return f"{subject} has too many properties (at most {shown(value)})"
    bounds = {
        "minimum": "less than the minimum of",
        "maximum": "greater than the maximum of",
        "exclusiveMinimum": "less than or equal to the minimum of",
        "exclusiveMaximum": "greater than or equal to the maximum of",
    }
    if keyword in bounds:
        return f"{subject} is {bounds[keyword]} {shown(value)}"
    if keyword == "multipleOf":
        return f"{subject} is not a multiple of {shown(value)}"
    if keyword == "uniqueItems":
        return f"{subject} has items that are not unique"
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        if keyword == "additionalProperties" and isinstance(error.schema, dict):
            return (
                f"Additional properties are not allowed {_extra_properties(instance, error.schema)}"
            )
        return f"{subject} has properties no keyword of the schema evaluates"
    if keyword in ("items", "additionalItems", "unevaluatedItems"):
        return f"{subject} has more items than the schema allows"
    if keyword == "dependentRequired" and isinstance(value, dict):
        have = instance if isinstance(instance, dict) else {}
        for name, needed in value.items():
            missing = [each for each in needed if name in have and each not in have]
            if missing:
                return f"{_listed(missing).replace(' or ', ' and ')} required by {shown(name)}"
    if keyword == "contains":
        return f"{subject} has no item that matches {shown(value)}"
    if keyword in ("minContains", "maxContains"):
        fewer = "fewer" if keyword == "minContains" else "more"
        return f"{subject} has {fewer} than {_plural(value, 'item')} matching its contains schema"
    if keyword in ("anyOf", "oneOf"):
        if keyword == "oneOf" and not error.context:
            return f"{subject} matches more than one of the schemas oneOf lists"
        return f"{subject} matches none of the schemas {keyword} lists"
    if keyword == "not":
        return f"{subject} must not match {shown(value)}"
    return f"{subject} fails {keyword}: {shown(value)}"


def first_error(checker: Any, instance: Any) -> jsonschema.ValidationError | None:
    """The most relevant error of ``instance`` under ``checker``, or None when it is valid.

    Its ``message`` is ego's wording of it (see :func:`worded`).
    """
    error: jsonschema.ValidationError | None = jsonschema.exceptions.best_match(
        checker.iter_errors(instance)
    )
    if error is not None:
        error.message = worded(error)
    return error


def failing_field(error: jsonschema.ValidationError, root: str) -> str:
    """Where ``error`` is, as ``a/b/c``; for a missing or extra property, that property.

    ``root`` names the whole instance (``"(args)"``, ``"(result)"``) when the error is there.
    """
    path = "/".join(str(part) for part in error.absolute_path)
    name = ""
    instance = error.instance if isinstance(error.instance, dict) else {}
    if error.validator == "required" and isinstance(error.validator_value, list):
        name = next((key for key in error.validator_value if key not in instance), "")
    elif error.validator == "additionalProperties" and isinstance(error.schema, dict):
        name = next(iter(_extras(instance, error.schema)), "")
    if name:
        return f"{path}/{name}" if path else name
    return path or root


def mismatch(schema: Any, instance: Any, root: str = "(result)") -> str:
    """``""`` when ``instance`` fits ``schema``, else ``at WHERE: MESSAGE`` for the best error.

    A schema that cannot be applied (a ref loop, a ref that does not resolve) is a mismatch
    too, worded as such, rather than an exception.
    """
    try:
        error = first_error(validator(schema), instance)
    except Exception as exc:
        return f"at {root}: the schema could not be applied: {type(exc).__name__}: {_one_line(exc)}"
    if error is None:
        return ""
    where = "/".join(str(part) for part in error.absolute_path) or root
    return f"at {where}: {error.message}"
