"""Images built by other projects' own workflows: which distribution each published tag runs, read
from the project's git history (scripts/build_images_kb.py calls this; fa-lint never runs it).

- continuumio/miniconda3 (ContinuumIO/docker-images): each ``miniconda3-v*`` git tag is pushed by the
  workflows whose ``on.push.tags`` globs take it, as the tag docker/metadata-action's
  ``type=match,pattern=...,group=N[,suffix=...]`` makes of it, built from the Dockerfile its
  docker/build-push-action step names. Two workflows that push one tag from different bases make it
  unknown (the ``-alpine`` tags of 2021-2022 were pushed by both).
- condaforge/miniforge3 and its siblings (conda-forge/miniforge-images): every commit of the default
  branch that changes the build, with the ``MINIFORGE_NAME``/``MINIFORGE_VERSION``/``DOCKERFILE`` matrix
  of its CI file; the CI pushes ``condaforge/${MINIFORGE_NAME/M/m}:latest`` and ``:${MINIFORGE_VERSION}``
  on every such commit, so a tag is what it last pointed at.

A base image reference (``debian:12.5-slim@sha256:...``, ``ubuntu:focal-20240530``) is resolved with the
official-images tags the caller read. A Dockerfile that names CUDA or nvcc is an error: these images are
recorded as carrying no nvcc, and a script that cannot say so must not write it.
"""

from __future__ import annotations

import fnmatch
import itertools
import re
from pathlib import Path
from typing import Any

import yaml
from gitrepo import git, git_file

_FROM = re.compile(r"^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+[Aa][Ss]\s+(\S+))?", re.M)


class DerivedError(Exception):
    """A record shaped in a way this script does not know."""


def resolve(reference: str, tags: dict[str, dict[str, str]]) -> str | None:
    """The distribution of an official image reference, by the tags official-images recorded."""
    ref = re.sub(r"^(?:docker\.io/)?(?:library/)?", "", reference.split("@", 1)[0])
    name, _, tag = ref.partition(":")
    if name == "alpine":
        return "alpine"
    return tags.get(name, {}).get(tag or "latest")


def final_base(text: str) -> tuple[str, int] | None:
    """The image the last stage of a Dockerfile starts from, through ``FROM stage``, and its line."""
    stages: dict[str, tuple[str, int]] = {}
    last = None
    for m in _FROM.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        ref = m.group(1)
        found = stages.get(ref, (ref, line))
        if m.group(2):
            stages[m.group(2)] = found
        last = found
    return last


def _no_cuda(text: str, where: str) -> None:
    if re.search(r"cuda|nvcc", text, re.I):
        raise DerivedError(f"{where} names CUDA: this script records these images as carrying no nvcc")


# --- continuumio/miniconda3 --------------------------------------------------------------------------


Build = tuple[str, str, int, str, str]  # image, match pattern, group, suffix, Dockerfile


def _pushes(workflow: dict[Any, Any]) -> tuple[list[str], list[Build]]:
    """A workflow's push tag globs, and (image, match pattern, group, suffix, Dockerfile) it builds."""
    on = workflow.get("on", workflow.get(True, {})) or {}  # PyYAML reads a bare `on:` key as True
    push = on.get("push", {}) if isinstance(on, dict) else {}
    globs = [str(g) for g in (push.get("tags") or [])] if isinstance(push, dict) else []
    out: list[Build] = []
    for job in (workflow.get("jobs") or {}).values():
        meta: dict[str, Any] | None = None
        for step in job.get("steps") or []:
            uses = str(step.get("uses", ""))
            with_ = step.get("with") or {}
            if uses.startswith("docker/metadata-action@"):
                meta = with_
            elif uses.startswith("docker/build-push-action@") and meta is not None:
                dockerfile = str(with_.get("file", "")).removeprefix("./")
                for line in str(meta.get("tags", "")).splitlines():
                    fields = dict(f.split("=", 1) for f in line.strip().split(",") if "=" in f)
                    if fields.get("type") == "match":
                        out.append(
                            (
                                str(meta["images"]).strip(),
                                fields["pattern"],
                                int(fields.get("group", "0")),
                                fields.get("suffix", ""),
                                dockerfile,
                            )
                        )
    return globs, out


def miniconda(repo: Path, tags: dict[str, dict[str, str]]) -> dict[str, Any]:
    head = git(repo, "rev-parse", "HEAD").strip()[:12]
    found: dict[str, dict[str, str]] = {}
    conflicts: set[tuple[str, str]] = set()
    for git_tag in git(repo, "tag", "-l", "miniconda3-v*").split():
        for path in git(repo, "ls-tree", "--name-only", git_tag, ".github/workflows/").split():
            text = git_file(repo, git_tag, path)
            if text is None:
                continue
            globs, builds = _pushes(yaml.safe_load(text) or {})
            if not any(fnmatch.fnmatchcase(git_tag, g) for g in globs):
                continue
            for image, pattern, group, suffix, dockerfile in builds:
                m = re.fullmatch(pattern, git_tag)
                docker = git_file(repo, git_tag, dockerfile) if m else None
                if m is None or docker is None:
                    continue
                _no_cuda(docker, f"{git_tag}:{dockerfile}")
                base = final_base(docker)
                if base is None:
                    raise DerivedError(f"{git_tag}:{dockerfile}: no FROM")
                tag = m.group(group) + suffix
                distro = resolve(base[0], tags)
                row = {"distro": distro or "", "at": f"{git_tag}:{dockerfile}:{base[1]} FROM {base[0]}"}
                before = found.get(tag)
                if before is not None and before["distro"] != row["distro"]:
                    conflicts.add((image, tag))
                found[tag] = row
    rows = {
        t: r
        for t, r in sorted(found.items())
        if r["distro"] and ("continuumio/miniconda3", t) not in conflicts
    }
    return {
        "image": "continuumio/miniconda3",
        "nvcc": False,
        "registries": [""],
        "tags": rows,
        "unknown": sorted(t for _, t in conflicts),
        "source": f"ContinuumIO/docker-images@{head}: each miniconda3-v* git tag, the workflow that pushes "
        "it (on.push.tags, docker/metadata-action type=match) and the FROM of the Dockerfile it builds; "
        "no CUDA toolkit is installed there",
    }


# --- condaforge/miniforge3 ---------------------------------------------------------------------------

_CI = ("azure-pipelines.yml", ".github/workflows/")
_KEYS = ("MINIFORGE_NAME", "MINIFORGE_VERSION", "DOCKERFILE")
_PUSH = re.compile(r"condaforge/\$\{MINIFORGE_NAME/M/m\}:(?:latest|\$\{MINIFORGE_VERSION\})")


def _matrix(node: Any) -> list[dict[str, str]]:
    """Every mapping that names MINIFORGE_NAME and MINIFORGE_VERSION, wherever the CI file nests it."""
    out = []
    if isinstance(node, dict):
        if "MINIFORGE_NAME" in node and "MINIFORGE_VERSION" in node:
            # a GitHub matrix lists values (each combination is a job), an Azure one names one each
            values = [node[k] if isinstance(node.get(k), list) else [node.get(k, "ubuntu")] for k in _KEYS]
            for name, version, dockerfile in itertools.product(*values):
                if "$" not in f"{name}{version}{dockerfile}":
                    out.append({"name": str(name), "version": str(version), "dockerfile": str(dockerfile)})
        for value in node.values():
            out += _matrix(value)
    elif isinstance(node, list):
        for value in node:
            out += _matrix(value)
    return out


def miniforge(repo: Path, tags: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    head = git(repo, "rev-parse", "HEAD").strip()[:12]
    branch = git(repo, "symbolic-ref", "--short", "HEAD").strip()
    commits = git(repo, "log", "--first-parent", "--reverse", "--format=%H", branch).split()
    images: dict[str, dict[str, dict[str, str]]] = {}
    for commit in commits:
        files = [
            p
            for p in git(repo, "ls-tree", "-r", "--name-only", commit).split()
            if p == _CI[0] or (p.startswith(_CI[1]) and p.endswith((".yml", ".yaml")))
        ]
        for path in files:
            text = git_file(repo, commit, path) or ""
            if not _PUSH.search(text):
                continue  # this file builds nothing it pushes (tests, autoupdate)
            for row in _matrix(yaml.safe_load(text)):
                dockerfile = f"{row['dockerfile']}/Dockerfile"
                docker = git_file(repo, commit, dockerfile)
                if docker is None:
                    raise DerivedError(f"{commit[:12]}:{path} builds {dockerfile}, which it does not have")
                _no_cuda(docker, f"{commit[:12]}:{dockerfile}")
                base = final_base(docker)
                if base is None:
                    raise DerivedError(f"{commit[:12]}:{dockerfile}: no FROM")
                distro = resolve(base[0], tags)
                if distro is None:
                    raise DerivedError(
                        f"{commit[:12]}:{dockerfile}: {base[0]} is no tag official-images lists"
                    )
                image = "condaforge/" + row["name"].replace("M", "m", 1)
                at = f"{commit[:12]}:{dockerfile}:{base[1]} FROM {base[0]} ({path})"
                for tag in (row["version"], "latest"):
                    images.setdefault(image, {})[tag] = {"distro": distro, "at": at}
    return [
        {
            "image": image,
            "nvcc": False,
            "registries": ["", "quay.io/"],
            "tags": dict(sorted(rows.items())),
            "unknown": [],
            "source": f"conda-forge/miniforge-images@{head}: each commit of {branch} that pushes "
            "condaforge/${MINIFORGE_NAME/M/m}:${MINIFORGE_VERSION} and :latest, its matrix and the FROM of "
            "the Dockerfile it builds (a tag is what it last pointed at); no CUDA toolkit is installed there",
        }
        for image, rows in sorted(images.items())
    ]


# --- Modal's own base images --------------------------------------------------------------------------

_DEBIAN_SLIM = re.compile(r'f"FROM python:\{full_python_version\}-slim-\{debian_codename\}"')
_MICROMAMBA = re.compile(r'f"mambaorg/micromamba:\{micromamba_version\}"')


def modal(wheel: Path, debian: dict[str, str]) -> dict[str, Any]:
    """``modal.Image.debian_slim()`` and ``micromamba()`` from the modal client's own source: the Dockerfile
    each writes (``FROM python:{version}-slim-{codename}``; mambaorg/micromamba) and the Debian release
    of each image-builder version (``modal/builder/base-images.json``). The builder version is a
    workspace setting no project file states, so the distribution is one of these."""
    import json
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        source = z.read("modal/_image.py").decode()
        config = json.loads(z.read("modal/builder/base-images.json"))
    out: dict[str, Any] = {"wheel": wheel.name}
    for name, pattern, group in (
        ("debian_slim", _DEBIAN_SLIM, "debian"),
        ("micromamba", _MICROMAMBA, "micromamba"),
    ):
        m = pattern.search(source)
        start = source.find(f"    def {name}(")
        end = source.find("\n    def ", source.find("return _Image._from_args", start))
        if m is None or start < 0 or not start < m.start() < end:
            raise DerivedError(f"{wheel.name}: modal/_image.py {name} writes no FROM this script knows")
        body = source[start:end]
        _no_cuda(body, f"{wheel.name}:modal/_image.py {name}")
        line = source.count("\n", 0, m.start()) + 1
        distros = {}
        for builder, value in sorted(config[group].items()):
            codename = value if group == "debian" else re.search(r"(debian\d+|[a-z]+)-slim$", value).group(1)  # type: ignore[union-attr]
            distro = f"debian-{codename[6:]}" if codename.startswith("debian") else debian.get(codename)
            if distro is None:
                raise DerivedError(f"{wheel.name}: builder {builder}'s {value} names no Debian release known")
            distros[builder] = distro
        out[name] = {
            "nvcc": False,
            "distros": distros,
            "source": f"{wheel.name}: modal/_image.py:{line} {m.group(0)} (no CUDA toolkit installed); "
            f"modal/builder/base-images.json {group!r} per image-builder version",
        }
    return out
