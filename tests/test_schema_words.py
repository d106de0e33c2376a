"""How a schema failure reads: ego's own words, built from the error's fields.

Every message :func:`ego.learning.catalog.schemas.worded` gives is pinned here, keyword by
keyword, so that neither a jsonschema upgrade nor a refactor changes what people and agents
read.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from ego.learning.catalog.schemas import (
    MAX_SHOWN,
    mismatch,
    schema_problems,
    shown,
    validator,
    worded,
)


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        ({"type": "string"}, None, 'at (result): null is not of type "string"'),
        ({"type": "integer"}, True, 'at (result): true is not of type "integer"'),
        (
            {"type": ["string", "null", "array"]},
            1,
            'at (result): 1 is not of type "string", "null" or "array"',
        ),
        ({"const": False}, True, "at (result): false was expected, not true"),
        ({"enum": ["a", "b"]}, "c", 'at (result): "c" is not one of ["a", "b"]'),
        ({"required": ["q"]}, {}, 'at (result): "q" is a required property'),
        (
            {"required": ["a", "b", "c"]},
            {"b": 1},
            'at (result): "a" and "c" are required properties',
        ),
        (
            {"properties": {"a": {"type": "array", "maxItems": 1}}},
            {"a": [None, True]},
            "at a: [null, true] is too long (at most 1 item)",
        ),
        ({"minItems": 2}, [1], "at (result): [1] is too short (at least 2 items)"),
        ({"minLength": 3}, "ab", 'at (result): "ab" is too short (at least 3 characters)'),
        ({"maxLength": 1}, "ab", 'at (result): "ab" is too long (at most 1 character)'),
        ({"minProperties": 2}, {}, "at (result): {} has too few properties (at least 2)"),
        (
            {"maxProperties": 0},
            {"a": 1},
            'at (result): {"a": 1} has too many properties (at most 0)',
        ),
        ({"minimum": 0}, -1, "at (result): -1 is less than the minimum of 0"),
        ({"maximum": 9}, 10, "at (result): 10 is greater than the maximum of 9"),
        ({"exclusiveMinimum": 0}, 0, "at (result): 0 is less than or equal to the minimum of 0"),
        (
            {"exclusiveMaximum": 1.5},
            2,
            "at (result): 2 is greater than or equal to the maximum of 1.5",
        ),
        ({"multipleOf": 2}, 3, "at (result): 3 is not a multiple of 2"),
        ({"uniqueItems": True}, [1, 1], "at (result): [1, 1] has items that are not unique"),
        (
            {"additionalProperties": False},
            {"x": 1},
            'at (result): Additional properties are not allowed ("x" was unexpected)',
        ),
        (
            {"additionalProperties": False, "patternProperties": {"^a": {}}},
            {"y": 1, "ab": 2, "x": 3},
            'at (result): Additional properties are not allowed ("x", "y" were unexpected; '
            'patternProperties: "^a")',
        ),
        ({"pattern": "^a"}, "it's 'b'", 'at (result): "it\'s \'b\'" does not match "^a"'),
        (
            {"propertyNames": {"pattern": "^a"}},
            {"b": 1},
            'at (result): property name "b" does not match "^a"',
        ),
        (False, 1, "at (result): 1 is not allowed here (the schema is false)"),
        (
            {"oneOf": [{"type": "string"}, {"type": "null"}]},
            1,
            "at (result): 1 matches none of the schemas oneOf lists",
        ),
        ({"oneOf": [{}, {}]}, 1, "at (result): 1 matches more than one of the schemas oneOf lists"),
        (
            {"anyOf": [{"type": "string"}, {"type": "null"}]},
            1,
            "at (result): 1 matches none of the schemas anyOf lists",
        ),
        ({"not": {"type": "integer"}}, 1, 'at (result): 1 must not match {"type": "integer"}'),
        (
            {"contains": {"type": "string"}},
            [1],
            'at (result): [1] has no item that matches {"type": "string"}',
        ),
        (
            {"contains": {"type": "string"}, "minContains": 2},
            ["a"],
            'at (result): ["a"] has fewer than 2 items matching its contains schema',
        ),
        (
            {"prefixItems": [{}], "items": False},
            [1, 2],
            "at (result): [1, 2] has more items than the schema allows",
        ),
        (
            {"dependentRequired": {"a": ["b"]}},
            {"a": 1},
            'at (result): "b" required by "a"',
        ),
        (
            {"unevaluatedProperties": False},
            {"x": 1},
            'at (result): {"x": 1} has properties no keyword of the schema evaluates',
        ),
    ],
)
def test_each_keyword_has_its_own_wording(schema: Any, value: Any, message: str) -> None:
    assert mismatch(schema, value) == message


def test_the_wording_comes_from_the_fields_not_jsonschemas_message() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}
    errors = list(validator(schema).iter_errors({"n": 0}))
    assert len(errors) == 1
    errors[0].message = "whatever a jsonschema release says"
    assert worded(errors[0]) == "0 is less than the minimum of 1"


def test_a_keyword_without_words_of_its_own_names_itself() -> None:
    error = jsonschema.ValidationError(
        "ignored", validator="x-custom", validator_value={"limit": 2}, instance=[1, 2, 3]
    )
    assert worded(error) == '[1, 2, 3] fails x-custom: {"limit": 2}'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("\ud800", '"\\ud800"'),
        ("é", '"é"'),
        ({1}, "<set>"),
        (b"x", "<bytes>"),
        (10**5000, "<int>"),
        ("x" * 500, '"' + "x" * (MAX_SHOWN - 1) + "..."),
    ],
    ids=["surrogate", "unicode", "set", "bytes", "huge-int", "long"],
)
def test_values_are_shown_as_short_printable_json(value: Any, text: str) -> None:
    assert shown(value) == text
    text.encode("utf-8")  # printable: no lone surrogate reaches a terminal


def test_a_schemas_own_problem_is_worded_the_same_way() -> None:
    assert schema_problems({"type": "object", "required": "x"}) == [
        'not a valid JSON Schema: "x" is not of type "array" (at required)'
    ]
