from modal import App, Image as ModalImage, Volume, Secret

# =============================================================================
# CONFIGURATION CONSTANTS
# =============================================================================

# Time constants
HOURS = 60 * 60
# GPU Configuration
GPU_TYPE = "a100-80gb"  # Default GPU type (can be: a100-80gb, a100-40gb, l40s, etc.)
# Training Configuration
WANDB_PROJECT_DEFAULT = "Llama-70b-MultiGPU-finetune"

# =============================================================================
# MODAL APP VOLUME AND SECRET SETUP
# =============================================================================

app = App("Finetuned_Llama_70b_Axolotl_MultiGPU")
# Create volumes for persistent storage
exp_volume = Volume.from_name("Finetuned_Llama_70b_Axolotl", create_if_missing=True)
# Configure volume mounting points
VOLUME_CONFIG = {
    "/data": exp_volume,
}
huggingface_secret = Secret.from_name("secrets-hf-wandb")


# =============================================================================
# MODEL IMAGE SETUP
# =============================================================================


# This is the original Axolotl image, it can be used but it opens JupyterLab by default
# AXOLOTL_IMAGE = ModalImage.from_registry(
#     "axolotlai/axolotl-cloud:main-latest", add_python="3.12"
# ).env(
#     {
#         "JUPYTER_ENABLE_LAB": "no",  # Disable JupyterLab auto-start
#         "JUPYTER_TOKEN": "",  # Disable Jupyter token requirement
#         "HF_HOME": "/data/.cache",  # Set HF cache root under /data
#     }
# )

# Custom CUDA image with Axolotl and dependencies pre-installed
CUDA_VERSION = "12.8.1"
CUDA_FLAVOR = "devel"
CUDA_OS = "ubuntu24.04"
CUDA_TAG = f"{CUDA_VERSION}-{CUDA_FLAVOR}-{CUDA_OS}"

# Define the GPU image for fine-tuning with Unsloth
AXOLOTL_IMAGE = (
    ModalImage.from_registry(f"nvidia/cuda:{CUDA_TAG}", add_python="3.12")
    .apt_install(
        "git",
        "build-essential",
    )
    .uv_pip_install(
        [
            "torch",
            "torchvision",
            "torchaudio",  # optional but often bundled with torch
        ]
    )
    .run_commands(
        "uv pip install --no-deps -U packaging setuptools wheel ninja --system"
    )
    .run_commands("uv pip install --no-build-isolation axolotl[deepspeed] --system")
    .run_commands(
        "UV_NO_BUILD_ISOLATION=1 uv pip install flash-attn --no-build-isolation --system"
    )
    .env(
        {
            "HF_HUB_ENABLE_HF_TRANSFER": "1",
            "HF_HOME": "/data/.cache",  # Set HF cache root under /data
        }
    )
)

# [fa-lint excerpt: lines 78-221 of the original are left out]
TRAIN_NUM_GPUS = 4  # Can be adjusted from 2 to 8
TRAIN_GPU_CONFIG = f"{GPU_TYPE}:{TRAIN_NUM_GPUS}"


@app.function(
    image=AXOLOTL_IMAGE,
    volumes=VOLUME_CONFIG,
    secrets=[huggingface_secret],
    timeout=24 * HOURS,
    gpu=TRAIN_GPU_CONFIG,
)
def train_model(
    train_config_yaml: str = TRAIN_CONFIG_YAML,
    config_path: str = "/data/config.yml",
):
    ...
    pass
