"""The content-addressed blob store."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from devices.blobs import BlobNotFound, BlobStore


def test_put_get_by_sha256_and_idempotent(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    data = b"\x89PNG fake"
    ref = store.put(data, media_type="image/png")
    assert ref.sha256 == hashlib.sha256(data).hexdigest()
    assert (ref.size, ref.media_type) == (len(data), "image/png")
    assert store.get(ref.sha256) == data and ref.sha256 in store
    assert store.put(data) .sha256 == ref.sha256
    assert len([p for p in tmp_path.rglob("*") if p.is_file()]) == 1


def test_missing_blob_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BlobNotFound, match="not in the store"):
        BlobStore(tmp_path).get("0" * 64)
