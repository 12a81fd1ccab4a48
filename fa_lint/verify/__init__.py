"""``fa-lint verify``: the runtime check on a GPU host.

The only package that touches torch, transformers or flash_attn, and only inside the probe that runs
in the target interpreter's own process (``probe.py``), never in fa-lint's.
"""
