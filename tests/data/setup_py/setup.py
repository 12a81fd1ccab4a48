import setuptools
from setuptools import setup, find_packages

BASE = ["torch>=2.3"]
GPU = ["flash-attn==2.4.2"]
extras = {"gpu": GPU}
extras["fast"] = ["flash_attn>=2.6"]
BASE += ["einops"]
BASE.append("flash-attn<2.5")

def helper(reqs):
    reqs.extend(["flash-attn>=2.0.6,<=2.5.8"])  # reached only by the pinned-string rule

setup(
    name="x",
    packages=["flash_attn", "flash_attn.ops"],
    install_requires=BASE,
    extras_require=extras,
    setup_requires=[
        'flash-attn==2.3.3',
        r"""flash-attn~=2.5.0""",
    ],
)
print("flash-attn is great")
