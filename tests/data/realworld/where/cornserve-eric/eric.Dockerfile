# Build flash-attn wheel inside the `devel` image which has `nvcc`.
FROM pytorch/pytorch:2.7.0-cuda12.6-cudnn9-devel AS builder
RUN pip wheel -w /tmp/wheels --no-build-isolation --no-deps --verbose flash-attn
# Actual Eric runs inside the `runtime` image. Just copy over the flash-attn wheel.
FROM pytorch/pytorch:2.7.0-cuda12.6-cudnn9-runtime AS eric
COPY --from=builder /tmp/wheels/*.whl /tmp/wheels/
RUN pip install --no-cache-dir /tmp/wheels/*.whl && rm -rf /tmp/wheels
