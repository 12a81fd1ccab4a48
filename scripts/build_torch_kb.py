#!/usr/bin/env python3
"""Regenerate fa_lint/kb/torch.json: who pins torch, and what each torch release is built with.

Maintainer script; fa-lint never runs it. Everything comes from published metadata, read over
HTTP from PyPI's simple index (PEP 691 JSON) -- nothing is installed or imported:

- for every release of each package in ``PACKAGES``, the ``Requires-Dist`` lines that name torch
  (and those that name another package of the list, so a chain such as sglang -> vllm -> torch
  can be followed), read from one Linux x86_64 (or pure-Python) wheel's PEP 658 ``.metadata``
  file, or, for a release with only an sdist, from the sdist's ``PKG-INFO`` / ``*.egg-info/
  requires.txt`` (streamed, stopped once found);
- for every torch release, from its default PyPI Linux x86_64 wheel: the CUDA it is built with (its
  ``nvidia-cuda-runtime-cuXX==`` requirement; before 1.13 the wheel bundles CUDA and
  ``torch/version.py`` says it) and its C++ ABI (the mangled name of ``c10::Error``'s constructor
  in ``torch/lib/libc10.so``; up to 2.7 also ``TorchConfig.cmake``'s ``-D_GLIBCXX_USE_CXX11_ABI``),
  read from inside the wheel with HTTP range requests (under a megabyte of a wheel of hundreds);
- with ``--flash-attention REPO`` (a flash-attention git checkout), the lines of its release
  workflow at ``main`` that say which torch minors need no FALSE-ABI wheel: flash-attn's own account
  of the ABI change, beside torch's.

Facts no script here can reach (the pytorch conda channel, NGC images) are ``DATA`` below, each with
its source. Responses are cached (``--cache``, default ``~/.cache/fa-lint/torch-kb``); ``--refresh``
re-reads the release lists (the per-file metadata never changes once published).

    python scripts/build_torch_kb.py --flash-attention ../.mirror/Dao-AILab+flash-attention/repo
"""

from __future__ import annotations

import argparse
import datetime as dt
import email.parser
import hashlib
import io
import json
import re
import struct
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
import zlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

INDEX = "https://pypi.org/simple/"
OUTPUT = Path(__file__).parents[1] / "fa_lint/kb/torch.json"

# The packages whose torch requirement the knowledge base records, and why each is here. The survey:
# ../shared/corpus (47 real files that install flash-attn; "N files" counts the files naming the
# package beside flash-attn) and public repositories found with the search tool's code corpus
# (install scripts and Dockerfiles that put flash-attn beside these). A package that pins torch
# exactly or with an upper bound moves the torch a flash-attn wheel was built for; one with a lower
# bound only can still make a pinned torch unsatisfiable.
PACKAGES: dict[str, str] = {
    "vllm": "pins torch exactly in every release; installed after flash-attn in RL/serving images "
    "(verl, OpenRLHF Dockerfiles in the corpus; 26 corpus files)",
    "xformers": "pins torch exactly per release; the most common package beside flash-attn "
    "(285 mentions in the corpus: unsloth, LLaVA, axolotl requirements)",
    "torchvision": "pins torch exactly per release; installed with torch in most files (82 mentions)",
    "torchaudio": "pins torch exactly per release (71 mentions)",
    "torchtext": "pins torch exactly per release (24 mentions)",
    "torchdata": "pinned torch exactly in its early releases (corpus: torchdata beside torchtext)",
    "sglang": "pins torch (and vllm, flashinfer) in its srt extras; serving/RL stacks beside flash-attn",
    "flashinfer-python": "flashinfer's PyPI name (the name 'flashinfer' has no PyPI project); "
    "installed by sglang and vllm beside flash-attn",
    "unsloth": "pins torch and xformers through per-CUDA/torch extras (181 mentions: its pyproject)",
    "unsloth-zoo": "unsloth's runtime dependency, with its own torch requirement",
    "autoawq": "pins torch exactly in some releases (corpus: autoawq beside flash-attn)",
    "auto-gptq": "requires torch; beside flash-attn in quantisation setups (8 mentions)",
    "bitsandbytes": "requires torch in a range (96 mentions)",
    "deepspeed": "requires torch; installed after flash-attn in training images (28 mentions)",
    "mamba-ssm": "builds against torch like flash-attn (9 mentions: nanotron mamba example)",
    "causal-conv1d": "builds against torch, installed with mamba-ssm (5 mentions)",
    "liger-kernel": "requires torch>=; beside flash-attn in axolotl/trl setups (13 mentions)",
    "torchao": "torch's quantisation library, versioned with torch (3 mentions)",
    "peft": "requires torch>= (22 mentions)",
    "accelerate": "requires torch>= (45 mentions)",
    "trl": "depends on accelerate/torch (9 mentions)",
    "timm": "requires torch (22 mentions)",
    "pytorch-lightning": "requires torch in a range (10 mentions)",
    "lightning": "requires torch in a range (3 mentions)",
    "torchmetrics": "requires torch>= (10 mentions)",
    "torchrl": "pins torch per release in some (16 mentions)",
    "transformer-engine-torch": "TransformerEngine's torch part (16 mentions of transformer_engine)",
    "axolotl": "pins torch in its requirements (corpus: axolotl requirements.txt)",
    "llamafactory": "LLaMA-Factory on PyPI: a torch range (search: its Dockerfiles install flash-attn)",
    "open-clip-torch": "requires torch (1 mention)",
    "lmdeploy": "pins torch with an upper bound; serving stacks beside flash-attn",
}

# torch releases read for their own facts: every release with a Linux x86_64 wheel on PyPI from
# this one on (flash-attn's oldest wheels are for torch 1.12; older ones for completeness).
TORCH_FROM = Version("1.8.0")

# Facts no script here reaches (no public index or metadata holds them), each with its source.
DATA: dict[str, Any] = {
    "conda": {
        # conda install -c pytorch pytorch=X: the pytorch channel's builds
        "pytorch": {
            "last": "2.5",
            "cxx11_abi": False,
            "sources": [
                "https://github.com/pytorch/pytorch/issues/138506 (as quoted in "
                "https://github.com/scikit-learn/scikit-learn/issues/30390): '2.5 will be the last "
                "release of PyTorch that will be published to the pytorch channel on Anaconda'",
                "pytorch/builder conda/pytorch-nightly/build.sh (commit 02aceb42): the conda builds "
                'link export USE_LLVM="/opt/llvm_no_cxx11_abi", the old-ABI toolchain of the '
                "manylinux build images, as the pip wheels of those releases (TorchConfig.cmake "
                "-D_GLIBCXX_USE_CXX11_ABI=0, read below)",
            ],
        },
        # conda-forge's own pytorch builds use its compilers' default, the new ABI
        "conda-forge": {
            "cxx11_abi": True,
            "sources": [
                "AcademySoftwareFoundation/openvdb fvdb CMake check: 'PyTorch package does not use "
                "the C++11 ABI. Please install PyTorch with the C++11 ABI (e.g. conda-forge package)'",
            ],
        },
    },
    # download.pytorch.org builds whose ABI differs from the release's PyPI wheel (the index itself
    # is not reachable from here): torch minor -> CUDA tag -> cxx11_abi
    "pytorch_index": {
        "cxx11_abi": {"2.6": {"cu126": True}},
        "sources": [
            "volcengine/verl docker/Dockerfile.ngc.vllm0.8 at a687255a, lines 47-49: "
            "'# torch-2.6.0+cu124: cxx11abi=False', '# torch-2.6.0+cu126: cxx11abi=True', "
            "'# see https://github.com/flashinfer-ai/flashinfer/issues/911' (flashinfer publishes "
            "cu126/torch2.6 wheels for the new ABI on that ground)",
        ],
    },
    "images": {
        "pytorch/pytorch": {
            "torch": "the tag's release (pytorch/pytorch:2.4.0-cuda12.1-cudnn9-devel: torch 2.4.0)",
            "cxx11_abi": "the release's official build: the value in 'torch' below for that release",
            "sources": [
                "pytorch/pytorch Dockerfile (commit 01343dcd): the 'official' stage copies /opt/conda "
                "from 'conda-installs', which runs pip install --extra-index-url "
                "https://download.pytorch.org/${INSTALL_CHANNEL}/${CUDA_VERSION#.}/ torch torchvision "
                "torchaudio: the release's own wheels; earlier images conda-installed the pytorch "
                "channel's build of the same release, built with the same old ABI (conda above)",
            ],
        },
        "nvcr.io/nvidia/pytorch": {
            "cxx11_abi": True,
            "sources": [
                "Dao-AILab/flash-attention .github/workflows/publish.yml at v2.8.3.post1 and main, "
                "lines 44-47: 'Pytorch wheels currently don't use it, but nvcr images have Pytorch "
                "compiled with C++11 ABI'",
            ],
            # container tag -> the torch it is based on, and its CUDA; only rows with a source
            "tags": {
                "25.12": {
                    "torch": "2.10.0a0+b4e4ee81d3",
                    "cuda": "13.1",
                    "python": "3.12",
                    "source": "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/"
                    "rel-25-12.html: 'PyTorch container image version 25.12 is based on "
                    "2.10.0a0+b4e4ee81d3', 'Release 25.12 is based on CUDA 13.1.0', "
                    "'/usr/local/lib/python3.12/dist-packages/torch'",
                },
            },
        },
    },
}

_CUDA_RUNTIME = re.compile(r"^nvidia-cuda-runtime-cu(\d+)$")
_ABI_FLAG = re.compile(r"-D_GLIBCXX_USE_CXX11_ABI=([01])")
_VERSION_PY_CUDA = re.compile(r"^cuda(?::[^=]*)?\s*=\s*(?:'([^']*)'|\"([^\"]*)\"|None)", re.M)
_ERROR_OLD_ABI = b"_ZN3c105ErrorC2ENS_14SourceLocationESs"
_ERROR_NEW_ABI = b"_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_string"
_SDIST_LIMIT = 64 << 20  # bytes of an sdist read while looking for its metadata


class Fetcher:
    """HTTP GETs with an on-disk cache: a URL's body (or a byte range of it) is fetched once."""

    def __init__(self, cache: Path, refresh: bool) -> None:
        self.cache = cache
        self.refresh = refresh
        cache.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.cache / hashlib.sha256(key.encode()).hexdigest()[:32]

    def get(
        self,
        url: str,
        *,
        accept: str = "",
        start: int | None = None,
        end: int | None = None,
        volatile: bool = False,
    ) -> bytes:
        key = f"{url} {accept} {start}-{end}"
        path = self._path(key)
        if path.exists() and not (volatile and self.refresh):
            return path.read_bytes()
        headers = {"User-Agent": "fa-lint build_torch_kb"}
        if accept:
            headers["Accept"] = accept
        if start is not None:
            headers["Range"] = f"bytes={start}-{'' if end is None else end}"
        for attempt in range(4):
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=120) as r:
                    body = bytes(r.read())
                break
            except OSError:
                if attempt == 3:
                    raise
        path.write_bytes(body)
        return body

    def stream(self, url: str) -> Any:
        return urllib.request.urlopen(
            urllib.request.Request(url, headers={"User-Agent": "fa-lint"}), timeout=120
        )


def project(fetch: Fetcher, name: str) -> dict[str, Any]:
    """PyPI's PEP 691 JSON page for a project: its versions and files."""
    body = fetch.get(f"{INDEX}{name}/", accept="application/vnd.pypi.simple.v1+json", volatile=True)
    doc: dict[str, Any] = json.loads(body)
    return doc


def _version(filename: str, name: str) -> Version | None:
    stem = (
        filename[: -len(".whl")]
        if filename.endswith(".whl")
        else re.sub(r"\.(tar\.gz|zip|tar\.bz2)$", "", filename)
    )
    parts = stem.split("-")
    if filename.endswith(".whl"):
        text = parts[1] if len(parts) >= 5 else ""
    else:  # sdist: name-version, where the name may itself hold dashes
        norm = canonicalize_name(name)
        text = next(
            (
                "-".join(parts[i:])
                for i in range(1, len(parts))
                if canonicalize_name("-".join(parts[:i])) == norm
            ),
            "",
        )
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _wheel_rank(filename: str) -> tuple[int, int] | None:
    """How well a wheel stands for the release on Linux x86_64: lower is better; None: not Linux x86_64."""
    tags = filename[: -len(".whl")].split("-")
    if len(tags) < 5:
        return None
    python, abi, platform = tags[-3], tags[-2], tags[-1]
    if platform != "any" and not ("linux" in platform and "x86_64" in platform):
        return None
    if python.startswith("py3") or abi == "abi3" or platform == "any":
        return (0, 0)
    order = ["cp311", "cp310", "cp312", "cp39", "cp313", "cp38", "cp314"]
    pys = python.split(".")
    best = min((order.index(p) for p in pys if p in order), default=len(order))
    return (1, best)


def releases(fetch: Fetcher, name: str) -> list[tuple[Version, dict[str, Any] | None, list[dict[str, Any]]]]:
    """Each release of ``name``: its version, the wheel read for it (None: sdist only), all its files."""
    doc = project(fetch, name)
    by_version: dict[Version, list[dict[str, Any]]] = {}
    for f in doc["files"]:
        v = _version(f["filename"], name)
        if v is not None:
            by_version.setdefault(v, []).append(f)
    out = []
    for v in sorted(by_version):
        files = by_version[v]
        wheels = [
            (rank, f)
            for f in files
            if f["filename"].endswith(".whl") and (rank := _wheel_rank(f["filename"]))
        ]
        wheels.sort(key=lambda t: (t[0], t[1]["filename"]))
        out.append((v, wheels[0][1] if wheels else None, files))
    return out


def metadata(fetch: Fetcher, wheel: dict[str, Any]) -> tuple[str, str]:
    """A wheel's METADATA and where it was read: PEP 658's ``.metadata`` file, or (where the index
    has none, as for wheels uploaded before PyPI served them) the wheel's own, by range requests."""
    try:
        return fetch.get(wheel["url"] + ".metadata").decode("utf-8", "replace"), wheel[
            "filename"
        ] + ".metadata"
    except OSError:
        pass
    zipped = RemoteZip(fetch, wheel["url"], wheel["size"])
    name = next(n for n in zipped.names if n.endswith(".dist-info/METADATA"))
    return zipped.read(name).decode("utf-8", "replace"), f"{wheel['filename']}:{name}"


def sdist_metadata(fetch: Fetcher, files: list[dict[str, Any]]) -> tuple[list[str], str] | str:  # noqa: C901 - complexity 11, to split or justify (issue 45)
    """The requirements an sdist publishes: PKG-INFO's Requires-Dist when static (Metadata-Version 2.2+
    without 'Dynamic: Requires-Dist'), else setuptools' ``*.egg-info/requires.txt``. A string: why
    none could be read."""
    sdists = [f for f in files if f["filename"].endswith((".tar.gz", ".zip"))]
    if not sdists:
        return "no wheel for Linux x86_64 and no sdist"
    sdist = sdists[0]
    found: dict[str, str] = {}
    body = fetch.get(sdist["url"]) if sdist["size"] <= _SDIST_LIMIT else None
    if body is None:
        return f"{sdist['filename']}: over {_SDIST_LIMIT >> 20} MB, not read"
    if sdist["filename"].endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(body)) as z:
            for n in z.namelist():
                if _sdist_member(n):
                    found.setdefault(n, z.read(n).decode("utf-8", "replace"))
    else:
        with tarfile.open(fileobj=io.BytesIO(body)) as tar:
            for m in tar:
                data = tar.extractfile(m) if m.isfile() and _sdist_member(m.name) else None
                if data is not None:
                    found.setdefault(m.name, data.read().decode("utf-8", "replace"))
    info = next((t for n, t in found.items() if n.count("/") == 1 and n.endswith("/PKG-INFO")), None)
    if info is not None:
        msg = email.parser.Parser().parsestr(info)
        dynamic = {d.lower() for d in msg.get_all("Dynamic") or []}
        static = (
            Version(msg.get("Metadata-Version", "1.0")) >= Version("2.2") and "requires-dist" not in dynamic
        )
        if static or msg.get_all("Requires-Dist"):
            return list(msg.get_all("Requires-Dist") or []), f"{sdist['filename']}:PKG-INFO"
    egg = next((k for k in found if k.endswith(".egg-info/requires.txt")), None)
    if egg is not None:
        return _egg_requires(found[egg]), f"{sdist['filename']}:{egg}"
    return f"{sdist['filename']}: no static Requires-Dist and no egg-info/requires.txt"


def _sdist_member(name: str) -> bool:
    """The sdist's own PKG-INFO (top folder) or its egg-info's requires.txt."""
    return (name.count("/") == 1 and name.endswith("/PKG-INFO")) or (
        name.count("/") <= 2 and name.endswith(".egg-info/requires.txt")
    )


def _egg_requires(text: str) -> list[str]:
    """setuptools' requires.txt as Requires-Dist lines: ``[extra:marker]`` sections become markers."""
    out: list[str] = []
    marker = ""
    for written in text.splitlines():
        line = written.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            extra, _, cond = line[1:-1].partition(":")
            parts = [f'extra == "{extra}"'] if extra else []
            parts += [f"({cond})"] if cond else []
            marker = " and ".join(parts)
            continue
        out.append(f"{line}; {marker}" if marker else line)
    return out


def torch_requirements(lines: Iterable[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The Requires-Dist lines on torch, and those on another package of PACKAGES (the chain)."""
    torch: list[dict[str, Any]] = []
    via: list[dict[str, Any]] = []
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        spec = str(req.specifier)
        if req.url:  # name @ https://.../xformers-0.0.27.post2-...whl: the version its file name fixes
            pinned = _version(req.url.rsplit("/", 1)[-1].split("#")[0].replace("%2B", "+"), name)
            spec = f"=={pinned.public}" if pinned is not None else ""
        entry = {"spec": spec, "marker": str(req.marker) if req.marker else None}
        if name == "torch":
            torch.append(entry)
        elif name in PACKAGES:
            via.append({"name": name, **({"extras": sorted(req.extras)} if req.extras else {}), **entry})
    return torch, via


def package_release(
    fetch: Fetcher, name: str, version: Version, wheel: dict[str, Any] | None, files: list[dict[str, Any]]
) -> dict[str, Any]:
    row: dict[str, Any] = {"version": str(version)}
    uploaded = min((f.get("upload-time") or "" for f in files), default="")[:10]
    if uploaded:
        row["uploaded"] = uploaded
    if all(f.get("yanked") for f in files):
        row["yanked"] = True
    if wheel is not None:
        text, where = metadata(fetch, wheel)
        lines = email.parser.Parser().parsestr(text).get_all("Requires-Dist") or []
    else:
        got = sdist_metadata(fetch, files)
        if isinstance(got, str):
            row["unknown"] = got
            return row
        lines, where = got
    torch, via = torch_requirements(lines)
    row["read"] = where
    row["torch"] = torch
    if via:
        row["via"] = via
    return row


class RemoteZip:
    """A zip file on a server that honours Range: its central directory, and one member at a time.

    Written by hand: zipfile needs a seekable file, and reading a 700 MB torch wheel to learn two
    kilobytes of it is what this avoids.
    """

    def __init__(self, fetch: Fetcher, url: str, size: int) -> None:
        self.fetch, self.url = fetch, url
        tail = fetch.get(url, start=max(0, size - 65536), end=size - 1)
        i = tail.rfind(b"PK\x05\x06")
        cd_size, cd_offset = struct.unpack("<II", tail[i + 12 : i + 20])
        if cd_offset == 0xFFFFFFFF:  # zip64
            j = tail.rfind(b"PK\x06\x06")
            cd_size, cd_offset = struct.unpack("<QQ", tail[j + 40 : j + 56])
        cd = fetch.get(url, start=cd_offset, end=cd_offset + cd_size - 1)
        self.members: dict[str, tuple[int, int, int]] = {}
        p = 0
        while cd[p : p + 4] == b"PK\x01\x02":
            (method,) = struct.unpack("<H", cd[p + 10 : p + 12])
            csize, usize = struct.unpack("<II", cd[p + 20 : p + 28])
            nlen, elen, clen = struct.unpack("<HHH", cd[p + 28 : p + 34])
            (offset,) = struct.unpack("<I", cd[p + 42 : p + 46])
            name = cd[p + 46 : p + 46 + nlen].decode("utf-8", "replace")
            extra = cd[p + 46 + nlen : p + 46 + nlen + elen]
            q = 0
            while q + 4 <= len(extra):  # the zip64 extra field holds the values that overflowed
                hid, hlen = struct.unpack("<HH", extra[q : q + 4])
                if hid == 1:
                    vals, k = extra[q + 4 : q + 4 + hlen], 0
                    for field in ("usize", "csize", "offset"):
                        if {"usize": usize, "csize": csize, "offset": offset}[field] == 0xFFFFFFFF:
                            (value,) = struct.unpack("<Q", vals[k : k + 8])
                            k += 8
                            usize, csize, offset = (
                                value if field == "usize" else usize,
                                value if field == "csize" else csize,
                                value if field == "offset" else offset,
                            )
                q += 4 + hlen
            self.members[name] = (method, csize, offset)
            p += 46 + nlen + elen + clen

    @property
    def names(self) -> list[str]:
        return list(self.members)

    def read(self, name: str) -> bytes:
        method, csize, offset = self.members[name]
        header = self.fetch.get(self.url, start=offset, end=offset + 29)
        nlen, elen = struct.unpack("<HH", header[26:30])
        start = offset + 30 + nlen + elen
        data = self.fetch.get(self.url, start=start, end=start + csize - 1) if csize else b""
        return zlib.decompress(data, -15) if method == 8 else data


def _line_of(text: str, pattern: re.Pattern[str]) -> tuple[int, str, re.Match[str]] | None:
    for n, line in enumerate(text.splitlines(), start=1):
        m = pattern.search(line)
        if m:
            return n, line.strip(), m
    return None


def torch_release(
    fetch: Fetcher, version: Version, wheel: dict[str, Any], files: list[dict[str, Any]]
) -> dict[str, Any]:
    """One torch release's default Linux x86_64 wheel: its CUDA and C++ ABI, with what says each."""
    row: dict[str, Any] = {
        "version": str(version),
        "uploaded": min(f.get("upload-time") or "" for f in files)[:10],
    }
    row["wheel"] = wheel["filename"]
    evidence: dict[str, str] = {}
    text, _ = metadata(fetch, wheel)
    for line in email.parser.Parser().parsestr(text).get_all("Requires-Dist") or []:
        req = Requirement(line)
        m = _CUDA_RUNTIME.match(canonicalize_name(req.name))
        pins = [s.version for s in req.specifier if s.operator == "=="]
        if (
            m
            and pins
            and (
                not req.marker
                or req.marker.evaluate(
                    {"platform_system": "Linux", "platform_machine": "x86_64", "sys_platform": "linux"}
                )
            )
        ):
            cuda = ".".join(pins[0].split(".")[:2])
            row["cuda"] = cuda
            evidence["cuda"] = f"{wheel['filename']}.metadata: Requires-Dist: {line}"
            break
    zipped = RemoteZip(fetch, wheel["url"], wheel["size"])
    version_py = zipped.read("torch/version.py").decode("utf-8", "replace")
    found = _line_of(version_py, _VERSION_PY_CUDA)
    if found:
        n, line, m = found
        bundled = m.group(1) or m.group(2)
        evidence["version.py"] = f"{wheel['filename']}:torch/version.py:{n}: {line}"
        if "cuda" not in row:
            row["cuda"] = bundled or "cpu"
            evidence["cuda"] = evidence["version.py"]
        elif bundled and bundled != row["cuda"]:
            raise SystemExit(f"torch {version}: metadata says CUDA {row['cuda']}, version.py {bundled}")
    # The C++ ABI, from the library itself: c10::Error's constructor takes a std::string, mangled
    # "Ss" under the old ABI and "NSt7__cxx1112basic_string..." under the new one -- the very symbol
    # flash-attn's publish.yml quotes for a FALSE-ABI wheel on a new-ABI torch.
    library = zipped.read("torch/lib/libc10.so")
    old, new = library.count(_ERROR_OLD_ABI), library.count(_ERROR_NEW_ABI)
    if bool(old) != bool(new):
        row["cxx11_abi"] = bool(new)
        symbol = (_ERROR_NEW_ABI if new else _ERROR_OLD_ABI).decode()
        evidence["cxx11_abi"] = f"{wheel['filename']}:torch/lib/libc10.so defines {symbol}..."
    # Releases up to 2.7 also say so in TorchConfig.cmake; where both speak they must agree.
    config = next((n for n in zipped.names if n.endswith("share/cmake/Torch/TorchConfig.cmake")), None)
    if config is not None:
        found = _line_of(zipped.read(config).decode("utf-8", "replace"), _ABI_FLAG)
        if found:
            n, line, m = found
            evidence["TorchConfig.cmake"] = f"{wheel['filename']}:{config}:{n}: {line}"
            if row.get("cxx11_abi", m.group(1) == "1") != (m.group(1) == "1"):
                raise SystemExit(f"torch {version}: libc10.so and TorchConfig.cmake disagree on the C++ ABI")
    row["evidence"] = evidence
    return row


def torch_facts(fetch: Fetcher) -> list[dict[str, Any]]:
    picked = []
    for version, _, files in releases(fetch, "torch"):
        if version < TORCH_FROM or version.is_prerelease or version.is_devrelease:
            continue
        linux = sorted(
            (
                f
                for f in files
                if f["filename"].endswith(".whl") and "x86_64" in f["filename"] and "linux" in f["filename"]
            ),
            key=lambda f: (_wheel_rank(f["filename"]) or (9, 9), f["filename"]),
        )
        if linux:
            picked.append((version, linux[0], files))
    with ThreadPoolExecutor(6) as pool:
        return list(pool.map(lambda t: torch_release(fetch, *t), picked))


def flash_attn_statement(repo: Path) -> list[str]:
    """The lines of flash-attn's release workflow at main that say which torch needs no FALSE-ABI wheel."""
    text = subprocess.run(
        ["git", "-C", str(repo), "show", "main:.github/workflows/publish.yml"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "main"], check=True, capture_output=True, text=True
    ).stdout.strip()
    lines = text.splitlines()
    out = []
    for n, line in enumerate(lines, start=1):
        if re.search(r"CXX11_ABI=1 by default|Pytorch wheels currently don't use it|nvcr images", line):
            out.append(
                f"Dao-AILab/flash-attention@{commit[:12]}:.github/workflows/publish.yml:{n}: {line.strip()}"
            )
    excluded = re.findall(r'- torch-version: "([\d.]+)"\s*\n\s*cxx11_abi: "FALSE"', text)
    if excluded:
        out.append(f"the same file excludes cxx11_abi FALSE for torch {', '.join(excluded)}")
    return out


_TIGHT = {"==", "===", "<", "<=", "~="}
_PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")


def _on_linux(marker: str | None) -> bool:
    """Whether a marker can hold on Linux x86_64 (for some CPython, with the extras it names)."""
    if not marker:
        return True
    from packaging.markers import Marker

    parsed = Marker(marker)
    extras = re.findall(r"extra\s*==\s*[\"']([^\"']+)[\"']", marker) or [""]
    return any(
        parsed.evaluate(
            {
                "python_version": py,
                "python_full_version": f"{py}.0",
                "platform_system": "Linux",
                "platform_machine": "x86_64",
                "sys_platform": "linux",
                "os_name": "posix",
                "extra": extra,
            }
        )
        for py in _PYTHONS
        for extra in extras
    )


def compact(packages: dict[str, Any]) -> dict[str, Any]:  # noqa: C901 - complexity 11, to split or justify (issue 45)
    """The form the data file keeps. Each package lists its distinct requirement lines once
    (``deps``), its distinct sets of them once (``requires``, indexes into ``deps``), and each release
    points at its set. A release keeps its lines on torch, on itself with extras (one extra pulling
    in others: unsloth's), and on the packages that pin torch exactly in some release (vllm,
    xformers, torchvision...): one that only bounds torch (accelerate's ``torch>=2.0``,
    bitsandbytes' ``<3``) moves no torch a chain through it could reach. Lines that hold on no Linux
    x86_64 CPython are dropped."""
    exact = {
        name
        for name, p in packages.items()
        for r in p["releases"]
        for t in r.get("torch", ())
        if "==" in t["spec"]
    }
    out: dict[str, Any] = {}
    for name, p in packages.items():
        deps: list[list[Any]] = []
        dep_index: dict[str, int] = {}
        sets: list[list[int]] = []
        set_index: dict[str, int] = {}
        rows = []

        def number(
            entry: list[Any], deps: list[list[Any]] = deps, dep_index: dict[str, int] = dep_index
        ) -> int:
            key = json.dumps(entry)
            if key not in dep_index:
                dep_index[key] = len(deps)
                deps.append(entry)
            return dep_index[key]

        for r in p["releases"]:
            row = {k: r[k] for k in ("version", "uploaded", "yanked", "unknown", "read") if k in r}
            if "unknown" not in r:
                lines = [["torch", t["spec"], t["marker"]] for t in r["torch"] if _on_linux(t["marker"])]
                lines += [
                    [v["name"], v["spec"], v["marker"], *([v["extras"]] if v.get("extras") else [])]
                    for v in r.get("via", ())
                    if (v["name"] in exact or (v["name"] == name and v.get("extras")))
                    and _on_linux(v["marker"])
                ]
                numbers = sorted({number(line) for line in lines})
                key = json.dumps(numbers)
                if key not in set_index:
                    set_index[key] = len(sets)
                    sets.append(numbers)
                row["requires"] = set_index[key]
            rows.append(row)
        out[name] = {"why": p["why"], "deps": deps, "requires": sets, "releases": rows}
    # Whether installing the newest release puts torch in place, directly or through the packages
    # of the list (trl -> accelerate -> torch): what 'torch installed before a build' asks.
    newest = {
        name: next((r for r in reversed(p["releases"]) if "unknown" not in r), None)
        for name, p in packages.items()
    }
    brings = {
        n for n, r in newest.items() if r is not None and any(_on_linux(t["marker"]) for t in r["torch"])
    }
    grew = True
    while grew:
        grew = False
        for n, r in newest.items():
            if (
                n not in brings
                and r is not None
                and any(v["name"] in brings and not v["marker"] for v in r.get("via", ()))
            ):
                brings.add(n)
                grew = True
    for n, doc in out.items():
        doc["brings_torch"] = n in brings
    return out


def _dump(doc: dict[str, Any]) -> str:
    """JSON with one release per line: the file stays readable and its diffs small."""

    def rows(items: list[Any], indent: str) -> str:
        if not items:
            return "[]"
        return (
            "[\n"
            + ",\n".join(indent + json.dumps(r, sort_keys=False) for r in items)
            + "\n"
            + indent[:-1]
            + "]"
        )

    parts = []
    for key, value in doc.items():
        if key == "torch":
            text = rows(value, "  ")
        elif key == "packages":
            inner = [
                f'  {json.dumps(name)}: {{"why": {json.dumps(p["why"])}, "brings_torch": '
                f'{json.dumps(p["brings_torch"])}, "deps": {rows(p["deps"], "    ")}, '
                f'"requires": {rows(p["requires"], "    ")}, "releases": {rows(p["releases"], "    ")}}}'
                for name, p in value.items()
            ]
            text = "{\n" + ",\n".join(inner) + "\n }"
        else:
            text = json.dumps(value, indent=1).replace("\n", "\n ")
        parts.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache/fa-lint/torch-kb")
    ap.add_argument("--refresh", action="store_true", help="re-read the release lists from the index")
    ap.add_argument("--flash-attention", type=Path, help="a flash-attention git checkout (bare is fine)")
    ap.add_argument("--only", nargs="*", help="read these packages only (for a quick look; writes nothing)")
    ap.add_argument("--output", type=Path, default=OUTPUT)
    args = ap.parse_args(argv)
    fetch = Fetcher(args.cache, args.refresh)

    packages: dict[str, Any] = {}
    for name in args.only or PACKAGES:
        rows = releases(fetch, name)
        with ThreadPoolExecutor(8) as pool:
            read = list(pool.map(lambda t, n=name: package_release(fetch, n, t[0], t[1], t[2]), rows))
        packages[name] = {"why": PACKAGES.get(name, ""), "releases": read}
        pinned = sum(1 for r in read if r.get("torch"))
        unknown = sum(1 for r in read if "unknown" in r)
        print(
            f"{name}: {len(read)} releases, {pinned} with a torch requirement, {unknown} unreadable",
            file=sys.stderr,
        )
    if args.only:
        print(json.dumps(packages, indent=1))
        return 0
    torch = torch_facts(fetch)
    abi_change = next((r["version"] for r in torch if r.get("cxx11_abi")), None)
    print(f"torch: {len(torch)} releases; the first with the new C++ ABI: {abi_change}", file=sys.stderr)
    statement = flash_attn_statement(args.flash_attention) if args.flash_attention else []
    doc = {
        "schema": 1,
        "generated": dt.date.today().isoformat(),
        "generator": "scripts/build_torch_kb.py",
        "index": INDEX,
        "abi_change": {"first_new_abi": abi_change, "flash_attn_says": statement},
        "torch": torch,
        "packages": compact(packages),
        **DATA,
    }
    args.output.write_text(_dump(doc))
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
