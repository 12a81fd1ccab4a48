#!/usr/bin/env bash
set -euo pipefail
FA_VERSION=2.4.2
export TORCH=2.3.0
pip install --upgrade pip
pip install "flash-attn==${FA_VERSION}" --no-build-isolation  # pinned for CUDA 11.8
pip3 install torch==$TORCH flash_attn>=2.5 2>&1 | tee log.txt
if ! python -c "import flash_attn"; then sudo -H pip install flash-attn==2.3.0; fi
cat > /tmp/notes.txt <<'EOF'
pip install flash-attn==1.0.0
EOF
# pip install flash-attn==1.0.1
python3.11 -m pip install -q https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl
pip uninstall -y flash-attn
echo "pip install flash-attn==1.0.2"
pip install flash-attn==$(cat version.txt)
