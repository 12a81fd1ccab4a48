from setuptools import setup

GPU_EXTRAS = ["liger-kernel", "flash-attn"]

optional = {
    "gpu": GPU_EXTRAS,
}

setup(name="rl-trainer", extras_require=optional)
