# the compiler is in the devel image: the wheel is made there
FROM pytorch/pytorch:2.7.0-cuda12.6-cudnn9-devel AS build
RUN pip wheel -w /wheels --no-build-isolation --no-deps flash-attn
# the service runs on the smaller runtime image, with the wheel only
FROM pytorch/pytorch:2.7.0-cuda12.6-cudnn9-runtime AS serve
COPY --from=build /wheels/*.whl /wheels/
RUN pip install /wheels/*.whl
