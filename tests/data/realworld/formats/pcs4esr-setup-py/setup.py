from setuptools import setup

setup(
    name="mesh-recon",
    install_requires=[
        "numpy",
        "flash-attn --no-build-isolation",
    ],
    extras_require={
        "render": ["git+https://github.com/example-org/render-kit.git@stable"],
    },
)
