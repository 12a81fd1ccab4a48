import re

from setuptools import find_packages, setup

_deps = [
    "accelerate>=1.2.1",
    "flash_attn>=2.7.4.post1",
    "torch==2.5.1",
]

deps = {b: a for a, b in (re.findall(r"^(([^!=<>~ \[\]]+)(?:\[[^\]]+\])?(?:[!=<>~ ].*)?$)", x)[0] for x in _deps)}


def deps_list(*pkgs):
    return [deps[pkg] for pkg in pkgs]


extras = {}
extras["torch"] = deps_list("torch")
extras["train"] = deps_list("flash_attn")

setup(
    name="open-r1",
    extras_require=extras,
)
