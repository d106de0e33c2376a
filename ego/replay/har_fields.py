"""The building blocks of the HAR model: a base with HAR's JSON names, lenient field types, headers.

- :class:`HarModel`: pydantic with HAR's camelCase names (``mimeType``, ``redirectURL``),
  Python names accepted too, unknown fields kept as :attr:`HarModel.extra` and written first.
- The field types (``Text``, ``Size``, ``Pairs``...) read what real HAR writers put in a field
  the way they meant it: a number as a string, ``null`` for "", a header object for a list.
- :func:`har_error` and :func:`dump`: pydantic's errors worded as ego's
  :class:`~ego.errors.HarFormatError`, with where in the file the problem is.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Final

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError, PydanticSerializationError

from ..errors import HarFormatError, HarTooLargeError

__all__ = [
    "DEFAULT_TIMINGS",
    "HarModel",
    "Header",
    "JSONObject",
    "Objects",
    "OptionalText",
    "Pairs",
    "Size",
    "Text",
    "TruthyText",
    "charset_of",
    "dump",
    "har_error",
    "header_value",
    "lenient_int",
    "nested",
    "object_or",
    "text_or",
    "unusable",
]

JSONObject = dict[str, Any]

# HAR's own spellings where plain camelCase would differ.
_ALIASES: Final = {
    "redirect_url": "redirectURL",
    "server_ip_address": "serverIPAddress",
    "resource_type": "_resourceType",
}

# The error type of a HAR that is JSON but cannot be used; its message names the field.
_UNUSABLE: Final = "har_unusable"


def _alias(name: str) -> str:
    return _ALIASES.get(name) or to_camel(name)


def unusable(message: str) -> PydanticCustomError:
    """The error a validator raises for a HAR that cannot be used; ``message`` names the field
    (``request.url is missing``) and :func:`har_error` adds the entry."""
    return PydanticCustomError(_UNUSABLE, "{message}", {"message": message})


# -- lenient field types: what real HAR writers put there, read the way they meant it ------


def lenient_int(value: Any, default: int) -> int:
    """``value`` as an int (``"200"`` and ``12.5`` too); ``default`` when it is not a number."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return default
    return default


def _pairs(value: Any) -> list[Header]:
    # The spec says a list of {name, value}; a plain {name: value} object is accepted too.
    if isinstance(value, Mapping):
        return [Header(str(k), str(v)) for k, v in value.items()]
    if not isinstance(value, list):
        return []
    found = []
    for item in value:
        if isinstance(item, Header):
            found.append(item)
        elif isinstance(item, Mapping) and "name" in item:
            found.append(Header(str(item["name"]), str(item.get("value", ""))))
    return found


def _objects(value: Any) -> list[JSONObject]:
    if not isinstance(value, list):
        return []
    return [dict(item) for item in value if isinstance(item, Mapping)]


def object_or(default: JSONObject | None) -> BeforeValidator:
    """A field that keeps a JSON object and reads anything else as (a copy of) ``default``."""
    # A copy each time: the default must never be shared between two objects.
    return BeforeValidator(
        lambda v: (
            dict(v) if isinstance(v, Mapping) else (dict(default) if default is not None else None)
        )
    )


def text_or(default: str) -> BeforeValidator:
    """A text field that reads a missing value (``null``, ``""``, ``0``) as ``default``."""
    return BeforeValidator(lambda v: str(v or default))


def nested(model: type[BaseModel], otherwise: Any) -> BeforeValidator:
    """A ``model`` field that reads anything but an object as ``otherwise()``."""
    return BeforeValidator(lambda v: v if isinstance(v, Mapping | model) else otherwise())


#: ``timings`` when an entry has none: the spec requires send, wait and receive.
DEFAULT_TIMINGS: JSONObject = {"send": 0, "wait": 0, "receive": 0}

#: Text; ``null`` (or any other false value) reads as "".
Text = Annotated[str, text_or("")]
#: A size in bytes, -1 when unknown (or not a number).
Size = Annotated[int, BeforeValidator(lambda v: lenient_int(v, -1))]
#: ``[{name, value}]`` (a ``{name: value}`` object too); items without a name dropped.
Pairs = Annotated[list["Header"], BeforeValidator(_pairs)]
#: A list of JSON objects; anything else in it is dropped.
Objects = Annotated[list[JSONObject], BeforeValidator(_objects)]
#: Text, or None when absent (``""`` is kept).
OptionalText = Annotated[str | None, BeforeValidator(lambda v: None if v is None else str(v))]
#: Text, or None when absent or empty.
TruthyText = Annotated[str | None, BeforeValidator(lambda v: str(v) if v else None)]


class HarModel(BaseModel):
    """The common ground: camelCase JSON names, unknown fields kept and written first."""

    model_config = ConfigDict(alias_generator=_alias, populate_by_name=True, extra="allow")

    @property
    def extra(self) -> JSONObject:
        """The fields HAR 1.2 does not define (``_custom`` ones too), written back as read."""
        if self.__pydantic_extra__ is None:
            return {}
        return self.__pydantic_extra__

    def _absent(self) -> Iterable[str]:
        """The optional fields this object leaves out of its JSON."""
        return ()

    @model_serializer(mode="wrap")
    def _as_har(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> JSONObject:
        data: JSONObject = handler(self)
        fields = type(self).model_fields
        for name in self._absent():
            data.pop((info.by_alias and fields[name].alias) or name, None)
        # Unknown fields first, as HAR writers put them; the spec's fields in spec order after.
        extra = self.__pydantic_extra__ or {}
        return {
            **{key: data[key] for key in extra if key in data},
            **{key: value for key, value in data.items() if key not in extra},
        }

    def to_dict(self) -> JSONObject:
        """This object as HAR 1.2 JSON (unknown fields it was read with included).

        Raises:
            HarFormatError: a body whose size must be computed is not valid base64.
        """
        return dump(self)


class Header(HarModel):
    """A ``{name, value}`` pair: a header, a query parameter or a form field.

    ``Header("Accept", "*/*")``: the two may be given by position.
    """

    model_config = ConfigDict(extra="ignore")

    name: str
    value: str

    def __init__(self, name: str, value: str, **data: Any) -> None:
        # By position as well as by name: BaseModel itself takes keywords only.
        BaseModel.__init__(self, name=name, value=value, **data)


def header_value(headers: Iterable[Header], name: str) -> str | None:
    """The value of the first header called ``name`` (case-insensitive), or None."""
    wanted = name.lower()
    for header in headers:
        if header.name.lower() == wanted:
            return header.value
    return None


def charset_of(content_type: str | None) -> str | None:
    """The ``charset=`` of a Content-Type, if Python knows that codec; else None."""
    if not content_type:
        return None
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.strip().lower() == "charset":
            name = value.strip().strip("\"'")
            try:
                return codecs.lookup(name).name
            except LookupError:
                return None
    return None


def dump(model: BaseModel) -> JSONObject:
    """``model`` as HAR JSON (its JSON names).

    Raises:
        HarFormatError: a body whose size must be computed is not valid base64.
    """
    try:
        return model.model_dump(by_alias=True)
    except PydanticSerializationError as exc:
        # pydantic wraps what a serializer raises (Content.body's HarFormatError): unwrap it.
        raise HarFormatError(str(exc).rpartition("HarFormatError: ")[2]) from None


def har_error(exc: ValidationError, *, entry: int | None = None) -> HarFormatError:
    """The first problem of ``exc`` as ego words it: ``log.entries[3]: request.url is missing``.

    Args:
        exc: what pydantic found.
        entry: the index of the entry ``exc`` is about, when one entry was checked alone.
    """
    error = exc.errors()[0]
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, HarTooLargeError):
        return cause  # a bound a body file went over: the error of its own type
    loc = list(error["loc"])
    where = "log"
    if entry is not None:
        where = f"log.entries[{entry}]"
    elif len(loc) >= 2 and loc[0] == "entries" and isinstance(loc[1], int):
        where, loc = f"log.entries[{loc[1]}]", loc[2:]
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    if error["type"] == _UNUSABLE:
        return HarFormatError(f"{where}: {error['msg']}")
    if error["type"] == "model_type":
        return HarFormatError(f"{where}{field} is not an object")
    if error["type"] == "missing":
        return HarFormatError(f"{where}: {field.lstrip('.')} is missing")
    return HarFormatError(f"{where}{field}: {error['msg']}")
