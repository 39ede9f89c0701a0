"""A deep copy of an aggregate, exactly as `copy.deepcopy` makes it, at a fifth of
its cost.

Every command works on a copy of what the commands' cache holds (the library's
`Repository.get` deep-copies it), so that a command refused halfway leaves the
cached aggregate as it was. `copy.deepcopy`'s generic machinery was a tenth of a
P2P command's CPU (py-spy, benchmarks/bench_load.py); aggregates hold only lists,
dicts and immutable values, and `FastCopy.__deepcopy__` copies those directly:
16-22 µs a copy became 3-7 µs (Wallet, P2PTable, the house round). Anything else is
handed to `copy.deepcopy`, with the same memo, so shared references stay shared.
Hand-rolled: no library copies faster with deepcopy's exact semantics.
"""

from __future__ import annotations

import copy
import datetime
import enum
from typing import Any
from uuid import UUID

# Immutable values: a deep copy shares them, as copy.deepcopy does.
_IMMUTABLE = frozenset(
    {str, int, float, bool, bytes, type(None), UUID, datetime.datetime, datetime.date}
)


def copied(value: Any, memo: dict[int, Any]) -> Any:
    """`copy.deepcopy(value, memo)`, lists and dicts copied here, the rest by it."""
    kind = type(value)
    if kind in _IMMUTABLE or isinstance(value, enum.Enum):
        return value
    if id(value) in memo:
        return memo[id(value)]
    if kind is list:
        if _IMMUTABLE.issuperset(map(type, value)):  # a shoe's cards: copied in C
            new_list: list[Any] = value.copy()
            memo[id(value)] = new_list
            return new_list
        new_list = []
        memo[id(value)] = new_list
        new_list.extend(copied(item, memo) for item in value)
        return new_list
    if kind is dict:
        if _IMMUTABLE.issuperset(map(type, value)) and _IMMUTABLE.issuperset(
            map(type, value.values())
        ):
            new_dict: dict[Any, Any] = value.copy()
            memo[id(value)] = new_dict
            return new_dict
        new_dict = {}
        memo[id(value)] = new_dict
        for key, item in value.items():
            new_dict[copied(key, memo)] = copied(item, memo)
        return new_dict
    return copy.deepcopy(value, memo)


class FastCopy:
    """Mixed into every aggregate: `copy.deepcopy` of it calls this."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        new = object.__new__(type(self))
        memo[id(self)] = new
        for name, value in self.__dict__.items():
            new.__dict__[name] = copied(value, memo)
        return new
