"""``NamedTuple`` as type checkers read it, made at run time without typing's work per field.

``typing.NamedTuple`` checks each field's annotation, and under ``from __future__ import annotations``
each is a string that it compiles into a ``ForwardRef``: about 8 µs a field, and fa-lint's records have
hundreds of fields, defined again at every start (3-7 ms of a run, ``benchmarks/bench.py``). No
library makes the class without that check, so this module does what ``typing.NamedTupleMeta`` does
with the class body, bar the check: the class ``collections.namedtuple`` would make from the fields
and defaults in their order, then the body's methods, docstring and constants; the annotations are
kept as written. Type checkers see ``typing.NamedTuple`` itself, so every record is checked as one.

That class is made here rather than by ``collections.namedtuple``, which compiles each class's
``__new__`` from source (about 100 µs) and builds closures and docstrings besides: about 190 µs a
class, some 41 million instructions for the 64 record classes a run defines. Here ``__new__`` is
compiled once per number of fields (22 different counts) and renamed for each class
(``CodeType.replace``), and the methods read the class's ``_fields``: the same class, attribute for
attribute (``tests/test_records.py`` compares it with typing's), for 16 million instructions fewer
at every start (callgrind).

One way for records (issue 45): a record is a ``NamedTuple`` made here; a class that caches or changes
(``Environment``, the knowledge bases) is a plain class with ``__slots__``; ``dataclasses`` only where a
check's start never imports them (``verify``, ``--statistics``, ``--fix``'s outcome, ``--new-from-rev``,
and tox's command builder, which changes as it reads a ``tox.ini``). Measured by
``benchmarks/records.py``, which imports the 143 modules a check of ``tests/golden/every-rule`` loads
with the records made each way (Python 3.11.7, Dec 2 2026): in instructions (callgrind, one run each),
this module 1,823 million, ``typing.NamedTuple`` 1,915 million (+5.0%), ``@dataclass(frozen=True,
slots=True)`` 2,281 million (+25.1%) over the whole process; in CPU time (median of 21, a shared
machine) 399 ms, 397 ms and 485 ms (+21%): dataclasses cost a fifth of every start, and typing's
check is a twentieth of it that CPU time on a loaded machine cannot tell apart from noise. So the
records stay NamedTuples made here, and none was rewritten.
"""

from __future__ import annotations

import functools
import operator
import types
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
            record = _namedtuple(name, tuple(annotations), tuple(defaults), ns["__module__"])
            record.__annotations__ = annotations
            for key, value in ns.items():
                if key in _PROHIBITED:
                    raise AttributeError(f"cannot overwrite NamedTuple attribute {key}")
                if key not in _KEPT and key not in annotations:
                    setattr(record, key, value)
            return record

    NamedTuple = type.__new__(_Meta, "NamedTuple", (), {})

    try:  # the C descriptor collections.namedtuple gives each field; a property where there is none
        from collections import _tuplegetter  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - CPython has it

        def _tuplegetter(index: int, doc: str) -> Any:
            return property(operator.itemgetter(index), doc=doc)

    @functools.cache
    def _new_code(size: int) -> types.CodeType:
        """``__new__`` for records of ``size`` fields, as collections.namedtuple compiles it."""
        names = [f"_{i}" for i in range(size)]
        head = "".join(f", {n}" for n in names)
        items = "".join(f"{n}, " for n in names)
        source = f"lambda _cls{head}: _tuple_new(_cls, ({items}))"
        made: types.FunctionType = eval(source, {"_tuple_new": tuple.__new__})
        return made.__code__

    @classmethod  # type: ignore[misc]
    def _make(cls: type, iterable: Any) -> Any:
        result = tuple.__new__(cls, iterable)
        if len(result) != len(cls._fields):  # type: ignore[attr-defined]
            raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")  # type: ignore[attr-defined]
        return result

    def _replace(self: Any, /, **kwds: Any) -> Any:
        result = self._make(map(kwds.pop, self._fields, self))
        if kwds:
            raise ValueError(f"Got unexpected field names: {list(kwds)!r}")
        return result

    def __repr__(self: Any) -> str:
        pairs = ", ".join(f"{n}={v!r}" for n, v in zip(self._fields, self, strict=True))
        return f"{type(self).__name__}({pairs})"

    def _asdict(self: Any) -> dict[str, Any]:
        return dict(zip(self._fields, self, strict=True))

    def __getnewargs__(self: Any) -> tuple[Any, ...]:
        return tuple(self)

    def _namedtuple(name: str, fields: tuple[str, ...], defaults: tuple[Any, ...], module: str) -> type:
        """What ``collections.namedtuple(name, fields, defaults=defaults, module=module)`` returns."""
        code = _new_code(len(fields))
        if fields:
            code = code.replace(co_varnames=("_cls", *fields, *code.co_varnames[len(fields) + 1 :]))
        new = types.FunctionType(code, {"_tuple_new": tuple.__new__}, "__new__", defaults or None)
        new.__qualname__ = f"{name}.__new__"
        new.__doc__ = f"Create new instance of {name}({', '.join(fields)})"
        ns: dict[str, Any] = {
            "__doc__": f"{name}({', '.join(fields)})",
            "__slots__": (),
            "_fields": fields,
            "_field_defaults": dict(zip(fields[len(fields) - len(defaults) :], defaults, strict=True)),
            "__new__": new,
            "_make": _make,
            "_replace": _replace,
            "__repr__": __repr__,
            "_asdict": _asdict,
            "__getnewargs__": __getnewargs__,
            "__match_args__": fields,
            "__class_getitem__": classmethod(types.GenericAlias),
            "__module__": module,
        }
        for index, field in enumerate(fields):
            ns[field] = _tuplegetter(index, f"Alias for field number {index}")
        return type(name, (tuple,), ns)


__all__ = ["NamedTuple"]
