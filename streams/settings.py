"""Connection and local-broker settings shared by every streams module."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings

from schemas.settings import load_settings, settings_config

__all__ = ["DEFAULT_BROKER_PORT", "DEFAULT_MAX_MESSAGE_BYTES", "BusSettings", "load_bus_settings"]

#: Off the Kafka default 9092 so a developer's own Kafka on 9092 does not collide with ours.
DEFAULT_BROKER_PORT = 19092

#: 1 MiB is Kafka's default `message.max.bytes`; big payloads go to the blob store, so an
#: event larger than this is a bug upstream and is dead-lettered rather than produced.
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024


class BusSettings(BaseSettings):
    """Where the Kafka bus is, and how the local broker is run when none is configured."""

    model_config = settings_config("FLYWHEEL_", populate_by_name=True)

    bootstrap_servers: str | None = Field(
        default=None,
        validation_alias=AliasChoices("KAFKA_BOOTSTRAP_SERVERS", "bootstrap_servers"),
        description="Kafka bootstrap servers 'host:port[,host:port]'; unset means start and "
                    "use the local broker (env KAFKA_BOOTSTRAP_SERVERS).",
    )
    data_dir: Path = Field(
        default=Path("var"),
        description="Folder for local state: broker.log, broker.json, archive (env "
                    "FLYWHEEL_DATA_DIR).",
    )
    broker_port: int = Field(
        default=DEFAULT_BROKER_PORT, ge=1, le=65535,
        description="Loopback port the local broker listens on (env FLYWHEEL_BROKER_PORT).",
    )
    max_message_bytes: int = Field(
        default=DEFAULT_MAX_MESSAGE_BYTES, ge=1024,
        description="Largest encoded event accepted by producers and consumers, in bytes "
                    "(env FLYWHEEL_MAX_MESSAGE_BYTES).",
    )

    @field_validator("bootstrap_servers")
    @classmethod
    def _host_port_list(cls, value: str | None) -> str | None:
        """Each comma-separated server must be `host:port` (credentials masked in the error)."""
        if value is None or not value.strip():
            return value
        for server in value.split(","):
            host, sep, port = server.strip().rpartition(":")
            if not sep or not host or ":" in host.strip("[]") and not host.startswith("[") \
                    or not port.isdigit() or not 1 <= int(port) <= 65535 or "@" in host:
                raise ValueError("must be a comma-separated list of host:port with a port "
                                 "from 1 to 65535 (no credentials: use the client settings)")
        return value

    def bootstrap_or_none(self) -> str | None:
        """The configured bootstrap servers, with blanks treated as unset."""
        value = (self.bootstrap_servers or "").strip()
        return value or None


def load_bus_settings(**overrides: object) -> BusSettings:
    """BusSettings from the environment; a bad value raises SettingsError in one sentence."""
    return load_settings(BusSettings, "bus", **overrides)
