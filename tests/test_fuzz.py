"""Property tests: for every format, generated and mutated files never make fa-lint raise, hang on
them, print what they could use to forge output, or rewrite bytes outside a fix (tests/fuzz).

Seeded (derandomized) so CI sees the same few thousand inputs each run; ``python -m tests.fuzz`` is
the long, random run (docs/reliability.md).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from fa_lint.sources import SOURCES
from tests.fuzz import check
from tests.fuzz.inputs import files

EXAMPLES = 200  # per format: about 3,000 in all, some 30 s


@pytest.mark.parametrize("source", list(SOURCES))
def test_no_input_breaks_a_run(source: str) -> None:
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(files(source))
    def run(case: tuple[str, bytes]) -> None:
        check(*case)

    run()
