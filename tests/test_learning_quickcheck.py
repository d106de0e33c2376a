"""The quick args check never says yes where jsonschema says no, and settles plain args."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ego.learning.catalog.manifest import args_schema
from ego.learning.catalog.quickcheck import quick_check

COMPACT = args_schema(
    {
        "query": {"type": "string", "required": True, "description": "what to search"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "examples": [10]},
        "ratio": {"type": "number", "maximum": 1.5},
        "strict": {"type": "boolean"},
        "tags": {"type": "array"},
        "extra": {"type": "object"},
        "nothing": {"type": "null"},
    }
)
OPEN = {
    "type": "object",
    "properties": {"id": {"type": "integer"}},
    "required": ["id"],
    "additionalProperties": True,
}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-100, 100)
    | st.floats(-100, 100, allow_nan=False)
    | st.sampled_from([0.0, 1.0, 50.0, 51.0, 1.5, 2.0])
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=5,
)
names = st.sampled_from(
    ["query", "limit", "ratio", "strict", "tags", "extra", "nothing", "id", "x"]
)


@settings(max_examples=400, deadline=None)
@given(args=st.dictionaries(names, json_values, max_size=5))
def test_quick_yes_is_always_a_jsonschema_yes(args: dict[str, Any]) -> None:
    for schema in (COMPACT, OPEN):
        quick = quick_check(schema)
        assert quick is not None
        expected = jsonschema.Draft202012Validator(schema).is_valid(args)
        # Exact on this shape: the quick answer is jsonschema's answer.
        assert quick(args) == expected, (schema, args)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string", "enum": ["x"]}}},
        {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
        {"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "minProperties": 1},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"},
        {"type": "object", "properties": {"a": {"description": "no type"}}},
        {"type": "object", "properties": {"a": {"type": "integer", "minimum": "1"}}},
    ],
)
def test_schemas_outside_the_simple_shape_are_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert quick_check(schema) is None


def test_plain_args_pass_and_edge_values_follow_json_schema() -> None:
    quick = quick_check(COMPACT)
    assert quick is not None
    assert quick({"query": "shoes", "limit": 10, "strict": False})
    assert quick({"query": "shoes", "limit": 10.0})  # 10.0 is an integer in JSON Schema
    assert not quick({"query": "shoes", "limit": True})  # a boolean is not
    assert not quick({"query": "shoes", "limit": 0})  # below minimum
    assert not quick({"limit": 10})  # query is required
    assert not quick({"query": "shoes", "unknown": 1})  # additionalProperties is false
