"""Floating image tags (``debian:stable-slim``, ``ubuntu:latest``, ``python:3.11``): what they named when
the knowledge base was built, said as such.

Expectations from the facts: fa_lint/kb/images.json read docker-library/official-images at 37079fb336f5
(2026-08-21), when Debian's stable release was 13 (trixie, released 2025-08-09), oldstable 12
(bookworm) and oldoldstable 11 (bullseye); docker-library/debian tags the stable codename's entry
``latest``. A tag naming its release (``bookworm-slim``, ``22.04``, ``3.11-slim-bookworm``) is fixed.
"""

from __future__ import annotations

from typing import Any

import pytest

from fa_lint.kb import images
from tests.conftest import run


@pytest.mark.parametrize(
    ("reference", "distro", "moves"),
    [
        ("debian:stable-slim", "debian-13", True),
        ("debian:stable", "debian-13", True),
        ("debian:oldstable-slim", "debian-12", True),
        ("debian:oldoldstable", "debian-11", True),
        ("debian:latest", "debian-13", True),
        ("python:3.11", "debian-13", True),
        ("debian:bookworm-slim", "debian-12", False),
        ("python:3.11-slim-bookworm", "debian-12", False),
        ("ubuntu:22.04", "ubuntu-22.04", False),
    ],
)
def test_floating_tags(reference: str, distro: str, moves: bool) -> None:
    host = images.image(reference)
    assert host is not None and host.distro == distro and host.floating is moves
    assert ("floating tag" in host.source and "37079fb336f5" in host.source) is moves


def test_a_finding_on_a_floating_tag_says_it_moves(project: Any) -> None:
    # debian-11's glibc 2.31 is below the 2.35 of ubuntu-22.04, where 2.8.3's wheels were built
    project(
        {
            "Dockerfile": "FROM debian:oldoldstable-slim\n"
            "RUN pip install torch==2.7.1 && pip install flash-attn==2.8.3 --no-build-isolation\n"
        }
    )
    (f,) = run("--format", "json", "--isolated", "--select", "FAL014", ".").json["findings"]
    assert any("a floating tag" in n and "moves to each new release" in n for n in f["notes"])
