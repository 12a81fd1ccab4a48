"""Configs that keep Renovate and Dependabot from proposing a flash-attn release below the policy.

Bots only ever propose upgrades, but an upgrade from an old pin can stop short of paged KV
(2.3.6 -> 2.4.2), and a user's policy can sit above the first release with block_table. Both configs
are generated from the knowledge base and the policy in force, never written by hand.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from fa_lint.kb import PAGED_KV, KnowledgeBase
from fa_lint.model import FLASH_ATTN
from fa_lint.resolve import Policy

BOTS = ("renovate", "dependabot")
ECOSYSTEMS = ("pip", "uv")  # Dependabot's names for the ecosystems that read flash-attn pins
VERSIONING = {  # Dependabot's versioning strategies, and what each does to 'flash-attn>=2.3'
    "increase": "raises a floor such as >=2.3 to each new release",
    "increase-if-necessary": "leaves >=2.3 alone while the new release satisfies it",
    "lockfile-only": "changes only lockfiles, never the floor",
    "widen": "widens an upper bound, never the floor",
    "auto": "Dependabot's default",
}


def _why(policy: Policy, kb: KnowledgeBase) -> str:
    if policy.min_version == kb.first_with(PAGED_KV).version:
        reason = "older ones have no paged KV: flash_attn_with_kvcache(..., block_table=...)"
    else:
        reason = "the project's fa-lint min-version"
    return f"fa-lint: never propose a flash-attn release below {policy.min_version} ({reason})"


# Renovate matches these with RE2 (or, without it, JavaScript's RegExp) and only the "g" flag: line
# anchors are scoped (?m:^) groups, which both accept (and Node >= 23, which Renovate requires); neither
# engine has lookarounds, and RE2 no repeated group names, so each manager has two match strings that
# never match the same text.
#
# Renovate applies no rangeStrategy to a custom manager's ranges (its getRangeStrategy knows only the
# built-in managers), so a lone floor or pin, '>=2.3' or '==2.4.2', is read as the version alone: Renovate
# then replaces 2.3 with the release it proposes, which raises the floor. Any other spec ('>=2.3,<2.6',
# '~=2.4', '<2.5') is read whole, and Renovate's default (replace) moves it only where the proposal falls
# outside it.
_VERSION = r"[0-9][0-9A-Za-z.+!]*"
_OP = r"(?:===?|~=|>=|<=|!=|<|>)[ \t]*[0-9][0-9A-Za-z.*+!]*"
_ALONE = rf"(?:==|>=)[ \t]*(?<currentValue>{_VERSION})"
_RANGE = (
    r"(?<currentValue>(?:===|~=|!=|<=|<|>)[ \t]*[0-9][0-9A-Za-z.*+!]*"
    rf"(?:[ \t]*,[ \t]*{_OP})*|(?:==|>=)[ \t]*[0-9][0-9A-Za-z.*+!]*(?:[ \t]*,[ \t]*{_OP})+"
    rf"|==[ \t]*{_VERSION}\*)"
)
_NAME = r"(?i:flash[-_.]attn)(?:\[[^\]\s]*\])?"
_QUOTE = "[\"']"
_EOL = r"\r?(?m:$)"
# pip install ... 'flash-attn', continued lines included (pip3, python -m pip, uv pip); before the name a
# blank or an opening quote, never a line break
_INSTALL = r"pip3?[ \t]+install(?:[^\n\\]|\\\r?\n|\\[^\n])*?[ \t\"']" + _NAME + r"[ \t]*"
# where a lone clause ends on an install line: a quote, the line's end, or a word that is no clause
_END = rf"(?:[ \t]*(?:[\"'\\;&|)]|{_EOL})|[ \t]+[^ \t,\n])"
# A constraints line ends after its spec (marker and comment allowed): one with --hash after it, or
# continued onto hash lines, is left alone, since a new version with the old hashes fails to install.
_LINE = rf"(?m:^)[ \t]*{_NAME}[ \t]*"
_TAIL = rf"[ \t]*(?:;[^\n#]*)?(?:#[^\n]*)?{_EOL}"
DOCKERFILES = ("/(^|/|\\.)([Dd]ocker|[Cc]ontainer)file$/", "/(^|/)([Dd]ocker|[Cc]ontainer)file[^/]*$/")
SHELL = ("/\\.(sh|bash)$/",)
CONSTRAINTS = ("/(^|/)constraints[^/]*\\.(txt|in)$/",)
MATCH = {
    # ARG FLASH_ATTN_VERSION=2.4.2, ENV FLASH_ATTENTION_VERSION 2.4.2: the value alone, on its own line
    "docker-arg": (
        r"(?m:^)[ \t]*(?i:ARG|ENV)[ \t]+(?i:flash_?attn|flash_?attention)_(?i:version|ver)"
        rf"(?:[ \t]*=[ \t]*|[ \t]+){_QUOTE}?(?<currentValue>{_VERSION}){_QUOTE}?[ \t]*{_EOL}",
    ),
    "pip-install": (_INSTALL + _ALONE + _END, _INSTALL + _RANGE),
    "constraint": (_LINE + _ALONE + _TAIL, _LINE + _RANGE + _TAIL),
}


def _manager(description: str, files: tuple[str, ...], match: str) -> dict[str, object]:
    return {
        "customType": "regex",
        "description": f"fa-lint: {description}",
        "managerFilePatterns": list(files),
        "matchStrings": list(MATCH[match]),
        "depNameTemplate": FLASH_ATTN,
        "packageNameTemplate": FLASH_ATTN,
        "datasourceTemplate": "pypi",
        "versioningTemplate": "pep440",
    }


def renovate(policy: Policy, kb: KnowledgeBase) -> str:
    """A Renovate preset (JSON) that acts under Renovate's defaults.

    ``allowedVersions`` keeps every proposal at or above the policy; ``rangeStrategy: bump`` raises a
    floor such as ``>=2.3`` in the files Renovate's own managers read (the default strategy leaves it,
    since the newest release already satisfies it); and regex managers show Renovate the pins its
    managers never read: Dockerfile ARG/ENV versions, ``pip install`` lines in Dockerfiles and shell
    scripts, and constraints files.
    """
    doc = {
        "$schema": "https://docs.renovatebot.com/renovate-schema.json",
        "description": "fa-lint: flash-attn updates only to releases with paged KV",
        "customManagers": [
            _manager("flash-attn versions in Dockerfile ARG and ENV lines", DOCKERFILES, "docker-arg"),
            _manager(
                "pip install flash-attn lines in Dockerfiles and scripts", DOCKERFILES + SHELL, "pip-install"
            ),
            _manager("flash-attn in pip constraints files", CONSTRAINTS, "constraint"),
        ],
        "packageRules": [
            {
                "description": _why(policy, kb),
                "matchDatasources": ["pypi"],
                "matchPackageNames": [FLASH_ATTN],
                "allowedVersions": f">={policy.min_version}",
                "rangeStrategy": "bump",
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


def dependabot(
    policy: Policy,
    kb: KnowledgeBase,
    ecosystems: Sequence[str] = ("pip",),
    directories: Sequence[str] = ("/",),
    versioning: str = "increase",
) -> str:
    """A dependabot.yml (YAML) whose ``ignore`` entry holds back every release below the policy.

    ``versioning`` "increase" raises a floor such as ``>=2.3`` with each update (Dependabot's default
    leaves a range the new release satisfies alone); "auto" leaves the key out. More than one
    directory, or a glob, becomes ``directories`` (Dependabot reads globs only there).
    """
    # Written as text rather than yaml.dump so that the comments a reader needs survive.
    lines = [
        f"# {_why(policy, kb)}.",
        "# Generated by `fa-lint bot-config dependabot`; if you already have a .github/dependabot.yml,",
        "# copy the `ignore` entry (and versioning-strategy) into each of its pip/uv updates.",
        "version: 2",
        "updates:",
    ]
    if len(directories) == 1 and not any(c in directories[0] for c in "*?["):
        where = [f"    directory: {json.dumps(directories[0])}"]
    else:
        where = ["    directories:", *(f"      - {json.dumps(d)}" for d in directories)]
    for ecosystem in ecosystems:
        lines += [f'  - package-ecosystem: "{ecosystem}"', *where]
        if versioning != "auto":
            lines.append(f"    versioning-strategy: {json.dumps(versioning)}  # {VERSIONING[versioning]}")
        lines += [
            "    schedule:",
            '      interval: "weekly"',
            "    ignore:",
            f'      - dependency-name: "{FLASH_ATTN}"',
            f'        versions: ["< {policy.min_version}"]',
        ]
    return "\n".join(lines) + "\n"
