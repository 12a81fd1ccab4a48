"""Which Python files with a word can hold a use at all, told from the text before it is parsed.

The byte search (``prefilter``) keeps every file that names a word a use is written with; most hold
none (issue 41: 233 of the 376 such files of ../shared/wholerepo's clones; this screen passes over 135).
The usual one names ``attn_implementation`` with a value only a run knows (``attn_implementation=
model_args.attn_implementation``, a parameter passed on), or names flash-attn without calling what the
code layer reads. Each use ``code.python`` reads needs more than its word, and that more is plain text
(``code.python`` follows a name to a module only through an import, so "imported" below is the
module's name after ``import``, ``from`` or a comma, blanks and continued lines between):

- a call into flash-attn (``call``): ``flash_attn_with_kvcache``, or ``flash_attn_varlen_func`` with
  flash-attn imported; a project's own ``def flash_attn_with_kvcache`` (``custom``) and a substitute
  set by name (``substitute``: ``setattr``) need the first; one put in ``sys.modules`` needs
  ``modules`` and ``flash_attn`` before no name character (the key);
- an unguarded import of FA3's module (``import``): ``flash_attn_interface`` imported;
- a Hub or local kernel (``kernel``, ``local-kernel``): ``kernels`` imported and a loader's name;
- the paged path and what keeps it off it (``paged``, ``not-paged``): transformers or TRL imported, and
  a method or class of continuous batching called by its own name, the keyword that asks for it, or a
  model loaded with ``device_map`` or ``device`` bound to what may be a string, "cpu" or "mps" written;
- an attention implementation (``attn``): an ``attn_implementation`` bound to a value the reader can
  know (``_binds``): a string, a name some line at the module's top level assigns, an attribute only
  where the file has script options (``add_argument``: their defaults), or one that is called
  (``set_attn_implementation(...)``) or annotated.

The text searched is the text as Python reads its names (NFKC where that can add a word). A file kept
for nothing costs its parse; a file passed over must hold no use: each condition is tested against the
reader on generated files, on every Python file of ../shared and on every string of the code layer's
tests (tests/test_code_screen.py), and was run over the clones' 376 files with a word.
"""

from __future__ import annotations

import re

from fa_lint.code.uses import BATCHING_CONFIG, FA3_MODULE, KVCACHE, PAGED_CLASSES, PAGED_METHODS, VARLEN
from fa_lint.syntax.identifiers import as_python_reads

ATTN = "attn_implementation"  # its last characters: _attn_implementation, set_attn_implementation too
_FLASH_ATTN = re.compile(r"flash_attn(?!\w)")
_KERNEL_LOADERS = ("get_kernel", "get_locked_kernel", "get_local_kernel", "LayerRepository")
# what a call of the paged path, or of what keeps it off the block table, is named with
_CALLED = (*sorted(PAGED_METHODS), *sorted(PAGED_CLASSES), BATCHING_CONFIG)
# Between two tokens: blanks, comments, continued lines, and (inside brackets) line ends. Outside
# brackets a line end ends the statement, and what follows cannot start with "=", "(", ":" or "."
# in a file Python parses (one it cannot parse holds no use), so skipping it there finds nothing.
_GAP = re.compile(r"(?:[ \t\f]+|\\(?:\r\n|\r|\n)|\r\n|\r|\n|#[^\r\n]*)*")
_BLANKS = re.compile(r"(?:[ \t\f]+|\\(?:\r\n|\r|\n))*")  # within one line
_NAME = re.compile(r"[^\W\d]\w*")
# names that start an expression no reader takes for a string: constants that are not one, operators
_NO_STRING = frozenset({"None", "True", "False", "lambda", "not", "await", "yield"})
_ASSIGNED = r"[ \t\f]*(?:\\(?:\r\n|\r|\n)[ \t\f]*)*=(?!=)"  # name = ..., continued or not
_TOP = re.compile(r"(?:[ \t]*\f)*")
_AFTER_SEMICOLON = re.compile(r";[ \t\f]*\Z")
_CONTINUED = ("\\\r\n", "\\\n", "\\\r")  # a backslash and a line end
_ENDS = ("", ",", ")", "\n", "\r", "#", ";")  # where an expression of one name may end


def may_use(text: str) -> bool:
    """Whether a Python text with a word of ``prefilter.WORDS`` can hold a use ``code.python`` reads."""
    said = as_python_reads(text)
    if KVCACHE in said or _imported(said, FA3_MODULE):
        return True
    if VARLEN in said and _imported(said, "flash_attn"):
        return True
    if "modules" in said and _FLASH_ATTN.search(said):  # sys.modules["flash_attn"] = ...
        return True
    if any(name in said for name in _KERNEL_LOADERS) and _imported(said, "kernels"):
        return True
    if (_imported(said, "transformers") or _imported(said, "trl")) and _paged(said):
        return True
    return _attention(said)


def _paged(said: str) -> bool:
    """What a use of the paged path or of what keeps it off needs, in a file importing transformers:
    a method or class of continuous batching called, a keyword that asks for it, a model loaded with
    ``device_map="cpu"`` (a device without the block table: a string, or a name bound to one)."""
    if any(_called(said, word) for word in _CALLED):
        return True
    if "use_transformers_paged" in said or ("cache_implementation" in said and "paged" in said):
        return True
    if "from_pretrained" not in said or ("cpu" not in said and "mps" not in said):
        return False
    return _keyword(said, "device_map") or _keyword(said, "device")


def _called(said: str, name: str) -> bool:
    """Whether ``name`` (a whole name) is called: ``model.generate_batch(``, ``ContinuousBatchingConfig(``."""
    at = said.find(name)
    while at >= 0:
        end = at + len(name)
        before = said[at - 1 : at] if at else ""
        if not (_name_char(before) or _name_char(said[end : end + 1])):
            after = _past(_GAP, said, end)
            if said[after : after + 1] == "(":
                return True
        at = said.find(name, end)
    return False


def _keyword(said: str, word: str) -> bool:
    """Whether ``word`` (a whole name) is bound to what may be a string: ``device="cpu"``."""
    at = said.find(word)
    while at >= 0:
        end = at + len(word)
        before, after = said[at - 1 : at] if at else "", said[end : end + 1]
        if not (_name_char(before) or _name_char(after)):
            i = _past(_GAP, said, end)
            bound = said[i : i + 1] == "=" and said[i + 1 : i + 2] != "="
            if bound and _value(said, _past(_GAP, said, i + 1)):
                return True
        at = said.find(word, end)
    return False


def _attention(said: str) -> bool:
    options = "add_argument" in said  # attn_implementation=args.attn: the default of --attn
    at = said.find(ATTN)
    while at >= 0:
        end = at + len(ATTN)
        if _binds(said, end, options):
            return True
        at = said.find(ATTN, end)
    return False


def _binds(said: str, end: int, options: bool) -> bool:
    """Whether the ``attn_implementation`` that ends at ``end`` can give the reader a value: a keyword
    or an assignment target bound to one, a call, an annotation."""
    after = said[end : end + 1]
    if _name_char(after):
        return False  # a longer name (attn_implementation_autoset)
    i = _past(_GAP, said, end)
    c = said[i : i + 1]
    if c in ("(", ":"):
        return True  # set_attn_implementation("sdpa"); attn_implementation: str = "sdpa"
    if c != "=" or said[i + 1 : i + 2] == "=":
        return False  # read, compared, subscripted, called a method of
    if options:
        return True  # any attribute may be an option's
    return _value(said, _past(_GAP, said, i + 1))


def _value(said: str, at: int) -> bool:
    """Whether the expression at ``at`` may be one the reader knows as a string: a literal, or a name
    bound to one at the module's top level (an attribute is one only through script options)."""
    name = _NAME.match(said, at)
    if name is None:
        first = said[at : at + 1]
        return first != "" and (first in "'\"(" or not first.isascii())  # a string; what brackets hold
    end = name.end()
    if said[end : end + 1] in ("'", '"'):
        return True  # a string's prefix (r"...", f"...")
    if name.group() in _NO_STRING:
        return False
    dotted = False
    while True:  # a.b.c: an attribute
        dot = _past(_GAP, said, end)
        if said[dot : dot + 1] != ".":
            break
        part = _NAME.match(said, _past(_GAP, said, dot + 1))
        if part is None:
            return True
        end, dotted = part.end(), True
    then = _past(_BLANKS, said, end)
    follows = said[then : then + 1]
    if follows == "=" and said[then + 1 : then + 2] != "=":
        return True  # a.attn_implementation = b = "sdpa": the value comes later
    if follows not in _ENDS:
        return not follows.isascii()  # more than a name: a call, an operation, a condition
    if dotted:
        return False
    return not name.group().isascii() or _module_string(said, name.group())


def _module_string(said: str, name: str) -> bool:
    """Whether some line assigns ``name`` at the module's top level (a statement there starts at the
    first column, or after a form feed, which resets it, or after a ``;``)."""
    for found in re.finditer(re.escape(name) + _ASSIGNED, said):
        start = found.start()
        line = max(said.rfind("\n", 0, start), said.rfind("\r", 0, start)) + 1
        before = said[line:start] if line else said[:start].removeprefix("\ufeff")
        if _TOP.fullmatch(before) or _AFTER_SEMICOLON.search(before):
            return True
    return False


def _imported(said: str, module: str) -> bool:
    """Whether ``module`` is written where an import names a top-level module: the whole name, after
    ``import``, ``from`` or a comma (``import os, flash_attn``), blanks and continued lines between;
    the reader follows a name to a module only through an import."""
    at = said.find(module)
    while at >= 0:
        end = at + len(module)
        before, after = said[at - 1 : at] if at else "", said[end : end + 1]
        if not (_name_char(before) or before == "." or _name_char(after)) and _after_import(said, at):
            return True
        at = said.find(module, end)
    return False


def _after_import(said: str, at: int) -> bool:
    """Whether what ends at ``at``, past blanks and continued lines, is ``import``, ``from`` or a comma."""
    i = at
    while True:
        while i and said[i - 1] in " \t\f":
            i -= 1
        continued = next((len(c) for c in _CONTINUED if said.endswith(c, 0, i)), 0)
        if not continued:
            break
        i -= continued
    if said.endswith(",", 0, i):
        return True
    for word in ("import", "from"):
        if said.endswith(word, 0, i):
            k = i - len(word)
            return not k or not (_name_char(said[k - 1]) or said[k - 1] == ".")
    return False


def _name_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _past(pattern: re.Pattern[str], said: str, at: int) -> int:
    """Where a run of what ``pattern`` matches (possibly none) that starts at ``at`` ends."""
    found = pattern.match(said, at)
    return found.end() if found is not None else at
