"""JSON Schema checks shared by every layer: one way to build a validator and word a failure.

Args, returns, skill params, try runs and test expectations are all checked here, so a
failure reads the same wherever it happens: ``at 'field': message``.
"""

from __future__ import annotations

from typing import Any

import jsonschema

__all__ = ["failing_field", "first_error", "mismatch", "validator"]


def validator(schema: Any) -> Any:
    """A validator for ``schema``, of the draft its ``$schema`` names (the newest otherwise)."""
    return jsonschema.validators.validator_for(schema)(schema)


def first_error(checker: Any, instance: Any) -> jsonschema.ValidationError | None:
    """The most relevant error of ``instance`` under ``checker``, or None when it is valid."""
    error: jsonschema.ValidationError | None = jsonschema.exceptions.best_match(
        checker.iter_errors(instance)
    )
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
        allowed = error.schema.get("properties", {})
        name = next((key for key in instance if key not in allowed), "")
    if name:
        return f"{path}/{name}" if path else name
    return path or root


def mismatch(schema: Any, instance: Any, root: str = "(result)") -> str:
    """``""`` when ``instance`` fits ``schema``, else ``at WHERE: MESSAGE`` for the best error."""
    error = first_error(validator(schema), instance)
    if error is None:
        return ""
    where = "/".join(str(part) for part in error.absolute_path) or root
    return f"at {where}: {error.message}"
