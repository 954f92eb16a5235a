"""Row builders the memory, skills and sub-agent templates share (the tool family lives in tool_people,
tool_money and tool_life)."""

from __future__ import annotations

import random
from typing import Any

from devices.suite.templates._kit import (
    email_of,
)

__all__ = ["contact_row", "photo_name", "photo_row", "place_row", "product_row"]


def contact_row(person: str, phone: str, row_id: str = "ct_task1", **extra: Any) -> dict[str, Any]:
    return {"id": row_id, "name": person, "phone": phone, "email": email_of(person),
            "company": "", "starred": False, **extra}


def place_row(place: str, row_id: str = "pl_task1", address: str = "9 Wren Lane",
              rating: float = 4.4) -> dict[str, Any]:
    return {"id": row_id, "name": place, "category": "place", "address": address,
            "rating": rating}


def product_row(product: str, row_id: str = "pr_task1", price: float = 19.5) -> dict[str, Any]:
    return {"id": row_id, "name": product, "category": "misc", "price": price, "stock": 50}


def photo_row(name: str, album: str = "Camera", row_id: str = "f_task1") -> dict[str, Any]:
    return {"id": row_id, "path": f"/sdcard/{album}/{name}", "name": name, "kind": "photo",
            "album": album, "tags": [], "size_kb": 2100, "created_at": "2025-12-30T10:00"}


def photo_name(rng: random.Random) -> str:
    return f"IMG_{rng.randint(2000, 9999)}.jpg"
