# A fixture written for fa-lint's tests: a Modal app whose image is built from a tag put together
# from constants, and whose GPU string is too.
from modal import App
from modal import Image as ModalImage

GPU_KIND = "a100-80gb"
GPU_COUNT = 4
GPU_SPEC = f"{GPU_KIND}:{GPU_COUNT}"

CUDA_RELEASE = "12.8.1"
CUDA_TAG = f"{CUDA_RELEASE}-devel-ubuntu24.04"

app = App("finetune-demo")

TRAIN_IMAGE = (
    ModalImage.from_registry(f"nvidia/cuda:{CUDA_TAG}", add_python="3.12")
    .apt_install("git", "build-essential")
    .uv_pip_install(["torch", "torchvision"])
    .run_commands("uv pip install --no-build-isolation axolotl --system")
    .run_commands("UV_NO_BUILD_ISOLATION=1 uv pip install flash-attn --no-build-isolation --system")
)


@app.function(image=TRAIN_IMAGE, gpu=GPU_SPEC, timeout=3600)
def train(config: str = "/data/config.yml"):
    pass
