card="$(nvidia-smi --query-gpu=name --format=csv,noheader)"
if [[ "${card}" == *"A100"* || "${card}" == *"A40"* ]]; then
  pip install flash-attn==2.0.2
fi
