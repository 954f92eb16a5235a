"""Hypothesis strategies that build valid instances of any contract model from its field types."""

from __future__ import annotations

import types
import typing
from datetime import UTC, datetime
from typing import Any, Literal, Union

import hypothesis.strategies as st
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

__all__ = ["json_values", "model_strategy"]

# JSON leaves that survive a JSON round trip unchanged (no NaN/inf, bounded floats).
_json_leaves = (
    st.none() | st.booleans() | st.integers(-(2**53), 2**53)
    | st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False) | st.text(max_size=12)
)
json_values = st.recursive(
    _json_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def _bounds(metadata: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in metadata:
        for attr in ("ge", "gt", "le", "lt", "min_length", "max_length", "pattern"):
            value = getattr(item, attr, None)
            if value is not None:
                out[attr] = value
    return out


def _for_type(tp: Any, metadata: list[Any]) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(tp)
    bounds = _bounds(metadata)
    if tp is Any or getattr(tp, "__name__", "") == "JsonValue" or "JsonValue" in repr(tp):
        return json_values
    if origin is typing.Annotated:
        base, *extra = typing.get_args(tp)
        if any(getattr(e, "discriminator", None) for e in extra):
            return st.one_of(*[_for_type(arm, []) for arm in typing.get_args(base)])
        return _for_type(base, list(extra) + metadata)
    if origin is Literal:
        return st.sampled_from(typing.get_args(tp))
    if origin in (Union, types.UnionType):
        return st.one_of(*[_for_type(arm, metadata) for arm in typing.get_args(tp)])
    if origin is list:
        (item,) = typing.get_args(tp)
        return st.lists(_for_type(item, []), min_size=bounds.get("min_length", 0),
                        max_size=max(3, bounds.get("min_length", 0)))
    if origin is dict:
        _, value = typing.get_args(tp)
        return st.dictionaries(st.text(min_size=1, max_size=8), _for_type(value, []), max_size=3)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return model_strategy(tp)
    if tp is type(None):
        return st.none()
    if tp is bool:
        return st.booleans()
    if tp is int:
        lo = bounds.get("ge", bounds["gt"] + 1 if "gt" in bounds else -(2**31))
        return st.integers(lo, bounds.get("le", 2**31))
    if tp is float:
        lo = bounds.get("ge", bounds.get("gt", -1e6))
        hi = bounds.get("le", bounds.get("lt", 1e6))
        return st.floats(lo, hi, allow_nan=False, allow_infinity=False,
                         exclude_min="gt" in bounds, exclude_max="lt" in bounds)
    if tp is str:
        if "pattern" in bounds:
            return st.from_regex(bounds["pattern"], fullmatch=True)
        return st.text(min_size=bounds.get("min_length", 0), max_size=bounds.get("max_length", 16))
    if tp is datetime:
        return st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1),
                            timezones=st.just(UTC))
    raise NotImplementedError(f"no strategy for {tp!r}")


def _field_strategy(info: FieldInfo) -> st.SearchStrategy[Any]:
    return _for_type(info.annotation, list(info.metadata))


def model_strategy(model: type[BaseModel]) -> st.SearchStrategy[BaseModel]:
    """Valid instances of `model`; combinations its validators reject are filtered out."""

    @st.composite
    def build(draw: st.DrawFn) -> BaseModel:
        data = {}
        for name, info in model.model_fields.items():
            if info.annotation is not None and typing.get_origin(info.annotation) is Literal \
                    and len(typing.get_args(info.annotation)) == 1:
                continue  # the discriminator: leave its default
            if not info.is_required() and draw(st.booleans()):
                continue  # exercise defaults too
            data[name] = draw(_field_strategy(info))
        try:
            return model.model_validate(data)
        except ValidationError:
            from hypothesis import assume
            assume(False)
            raise  # unreachable

    return build()
