"""``NamedTuple`` as type checkers read it, made at run time without typing's work per field.

``typing.NamedTuple`` checks each field's annotation, and under ``from __future__ import annotations``
each is a string that it compiles into a ``ForwardRef``: about 8 µs a field, and fa-lint's records have
hundreds of fields, defined again at every start (3-7 ms of a run, ``benchmarks/bench.py``). No
library makes the class without that check, so this module does what ``typing.NamedTupleMeta`` does
with the class body, bar the check: ``collections.namedtuple`` with the fields and defaults in their
order, then the body's methods, docstring and constants; the annotations are kept as written. Type
checkers see ``typing.NamedTuple`` itself, so every record is checked as one.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import NamedTuple
else:
    # what typing leaves to the namedtuple (``_special``), and what it refuses to overwrite
    _KEPT = frozenset({"__module__", "__name__", "__annotations__"})
    _PROHIBITED = frozenset(
        {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults", "_make"}
        | {"_replace", "_asdict", "_source"}
    )

    class _Meta(type):
        def __new__(cls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> type:
            annotations: dict[str, Any] = ns.get("__annotations__", {})
            defaults = []
            for field in annotations:
                if field in ns:
                    defaults.append(ns[field])
                elif defaults:
                    raise TypeError(f"non-default field {field} of {name} follows a field with a default")
            record = collections.namedtuple(
                name, list(annotations), defaults=defaults, module=ns["__module__"]
            )
            record.__annotations__ = annotations
            for key, value in ns.items():
                if key in _PROHIBITED:
                    raise AttributeError(f"cannot overwrite NamedTuple attribute {key}")
                if key not in _KEPT and key not in annotations:
                    setattr(record, key, value)
            return record

    NamedTuple = type.__new__(_Meta, "NamedTuple", (), {})

__all__ = ["NamedTuple"]
