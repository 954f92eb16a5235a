"""Persistent maps and sets for the services' pure folds: a new version in O(1), old ones intact.

A service's `evolve(state, event)` returns a new state and leaves the old one as it was (the
curator's `decide` compares the two). With plain dicts that meant copying every map on every
event: O(n) per event, O(n²) over a run and over every restart's replay. `PMap.set` instead
changes one shared dict in place and leaves the previous version a one-entry *diff* pointing at
the new one (Baker's rerooting). Reading the newest version is a dict lookup; reading an older
one first moves the dict back to it, undoing the diffs on the way (as many steps as versions
between them: one or two in a fold, where the previous state is read once, then dropped).

Reads move the shared dict, so the versions of one map are used from one thread at a time (the
services fold under their runner's lock). A fold that fails half way leaves nothing to undo: its
new versions are dropped and the state before it reads as it was.

Iteration follows the shared dict's insertion order. A key deleted in a later version and read
again through an earlier one comes back at the end, so a map whose order matters (the curator's
admissions) is only ever added to.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

__all__ = ["PMap", "PSet"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_ABSENT: Any = object()


class _Node:
    """A version's place: the shared dict itself (`data`), or a diff — this version is `next`'s
    with `key` holding `value` (absent: `_ABSENT`)."""

    __slots__ = ("data", "key", "next", "value")

    def __init__(self, data: dict[Any, Any]) -> None:
        self.data: dict[Any, Any] | None = data
        self.key: Any = None
        self.value: Any = None
        self.next: _Node | None = None


def _reroot(node: _Node) -> dict[Any, Any]:
    """Makes `node` hold the shared dict (reversing every diff between it and the dict) and
    returns the dict. Iterative: a long chain of old versions cannot exhaust the stack."""
    path = []
    while node.data is None:
        path.append(node)
        node = node.next  # type: ignore[assignment]
    data = node.data
    for diff in reversed(path):  # from the one next to the dict back to the version asked for
        old = data.get(diff.key, _ABSENT)
        if diff.value is _ABSENT:
            data.pop(diff.key, None)
        else:
            data[diff.key] = diff.value
        node.data, node.key, node.value, node.next = None, diff.key, old, diff
        diff.data, diff.key, diff.value, diff.next = data, None, None, None
        node = diff
    return data


class PMap(Mapping[K, V], Generic[K, V]):
    """An immutable mapping whose `set`, `delete` and `update` return new versions in O(1) per
    key (see the module's docstring); reads are a dict's, for the newest version."""

    __slots__ = ("_node",)

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        self._node = _Node(dict(items))

    @classmethod
    def _at(cls, node: _Node) -> PMap[K, V]:
        version = cls.__new__(cls)
        version._node = node
        return version

    def _data(self) -> dict[K, V]:
        node = self._node
        return node.data if node.data is not None else _reroot(node)

    def __getitem__(self, key: K) -> V:
        return self._data()[key]

    def get(self, key: K, default: Any = None) -> Any:
        return self._data().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._data()

    def __iter__(self) -> Iterator[K]:
        return iter(list(self._data()))  # a snapshot: reading another version moves the dict

    def __len__(self) -> int:
        return len(self._data())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data()!r})"

    def items(self) -> Any:
        return list(self._data().items())

    def values(self) -> Any:
        return list(self._data().values())

    def _with(self, key: K, value: Any) -> PMap[K, V]:
        data = self._data()
        old = data.get(key, _ABSENT)
        if old is value:
            return self
        if value is _ABSENT:
            del data[key]
        else:
            data[key] = value
        new = _Node(data)
        node = self._node
        node.data, node.key, node.value, node.next = None, key, old, new
        return self._at(new)

    def set(self, key: K, value: V) -> PMap[K, V]:
        """This map with `key` set to `value`."""
        return self._with(key, value)

    def delete(self, key: K) -> PMap[K, V]:
        """This map without `key` (itself when the key is absent)."""
        return self._with(key, _ABSENT) if key in self else self

    def changed_since(self, older: PMap[K, V]) -> list[K]:
        """The keys whose values may differ in `older`, in the order they were changed (each
        once): the diffs between the two versions, so O(changes), not O(size)."""
        self._data()  # `older`'s diffs now lead here
        keys: dict[K, None] = {}
        node = older._node
        while node.data is None:
            keys[node.key] = None
            node = node.next  # type: ignore[assignment]
        return list(keys)

    def update(self, changes: Mapping[K, V] | Iterable[tuple[K, V]]) -> PMap[K, V]:
        """This map with every pair of `changes` set, in order."""
        version = self
        for key, value in (changes.items() if isinstance(changes, Mapping) else changes):
            version = version._with(key, value)
        return version


class PSet(Generic[K]):
    """An immutable set on a `PMap`: `add` returns a new version in O(1)."""

    __slots__ = ("_map",)

    def __init__(self, items: Iterable[K] = ()) -> None:
        self._map: PMap[K, None] = PMap((item, None) for item in items)

    @classmethod
    def _of(cls, mapping: PMap[K, None]) -> PSet[K]:
        version = cls.__new__(cls)
        version._map = mapping
        return version

    def add(self, item: K) -> PSet[K]:
        """This set with `item`."""
        return self if item in self._map else self._of(self._map.set(item, None))

    def discard(self, item: K) -> PSet[K]:
        """This set without `item`."""
        return self._of(self._map.delete(item))

    def __or__(self, other: Iterable[K]) -> PSet[K]:
        version = self
        for item in other:
            version = version.add(item)
        return version

    def __contains__(self, item: object) -> bool:
        return item in self._map

    def __iter__(self) -> Iterator[K]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PSet):
            return set(self) == set(other)
        if isinstance(other, set | frozenset):
            return set(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PSet({set(self)!r})"
