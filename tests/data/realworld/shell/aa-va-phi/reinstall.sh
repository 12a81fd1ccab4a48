#!/usr/bin/env bash
# start from a clean slate, then force one known build back in
pip uninstall -y flash-attn
pip install --no-build-isolation --force-reinstall --no-cache-dir flash-attn==2.6.3
python -c "import flash_attn; print(flash_attn.__version__)" && echo "ready" || echo "fall back to sdpa"
