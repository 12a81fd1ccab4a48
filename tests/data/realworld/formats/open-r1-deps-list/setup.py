import re

from setuptools import setup

# every pin once, looked up by its name below
_pins = [
    "flash_attn>=2.7.4.post1",
    "torch==2.5.1",
]
_by_name = {re.split(r"[!=<>~ \[]", spec, maxsplit=1)[0]: spec for spec in _pins}


def deps_list(*names):
    return [_by_name[n] for n in names]


extras = {}
extras["train"] = deps_list("flash_attn")
extras["torch"] = deps_list("torch")

setup(name="reasoner", extras_require=extras)
