"""``fa-lint wheel [PATHS]``: the official flash-attn wheel that installs on each machine the files
describe, with its URL and sha256 where known, or why none does and the nearest release that has one.

The machine is what the rules read (``Context.toolchain``, ``Context.target``): the torch an environment
ends with, its CUDA, CPython and C++ ABI, and whether the files say it is Arm. ``--torch``, ``--cuda``,
``--python``, ``--abi`` and ``--platform`` describe a machine no file does, or replace what the files
say. The release asked about is the one the environment's flash-attn requirement installs (the newest
its range and constraints admit, ``rules._fixes.taken``), or ``--release``; with neither, the newest
release with paged KV that has a wheel there. Nothing is fetched: the answers come from the knowledge
base (``docs/wheels.md``).

Exit codes: 0 every machine answered has a wheel for the release it installs (or, asked about none, some
release has one); 1 some has none, or whether it has is unknown; 2 usage, or nothing to answer.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from fa_lint import kb
from fa_lint._records import NamedTuple
from fa_lint.cli.args import UsageError
from fa_lint.kb import Availability, Release
from fa_lint.kb.assess import Policy
from fa_lint.machine.toolchain import Toolchain, cuda_version, exact
from fa_lint.model import FLASH_ATTN, Kind, Requirement
from fa_lint.rules._wheelfiles import ARM, PLATFORMS, Machine, WheelFile, files, nearest, status, why_not

if TYPE_CHECKING:
    from fa_lint.machine.environments import Environment
    from fa_lint.machine.target import Target
    from fa_lint.rules._base import Context

FLAGS = "the command line"
NEWEST = "the newest release its range and the rest of its install admit: pip and uv install that one"
BY_URL = "the file its URL names (FAL005 judges its name against the machine)"
_PLATFORM = {"x86_64": PLATFORMS[0], "amd64": PLATFORMS[0], "aarch64": ARM, "arm64": ARM}
_PLATFORM.update({p: p for p in PLATFORMS})


class Asked(NamedTuple):
    """One machine and the release asked about there."""

    names: tuple[str, ...]  # the environments that describe it, or the command line
    machine: Machine | None  # None: no torch is known
    said: tuple[tuple[str, str], ...]  # (part, where it is read)
    requirement: Requirement | None = None
    release: Release | None = None
    why: str = ""  # why that release


class Answer(NamedTuple):
    asked: Asked
    status: Availability | None
    files: tuple[WheelFile, ...]
    reason: str
    nearest: Release | None
    nearest_files: tuple[WheelFile, ...]
    maybe: Release | None = None  # with none surely: the nearest whose wheel here is unknown

    @property
    def found(self) -> bool:
        if self.asked.release is None:
            return self.nearest is not None
        return self.status is Availability.YES


class _Parser(argparse.ArgumentParser):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_abbrev=False, **kwargs)

    def error(self, message: str) -> NoReturn:
        from fa_lint.report._common import printable

        super().error(printable(message))


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="fa-lint wheel",
        description="The official flash-attn wheel that installs on each machine the files describe "
        "(torch, CUDA, CPython, C++ ABI, platform), with URL and sha256 where known, or why none does "
        "and the nearest release that has one. From fa-lint's knowledge base; nothing is fetched.",
        epilog="Exit 0: every machine has a wheel for the release it installs; 1: some has none, or it "
        "is unknown; 2: usage, or nothing to answer.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to read the machines from")
    p.add_argument("--torch", metavar="X.Y", help="torch major.minor (2.10), instead of the files'")
    p.add_argument("--cuda", metavar="X.Y", help="torch's CUDA (12.8, cu128, cpu)")
    p.add_argument("--python", metavar="3.Y", help="the CPython (3.12, cp312)")
    p.add_argument("--abi", choices=("new", "old"), help="torch's C++ ABI: new (cxx11abiTRUE) or old")
    p.add_argument("--platform", choices=sorted(_PLATFORM), help="the machine (linux_x86_64 by default)")
    p.add_argument("--release", metavar="VERSION", help="the flash-attn release to ask about")
    p.add_argument("--format", choices=("text", "json"), default="text")
    return p


def _flags(args: argparse.Namespace) -> dict[str, str | bool | tuple[str, ...]]:
    """The machine parts given on the command line, read into the knowledge base's spelling."""
    given: dict[str, str | bool | tuple[str, ...]] = {}
    if args.torch is not None:
        m = re.fullmatch(r"(\d+\.\d+)(?:\.\d+)?(?:\+\S+)?", args.torch.strip())
        if m is None:
            raise UsageError(f"--torch {args.torch!r}: give torch's major.minor, e.g. 2.10")
        given["torch"] = m.group(1)
    if args.cuda is not None:
        given["cuda"] = _cuda(args.cuda.strip().lower())
    if args.python is not None:
        m = re.fullmatch(r"(?:cp)?3\.?(\d+)(?:\.\d+)?", args.python.strip().lower())
        if m is None:
            raise UsageError(f"--python {args.python!r}: give a CPython, e.g. 3.12")
        given["pythons"] = (f"3.{m.group(1)}",)
    if args.abi is not None:
        given["cxx11_abi"] = args.abi == "new"
    if args.platform is not None:
        given["platform"] = _PLATFORM[args.platform]
    return given


def _cuda(text: str) -> str:
    if text in ("cpu",) or text.startswith("rocm"):
        return text
    found = cuda_version(text) if text.startswith("cu") else text
    if found is None or not re.fullmatch(r"\d+\.\d+", found):
        raise UsageError(f"--cuda {text!r}: give torch's CUDA, e.g. 12.8 or cu128, or cpu")
    return found


def _said(given: dict[str, Any]) -> list[tuple[str, str]]:
    names = {"torch": "--torch", "cuda": "--cuda", "pythons": "--python", "cxx11_abi": "--abi"}
    return [(part, flag) for part, flag in names.items() if part in given] + (
        [("platform", "--platform")] if "platform" in given else []
    )


def _default_abi(torch: str) -> tuple[bool | None, str]:
    """The ABI of torch ``torch``'s official PyPI build, as the knowledge base read each release."""
    from packaging.specifiers import SpecifierSet

    from fa_lint.kb import torch as torch_kb

    abi = torch_kb.load().cxx11_abi(SpecifierSet(f"=={torch}.*").to_range())
    return abi, f"torch {torch}'s official build; --abi to say otherwise"


def _from_flags(given: dict[str, Any], release: Release | None) -> Asked:
    said = _said(given)
    torch = given.get("torch")
    if torch is None:
        return Asked((FLAGS,), None, tuple(said), release=release, why="--release")
    if "cxx11_abi" not in given:
        abi, where = _default_abi(torch)
        if abi is not None:
            given = {**given, "cxx11_abi": abi}
            said.append(("cxx11_abi", where))
    machine = Machine(**{k: v for k, v in given.items()})
    return Asked((FLAGS,), machine, tuple(said), release=release, why="--release" if release else "")


def _answer(asked: Asked, base: kb.KnowledgeBase, usable: Callable[[Release], bool]) -> Answer:
    m = asked.machine
    if m is None:
        return Answer(asked, None, (), "", None, ())
    releases = [r for r in base.installable if not r.version.is_prerelease]
    release = asked.release
    found = status(release, m) if release is not None else None
    if release is not None and found is Availability.YES:
        return Answer(asked, found, tuple(files(release, m)), "", None, ())
    anchor = len(releases) - 1
    if release is not None:
        order = [r.version for r in base.installable]
        anchor = sum(1 for r in releases if order.index(r.version) < order.index(release.version))
    near = nearest(releases, anchor, m, usable)
    reason = why_not(release, m) if release is not None else ""
    by_url = tuple(files(release, m)) if release is not None else ()
    maybe = None if near else nearest(releases, anchor, m, usable, Availability.UNKNOWN)
    return Answer(asked, found, by_url, reason, near, tuple(files(near, m)) if near else (), maybe)


def main(argv: Sequence[str], out: TextIO) -> int:
    args = parser().parse_args(list(argv))
    given = _flags(args)
    base = kb.load()
    release = None
    if args.release is not None:
        release = base.get(args.release.strip())
        if release is None:
            raise UsageError(f"--release {args.release!r}: no such flash-attn release in the knowledge base")
    paths = args.paths or ([] if "torch" in given else ["."])  # no machine given: the current folder's
    if paths:
        found = answers(paths, given, release, base)
    else:
        policy = Policy.default(base)
        found = [_answer(_from_flags(given, release), base, policy.good)]
    if not found:
        raise UsageError(
            f"no environment in {', '.join(paths)} says which torch it has or installs flash-attn; "
            "describe the machine with --torch, --cuda, --python"
        )
    if args.format == "json":
        out.write(json.dumps({"knowledge_base": base.date, "machines": [record(a) for a in found]}, indent=2))
        out.write("\n")
    else:
        out.write("\n".join(text(a) for a in found))
    return 0 if all(a.found for a in found) else 1


def _files(found: Sequence[WheelFile]) -> list[dict[str, Any]]:
    return [
        {
            "file": f.file,
            "url": f.url,
            "sha256": f.sha256,
            "python": f.python,
            "cxx11_abi": f.cxx11_abi,
            "fetched_by_setup_py": f.fetched,
            "source": f.at,
        }
        for f in found
    ]


def record(a: Answer) -> dict[str, Any]:
    m, req = a.asked.machine, a.asked.requirement
    return {
        "environments": list(a.asked.names),
        "machine": None if m is None else {**m._asdict(), "pythons": list(m.pythons)},
        "said": dict(a.asked.said),
        "requirement": None if req is None else {"text": req.raw, "location": str(req.location)},
        "release": None if a.asked.release is None else str(a.asked.release.version),
        "release_why": a.asked.why or None,
        "wheel": None if a.status is None else a.status.value,
        "files": _files(a.files),
        "reason": a.reason or None,
        "nearest": None
        if a.nearest is None
        else {"release": str(a.nearest.version), "files": _files(a.nearest_files)},
        "unknown": None if a.maybe is None else str(a.maybe.version),
    }


def _parts(m: Machine) -> list[tuple[str, str]]:
    """Each part of the machine as the text says it, with its key in ``Asked.said``."""
    abi = "either C++ ABI" if m.cxx11_abi is None else f"C++ ABI {'new' if m.cxx11_abi else 'old'}"
    python = f"CPython {', '.join(m.pythons)}" if m.pythons else "any CPython"
    cuda = [("cuda", f"CUDA {m.cuda}")] if m.cuda is not None else []
    return [
        ("torch", f"torch {m.torch}"),
        *cuda,
        ("pythons", python),
        ("cxx11_abi", abi),
        ("platform", m.platform),
    ]


def _machine_lines(a: Answer) -> list[str]:
    m = a.asked.machine
    if m is None:
        return ["  torch: no file says which torch it has; give --torch (and --cuda, --python)"]
    said = dict(a.asked.said)
    parts = _parts(m)
    width = max(len(t) for _, t in parts)
    return [f"  {t.ljust(width)}  {said[k]}".rstrip() if k in said else f"  {t}" for k, t in parts]


def _file_lines(found: Sequence[WheelFile], indent: str = "    ") -> list[str]:
    lines = []
    for f in found:
        by_url = "" if f.fetched else "  (by URL only: setup.py asks for another name)"
        lines += [
            indent + f.file + by_url,
            f"{indent}  url:    {f.url}",
            f"{indent}  sha256: {f.sha256 or 'not published in a listing fa-lint reads'}",
            f"{indent}  from:   {f.at}",
        ]
    return lines


def text(a: Answer) -> str:
    lines = [", ".join(a.asked.names), *_machine_lines(a)]
    release, req = a.asked.release, a.asked.requirement
    if req is not None:
        installs = f"flash-attn {release}" if release else "a release fa-lint cannot tell"
        installs = BY_URL if a.asked.why == BY_URL else installs
        lines.append(f"  {req.raw} ({req.location}) installs {installs}")
    if release is not None and a.status is Availability.YES:
        return (
            "\n".join([*lines, f"  flash-attn {release}: a prebuilt wheel installs", *_file_lines(a.files)])
            + "\n"
        )
    if release is not None:
        answer = "unknown" if a.status is Availability.UNKNOWN else "no prebuilt wheel"
        lines += [f"  flash-attn {release}: {answer}: {a.reason}", *_file_lines(a.files)]
    if a.maybe is not None:
        lines.append(
            f"  no release with paged KV surely has a wheel here; whether {a.maybe}'s has is unknown"
        )
    elif a.asked.machine is not None and a.nearest is None:
        lines.append("  no release with paged KV has a wheel for this machine")
    elif a.nearest is not None:
        what = "nearest release" if release is not None else "newest release"
        lines += [
            f"  {what} with paged KV and a wheel here: flash-attn {a.nearest}",
            *_file_lines(a.nearest_files),
        ]
    return "\n".join(lines) + "\n"


# --- the machines the files describe ----------------------------------------------------------------


def answers(
    paths: Sequence[str], given: dict[str, Any], release: Release | None, base: kb.KnowledgeBase
) -> list[Answer]:
    """One answer per machine the files' environments describe (the same machine and release once)."""
    from fa_lint import engine
    from fa_lint.rules._installs import suits

    ctx = engine.context(paths)
    found: dict[tuple[object, ...], Answer] = {}
    for env in ctx.environments:
        req = _flash_attn(env)
        built = ctx.building(env, req) if req is not None else env
        tools, target = ctx.toolchain(built), ctx.target(built)
        if tools.torch is None and req is None and "torch" not in given:
            continue  # an environment with neither torch nor flash-attn says nothing of a wheel
        asked = _asked(ctx, env.name, req, tools, target, given, release)
        req_at = None if req is None else (req.location, req.raw)
        key = (asked.machine, asked.said, req_at, asked.release.version if asked.release else None)
        if key in found:
            old = found[key]
            found[key] = old._replace(asked=old.asked._replace(names=(*old.asked.names, env.name)))
            continue

        def usable(r: Release, tools: Toolchain = tools, target: Target = target) -> bool:
            return ctx.policy.good(r) and suits(r, target, tools)

        found[key] = _answer(asked, base, usable)
    return list(found.values())


def _flash_attn(env: Environment) -> Requirement | None:
    """The environment's flash-attn from an index, whose setup.py looks for a wheel (as FAL011 reads it)."""
    reqs = [r for r in (*env.of(FLASH_ATTN), *env.of(FLASH_ATTN, locked=True)) if r.kind in _ASKS]
    for req in reqs:
        conda = req.tool == "conda" and req.scope != "pip"
        local = req.version is not None and req.version.local
        if not req.unresolved and req.url is None and not conda and not local:
            return req
    # else a file by URL: no setup.py looks for a wheel, but the machine is still worth answering for
    return next((r for r in reqs if r.url), None)


_ASKS = (Kind.INSTALL, Kind.OVERRIDE, Kind.LOCK)


def _asked(
    ctx: Context,
    name: str,
    req: Requirement | None,
    tools: Toolchain,
    target: Target,
    given: dict[str, Any],
    release: Release | None,
) -> Asked:
    from fa_lint.rules._fixes import taken

    machine, said = _machine(tools, target, given)
    if release is not None:
        return Asked((name,), machine, said, req, release, "--release")
    if req is None:
        return Asked((name,), machine, said)
    if req.url is not None:
        return Asked((name,), machine, said, req, why=BY_URL)
    chosen = taken(req, ctx)
    why = "its pin" if exact(req) is not None else NEWEST
    return Asked((name,), machine, said, req, chosen, why)


def _machine(
    tools: Toolchain, target: Target, given: dict[str, Any]
) -> tuple[Machine | None, tuple[tuple[str, str], ...]]:
    said = _said(given)
    torch = given.get("torch") or (tools.torch.value if tools.torch else None)
    if torch is None:
        return None, tuple(said)
    read = {
        "torch": tools.torch,
        "cuda": tools.cuda,
        "pythons": tools.python,
    }
    for part, known in read.items():
        if part not in given and known is not None:
            said.append((part, known.where))
    abi = given.get("cxx11_abi", tools.cxx11_abi)
    if "cxx11_abi" not in given and tools.cxx11_abi is not None:
        said.append(("cxx11_abi", tools.abi_where))
    platform = given.get("platform")
    if platform is None:
        platform, where = _platform(target)
        if where:
            said.append(("platform", where))
    machine = Machine(
        torch,
        given.get("cuda", tools.cuda.value if tools.cuda else None),
        given.get("pythons", tools.pythons),
        abi,
        platform,
    )
    return machine, tuple(said)


def _platform(target: Target) -> tuple[str, str]:
    """aarch64 where a file says so for certain; else x86_64, naming a file that says it may be Arm."""
    certain = [c for c in target.cpus if not c.possible]
    if certain:
        return ARM, certain[0].where
    if target.cpus:
        return PLATFORMS[0], f"assumed; the files say it may be aarch64: {target.cpus[0].where}"
    return PLATFORMS[0], ""
