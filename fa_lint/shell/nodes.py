"""The nodes of tree-sitter-bash's tree as the shell walk (``fa_lint.shell.walk``) reads them: every kind
of named node the grammar makes, by what the walk does with it, and the parts of a simple command.

The kind sets are total: ``tests/test_shell_grammar.py`` compares ``KINDS`` with the kinds the
grammar itself lists (``tree_sitter.Language.node_kind_*``), so a grammar release that adds a kind fails
a test until the walk knows what runs in it, rather than passing over it unseen.
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING

from fa_lint.shell.parse import Chunk, Word, basename, joined, unquoted, word

if TYPE_CHECKING:
    from tree_sitter import Node

# A command whose failure is an answer, not an error: what follows its && runs only on some machines.
TESTS = {"test", "[", "[[", "which", "type", "hash", "grep", "nvidia-smi", "nvcc", "lspci", "rocm-smi"}

# Statements: each read by ``_statement`` (those in ``_HANDLERS``, the rest for their substitutions).
STATEMENTS = frozenset(
    {
        "program",
        "redirected_statement",
        "command",
        "list",
        "pipeline",
        "negated_command",
        "compound_statement",
        "do_group",
        "subshell",
        "if_statement",
        "case_statement",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "function_definition",
        "variable_assignment",
        "variable_assignments",
        "declaration_command",
        "unset_command",
        "test_command",
        "ERROR",
        "comment",
    }
)
# Parts of a statement, read with it: clauses, a command's name, redirects and here-documents.
PARTS = frozenset(
    {
        "elif_clause",
        "else_clause",
        "case_item",
        "command_name",
        "file_redirect",
        "heredoc_redirect",
        "herestring_redirect",
        "heredoc_body",
        "heredoc_start",
        "heredoc_end",
        "heredoc_content",
        "file_descriptor",
    }
)
# A script of its own, run in a subshell where the word that holds it is expanded.
SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
# Words and expressions (``[[ ]]``, ``(( ))``, ``$(( ))``): nothing runs in them but their substitutions.
WORDS = frozenset(
    {
        "word",
        "number",
        "string",
        "string_content",
        "raw_string",
        "ansi_c_string",
        "translated_string",
        "concatenation",
        "simple_expansion",
        "expansion",
        "variable_name",
        "special_variable_name",
        "subscript",
        "array",
        "brace_expression",
        "regex",
        "extglob_pattern",
        "test_operator",
        "arithmetic_expansion",
        "binary_expression",
        "unary_expression",
        "ternary_expression",
        "postfix_expression",
        "parenthesized_expression",
    }
)
KINDS = STATEMENTS | PARTS | SUBSTITUTIONS | WORDS
# Statements whose parts run in order, as certain as around them.
SEQUENCES = frozenset({"program", "compound_statement", "do_group", "pipeline", "negated_command"})
# What opens a substitution in a word's text: words without one are not searched.
OPENERS = ("$(", "`", "<(", ">(")
# Two of them never overlap in a text: the three of two characters end with "(", which none starts
# with, and the backtick is in none of them. So one search from the start finds every one.
_OPENER = re.compile("|".join(re.escape(o) for o in OPENERS))
# Statements that hold statements: a search for substitutions stops at one (it is walked on its own).
HOLDERS = STATEMENTS - {
    "variable_assignment",
    "variable_assignments",
    "declaration_command",
    "unset_command",
    "test_command",
    "comment",
}


class Openers:
    """Where each of ``OPENERS`` is in a chunk's text (found when first asked): whether a stretch of
    its words holds one is a search among them, not in a slice of the text."""

    __slots__ = ("chunk", "ends", "starts")

    def __init__(self, chunk: Chunk) -> None:
        self.chunk = chunk
        self.starts: list[int] | None = None
        self.ends: list[int] = []

    def within(self, nodes: list[Node]) -> bool:
        """Whether the text from the first node to the last holds one."""
        starts = self.starts
        if starts is None:
            starts = self.starts = []
            for m in _OPENER.finditer(self.chunk.text):
                starts.append(m.start())
                self.ends.append(m.end())
        if not starts:
            return False
        if len(nodes) == 1:
            first, last = nodes[0].start_byte, nodes[0].end_byte
        else:
            first, last = min(n.start_byte for n in nodes), max(n.end_byte for n in nodes)
        return self.holds(self.chunk.index(first), self.chunk.index(last))

    def holds(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` holds one (once ``within`` has found them): the first one at or
        after ``start`` ends by ``end``. No later one can where it does not: they never overlap, so
        each later one starts where the first ends or after, past ``end``."""
        starts = self.starts or []
        at = bisect.bisect_left(starts, start)
        return at < len(starts) and self.ends[at] <= end


def last_command(node: Node) -> Node | None:
    """The simple command a redirect after ``a && b``, ``a | b`` or ``! b`` belongs to: the last one
    (bash's grammar attaches a redirect to a simple command; only compound commands take one whole)."""
    while node.type in ("list", "pipeline", "negated_command"):
        parts = [c for c in node.named_children if c.type != "comment"]
        if not parts:
            return None
        node = parts[-1]
    if node.type == "redirected_statement":
        node = node.child_by_field_name("body") or node
    return node if node.type == "command" else None


def then(node: Node) -> tuple[list[Node], list[Node]]:
    """An if or elif clause's conditions (before ``then``) and body (after it, up to elif/else)."""
    conditions: list[Node] = []
    body: list[Node] = []
    seen = False
    for child in node.children:
        if child.type == "then":
            seen = True
        elif child.type in ("elif_clause", "else_clause"):
            break
        elif child.is_named:
            (body if seen else conditions).append(child)
    return conditions, body


def node_of(script: Word, args: list[Node], words: list[Word]) -> Node:
    """The node of the word a ``bash -c`` command runs as its script."""
    return next(n for n, w in zip(args, words, strict=True) if w is script)


def parts(node: Node, redirects: list[Node], chunk: Chunk) -> tuple[list[Node], dict[str, str], list[Node]]:
    """A simple command's words (its name first), its ``VAR=x`` prefixes, and every redirect."""
    args: list[Node] = []
    env: dict[str, str] = {}
    every = list(redirects)
    for child in node.named_children:
        kind = child.type  # (each read of a node's attribute makes a new object)
        if kind in ("word", "string"):
            args.append(child)
        elif kind == "variable_assignment" and not args:
            name, value = child.child_by_field_name("name"), child.child_by_field_name("value")
            if name is not None:
                env[chunk.source(name)] = "" if value is None else unquoted(value, chunk)
        elif kind == "command_name":
            inner = child.named_children
            args.append(inner[0] if inner else child)
        elif kind.endswith("_redirect"):
            every.append(child)
        elif kind != "comment":
            args.append(child)
    return args, env, every


def with_redirects(args: list[Node], redirects: list[Node], chunk: Chunk) -> tuple[list[Node], list[Word]]:
    """The command's words: one a redirect cut short is marked (flash-attn>=2.5), and words
    after a redirect's file are still arguments (tree-sitter-bash hangs them on the redirect)."""
    if not redirects:
        return joined(args, [word(n, chunk) for n in args])
    cuts: dict[int, str] = {}
    for r in redirects:
        op = next((c for c in r.children if not c.is_named), None)
        if r.type == "file_redirect" and op is not None:
            cuts[chunk.offset(r.start_byte)] = op.type
            args = [*args, *r.children_by_field_name("destination")[1:]]
    args, words = joined(args, [word(n, chunk) for n in args])
    return args, [
        Word(w.text, w.start, w.end, w.quoted, cut=cuts[w.end]) if w.end in cuts else w for w in words
    ]


# a simple command's words' nodes, its VAR=x prefixes, its redirects, its words, where it starts and ends
Parts = tuple[list["Node"], dict[str, str], list["Node"], list[Word], int, int]


class Commands:
    """Each simple command's parts (``parts``, ``with_redirects``) and span, read once however often
    a function's body runs it; by the node's id: no two nodes of one tree share one."""

    def __init__(self, chunk: Chunk) -> None:
        self.chunk = chunk
        self.known: dict[int, Parts] = {}  # the commands read with no redirects from around them

    def read(self, node: Node, redirects: list[Node]) -> Parts:
        found = None if redirects else self.known.get(node.id)
        if found is None:
            args, env, every = parts(node, redirects, self.chunk)
            words: list[Word] = []
            start = end = 0
            if args:
                args, words = with_redirects(args, every, self.chunk)
                start, end = self.chunk.span(node)
            found = (args, env, every, words, start, end)
            if not redirects:
                self.known[node.id] = found
        args, env, every, words, start, end = found
        return args, dict(env), every, list(words), start, end  # (a reader may change its own copy)


def is_test(node: Node, chunk: Chunk) -> bool:
    """Whether a command's failure is an answer (a test): what follows its ``&&`` may not run."""
    if node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        return body is not None and is_test(body, chunk)
    if node.type in ("test_command", "negated_command"):
        return True
    name = node.child_by_field_name("name") if node.type == "command" else None
    if name is None:
        return False
    head = basename(chunk.source(name))
    if head in TESTS:
        return True
    if head != "command" and not head.startswith("python"):
        return False  # most commands: their arguments are not read
    args = [chunk.source(a) for a in node.children_by_field_name("argument")]
    return args[:1] == ["-v"] if head == "command" else "-c" in args


def script(node: Node, chunk: Chunk) -> Chunk:
    """The text a ``bash -c '...'`` (or a here-document given to a shell) runs, as a chunk still placed
    in the file: a double-quoted string without its escapes, a single-quoted one without its quotes."""
    start, end = chunk.index(node.start_byte), chunk.index(node.end_byte)
    raw = chunk.text[start:end]
    if node.type == "string":  # what the inner shell reads: the string without its escapes
        kept: list[int] = []
        i = 1
        while i < len(raw) - (raw.endswith('"') and len(raw) > 1):
            if raw[i] == "\\" and raw[i + 1 : i + 2] in ('"', "\\", "$", "`", "\n"):
                i += 1
                if raw[i] == "\n":
                    i += 1
                    continue
            kept.append(i)
            i += 1
        inner_chunk = Chunk("".join(raw[k] for k in kept), positions=[chunk.at(start + k) for k in kept])
    else:
        quoted = node.type == "raw_string"
        inner = raw[1 : -1 if len(raw) > 1 and raw.endswith("'") else None] if quoted else raw
        if chunk.positions is None:
            inner_chunk = Chunk(inner, chunk.at(start + quoted))
        else:
            inner_chunk = Chunk(inner, positions=[chunk.at(start + quoted + k) for k in range(len(inner))])
    return inner_chunk
