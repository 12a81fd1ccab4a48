from setuptools import find_packages, setup

GPU_REQUIRES = ["liger-kernel", "flash-attn"]

extras_require = {
    "gpu": GPU_REQUIRES,
}

setup(
    name="verl",
    extras_require=extras_require,
)
