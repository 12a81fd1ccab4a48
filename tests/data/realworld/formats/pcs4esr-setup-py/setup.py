from setuptools import setup, find_packages

setup(
    name="pcs4esr",
    install_requires=[
        "timm",
        "flash-attn --no-build-isolation",
    ],
    extras_require={
        "pytorch3d": [
            "git+https://github.com/facebookresearch/pytorch3d.git@stable"
        ],
    },
)
