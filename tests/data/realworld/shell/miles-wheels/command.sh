mkdir -p /tmp/wheels

# 1. flash-attn
MAX_JOBS=64 pip wheel flash-attn==2.7.4.post1 --no-build-isolation --no-deps -w /tmp/wheels/

# 2. flash-attn hopper (no standard wheel — build manually)
git clone https://github.com/Dao-AILab/flash-attention.git && \
  cd flash-attention && git checkout fbf24f67cf7f6442c5cfb2c1057f4bfc57e72d89 && \
  git submodule update --init && cd hopper && \
  MAX_JOBS=96 python setup.py bdist_wheel && \
  cp dist/*.whl /tmp/wheels/ && \
  cd /root && rm -rf flash-attention
