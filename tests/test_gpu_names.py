"""fa_lint.kb.gpus.named: a name is tried only against the patterns whose text it holds (``held``), and
finds what trying every pattern finds."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fa_lint.kb import gpus

FRAGMENTS = [fragment for fragment, _, _ in gpus._rows()]


def _every_pattern(text: str) -> gpus.Gpu | None:
    """What ``named`` answered before: each of gpus.json's patterns compiled and tried."""
    norm = re.sub(r"[\s_./-]+", "-", text.lower())
    found = {
        gpu
        for fragment, _, gpu in gpus._rows()
        if re.search(rf"(?<![a-z0-9])(?:{fragment})(?![a-z0-9])", norm)
    }
    return found.pop() if len(found) == 1 else None


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_every_match_of_a_pattern_holds_its_text(fragment: str) -> None:
    @settings(
        max_examples=40,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.from_regex(re.compile(fragment), fullmatch=True))
    def holds(match: str) -> None:
        assert gpus.held(fragment) in match, (fragment, match)

    holds()


@pytest.mark.parametrize(
    ("fragment", "held"),
    [
        ("a100", "a100"),
        ("rtx-?4090", "4090"),  # "-?" is optional, so "rtx" and "4090" are each held, not "rtx-4090"
        ("gtx-?980(?:-?ti)?", "gtx"),
        ("v100s?", "v100"),
        ("k20(?:x|m|xm|c)?", "k20"),
        ("rtx-?pro-?6000-blackwell.*", "6000-blackwell"),
        ("a2(?!-(?:highgpu|megagpu|ultragpu))", "a2"),
        ("a100|h100", ""),  # either may match: no text is certain
        ("x{2}y", "y"),  # "{2}" is no text, and the "x" it repeats is dropped with it
        ("[ab]100", "100"),
        ("a\\d00", "00"),
        ("ab+c", "a"),  # "a" and "c" are each held (the first of the longest)
        ("[\\]x]yz", "yz"),  # an escaped "]" does not end the class
        ("[]x]yz", "yz"),  # nor one first in it
        ("[^]x]yz", "yz"),
        ("(?i)a100", ""),  # a flag changes what a plain character matches
        ("a(?i:b)cd", "cd"),
    ],
)
def test_held_text(fragment: str, held: str) -> None:
    assert gpus.held(fragment) == held
    matches = [m for m in _SAMPLES if re.fullmatch(fragment, m)]
    assert all(held in m for m in matches), matches


_SAMPLES = (
    "a100",
    "h100",
    "rtx4090",
    "rtx-4090",
    "gtx980",
    "gtx-980-ti",
    "v100s",
    "k20xm",
    "xxy",
    "b100",
    "abbbc",
)


_NAMES = st.lists(
    st.sampled_from(
        [
            "NVIDIA",
            "a100",
            "A100",
            "h100",
            "-",
            "_",
            " ",
            ".",
            "80GB",
            "SXM4",
            "rtx",
            "4090",
            "RTX",
            "3090",
            "ti",
            "t4",
            "l4",
            "l40s",
            "jetson",
            "agx",
            "orin",
            "quadro",
            "titan",
            "v",
            "xp",
            "2",
            "a2",
            "highgpu",
            "gb200",
            "k20",
            "xm",
            "blackwell",
            "pro",
            "6000",
            "ada",
            ":8",
            "tesla",
            "p4",
        ]
    ),
    max_size=6,
).map("".join)


@settings(max_examples=600, derandomize=True, database=None, deadline=None)
@given(_NAMES)
def test_named_finds_what_every_pattern_finds(text: str) -> None:
    assert gpus.named(text) == _every_pattern(text)


def test_a_name_compiles_only_the_patterns_it_can_match() -> None:
    gpus._compiled.cache_clear()
    assert gpus.named("NVIDIA-A100-SXM4-80GB") is not None
    assert 0 < gpus._compiled.cache_info().currsize < 10
