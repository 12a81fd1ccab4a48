"""One module per file format, each with ``parse(path, text)``, and the catalogue of which file names
are which format.

A parser returns located records -- requirements, includes and problems -- and never raises on
bad input, never runs the file, and never touches the network.

The catalogue is data: each format's name patterns and the name of its module, which is imported
the first time a file of that format is read. A run pays for the parsers (and their libraries:
PyYAML, tree-sitter, pip-requirements-parser) of the formats it finds, not for all of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from fa_lint.model import Parsed

# Whether the requirement on a package (its PEP 503 name) at an install step and scope is one the
# reader above drops as it arrives (fa_lint.files.read: no rule reads the package, and that step and scope
# have a record already). A format with many entries (``Source.drops``) builds no record for those,
# but still reports what is wrong with them.
Dropped = Callable[[str, int, str], bool]


class _Module(Protocol):
    def parse(self, path: str, text: str) -> Iterable[Parsed]: ...

    def sniff(self, head: str, *, complete: bool) -> bool: ...


class _Dropping(Protocol):
    def parse(self, path: str, text: str, dropped: Dropped) -> Iterable[Parsed]: ...


class Source:
    """A format: the names that say a file is one, and the module that reads it."""

    def __init__(
        self,
        name: str,
        module: str,
        patterns: tuple[str, ...],
        candidates: tuple[str, ...] = (),
        *,
        drops: bool = False,
    ) -> None:
        self.name = name  # the records' ``source``, and the module's NAME
        self.patterns = patterns  # globs a walk picks files by (pre-commit's ``files`` too)
        self.candidates = candidates  # names that may be this format; ``sniff`` decides by the head
        self.module_name = f"{__name__}.{module}"
        self.drops = drops  # its module's parse takes ``dropped`` (see Dropped)

    @property
    def module(self) -> _Module:
        return cast(_Module, importlib.import_module(self.module_name))

    def parse(self, path: str, text: str, dropped: Dropped | None = None) -> Iterable[Parsed]:
        if dropped is not None and self.drops:
            return cast(_Dropping, self.module).parse(path, text, dropped)
        return self.module.parse(path, text)

    def sniff(self, head: str, *, complete: bool) -> bool:
        """Whether the head of a candidate file shows it is this format."""
        return self.module.sniff(head, complete=complete)

    def __repr__(self) -> str:
        return f"Source({self.name!r}, {self.module_name!r})"


# Order matters: discovery gives a file to the first source whose pattern matches it.
SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source("pylock", "pylock", ("pylock.toml", "pylock.*.toml")),
        Source("uv.lock", "uv_lock", ("uv.lock",)),
        Source("poetry.lock", "poetry_lock", ("poetry.lock",)),
        Source("pdm.lock", "pdm_lock", ("pdm.lock",)),
        Source("pipfile.lock", "pipfile_lock", ("Pipfile.lock",), drops=True),
        Source("pixi.lock", "pixi_lock", ("pixi.lock",)),
        Source(
            "conda-lock",
            "conda_lock",
            ("conda-lock.yml", "conda-lock.yaml", "*.conda-lock.yml", "*.conda-lock.yaml"),
        ),
        Source("pipfile", "pipfile", ("Pipfile",)),
        Source("pyproject", "pyproject", ("pyproject.toml",)),
        Source("pixi", "pixi", ("pixi.toml",)),
        Source("setup.cfg", "setup_cfg", ("setup.cfg",)),
        Source("setup.py", "setup_py", ("setup.py",)),
        Source("tox", "tox", ("tox.ini",)),
        Source("nox", "nox", ("noxfile.py",)),
        Source(
            "conda",
            "conda",
            ("environment.yml", "environment.yaml", "environment[-_.]*.yml", "environment[-_.]*.yaml"),
            # Other YAML whose name or folder speaks of environments, conda or requirements ("env-gpu.yml",
            # "conda/cuda.yaml", "requirements.yaml") is a conda file when its head has a top-level
            # "dependencies:". Workflows are claimed first by their own pattern.
            tuple(
                f"{stem}.{ext}"
                for stem in ("*env*", "*conda*", "*requirements*", "*env*/*", "*conda*/*", "requirements/*")
                for ext in ("yml", "yaml")
            ),
        ),
        Source("workflow", "workflow", (".github/workflows/*.yml", ".github/workflows/*.yaml")),
        Source(
            "gitlab-ci",
            "gitlab_ci",
            (".gitlab-ci.yml", "*.gitlab-ci.yml", ".gitlab/ci/*.yml", ".gitlab/ci/*.yaml"),
        ),
        Source(
            "dockerfile",
            "dockerfile",
            (
                "Dockerfile",
                "Dockerfile.*",
                "*.Dockerfile",
                "*.dockerfile",
                "Containerfile",
                "Containerfile.*",
                "Dockerfile-*",  # Dockerfile-gpu, Dockerfile_cuda: as common as Dockerfile.gpu
                "Dockerfile_*",
                "Containerfile-*",
                "Containerfile_*",
            ),
        ),
        Source(
            "shell",
            "shell",
            # Slurm job scripts: *.slurm and *.sbatch are the names public repositories give them most
            # (train.slurm, job.slurm, train.sbatch: hundreds of repositories each)
            ("*.sh", "*.bash", "*.sbatch", "*.slurm"),
            # names schedulers' job scripts share with other tools' files (PBS/Torque, LSF, Grid Engine,
            # a generic *.job): a shell script when its head shows one (sources/shell.py sniff). A script
            # with no extension at all is found by its first line (fa_lint.files.shebang).
            ("*.job", "*.pbs", "*.qsub", "*.lsf"),
        ),
        Source(
            "requirements",
            "requirements",
            (
                "*requirements*.txt",
                "*requirements*.in",
                "requirements/**/*.txt",
                "requirements*.lock",  # pip-compile, uv pip compile and rye write requirements syntax
                "constraints*.txt",
                "constraints*.in",
                "constraints/*.txt",
            ),
            # pip-tools inputs have any name ("dev.in", "base.in"); so do autotools and setuptools
            # templates (Makefile.in, config.h.in, MANIFEST.in). The head of the file tells them apart.
            ("*.in",),
        ),
        # Makefile-* and *.mk: fragments a Makefile includes or a Dockerfile runs with make -f
        Source("makefile", "makefile", ("Makefile", "makefile", "GNUmakefile", "*.mk", "Makefile-*")),
        Source("justfile", "justfile", ("justfile", "Justfile", ".justfile", "*.just")),
        Source("notebook", "notebook", ("*.ipynb",)),  # Jupyter and Colab: shell lines, %pip, the GPU
        Source("batch", "batch", ("*.bat", "*.cmd")),  # Windows cmd.exe scripts
        Source("powershell", "powershell", ("*.ps1",)),
        # read for the build arguments its services build their Dockerfiles with (issue 35)
        Source(
            "compose",
            "compose",
            tuple(
                f"{stem}.{ext}"
                for stem in ("docker-compose", "compose", "docker-compose.*", "compose.*")
                for ext in ("yml", "yaml")
            ),
        ),
        # SkyPilot tasks and Kubernetes manifests have any name: a YAML file no format above claims is
        # read when its head names accelerators, GPU node labels or instance types
        Source("cluster", "cluster", (), ("*.yaml", "*.yml")),
        # TRL/transformers configs have any name: a YAML file no format above claims is read when its
        # head sets attn_implementation or use_transformers_paged (for the code layer, fa_lint.code)
        Source("training-config", "training_config", (), ("*.yaml", "*.yml")),
        # Modal apps, SageMaker jobs and Ray tasks have any name: a *.py whose head imports one is read
        Source("python-app", "python_app", (), ("*.py",)),
        Source("python-version", "python_version", (".python-version",)),
    )
}

# Names that may be these formats; discovery reads the first few KiB to decide.
SNIFFED: dict[str, Source] = {name: s for name, s in SOURCES.items() if s.candidates}
