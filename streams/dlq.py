"""Dead-letter routing: records that failed go to `<topic>.dlq` with error and source headers;
too large ones as a reference to the blob store; ones that cannot be sent to local quarantine."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kafka import KafkaConsumer, TopicPartition
from kafka.producer.future import FutureRecordMetadata

from schemas.topics import DLQ_SUFFIX, dlq_name
from streams.codec import header_value
from streams.lifecycle import Closing
from streams.producer import TypedProducer
from streams.redact import redact
from streams.settings import DEFAULT_MAX_MESSAGE_BYTES, BusSettings

__all__ = [
    "DLQ_HEADERS",
    "OVERSIZE_HEADERS",
    "SOURCE_HEADER_PREFIX",
    "DeadLetter",
    "DeadLetterRouter",
    "error_sentence",
    "quarantined",
    "read_dead_letters",
    "safe_preview",
]

logger = logging.getLogger(__name__)

#: Headers every dead letter carries, in this order.
DLQ_HEADERS = ("error", "error_type", "source_topic", "source_partition", "source_offset",
               "failed_at")
#: Headers a dead letter carries instead of the bytes when the record is too large to send
#: whole: its size, its sha256, where the bytes are, and a bounded redacted preview.
OVERSIZE_HEADERS = ("value_size", "value_sha256", "value_blob", "value_preview")
#: The source record's own headers are kept under this prefix (so a source header called
#: `error` cannot pose as ours), values redacted.
SOURCE_HEADER_PREFIX = "source_header."
#: Longest error header kept: one sentence, not a dump of the payload.
MAX_ERROR_CHARS = 500
#: Room for the dead letter's own headers and the record overhead under the producer's limit.
HEADROOM_BYTES = 16 * 1024
#: Source headers kept, in bytes; more is an attack or a bug, and the rest is dropped (said in
#: a `source_headers_truncated` header).
MAX_SOURCE_HEADER_BYTES = 8 * 1024
#: Characters of an oversize record's preview header.
OVERSIZE_PREVIEW_CHARS = 200
#: A key longer than this is cut (keys are ids; a huge one is part of the bad record).
MAX_KEY_BYTES = 1024
#: How long flush() waits for the broker to acknowledge dead letters before quarantining them.
DLQ_FLUSH_TIMEOUT_S = 15.0
#: read_dead_letters stops after this long without a new record; Tansu's end offsets are
#: unreliable (DESIGN.md), so "nothing more arrived for a while" is how we know we are done.
READ_IDLE_MS = 1500
#: One poll's wait; short so the idle timer above is checked often.
READ_POLL_MS = 250
#: Folders under the data dir: content-addressed bytes (the layout of devices.blobs.BlobStore)
#: and records that could not be dead-lettered at all.
BLOB_FOLDER = "blobs"
QUARANTINE_FOLDER = "quarantine"


def error_sentence(error: BaseException) -> str:
    """The error as one redacted line of at most MAX_ERROR_CHARS characters."""
    text = redact(" ".join(str(error).split())) or type(error).__name__
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def safe_preview(value: bytes | None, limit: int = 200) -> str:
    """Printable, redacted text for a terminal: token-like strings masked, escapes for control
    and non-UTF-8 bytes, then truncated with a marker saying how much was left out."""
    if value is None:
        return "<no value>"
    # Redact a bounded window only: a preview never needs more, and a huge value costs nothing.
    text = redact(value[: limit * 4 + 256].decode("utf-8", "backslashreplace"))
    out: list[str] = []
    for char in text:
        if char == "\\" or char.isprintable():
            out.append(char)
        elif char in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        else:
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    preview = "".join(out)
    if len(preview) > limit:
        return preview[:limit] + f"… [{len(value)} bytes in all]"
    return preview


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _store_blob(root: Path, data: bytes) -> tuple[str, Path]:
    """Stores `data` under root/ab/abcd… (idempotent); returns its sha256 and path."""
    digest = hashlib.sha256(data).hexdigest()
    path = root / digest[:2] / digest
    if not path.exists():
        _write_atomic(path, data)
    return digest, path


def _kept_headers(headers: Any) -> list[tuple[str, bytes]]:
    """The source record's headers under SOURCE_HEADER_PREFIX, text values redacted, capped."""
    kept: list[tuple[str, bytes]] = []
    size = 0
    for name, value in headers or ():
        raw = bytes(value) if value is not None else b""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            cleaned = raw  # binary: nothing a token pattern could match as text
        else:
            cleaned = redact(text, cap_quoted=False).encode()
        key = SOURCE_HEADER_PREFIX + redact(str(name), cap_quoted=False)[:200]
        size += len(key) + len(cleaned)
        if size > MAX_SOURCE_HEADER_BYTES:
            kept.append(("source_headers_truncated", b"true"))
            break
        kept.append((key, cleaned))
    return kept


@dataclass(frozen=True)
class DeadLetter:
    """One message read back from a dead-letter topic."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    error: str
    error_type: str
    source_topic: str
    source_partition: int | None
    source_offset: int | None
    failed_at: str
    timestamp_ms: int
    headers: tuple[tuple[str, bytes], ...] = ()

    @property
    def source_headers(self) -> dict[str, bytes]:
        """The source record's headers as the dead letter kept them."""
        n = len(SOURCE_HEADER_PREFIX)
        return {k[n:]: v for k, v in self.headers if k.startswith(SOURCE_HEADER_PREFIX)}

    @property
    def consumer(self) -> str | None:
        """The consumer group that dead-lettered the record (None if not said)."""
        return header_value(self.headers, "consumer")

    @property
    def value_sha256(self) -> str | None:
        """For a record too large to dead-letter whole: the sha256 of its bytes (in the blob
        store); else None."""
        return header_value(self.headers, "value_sha256")


@dataclass(frozen=True)
class _Sent:
    future: FutureRecordMetadata
    dlq: str
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes]]


class DeadLetterRouter(Closing):
    """Produces failed records to their topic's dead-letter topic: the bytes untouched when they
    fit, else a reference to the blob store; a record the broker will not take is quarantined
    under <data_dir>/quarantine and counted, never raised (a consumer must be able to move on)."""

    def __init__(self, producer: TypedProducer | str, client_id: str = "flywheel-dlq", *,
                 data_dir: Path | str | None = None,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        if isinstance(producer, TypedProducer):
            self._producer, self._owned = producer, False
            max_message_bytes = producer.max_message_bytes
        else:
            self._producer, self._owned = TypedProducer(
                producer, client_id=client_id, max_message_bytes=max_message_bytes), True
        self.data_dir = Path(data_dir) if data_dir is not None else _default_data_dir()
        #: Largest dead letter (value + key + headers) sent whole.
        self.max_record_bytes = max(1024, max_message_bytes - HEADROOM_BYTES)
        self._sent: list[_Sent] = []
        self.routed = 0
        self.oversize = 0
        self.quarantined = 0

    @property
    def blob_dir(self) -> Path:
        return self.data_dir / BLOB_FOLDER

    @property
    def quarantine_dir(self) -> Path:
        return self.data_dir / QUARANTINE_FOLDER

    def route(self, source_topic: str, partition: int, offset: int, key: bytes | None,
              value: bytes | None, error: BaseException, headers: Any = (),
              consumer: str | None = None) -> None:
        """Sends the record to `<source_topic>.dlq` with headers naming the error, the source
        topic/partition/offset, the consumer (group) that failed on it, and the source's own
        headers. Never raises: what cannot be sent is quarantined (see flush())."""
        sentence = error_sentence(error)
        letter_headers = [
            ("error", sentence.encode()),
            ("error_type", type(error).__name__.encode()),
            ("source_topic", source_topic.encode()),
            ("source_partition", str(partition).encode()),
            ("source_offset", str(offset).encode()),
            ("failed_at", datetime.now(UTC).isoformat().encode()),
            *([("consumer", consumer.encode())] if consumer else []),
            *_kept_headers(headers),
        ]
        dlq = dlq_name(source_topic)
        self.routed += 1
        logger.warning("dead-lettered %s[%s]@%s: %s", source_topic, partition, offset, sentence)
        try:
            key = key[:MAX_KEY_BYTES] if key is not None else None
            size = len(value or b"") + len(key or b"") + sum(
                len(k) + len(v) for k, v in letter_headers)
            if value is not None and size > self.max_record_bytes:
                value, letter_headers = self._stash(value, letter_headers)
            future = self._producer.send_raw(dlq, value, key=key, headers=letter_headers)
        except Exception as failure:  # noqa: BLE001 - whatever the client says, move on
            self._quarantine(dlq, key, value, letter_headers, failure)
            return
        self._sent.append(_Sent(future, dlq, key, value, letter_headers))

    def _stash(self, value: bytes, headers: list[tuple[str, bytes]]
               ) -> tuple[bytes, list[tuple[str, bytes]]]:
        """The bytes into the blob store; the dead letter carries size, sha256, path, preview."""
        self.oversize += 1
        digest, path = _store_blob(self.blob_dir, value)
        extra = [("value_size", str(len(value)).encode()), ("value_sha256", digest.encode()),
                 ("value_blob", str(path).encode()),
                 ("value_preview", safe_preview(value, OVERSIZE_PREVIEW_CHARS).encode())]
        logger.warning("the failed record (%d bytes) is too large to dead-letter whole; its "
                       "bytes are in the blob store as %s", len(value), digest)
        return b"", headers + extra

    def _quarantine(self, dlq: str, key: bytes | None, value: bytes | None,
                    headers: list[tuple[str, bytes]], failure: BaseException) -> None:
        """Keeps a record the dead-letter topic would not take on local disk, loudly."""
        self.quarantined += 1
        names = dict(headers)
        stem = (f"{names.get('source_partition', b'?').decode()}-"
                f"{names.get('source_offset', b'?').decode()}")
        folder = self.quarantine_dir / dlq
        try:
            digest = _store_blob(self.blob_dir, value)[0] if value else None
            meta = {"dlq": dlq, "key": key.hex() if key is not None else None,
                    "value_sha256": digest, "value_size": len(value or b""),
                    "headers": {k: v.decode("utf-8", "replace") for k, v in headers},
                    "why": error_sentence(failure)}
            _write_atomic(folder / f"{stem}.json", json.dumps(meta, indent=1).encode())
            where = str(folder / f"{stem}.json")
        except OSError as disk:
            where = f"nowhere ({disk.strerror}); only this log line records it"
        logger.error("QUARANTINED a record of %s that could not be dead-lettered (%s): kept in "
                     "%s; the consumer moves past it", dlq, error_sentence(failure), where)

    def flush(self) -> None:
        """Waits until every routed record is acknowledged (call before committing offsets);
        any the broker refused or did not acknowledge in time is quarantined. Never raises."""
        if not self._sent:
            return
        sent, self._sent = self._sent, []
        try:
            self._producer.flush(DLQ_FLUSH_TIMEOUT_S)
        except Exception as failure:  # noqa: BLE001 - a timeout: the loop below sorts it out
            logger.warning("dead letters not acknowledged in %.0f s (%s)", DLQ_FLUSH_TIMEOUT_S,
                           error_sentence(failure))
        for item in sent:
            future = item.future
            if future.is_done and future.succeeded():
                continue
            failure = (future.exception if future.is_done and future.exception is not None
                       else TimeoutError("not acknowledged in time"))
            self._quarantine(item.dlq, item.key, item.value, item.headers, failure)

    def close(self) -> None:
        try:
            self.flush()
        finally:
            if self._owned:
                try:
                    self._producer.close(timeout_s=DLQ_FLUSH_TIMEOUT_S)
                except Exception as failure:  # noqa: BLE001 - closing must not crash a stop
                    logger.warning("the dead-letter producer did not close cleanly (%s)",
                                   error_sentence(failure))


def _default_data_dir() -> Path:
    try:
        return BusSettings().data_dir
    except ValueError:  # a bad FLYWHEEL_DATA_DIR is reported by whoever loads the settings
        return Path("var")


def quarantined(data_dir: Path | str) -> list[dict[str, Any]]:
    """What was quarantined under `data_dir` (each record's metadata), oldest first."""
    root = Path(data_dir) / QUARANTINE_FOLDER
    if not root.is_dir():
        return []
    files = sorted(root.rglob("*.json"), key=lambda p: p.stat().st_mtime)
    return [json.loads(p.read_text()) for p in files]


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _once_per_failure(letters: list[DeadLetter]) -> list[DeadLetter]:
    """The first dead letter of each failure: a consumer killed between sending a dead letter
    and committing past its record sends it again on restart; the source topic/partition/
    offset and the consumer identify the failure (letters that name no source all count)."""
    seen: set[tuple[object, ...]] = set()
    out = []
    for letter in letters:
        if letter.source_offset is not None:
            key = (letter.source_topic, letter.source_partition, letter.source_offset,
                   letter.consumer)
            if key in seen:
                continue
            seen.add(key)
        out.append(letter)
    return out


def read_dead_letters(bootstrap: str, topic_name: str, limit: int = 20, *,
                      idle_ms: int = READ_IDLE_MS) -> list[DeadLetter]:
    """The oldest `limit` dead letters of `topic_name` (a topic or its `.dlq`), read without a
    consumer group so reading changes nothing."""
    name = topic_name if topic_name.endswith(DLQ_SUFFIX) else dlq_name(topic_name)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             client_id="flywheel-dlq-reader", auto_offset_reset="earliest")
    try:
        partitions = consumer.partitions_for_topic(name) or set()
        if not partitions:
            return []
        assigned = [TopicPartition(name, p) for p in sorted(partitions)]
        consumer.assign(assigned)
        consumer.seek_to_beginning(*assigned)
        letters: list[DeadLetter] = []
        last_seen = time.monotonic()
        while len(letters) < limit and (time.monotonic() - last_seen) * 1000 < idle_ms:
            batch = consumer.poll(timeout_ms=READ_POLL_MS, max_records=limit - len(letters))
            for records in batch.values():
                last_seen = time.monotonic()
                for r in records:
                    headers = r.headers or []
                    letters.append(DeadLetter(
                        topic=r.topic, partition=r.partition, offset=r.offset, key=r.key,
                        value=r.value, error=header_value(headers, "error") or "",
                        error_type=header_value(headers, "error_type") or "",
                        source_topic=header_value(headers, "source_topic") or "",
                        source_partition=_int_or_none(header_value(headers, "source_partition")),
                        source_offset=_int_or_none(header_value(headers, "source_offset")),
                        failed_at=header_value(headers, "failed_at") or "",
                        timestamp_ms=r.timestamp, headers=tuple(headers),
                    ))
        letters.sort(key=lambda d: (d.partition, d.offset))
        return _once_per_failure(letters)[:limit]
    finally:
        consumer.close()
