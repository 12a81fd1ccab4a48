"""Training and serving configs in YAML that name transformers' own settings: TRL's and transformers'
``HfArgumentParser`` configs (``attn_implementation: flash_attention_2``, ``use_transformers_paged: true``).

Such a file installs nothing, so it has no records here; the code layer reads its uses
(``fa_lint.code.command_lines.config_uses``). Any ``*.yaml``/``*.yml`` no other format claims may be one: it
is read when its head has one of those keys at the start of a line. Other frameworks' keys (axolotl's
``flash_attention:``, LLaMA-Factory's ``flash_attn:``) map to an implementation through the framework's
own code and release, and are not read (docs/code.md says why).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fa_lint.model import Parsed

NAME = "training-config"
_KEYS = re.compile(r"^[ \t]*(?:attn_implementation|use_transformers_paged)[ \t]*:", re.M)


def sniff(head: str, *, complete: bool) -> bool:
    return _KEYS.search(head) is not None


def parse(path: str, text: str) -> Iterator[Parsed]:
    return iter(())
