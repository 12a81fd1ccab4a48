#!/bin/bash
# FlashAttention 3: the same checkout, its hopper folder
. .venv/bin/activate
export MAX_JOBS=4
cd 3rdparty/flash-attention/hopper
uv pip install . --no-build-isolation
