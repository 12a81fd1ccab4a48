"""fa-lint: find flash-attn pins too old for paged-KV attention before they reach a GPU."""

from __future__ import annotations

__version__ = "0.1.0"
