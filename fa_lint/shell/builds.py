"""Source builds of flash-attention that a script sets up itself: ``git clone [-b TAG] URL [DIR]``, a
later ``git checkout``/``switch``/``reset`` (``FETCH_HEAD`` after ``git fetch REMOTE REF``), and what
building a folder of that clone installs: flash-attn at the tag, flash-attn-3 from ``hopper``,
flash-attn-4 from ``flash_attn/cute``. A build of a branch, a commit or the default branch is a version
the file does not say.

Every clone is followed, whatever its repository is called; what it builds is what its repository's
``setup.py`` names where the knowledge base records it (``fa_lint.kb.forks``: fxmarty's
flash-attention-rocm builds flash_attn, vllm-project's flash-attention vllm-flash-attn), else
flash-attn for a repository named flash-attention, else what the build command itself says: a
``FLASH_ATTENTION_*`` or ``FLASH_ATTN_*`` variable set on it, which only flash-attn's setup.py reads
(``FLASH_ATTENTION_FORCE_BUILD``, ``FLASH_ATTENTION_TRITON_AMD_ENABLE``, ``FLASH_ATTN_CUDA_ARCHS``...).
A clone of any other repository is no flash-attn build, and a later clone into its folder replaces it.

Every clone, and every file or folder a download puts there (``wget -O FILE``/``-P DIR``, ``curl -o
FILE``, ``tar -x -C DIR``, ``unzip -d DIR``), holds files of another project: ``pip install -r
requirements.txt`` in ``/root/Y`` after ``git clone ... /root/Y`` reads the clone's file, not this
repository's (``foreign``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Mapping

from fa_lint._lazy import Lazy
from fa_lint.kb import forks
from fa_lint.model import FLASH_ATTN, SUBDIRECTORIES, Location, Requirement
from fa_lint.shell.commands import option
from fa_lint.shell.parse import Word
from fa_lint.shell.variables import State, expand
from fa_lint.syntax import pep508

_GIT_VALUE_ARGS = {
    "-b",
    "--branch",
    "--depth",
    "-j",
    "--jobs",
    "-c",
    "--config",
    "-o",
    "--origin",
    "--reference",
}
_COMMIT = Lazy(r"^[0-9a-f]{7,40}$")
# the commands that download or unpack, each with the options that name where the files go
OUTPUTS = {
    "wget": ("-O", "--output-document", "-P", "--directory-prefix"),
    "curl": ("-o", "--output"),
    "tar": ("-C", "--directory"),
    "unzip": ("-d",),
}


def _extracts(flag: str, i: int) -> bool:
    """Whether a tar argument asks to extract: ``-x``, ``--extract``, ``-xzf``, or ``xzf`` first."""
    if flag in ("--extract", "--get"):
        return True
    short = flag[1:] if flag.startswith("-") and not flag.startswith("--") else flag if i == 0 else ""
    return "x" in short and short.isalpha()


class _Clone:
    def __init__(self, url: str) -> None:
        self.url = url
        self.builds = forks.builds(url)  # the distribution its repository builds, when known
        self.ref: str | None = None  # -b TAG or a later checkout
        self.ref_at: Location | None = None  # where that ref is written
        self.unresolved: str | None = None


class Clones:
    """The flash-attention clones of one file, by the folder each was cloned into."""

    def __init__(self, locate: Callable[[Word], Location], source: str) -> None:
        self.locate = locate  # a word's place in the file
        self.source = source
        self.clones: dict[str, _Clone] = {}  # folder -> what was cloned there
        self.fetched: str | None = None  # the ref of the last `git fetch REMOTE REF`, for FETCH_HEAD
        self.downloaded: set[str] = set()  # files and folders a download or an archive put there

    def git(self, args: list[Word], state: State, make: bool) -> None:
        """One ``git`` command's arguments (after ``git``)."""
        cwd = state.cwd
        while len(args) >= 2 and args[0].text in ("-C", "-c"):
            if args[0].text == "-C":
                cwd = state.folder(args[1].text, make)
            args = args[2:]
        if not args:
            return
        verb, rest = args[0].text, args[1:]
        here = State(state.scope, cwd)
        if verb == "clone":
            self._clone(rest, here, make)
        elif verb in ("checkout", "switch", "reset"):
            self._checkout(rest, here, make)
        elif verb == "fetch":
            positional = [w for w in rest if not w.text.startswith("-")]
            self.fetched = positional[-1].text if len(positional) >= 2 else None

    def _clone(self, args: list[Word], state: State, make: bool) -> None:
        positional: list[Word] = []
        ref: Word | None = None
        it: Iterator[Word] = iter(args)
        for word in it:
            value = option(word, ("-b", "--branch"), it)
            if value is not None:
                ref = value
            elif word.text.startswith("-"):
                if word.text in _GIT_VALUE_ARGS:
                    next(it, None)
            else:
                positional.append(word)
        if not positional:
            return
        url = expand(positional[0].text, state.scope, make).text
        repo = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
        clone = _Clone(url.removeprefix("git+"))
        if ref is not None:
            self._set_ref(clone, ref, state, make)
        self.clones[state.folder(positional[1].text if len(positional) > 1 else repo, make)] = clone

    def _set_ref(self, clone: _Clone, word: Word, state: State, make: bool) -> None:
        exp = expand(word.text, state.scope, make)
        clone.ref = word.text if exp.unresolved else exp.text
        clone.unresolved = exp.unresolved
        clone.ref_at = self.locate(word)
        if clone.ref == "FETCH_HEAD" and self.fetched:
            clone.ref = self.fetched

    def _checkout(self, args: list[Word], state: State, make: bool) -> None:
        found = self._clone_of(state.cwd)
        if found is None:
            return
        it = iter(args)
        ref: Word | None = None
        for word in it:
            if word.text == "--":
                break
            if word.text in ("-b", "-B", "-c", "-C"):
                next(it, None)
            elif not word.text.startswith("-"):
                ref = ref or word
        if ref is not None:
            self._set_ref(found[0], ref, state, make)

    def _clone_of(self, folder: str) -> tuple[_Clone, str] | None:
        """The clone a folder is in, and the folder's path inside it."""
        path, inside = folder, ""
        while True:
            if path in self.clones:
                return self.clones[path], inside
            parent, base = posixpath.split(path)
            if not base or parent == path:
                return None
            path, inside = parent, posixpath.join(base, inside).rstrip("/")

    def download(self, head: str, args: list[Word], state: State, make: bool) -> None:
        """Where ``wget``, ``curl``, ``tar -x`` or ``unzip`` puts what it fetched or unpacked."""
        names = OUTPUTS.get(head, ())
        if head == "tar" and not any(_extracts(w.text, i) for i, w in enumerate(args)):
            return  # tar -c makes an archive: nothing comes from elsewhere
        it: Iterator[Word] = iter(args)
        prefix: str | None = None  # wget -P DIR: each URL's file lands in DIR, not all of DIR is new
        urls: list[str] = []
        for word in it:
            value = option(word, names, it) if names else None
            if value is not None and head == "wget" and word.text.startswith(("-P", "--directory-prefix")):
                prefix = value.text
            elif value is not None:
                self.downloaded.add(state.folder(value.text, make))
            elif "://" in word.text:
                urls.append(word.text)
        for url in urls:
            name = posixpath.basename(url.split("?", 1)[0].split("#", 1)[0].rstrip("/"))
            if prefix is not None and name:
                self.downloaded.add(state.folder(posixpath.join(prefix, name), make))

    def foreign(self, path: str) -> bool:
        """Whether ``path`` is in a clone this file made or something it downloaded: another
        project's file, which this repository's file of the same name is not."""
        if self.holds(path):
            return True
        while True:
            if path in self.downloaded:
                return True
            parent = posixpath.dirname(path)
            if not parent or parent == path:
                return False
            path = parent

    def holds(self, folder: str) -> bool:
        """Whether ``folder`` is in a clone this file made, of whatever repository."""
        return self._clone_of(folder) is not None

    def built(
        self, folder: str, command: Location, env: Mapping[str, str] | None = None
    ) -> Requirement | None:
        """What building ``folder`` installs, when it is (a part of) a flash-attention clone;
        ``command`` is where the build is, for a clone whose ref is written nowhere; ``env``, the
        variables set on the build command, may say it runs flash-attn's setup.py."""
        found = self._clone_of(folder)
        if found is None:
            return None
        clone, inside = found
        named = any(k.startswith(("FLASH_ATTENTION_", "FLASH_ATTN_")) for k in env or {})
        if (clone.builds or (FLASH_ATTN if named else None)) != FLASH_ATTN:
            return None  # another package's repository, or one nothing says builds flash-attn
        name = SUBDIRECTORIES.get(inside)
        if name is None:
            return None
        ref = clone.ref
        for prefix in ("refs/tags/", "tags/", "origin/"):
            ref = ref.removeprefix(prefix) if ref else ref
        sub = f"#subdirectory={inside}" if inside else ""
        url = f"git+{clone.url}" + (f"@{ref}" if ref else "") + sub
        version = pep508.tag_version(ref) if name == FLASH_ATTN and not clone.unresolved else None
        fork = forks.fork(clone.url, named=True)  # it builds flash-attn, as said above
        how = ""
        if version is None and fork and ref and name == FLASH_ATTN and not clone.unresolved:
            tagged = forks.tag_version(fork, ref)  # ROCm's v2.6.3-cktile
            version, how = tagged if tagged else (None, "")
        if ref is None:
            what = f"{clone.url} on its default branch"
        elif version is not None or name != FLASH_ATTN:
            what = f"{clone.url} at {ref}" + (f" ({how})" if how else "")
        elif _COMMIT().match(ref):
            what = f"{clone.url} at commit {ref}"
        else:
            what = f"{clone.url} at {ref!r}, a branch or a tag that names no release"
        if fork:
            what += f"; {fork} is a fork of Dao-AILab/flash-attention"
        return Requirement(
            name,
            url,
            clone.ref_at or command,
            self.source,
            version=version,
            url=url,
            unresolved=clone.unresolved,
            build=what,
        )
