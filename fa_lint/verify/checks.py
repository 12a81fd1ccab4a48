"""The checks of ``fa-lint verify``: each runs probe steps in the target interpreter and says
pass, fail or skip, with the reason a user needs.

This module is over 500 lines: the seven checks of one verification, with the reason texts they
owe a user, share one state (what was imported, which entry point, where it came from); split by
check, each module would reach back into the others. What a check knows of the machine is in
``verify/machine.py``.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from packaging.version import InvalidVersion, Version

from fa_lint import kb
from fa_lint.kb import transformers as tf
from fa_lint.verify import machine

PROBE = Path(__file__).with_name("probe.py")
Status = Literal["pass", "fail", "skip"]
FA2_PAGE_MULTIPLE = 256


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    status: Status
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    ok: bool
    result: Any = None
    error: str | None = None  # the exception the step raised
    crash: str | None = None  # the process died, hung, or printed no result


@dataclass
class Probe:
    """Runs one probe step in the target interpreter, in its own process."""

    python: str
    timeout: float = 120.0
    env: dict[str, str] | None = None

    def __call__(
        self, step: str, args: dict[str, Any] | None = None, timeout: float | None = None
    ) -> Outcome:
        limit = timeout or self.timeout
        try:
            proc = subprocess.run(
                [self.python, str(PROBE), step, json.dumps(args or {})],
                capture_output=True,
                text=True,
                timeout=limit,
                env=self.env,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Outcome(False, crash=f"did not finish within {limit:g} s (hung, or still compiling)")
        except OSError as exc:
            return Outcome(False, crash=f"cannot run {self.python}: {exc.strerror or exc}")
        if proc.returncode < 0:
            name = signal.Signals(-proc.returncode).name
            return Outcome(False, crash=f"the interpreter crashed with {name} ({_tail(proc.stderr)})")
        lines = [line for line in proc.stdout.splitlines() if line.strip()]
        try:
            doc = json.loads(lines[-1])
        except (IndexError, json.JSONDecodeError):
            return Outcome(False, crash=f"no result (exit {proc.returncode}): {_tail(proc.stderr)}")
        return Outcome(bool(doc.get("ok")), doc.get("result"), doc.get("error"))


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


@dataclass(frozen=True)
class Target:
    """The flash-attn implementation the later checks look at."""

    distribution: str
    version: str
    module: str
    function: str
    key: str | None  # block_table or page_table, once known


def _page_multiple(target: Target, rocm: bool) -> tuple[int, str]:
    """The page size flash-attn's paged kernel requires a multiple of, and on which backend: 256 on CUDA
    (flash_api.cpp), 128 for the ROCm build's Composable Kernel backend from 2.7.0.post2
    (csrc/flash_attn_ck/mha_fwd_kvcache.cpp), as the knowledge base read them at each tag."""
    try:
        release = kb.load().at(Version(target.version))
    except InvalidVersion:
        release = None
    if rocm:
        found = release.rocm_page_block_multiple if release else None
        return (found, " on ROCm (its CK backend)") if found else (FA2_PAGE_MULTIPLE, "")
    found = release.page_block_multiple if release else None
    return found or FA2_PAGE_MULTIPLE, ""


@dataclass
class Verification:
    probe: Probe
    page_size: int = 256
    require_gpu: bool = False
    state: dict[str, Any] = field(default_factory=dict)

    def steps(self) -> list[tuple[str, str, Callable[[], Check]]]:
        return [
            ("interpreter", "target interpreter", self.interpreter),
            ("distributions", "installed distributions", self.distributions),
            ("source", "source-level signature", self.source),
            ("import", "import", self.import_),
            ("signature", "runtime signature", self.signature),
            ("transformers", "transformers' code path", self.transformers),
            ("kernel", "paged attention call", self.kernel),
        ]

    def run(self, progress: Callable[[int, int, str], None] = lambda i, n, t: None) -> Iterator[Check]:
        steps = self.steps()
        for i, (cid, title, fn) in enumerate(steps, start=1):
            progress(i, len(steps), title)
            blocked = self.state.get("blocked")
            if blocked:
                yield Check(cid, title, "skip", blocked)
                continue
            yield fn()

    def _check(self, cid: str, status: Status, reason: str, **details: Any) -> Check:
        """A check's result; a failure blocks the later checks only where they cannot run without it."""
        title = next(t for i, t, _ in self.steps() if i == cid)
        missing = {"interpreter": "env", "distributions": "target", "import": "imported"}
        if status == "fail" and cid in missing and missing[cid] not in self.state:
            self.state["blocked"] = f"skipped: the {title} check failed"
        return Check(cid, title, status, reason, details)

    # -- 1 --------------------------------------------------------------------------------------
    def interpreter(self) -> Check:
        out = self.probe("env")
        if not out.ok:
            return self._check("interpreter", "fail", out.crash or out.error or "probe failed")
        env = out.result
        self.state["env"] = env
        return self._check(
            "interpreter",
            "pass",
            f"{env['implementation']} {env['python']} at {env['executable']}",
            executable=env["executable"],
            python=env["python"],
            platform=env["platform"],
            libc=env.get("libc") or None,
        )

    # -- 2 --------------------------------------------------------------------------------------
    def distributions(self) -> Check:
        dists: dict[str, Any] = self.state["env"]["distributions"]
        listed = {n: d["version"] for n, d in dists.items()}
        summary = ", ".join(f"{n} {v}" for n, v in listed.items()) or "none"
        found = [n for n in ("flash-attn", "flash_attn_3", "vllm-flash-attn", "flash-attn-4") if n in dists]
        if not found:
            return self._check(
                "distributions",
                "fail",
                f"no flash-attn distribution is installed ({summary})",
                installed=listed,
            )
        name = found[0]
        version = dists[name]["version"]
        module, function, key = {
            "flash-attn": ("flash_attn", "flash_attn_with_kvcache", None),
            "flash_attn_3": ("flash_attn_interface", "flash_attn_with_kvcache", None),
            "vllm-flash-attn": ("vllm_flash_attn", "flash_attn_with_kvcache", None),
            "flash-attn-4": ("flash_attn.cute", "flash_attn_varlen_func", "page_table"),
        }[name]
        self.state["target"] = Target(name, version, module, function, key)
        if name != "flash-attn":
            return self._check(
                "distributions",
                "pass",
                f"{summary}; {name} is checked from its source below",
                installed=listed,
                target=name,
            )
        base = kb.load()
        first = base.first_with(kb.PAGED_KV)
        try:
            v = Version(version)
        except InvalidVersion:
            return self._check(
                "distributions",
                "pass",
                f"{summary}; version {version!r} is not PEP 440",
                installed=listed,
                target=name,
            )
        if Version(v.public) > base.newest.version:
            return self._check(
                "distributions",
                "pass",
                f"{summary}; flash-attn {version} is newer than the knowledge "
                f"base ({base.newest}), assumed to keep block_table",
                installed=listed,
                target=name,
            )
        release = base.at(v)
        if release is None or not release.has(kb.PAGED_KV):
            return self._check(
                "distributions",
                "fail",
                f"flash-attn {version} has no block_table (first in {first}); install flash-attn>={first}",
                installed=listed,
                target=name,
            )
        origin, said = self._origin(name)
        self.state["origin"] = origin
        return self._check(
            "distributions",
            "pass",
            f"{summary}; flash-attn {version} has block_table (since {first}); {said}",
            installed=listed,
            target=name,
            origin=origin,
        )

    def _origin(self, name: str) -> tuple[str, str]:
        """Whether the installed flash-attn is a release wheel or a local build, and what says so.

        PEP 610's direct_url.json tells a URL, a VCS checkout or a local folder; an install from an
        index (PyPI's sdist, whose setup.py fetched a release wheel or compiled) leaves none, and
        then the compiled extension tells: the release workflow builds on GitHub's runners, whose
        paths the compiler writes into it.
        """
        out = self.probe("origin", {"name": name})
        info = out.result if out.ok and isinstance(out.result, dict) else {}
        direct = info.get("direct_url") or {}
        url = str(direct.get("url", ""))
        file = url.rsplit("/", 1)[-1]
        if "dir_info" in direct:
            editable = " (editable)" if direct["dir_info"].get("editable") else ""
            return "local-build", f"a local build from {url}{editable}"
        if "vcs_info" in direct:
            commit = str(direct["vcs_info"].get("commit_id", ""))[:12]
            return "local-build", f"a local build from {direct['vcs_info'].get('vcs', 'vcs')} {url}@{commit}"
        if file.endswith(".whl"):
            release = "/Dao-AILab/flash-attention/releases/download/" in url and "+cu" in file
            return (
                ("release-wheel", f"the release wheel {file}") if release else ("wheel", f"the wheel {url}")
            )
        built = info.get("built_on_runner")
        how = f" from {url}" if url else " from an index"
        if built is True:
            return (
                "release-wheel",
                f"a release wheel (installed{how}: its extension was built on a GitHub runner)",
            )
        if built is False:
            return (
                "local-build",
                f"a local build (installed{how}: its extension was compiled outside the release workflow)",
            )
        return (
            "unknown",
            f"installed{how}; no compiled extension found to tell a release wheel from a local build",
        )

    # -- 3 --------------------------------------------------------------------------------------
    def source(self) -> Check:
        target: Target = self.state["target"]
        out = self.probe("source")
        if not out.ok:
            return self._check("source", "fail", out.crash or out.error or "probe failed")
        info = out.result.get(target.distribution, {})
        path = info.get("file")
        if not path:
            return self._check(
                "source",
                "fail",
                f"{target.distribution} {target.version} has no interface file "
                "where it should be; the install is incomplete",
            )
        params = info.get("varlen" if target.function == "flash_attn_varlen_func" else "kvcache")
        if params is None:
            return self._check("source", "fail", f"{path} defines no {target.function}", file=path)
        key = next((k for k in ("block_table", "page_table") if k in params), None)
        if key is None:
            return self._check(
                "source",
                "fail",
                f"{target.function} in {path} has neither block_table nor page_table: {', '.join(params)}",
                file=path,
                params=params,
            )
        self.state["target"] = Target(
            target.distribution, target.version, target.module, target.function, key
        )
        return self._check(
            "source", "pass", f"{target.function}(..., {key}=...) in {path}", file=path, params=params
        )

    # -- 4 --------------------------------------------------------------------------------------
    def import_(self) -> Check:
        target: Target = self.state["target"]
        out = self.probe("import", {"module": target.module})
        if out.ok:
            self.state["imported"] = True
            return self._check("import", "pass", f"import {target.module} ({out.result.get('file')})")
        message = out.crash or out.error or "import failed"
        details: dict[str, Any] = {"error": message}
        why = machine.import_error(target.distribution, target.version, message, self.state["env"])
        if why is not None:
            details["diagnosis"] = why
            message = f"{message.splitlines()[0][:240]} -- {why}"
        elif "undefined symbol" in message:
            details.update(self._abi(target))
            message = f"{message.splitlines()[0][:240]} -- {details['diagnosis']}"
        return self._check("import", "fail", message, **details)

    def _abi(self, target: Target) -> dict[str, Any]:
        """Why an extension has undefined symbols: the wheel's build tag against the installed torch."""
        dist = self.state["env"]["distributions"].get(target.distribution, {})
        built = " ".join(filter(None, [target.version, dist.get("direct_url") or ""]))
        m = re.search(r"cu(\d+)torch(\d+\.\d+)cxx11abi(TRUE|FALSE)", built, re.I)
        torch = self.probe("torch")
        have = torch.result if torch.ok else {}
        parts = []
        if m and have.get("version"):
            tv = Version(have["version"].split("+")[0])
            if f"{tv.major}.{tv.minor}" != m.group(2):
                parts.append(f"built for torch {m.group(2)}, installed torch is {have['version']}")
            if have.get("cxx11_abi") is not None and (m.group(3).upper() == "TRUE") != have["cxx11_abi"]:
                parts.append(
                    f"built with cxx11abi{m.group(3).upper()}, installed torch uses "
                    f"cxx11abi{str(have['cxx11_abi']).upper()}"
                )
            cuda = have.get("cuda")
            if cuda and m.group(1)[:2] != cuda.replace(".", "")[:2]:
                parts.append(f"built for CUDA {m.group(1)}, torch has CUDA {cuda}")
        python = self.state["env"]["python"]
        py_tag = "cp" + "".join(python.split(".")[:2])
        tags = [t for t in dist.get("wheel_tags", []) if t.startswith("cp")]
        if tags and not any(t.startswith(py_tag + "-") for t in tags):
            parts.append(f"the wheel is tagged {', '.join(tags)}, the interpreter is Python {python}")
        if not parts:
            parts.append(
                f"the extension does not match the installed torch {have.get('version', '(not importable)')}"
                "; reinstall flash-attn with --no-build-isolation or use the wheel built for this torch"
            )
        return {"diagnosis": "torch/C++ ABI mismatch: " + "; ".join(parts), "torch": have, "build": built}

    # -- 5 --------------------------------------------------------------------------------------
    def signature(self) -> Check:
        target: Target = self.state["target"]
        out = self.probe("signature", {"module": target.module, "function": target.function})
        if not out.ok:
            return self._check("signature", "fail", out.crash or out.error or "probe failed")
        params = out.result["params"]
        self.state["transformers"] = out.result.get("transformers")
        key = next((k for k in ("block_table", "page_table") if k in params), None)
        self.state["runtime_key"] = key
        if key is None:
            return self._check(
                "signature",
                "fail",
                f"inspect.signature({target.function}) has neither block_table nor page_table",
                params=params,
            )
        note = "" if key == target.key else f" (the source file said {target.key}: stale bytecode or a shim?)"
        return self._check("signature", "pass", f"{target.function} accepts {key}{note}", params=params)

    # -- 6 --------------------------------------------------------------------------------------
    def transformers(self) -> Check:
        view = self.state.get("transformers")
        if view is None:
            return self._check(
                "transformers", "skip", "transformers is not installed in the target interpreter"
            )
        version = Version(view["version"])
        facts = tf.load()
        ours = self.state.get("runtime_key") is not None
        target: Target = self.state["target"]
        if version < facts.key_check:
            return self._check(
                "transformers",
                "pass",
                f"transformers {version} does not decode with a block table "
                f"(that starts in {facts.key_check})",
                **view,
            )
        if version < facts.fa2_block_table_on_cuda and target.distribution == "flash-attn":
            return self._check(
                "transformers",
                "pass",
                f"transformers {version} takes the block-table decode path "
                f"only with FA3 on CUDA; with flash-attn 2 it decodes without one",
                **view,
            )
        fa4_since = facts.fa4_block_table_on_cuda
        if target.distribution == "flash-attn-4" and (fa4_since is None or version < fa4_since):
            known = "" if version <= facts.newest_read else f" (as of {facts.newest_read}, the newest read)"
            return self._check(
                "transformers",
                "pass",
                f"transformers {version} takes the block-table decode path only with flash-attn 2/3"
                f"{known}; with flash-attn-4 it decodes through flash_attn_varlen_func without one",
                **view,
            )
        uses_key = "block_table_key" in view or "block_table_key_error" in view
        if uses_key and version < facts.silent_drop:
            theirs = "block_table_key" in view
            said = (
                f"get_block_table_key returns {view['block_table_key']!r}"
                if theirs
                else f"get_block_table_key raises: {view['block_table_key_error'][:160]}"
            )
        elif "supports" in view:
            theirs = view["supports"]["block_table"] or view["supports"]["page_table"]
            said = (
                "passes the block table as "
                + ("block_table" if view["supports"]["block_table"] else "page_table")
                if theirs
                else "would silently drop the block table (neither block_table nor page_table)"
            )
        else:
            return self._check(
                "transformers",
                "skip",
                f"transformers {version} has neither get_block_table_key nor "
                f"the kwargs processing that replaced it ({view.get('cache_error', '')})",
                **view,
            )
        if theirs != ours:
            return self._check(
                "transformers",
                "fail",
                f"fa-lint and transformers {version} disagree: transformers "
                f"{said}, fa-lint found {'a' if ours else 'no'} paged-KV parameter",
                **view,
            )
        status: Status = "pass" if theirs else "fail"
        return self._check("transformers", status, f"transformers {version} {said}", **view)

    # -- 7 --------------------------------------------------------------------------------------
    def kernel(self) -> Check:
        target: Target = self.state["target"]
        torch = self.probe("torch")
        if not torch.ok:
            return self._check("kernel", "fail", f"torch is not importable: {torch.crash or torch.error}")
        sm = torch.result.get("capability")
        capability = f"sm_{sm[0]}{sm[1]}" if isinstance(sm, list) and len(sm) == 2 else None
        if not torch.result["cuda_available"]:
            status: Status = "fail" if self.require_gpu else "skip"
            return self._check(
                "kernel",
                status,
                f"no CUDA device (torch {torch.result['version']}); the paged call "
                "needs a GPU" + (" and --require-gpu was given" if self.require_gpu else ""),
            )
        if self.state.get("runtime_key") is None:
            return self._check(
                "kernel", "skip", f"{target.function} has no block_table or page_table to call with"
            )
        runs, arch = machine.gpu(target.distribution, target.version, self.state.get("origin"), torch.result)
        if runs is False:  # the call would only raise or find no kernel: say which, and why
            return self._check(
                "kernel", "fail", f"{arch} (on {capability})", capability=capability, arch=arch
            )
        multiple, backend = _page_multiple(target, bool(torch.result.get("hip")))
        if target.distribution == "flash-attn" and self.page_size % multiple:
            return self._check(
                "kernel",
                "fail",
                f"page size {self.page_size} is not a multiple of {multiple}, which flash-attn 2 requires "
                f"for paged KV{backend}",
            )
        args = {
            "module": target.module,
            "function": target.function,
            "key": self.state.get("runtime_key"),
            "page_size": self.page_size,
        }
        out = self.probe("kernel", args, timeout=max(self.probe.timeout, 600))
        if not out.ok:
            reason = out.crash or out.error or "probe failed"
            return self._check(
                "kernel",
                "fail",
                f"{reason} (on {capability}){'; ' + arch if arch else ''}",
                capability=capability,
            )
        if "skipped" in out.result:
            return self._check("kernel", "fail" if self.require_gpu else "skip", out.result["skipped"])
        results = out.result["results"]
        bad = [r for r in results if r["max_abs_error"] > r["tolerance"] or r["cache_appended"] is False]
        appended = {True: "cache appended, ", False: "CACHE NOT APPENDED, ", None: ""}
        figures = "; ".join(
            f"{r['dtype']}: max abs error {r['max_abs_error']:.2e} (tolerance {r['tolerance']:g}), "
            f"{appended[r['cache_appended']]}{r['ms']:.3f} ms"
            for r in results
        )
        device = f"{out.result['device']} ({capability})" if capability else out.result["device"]
        status = "fail" if bad else "pass"
        reason = f"{device}: {figures}" + (f"; {arch}" if arch else "")
        return self._check("kernel", status, reason, capability=capability, arch=arch, **out.result)
