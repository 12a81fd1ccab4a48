"""fa_lint._records.NamedTuple makes the class typing.NamedTuple makes, without its per-field check."""

from __future__ import annotations

import pickle
import typing

import pytest

from fa_lint import _records
from fa_lint.model import Finding, Location, Requirement


def _body(base: type) -> dict[str, type]:
    class Point(base):  # type: ignore[misc,valid-type]
        """A point."""

        x: int
        y: int = 0
        label: str = ""
        ORIGIN = "o"

        def norm(self) -> int:
            return abs(self.x) + abs(self.y)

        @property
        def named(self) -> bool:
            return bool(self.label)

    return {"Point": Point}


@pytest.mark.parametrize("base", [_records.NamedTuple, typing.NamedTuple])
def test_a_record_is_what_typing_makes(base: type) -> None:
    point = _body(base)["Point"]
    p = point(3, -4)
    assert p == (3, -4, "") and isinstance(p, tuple)
    assert point._fields == ("x", "y", "label")
    assert point._field_defaults == {"y": 0, "label": ""}
    assert p._replace(label="a") == point(3, -4, "a") and p._replace(label="a").named
    assert p.norm() == 7 and point.ORIGIN == "o" and point.__doc__ == "A point."
    assert repr(p) == "Point(x=3, y=-4, label='')"
    assert point.__qualname__.endswith("_body.<locals>.Point")
    # as written: typing compiles each into a ForwardRef, the cost this module saves
    written = {k: getattr(v, "__forward_arg__", v) for k, v in point.__annotations__.items()}
    assert written == {"x": "int", "y": "int", "label": "str"}
    with pytest.raises(AttributeError):
        p.x = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        point()  # x has no default


def test_a_default_cannot_come_before_a_field_without_one() -> None:
    with pytest.raises(TypeError, match="follows a field with a default"):

        class Bad(_records.NamedTuple):
            a: int = 0
            b: int  # type: ignore[misc]


def test_what_namedtuple_makes_cannot_be_overwritten() -> None:
    with pytest.raises(AttributeError, match="_replace"):

        class Bad(_records.NamedTuple):
            a: int

            def _replace(self, **kwargs: object) -> Bad:  # type: ignore[misc]
                return self


def test_the_package_records_are_made_here_and_pickle() -> None:
    loc = Location("requirements.txt", 1, 1, 1, 18)
    req = Requirement("flash-attn", "flash-attn==2.4.2", loc, "requirements")
    assert pickle.loads(pickle.dumps(req)) == req
    assert Requirement.__module__ == "fa_lint.model" and Finding._fields[0] == "code"
    # the class came from this module's metaclass, not typing's (whose check compiles each field)
    assert type(_records.NamedTuple).__module__ == "fa_lint._records"


@pytest.mark.parametrize("base", [_records.NamedTuple, typing.NamedTuple])
def test_the_rest_of_namedtuple_is_there(base: type) -> None:
    point = _body(base)["Point"]
    p = point(3, y=-4)
    assert point._make([1, 2, "b"]) == point(1, 2, "b") and type(point._make([1, 2, "b"])) is point
    with pytest.raises(TypeError, match="Expected 3 arguments, got 2"):
        point._make([1, 2])
    with pytest.raises(ValueError, match="Got unexpected field names: \\['z'\\]"):
        p._replace(z=1)
    assert p._asdict() == {"x": 3, "y": -4, "label": ""} and p.__getnewargs__() == (3, -4, "")
    assert point.__match_args__ == ("x", "y", "label") and point.__slots__ == ()
    assert point.__new__.__defaults__ == (0, "") and point.x.__doc__ == "Alias for field number 0"
    assert str(point[int]).endswith("Point[int]")  # type: ignore[misc]
    match p:
        case point(x, y):  # type: ignore[misc]
            assert (x, y) == (3, -4)
    with pytest.raises(TypeError):
        point(1, 2, "c", 4)  # one too many
    with pytest.raises(TypeError):
        point(1, w=2)  # no such field


def test_records_of_no_field_and_of_many() -> None:
    class Empty(_records.NamedTuple):
        pass

    assert Empty() == () and type(Empty()) is Empty and repr(Empty()) == "Empty()"
    wide = _records.NamedTuple.__class__(
        "Wide", (), {"__module__": __name__, "__annotations__": {f"f{i}": "int" for i in range(80)}}
    )
    w = wide(*range(80))
    assert w.f79 == 79 and w._replace(f0=5)[0] == 5 and wide._fields[-1] == "f79"
