"""The located uses a project's code makes: the records the code layer yields (as the shell walk
yields install events), and all that rules see of the code."""

from __future__ import annotations

from fa_lint._records import NamedTuple
from fa_lint.model import Location

# What a use is. The paged path: code that decodes through transformers' continuous batching.
PAGED = "paged"
# What keeps the paged path off the block table: max_blocks_per_request=0, a non-CUDA device.
NOT_PAGED = "not-paged"
ATTN = "attn"  # an attention implementation asked for (name: "flash_attention_2", "org/repo@rev:fn")
BACKEND = "backend"  # a serving engine's attention backend flag (name: "sglang:fa3")
IMPORT = (
    "import"  # an unguarded import of a module only another distribution provides ("flash_attn_interface")
)
KERNEL = "kernel"  # a Hub kernel loaded through ``kernels`` (name: "org/repo"; pinned or not)
LOCAL_KERNEL = "local-kernel"  # a kernel loaded from a folder of this repository
CALL = "call"  # a direct call into pip's flash-attn (name: the function; keywords: those passed)
CUSTOM = "custom"  # a ``def flash_attn_with_kvcache`` of the project's own (keywords: its parameters)
SUBSTITUTE = "substitute"  # a module or function put in flash-attn's place (sys.modules, setattr)
STALE_LOCK = "stale-lock"  # a kernels.lock that disagrees with [tool.kernels.dependencies]
OLD_LOCK = "old-lock"  # a kernels.lock in the format kernels 0.16 and older write (entries with repo_id)


# The names the readers find uses by, shared by the reader (``code.python``, ``code.fa3_imports``) and the
# screen before it (``code.screen``), which must not load ``ast``.
KVCACHE = "flash_attn_with_kvcache"
VARLEN = "flash_attn_varlen_func"
FA3_MODULE = "flash_attn_interface"  # FA3's own top-level module
# Methods only transformers' models and generation classes have under these names (in a file that
# imports transformers or TRL): each decodes through continuous batching.
PAGED_METHODS = frozenset(
    {"generate_batch", "init_continuous_batching", "continuous_batching_context_manager"}
)
PAGED_CLASSES = frozenset({"ContinuousBatchingManager"})
BATCHING_CONFIG = "ContinuousBatchingConfig"  # whose max_blocks_per_request=0 keeps the paged path off


class Use(NamedTuple):
    """One thing the code does that matters to flash-attn, where it does it."""

    kind: str  # one of the names above
    location: Location
    name: str = ""  # the function, implementation or kernel repository
    keywords: tuple[str, ...] = ()  # a call's keywords; a custom kernel's parameters
    pinned: bool = False  # a kernel loaded with a version, a revision or a lock
    args: int = 0  # a kernel load's positional arguments (the repository, then a revision)
    detail: str = ""  # how, in words for a note: "generate_batch()", "device='cpu'"
