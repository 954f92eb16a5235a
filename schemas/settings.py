"""Loads a pydantic-settings class, turning a bad value into one sentence that names its variable."""

from __future__ import annotations

from typing import TypeVar

from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["SettingsError", "load_settings", "settings_config"]

S = TypeVar("S", bound=BaseSettings)


def settings_config(env_prefix: str, *, extra: str = "ignore", **options: object) -> SettingsConfigDict:
    """The config every settings class shares: its variables' prefix, frozen once loaded, and no
    infinite or NaN number (`1e400` would otherwise read as infinity for an unbounded float)."""
    return SettingsConfigDict(env_prefix=env_prefix, frozen=True, extra=extra,  # type: ignore[typeddict-item]
                              allow_inf_nan=False, **options)  # type: ignore[typeddict-item]


class SettingsError(ValueError):
    """A setting from the environment (or an override) is invalid; `variable` names it."""

    def __init__(self, message: str, variable: str) -> None:
        super().__init__(message)
        self.variable = variable


def load_settings(cls: type[S], what: str, **overrides: object) -> S:
    """`cls` from the environment plus `overrides`; a bad value raises SettingsError saying
    which field and which environment variable, e.g. `bad archiver setting 'flush_interval_s'
    (env FLYWHEEL_ARCHIVER_FLUSH_INTERVAL_S): ...`."""
    try:
        return cls(**overrides)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "settings"
        top = str(first["loc"][0]) if first["loc"] else ""
        alias = getattr(cls.model_fields[top], "validation_alias", None) \
            if top in cls.model_fields else None
        choices = [c for c in getattr(alias, "choices", ()) if isinstance(c, str)]
        if choices:  # e.g. KAFKA_BOOTSTRAP_SERVERS: name the variable people set
            variable = choices[0].upper()
        elif top in cls.model_fields:
            variable = f"{cls.model_config.get('env_prefix', '')}{field}".upper()
        else:  # the location is a validation alias such as KAFKA_BOOTSTRAP_SERVERS
            variable = top
        raise SettingsError(f"bad {what} setting '{field}' (env {variable}): {first['msg']}; "
                            "fix the variable or the option", variable) from None
