"""Checking a call's args against its tool's schema, before anything is sent to the browser."""

from __future__ import annotations

from typing import Any, Final

from ...errors import InvalidArgsError
from ...protocol.literals import embed_json
from .manifest import ToolSpec
from .quickcheck import quick_check
from .schemas import failing_field, first_error, key_problem, unknown_args, validator

__all__ = ["ArgsChecker"]


def _refuse_key(subject: str, args: Any, *, deep: bool = True) -> None:
    """Raise InvalidArgsError when ``args`` holds a key that is not a string."""
    problem = key_problem(args, "args", deep=deep)
    if problem is not None:
        message = f"{subject}: {problem[1]}; nothing was sent to the browser"
        raise InvalidArgsError(message, field=problem[0])


class ArgsChecker:
    """Checking args against a tool's schema: the base of :class:`~.registry.Learnings`,
    which documents it. Each tool schema's validator is built once and kept with the schema,
    up to :attr:`VALIDATORS_KEPT` of them.
    """

    #: How many schemas' validators are kept before they are built afresh. Every reload of a
    #: manifest brings new schema objects, and a kept validator keeps its schema alive: a
    #: long-running server whose manifests are edited would otherwise grow without end.
    VALIDATORS_KEPT: Final = 1024

    def __init__(self) -> None:
        self._validators: dict[int, tuple[dict[str, Any], Any, Any]] = {}

    def check_args(self, site_id: str, spec: ToolSpec, args: Any) -> dict[str, Any]:
        """Validate ``args`` against the tool's schema and return them as a dict.

        Raises:
            InvalidArgsError: the args fail the schema (``field`` names the failing field), or
                they are not JSON (NaN, a set, ...; ``field`` is ``"(args)"``).
        """
        return self.checked_args(site_id, spec, args)[0]

    def checked_args(self, site_id: str, spec: ToolSpec, args: Any) -> tuple[dict[str, Any], str]:
        """:meth:`check_args`, also giving the args as the JSON literal a call embeds.

        Serialising the args is part of the check (what JSON cannot hold fails here), so the
        literal comes for free and the call need not build it again.

        Raises:
            InvalidArgsError: as :meth:`check_args`.
        """
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise InvalidArgsError(
                f"{site_id}/{spec.name} ({spec.path}): args must be a JSON object, "
                f"not {type(args).__name__}",
                field="(args)",
            )
        # Only the top level on the hot path, and the walk that names the key only when one
        # is not a string: a nested one fails the checks below, which then look for it.
        for key in args:
            if not isinstance(key, str):
                _refuse_key(f"{site_id}/{spec.name} ({spec.path})", args, deep=False)
        cached = self._validators.get(id(spec.args))
        # The schema object itself is kept with its validator: an id alone could be reused by
        # a new schema once a reloaded manifest frees the old one.
        try:
            if cached is None or cached[0] is not spec.args:
                cached = (spec.args, validator(spec.args), quick_check(spec.args))
                if len(self._validators) >= self.VALIDATORS_KEPT:
                    self._validators.clear()
                self._validators[id(spec.args)] = cached
            _, checker, quick = cached
            # The quick check settles plain valid args without jsonschema; is_valid is the
            # next cheapest; the best error is only worth building on a failure.
            if (quick is not None and quick(args)) or checker.is_valid(args):
                error = None
            else:
                error = first_error(checker, args)
        except Exception as exc:
            # A schema that loops through $ref, or args nested past the recursion limit.
            _refuse_key(f"{site_id}/{spec.name} ({spec.path})", args)
            detail = " ".join(str(exc).split())[:200]
            raise InvalidArgsError(
                f"{site_id}/{spec.name} ({spec.path}): the args could not be checked against "
                f"the schema ({type(exc).__name__}: {detail}); nothing was sent to the browser",
                field="(args)",
            ) from None
        if error is not None:
            field = failing_field(error, "(args)")
            raise InvalidArgsError(
                f"{site_id}/{spec.name} ({spec.path}): bad args at {field!r}: {error.message}"
                f"{unknown_args(spec.args, args)}; nothing was sent to the browser",
                field=field,
            )
        try:
            embedded = embed_json(args)
        except TypeError as exc:
            _refuse_key(f"{site_id}/{spec.name} ({spec.path})", args)
            raise InvalidArgsError(
                f"{site_id}/{spec.name} ({spec.path}): args are not JSON: {exc}; "
                "nothing was sent to the browser",
                field="(args)",
            ) from None
        return args, embedded
