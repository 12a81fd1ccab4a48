"""The text output: code frames drawn where a terminal puts each character, headlines that fit a line,
colour only where asked, and notes that say what breaks for the project at hand."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fa_lint import cli
from fa_lint.model import Location
from fa_lint.report.frame import WIDTH, draw, lines
from fa_lint.rules._text import HEADLINE, MEANING, fit
from tests.conftest import REPO, SHARED, Tty, run


def _frame(text: str, line: int, col: int, end_line: int, end_col: int) -> list[str]:
    return draw(lines(text), Location("f", line, col, end_line, end_col), "FAL001")


def _marker_under(rows: list[str], source: str) -> str:
    """The characters of ``source`` (a shown row) that the next row's ``^`` cells stand under."""
    i = next(i for i, r in enumerate(rows) if r.endswith(source))
    shown, marks = rows[i].split("| ", 1)[1], rows[i + 1].split("| ", 1)[1]
    # measure in terminal cells: every shown character here is one cell wide
    return "".join(ch for ch, m in zip(shown, marks, strict=False) if m == "^")


# --- the frame --------------------------------------------------------------------------------------


def test_frame_shows_context_and_marks_the_span() -> None:
    text = "# pins\n\ntorch==2.4.1\nflash-attn==2.4.2\n-c c.txt\n\n\nx\n"
    assert _frame(text, 4, 1, 4, 18) == [
        "  |",
        "3 | torch==2.4.1",  # two lines of context, less the blank line at the edge
        "4 | flash-attn==2.4.2",
        "  | ^^^^^^^^^^^^^^^^^ FAL001",
        "5 | -c c.txt",
        "  |",
    ]


def test_gutter_is_as_wide_as_the_largest_line_number() -> None:
    text = "".join(f"pkg{i}\n" for i in range(1, 12)) + "flash-attn<2.5\n"
    rows = _frame(text, 12, 1, 12, 15)
    assert rows[0] == "   |" and rows[1] == "10 | pkg10" and rows[3] == "12 | flash-attn<2.5"
    assert rows[4] == "   | ^^^^^^^^^^^^^^ FAL001"


def test_tab_shows_as_four_spaces_and_the_marker_follows() -> None:
    rows = _frame("\tflash-attn==2.4.2  # pinned\n", 1, 2, 1, 19)
    assert rows[1] == "1 |     flash-attn==2.4.2  # pinned"
    assert rows[2] == "  |     ^^^^^^^^^^^^^^^^^ FAL001"


def test_wide_characters_take_two_cells() -> None:
    # a CJK comment before the span: each character is two cells, so the marker moves by two per character
    rows = _frame("包=1 flash-attn==2.4.2\n", 1, 5, 1, 22)
    assert rows[1] == "1 | 包=1 flash-attn==2.4.2"
    assert rows[2] == "  |      ^^^^^^^^^^^^^^^^^ FAL001"  # 包 (2) + '=1 ' (3) = 5 cells before the span


def test_combining_marks_take_no_cell() -> None:
    # 'e' + COMBINING ACUTE ACCENT is one cell on screen but two characters in the column count
    rows = _frame("cafe\u0301 flash-attn==2.4.2\n", 1, 7, 1, 24)
    assert rows[2] == "  |      ^^^^^^^^^^^^^^^^^ FAL001"


def test_control_characters_show_escaped_and_cannot_reach_the_terminal() -> None:
    rows = _frame("flash-attn==2.4.2 \x1b[2J\x07# x\n", 1, 1, 1, 18)
    assert rows[1] == "1 | flash-attn==2.4.2 \\x1b[2J\\x07# x"
    assert not any("\x1b" in r or "\x07" in r for r in rows)
    assert _marker_under(rows, "\\x07# x") == "flash-attn==2.4.2"


def test_printable_escapes_every_character_its_pattern_names() -> None:
    # printable() returns text that str.isprintable() accepts as it is, without the pattern
    import re

    from fa_lint.report._common import _UNPRINTABLE, printable

    every = [chr(n) for n in range(0x110000)]
    assert [c for c in every if printable(c) != c] == [c for c in every if re.fullmatch(_UNPRINTABLE, c)]


def test_crlf_lines_lose_the_carriage_return() -> None:
    rows = _frame("torch\r\nflash-attn==2.4.2\r\n", 2, 1, 2, 18)
    assert rows[2] == "2 | flash-attn==2.4.2" and not any("\r" in r or "\\r" in r for r in rows)


@pytest.mark.parametrize(
    ("span", "marker"),
    [
        ((1, 1, 1, 1), "  | ^ FAL001"),  # an empty span: one cell, where it starts
        ((1, 18, 1, 18), "  |                  ^ FAL001"),  # at the end of the line
        ((1, 40, 1, 45), "  |                  ^ FAL001"),  # past the end: just after the last character
        ((1, 12, 1, 90), "  |            ^^^^^^ FAL001"),  # an end past the line stops at its end
    ],
)
def test_spans_at_and_past_the_end_of_a_line(span: tuple[int, int, int, int], marker: str) -> None:
    rows = _frame("flash-attn==2.4.2\n", *span)
    assert rows[1] == "1 | flash-attn==2.4.2" and rows[2] == marker


def test_a_span_on_the_line_after_the_last_newline_is_shown_empty() -> None:
    rows = _frame('dependencies = ["flash-attn"\n', 2, 1, 2, 1)  # 'unclosed array' at the end of the file
    assert rows == ["  |", '1 | dependencies = ["flash-attn"', "2 |", "  | ^ FAL001", "  |"]


def test_a_span_outside_the_text_has_no_frame() -> None:
    assert _frame("flash-attn\n", 9, 1, 9, 2) == []


def test_multi_line_span_marks_each_line() -> None:
    text = 'x = 1\nflash = ("flash-attn"\n    "==2.4.2")\ny = 2\n'
    rows = _frame(text, 2, 10, 3, 14)
    assert rows == [
        "  |",
        "1 | x = 1",
        '2 | flash = ("flash-attn"',
        "  |          ^^^^^^^^^^^^",
        '3 |     "==2.4.2")',
        "  | ^^^^^^^^^^^^^ FAL001",
        "4 | y = 2",
        "  |",
    ]


def test_a_span_ending_at_the_start_of_a_line_ends_on_the_line_before() -> None:
    rows = _frame("flash-attn==2.4.2\nnext\n", 1, 1, 2, 1)
    assert rows[1:3] == ["1 | flash-attn==2.4.2", "  | ^^^^^^^^^^^^^^^^^ FAL001"]


def test_a_long_span_shows_its_first_and_last_lines() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 21))
    rows = _frame(text, 2, 1, 15, 8)
    shown = [r.split(" |")[0].strip() for r in rows if r[:2].strip().isdigit()]
    assert shown == ["1", "2", "3", "14", "15", "16", "17"]
    assert "..." in rows


def test_a_long_line_is_cut_around_the_span() -> None:
    line = "x" * 300 + " flash-attn==2.4.2 " + "y" * 300
    rows = _frame(line + "\n", 1, 302, 1, 319)
    shown, marks = rows[1], rows[2]
    assert shown.startswith("1 | ...") and shown.endswith("...")
    assert len(shown) - len("1 | ") <= WIDTH
    assert _marker_under(rows, shown.split("| ", 1)[1]) == "flash-attn==2.4.2"
    assert marks.endswith("^ FAL001")


@pytest.mark.parametrize("at", ["start", "end"])
def test_a_huge_line_shows_a_window_around_the_span(at: str) -> None:
    span = "flash-attn==2.4.2"
    line = span + " x" * 200_000 if at == "start" else "x " * 200_000 + span
    column = 1 if at == "start" else len(line) - len(span) + 1
    rows = _frame(line + "\n", 1, column, 1, column + len(span))
    shown = rows[1].split("| ", 1)[1]
    assert len(shown) <= WIDTH
    assert shown.startswith(span) if at == "start" else shown.startswith("...") and shown.endswith(span)
    assert _marker_under(rows, shown) == span


def test_a_long_context_line_is_cut_too() -> None:
    rows = _frame("#" + "x" * 500 + "\nflash-attn==2.4.2\n", 2, 1, 2, 18)
    assert rows[1].endswith("...") and len(rows[1]) <= WIDTH + len("1 | ")


# --- headlines ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 50, 119, 120, 121, 500, 100_000])
def test_fit_keeps_the_wording_and_shortens_what_came_from_the_file(size: int) -> None:
    text = "f" * size
    out = fit("`{req}` has no paged KV (block_table ships in 2.5.0); require flash-attn>=2.5.0", req=text)
    assert len(out) <= HEADLINE
    assert out.endswith("` has no paged KV (block_table ships in 2.5.0); require flash-attn>=2.5.0")
    assert out == f"`{text}` has no paged KV (block_table ships in 2.5.0); require flash-attn>=2.5.0" or (
        out.startswith("`fff") and "...`" in out
    )


def test_fit_shares_the_room_between_parts() -> None:
    out = fit("unquoted `{meant}`: `{cut}` is lost", meant="a" * 300, cut=">=2.5.8")
    assert len(out) == HEADLINE and "`>=2.5.8`" in out  # the short part is kept whole


def test_a_requirement_is_kept_whole_before_its_reading(project: Any) -> None:
    # conda's `=2.4.2` reads as ==2.4.2.*: a headline too long for both keeps what the file says
    project({"environment.yml": "name: x\ndependencies:\n  - flash-attn=2.4.2\n"})
    (f,) = run("--format", "json").json["findings"]
    assert f["code"] == "FAL001" and len(f["message"]) <= HEADLINE
    assert f["message"].startswith("`flash-attn=2.4.2` admits only 2.4.2, which has no paged KV")
    assert fit("`{req}`" + MEANING + " is fine", req="a=1", meaning="==1.*") == "`a=1` (==1.*) is fine"


def test_a_long_requirement_keeps_a_short_headline(project: Any) -> None:
    line = "flash-attn[" + ",".join(f"extra{i}" for i in range(60)) + "]==2.4.2"
    project({"requirements.txt": line + "\n"})
    (f,) = run("--format", "json").json["findings"]
    assert len(f["message"]) <= HEADLINE and f["message"].endswith("; require flash-attn>=2.5.0")
    assert f["requirement"] == line  # the JSON still has all of it


def test_a_long_meaning_is_shortened_with_the_requirement(project: Any) -> None:
    # Poetry alternatives read as PEP 440 ranges: the headline adds their meaning, which can be long too
    alternatives = " || ".join(f"~2.{minor}.{patch}" for minor in range(5) for patch in range(4))
    project(
        {"pyproject.toml": f'[tool.poetry.dependencies]\npython = "^3.10"\nflash-attn = "{alternatives}"\n'}
    )
    (f,) = run("--format", "json", "--ignore", "FAL012").json["findings"]  # Poetry builds it isolated
    assert f["code"] == "FAL001" and len(f["message"]) <= HEADLINE
    assert f["message"].startswith('`flash-attn = "~2.0.') and "(>=2.0.0,<2.1 || " in f["message"]
    assert f["message"].endswith("admits only 32 releases, none with paged KV; require flash-attn>=2.5.0")


@pytest.mark.skipif(not (SHARED / "corpus" / "files").exists(), reason="the corpus lives in ../shared")
def test_every_headline_over_the_real_corpus_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = 0
    for case in sorted((SHARED / "corpus" / "files").iterdir()):
        monkeypatch.chdir(case)
        for f in run("--format", "json", "--isolated", ".").json["findings"]:
            seen += 1
            assert len(f["message"]) <= HEADLINE, (case.name, f["message"])
            assert f["help"] and "\n" not in f["message"], (case.name, f)
        concise = run("--format", "concise", "--isolated", ".").out.splitlines()
        assert all(len(line) <= 200 for line in concise), case.name
    assert seen > 20


# --- colour ---------------------------------------------------------------------------------------------


def test_colour_on_a_tty_marks_the_code_the_gutter_and_the_span(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    project({"requirements.txt": "flash-attn==2.4.2\n"})
    out = Tty()
    cli.main([], out=out, err=io.StringIO())
    text = out.getvalue()
    assert "\033[1;31mFAL001 [error]\033[0m" in text  # the code and severity in the error colour
    assert "\033[1;34m1 |\033[0m" in text  # the gutter
    assert "\033[1;31m^^^^^^^^^^^^^^^^^ FAL001\033[0m" in text  # the marker
    monkeypatch.setenv("NO_COLOR", "1")
    out = Tty()
    cli.main(["--format", "concise"], out=out, err=io.StringIO())
    assert "\033[" not in out.getvalue()


def test_colour_never_goes_to_a_file(project: Any) -> None:
    root = project({"requirements.txt": "flash-attn==2.4.2\n"})
    assert run("--color", "always", "-o", "out.txt").code == 1
    assert "\033[" not in (root / "out.txt").read_text()


def test_a_real_terminal_gets_colour_and_a_pipe_does_not(project: Any) -> None:
    project({"requirements.txt": "flash-attn==2.4.2\n"})
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    piped = subprocess.run([sys.executable, "-m", "fa_lint"], capture_output=True, text=True, env=env)
    assert "\033[" not in piped.stdout and piped.stdout.startswith("requirements.txt:1:1: FAL001 ")


# --- notes: what breaks, and for whom ---------------------------------------------------------------------


def _notes(project: Any, files: dict[str, str], code: str = "FAL001") -> list[str]:
    project(files)
    (f,) = [f for f in run("--format", "json").json["findings"] if f["code"] == code]
    notes: list[str] = f["notes"]
    return notes


CALLER = (
    "code that calls `flash_attn_with_kvcache(..., block_table=...)` fails with `TypeError: "
    "flash_attn_with_kvcache() got an unexpected keyword argument 'block_table'`"
)


def test_a_project_without_transformers_hears_about_the_kernel_not_transformers(project: Any) -> None:
    # flash-attn 2.4.2's flash_attn_with_kvcache has no block_table parameter (and no **kwargs)
    notes = _notes(project, {"requirements.txt": "torch==2.4.1\nflash-attn==2.4.2\n"})
    assert notes[0] == CALLER
    assert notes[1].startswith("why 2.6.3: ")  # the fix's reason (issue 35): 2.6.3's torch 2.4 wheel
    assert len(notes) == 2
    assert not any("transformers" in n for n in notes)


def test_before_2_2_there_is_no_kvcache_function_at_all(project: Any) -> None:
    note, why = _notes(project, {"requirements.txt": "flash-attn==2.1.1\n"})
    assert why == "why 2.5.0: the first release with paged KV"
    assert note.startswith("flash-attn 2.1.1 has no `flash_attn_with_kvcache` at all (it ships in 2.2.0)")


def test_a_lock_without_transformers_says_none_installs(project: Any) -> None:
    # transformers is mentioned elsewhere in the project, but this environment's lock installs none
    files = {
        "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn"]\n',
        "uv.lock": 'version = 1\n[[package]]\nname = "flash-attn"\nversion = "2.4.2"\n',
        "tools/requirements.txt": "transformers==5.20.0\n",
    }
    notes = _notes(project, files)
    assert notes[0] == CALLER


def test_transformers_elsewhere_in_the_project_is_named_with_a_condition(project: Any) -> None:
    notes = _notes(
        project, {"requirements.txt": "flash-attn==2.4.2\n", "serve/requirements.txt": "transformers\n"}
    )
    assert notes[0].startswith("where transformers is installed (this environment does not list it)")
    assert "from transformers 5.13.0" in notes[0] and "from 5.19.0 it silently decodes wrong" in notes[0]


def test_an_unpinned_transformers_in_the_environment(project: Any) -> None:
    notes = _notes(project, {"requirements.txt": "transformers>=4.56\nflash-attn==2.4.2\n"})
    assert notes[0].startswith("transformers' continuous batching decodes with")
    assert "up to 5.18.x it fails at the first decode step with `ValueError" in notes[0]


def test_a_transformers_range_that_ends_before_the_block_table_path_runs_today(project: Any) -> None:
    notes = _notes(project, {"requirements.txt": "transformers>=4.56,<5.13\nflash-attn==2.4.2\n"})
    assert notes[0] == (
        "transformers as required here (`transformers>=4.56,<5.13` (requirements.txt:1:1)) predates 5.13.0, "
        "so it never sends flash-attn 2 a block table and this stack runs today"
    )
    assert "a transformers upgrade breaks this stack" in notes[1]


def test_a_transformers_newer_than_the_releases_read_says_so(project: Any) -> None:
    notes = _notes(project, {"requirements.txt": "transformers==9.0.0\nflash-attn==2.4.2\n"})
    assert notes[0].startswith("transformers 9.0.0 is newer than the newest release fa-lint read (5.24.0)")
    assert "silently drops the block table" in notes[1]


def test_min_version_findings_do_not_claim_a_missing_block_table(project: Any) -> None:
    project({"requirements.txt": "transformers==5.14.0\nflash-attn==2.5.8\n"})
    (f,) = run("--format", "json", "--min-version", "2.6.0").json["findings"]
    assert f["message"] == "`flash-attn==2.5.8` is below the required 2.6.0; require flash-attn>=2.6.0"
    assert f["notes"] == [
        "the project requires flash-attn 2.6.0 or later (`--min-version`, or `min-version` in [tool.fa-lint])",
        "why 2.6.0.post1: the first release with paged KV at or above 2.6.0",
    ]


@pytest.mark.parametrize(
    ("line", "headline"),
    [
        (
            "flash-attn @ git+https://github.com/Dao-AILab/flash-attention@v2.3.6",
            "flash-attn 2.3.6 from this URL has no paged KV (block_table ships in 2.5.0); "
            "install flash-attn 2.5.0 or later",
        ),
        (
            "flash-attn @ https://example.com/flash_attn-9.1.0-cp311-cp311-linux_x86_64.whl",
            "flash-attn 9.1.0 from this URL is newer than fa-lint's knowledge base (newest known: 2.8.3.post2)",
        ),
    ],
)
def test_url_headlines_name_the_version_the_url_carries(project: Any, line: str, headline: str) -> None:
    project({"requirements.txt": line + "\n"})
    (f,) = run("--format", "json").json["findings"]
    assert f["message"] == headline


def test_hashed_pins_say_why_there_is_no_fix(project: Any) -> None:
    project({"requirements.txt": "flash-attn==2.4.2 --hash=sha256:" + "0" * 64 + "\n"})
    (f,) = run("--format", "json").json["findings"]
    assert f["fix"] is None
    assert f["help"] == "regenerate the file with flash-attn>=2.5.0 and its hashes"
    assert any("hash-checking mode" in n for n in f["notes"])


def test_text_output_escapes_what_the_file_holds(project: Any) -> None:
    project({"requirements.txt": "flash-attn==2.4.2\x1b]0;pwned\x07\n"})
    out = run().out
    assert "\x1b" not in out and "\x07" not in out


def test_json_findings_keep_notes_and_help_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    doc = json.loads(Path("tests/golden/every-rule.json").read_text())
    for f in doc["findings"]:
        assert list(f)[list(f).index("message") + 1 : list(f).index("message") + 3] == ["notes", "help"]


def test_a_location_is_its_two_positions() -> None:
    # location() searches the line starts once when a span ends on its first line: the same answer
    import random

    from fa_lint.syntax.text import TextIndex

    rng = random.Random(69)
    for _ in range(300):
        text = "".join(rng.choice("ab\n\r ") for _ in range(rng.randrange(0, 60)))
        index = TextIndex("f", text)
        for _ in range(50):
            start = rng.randrange(0, len(text) + 3)
            end = rng.choice([None, start, rng.randrange(0, len(text) + 3)])
            first, last = index.position(start), index.position(start if end is None else end)
            assert tuple(index.location(start, end))[1:] == (*first, *last), (text, start, end)
