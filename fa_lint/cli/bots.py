"""Configs that keep Renovate and Dependabot from proposing a flash-attn release below the policy.

Bots only ever propose upgrades, but an upgrade from an old pin can stop short of paged KV
(2.3.6 -> 2.4.2), and a user's policy can sit above the first release with block_table. Both configs
are generated from the knowledge base and the policy in force, never written by hand.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from packaging.version import Version

from fa_lint.kb import PAGED_KV, KnowledgeBase
from fa_lint.kb.assess import Policy
from fa_lint.model import FLASH_ATTN

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
# engine has lookarounds, and RE2 no backreferences nor repeated group names, so each manager's match
# strings never match the same text.
#
# Renovate applies no rangeStrategy to a custom manager's ranges (its getRangeStrategy knows only the
# built-in managers), so a lone floor or pin, '>=2.3' or '==2.4.2', is read as the version alone: Renovate
# then replaces 2.3 with the release it proposes, which raises the floor. A range is read whole, and
# Renovate's default (replace) moves only its upper end: '<2.6' became '<2.9', which still admits releases
# without paged KV. So a range is read only when one of its clauses holds the floor at or above the
# policy's ('>=2.6.3,<2.8', '~=2.6', '==2.7.*'); the others stay as they are, for fa-lint to report and
# --fix to raise.
_VERSION = r"[0-9][0-9A-Za-z.+!]*"
_OP = r"(?:===?|~=|>=|<=|!=|<|>)[ \t]*[0-9][0-9A-Za-z.*+!]*"
_ALONE = rf"(?:==|>=)[ \t]*(?<currentValue>{_VERSION})"
_COMMA = r"[ \t]*,[ \t]*"
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
# An ARG/ENV that sets flash-attn's version: FLASH_ATTN_VERSION, FLASH_ATTENTION_VER (any case), never
# FLASH_ATTN_3_VERSION (flash-attn-3 is another package) nor FLASH_ATTN_CUDA_ARCHS; or any variable under
# Renovate's own comment, "# renovate: datasource=pypi depName=flash-attn" on the line above it (an ARG,
# an ENV, an export or a plain assignment), which fa-lint's help suggests for other names.
_SET = r"(?:[ \t]*=[ \t]*|[ \t]+)"
_COMMENT = (
    r"[ \t]*#[ \t]*renovate:[ \t]*datasource=pypi[ \t]+depName=(?i:flash[-_.]attn)(?:[ \t][^\n]*)?\r?\n"
    r"[ \t]*(?:(?i:ARG|ENV|export)[ \t]+)?[A-Za-z_][A-Za-z0-9_]*"
)
_ARG = r"[ \t]*(?i:ARG|ENV)[ \t]+(?i:flash_?attn|flash_?attention)_(?i:version|ver)"
# FA_VERSION (or FA2_VERSION, FA_VER) is flash-attn's only where the file installs flash-attn from it:
# Font Awesome's is named so too. Renovate's "recursive" strategy finds such a file's ARG (the first match
# string: from the ARG to the line that uses it) and reads the ARG's line alone (the second).
_SHORT = r"(?i:fa2?)_(?i:version|ver)"
_SHORT_ARG = rf"(?m:^)[ \t]*(?i:ARG|ENV)[ \t]+{_SHORT}"
_USES = rf"{_NAME}[ \t]*(?:===?|~=|>=|<=|!=|<|>)?[ \t]*{_QUOTE}?\$\{{?{_SHORT}\b"


def _greater(n: int) -> str:
    """A pattern for the decimal numbers above ``n`` (written without leading zeros)."""
    digits = str(n)
    out = [f"[1-9][0-9]{{{len(digits)},}}"]  # more digits
    for i, d in enumerate(digits):
        if d == "9":
            continue
        rest = len(digits) - i - 1
        low = int(d) + 1
        out.append(digits[:i] + (f"[{low}-9]" if low < 9 else "9") + (f"[0-9]{{{rest}}}" if rest else ""))
    return "(?:" + "|".join(out) + ")"


def at_least(floor: Version) -> str:
    """A pattern for the versions (release numbers and what follows them) at or above ``floor``: the
    regex managers read a range only when it keeps such a floor. A pre-release of the floor itself
    (2.5.0rc1 < 2.5.0) is left out; a post-release or local label is not."""
    release = list(floor.release)
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    more = r"(?:\.[0-9]+)*"
    out = []
    for i, part in enumerate(release):
        same = "".join(rf"{p}\." for p in release[:i])
        out.append(f"{same}{_greater(part)}[0-9A-Za-z.+!]*")
    same = r"\.".join(map(str, release)) + more
    local = r"(?:\+[0-9A-Za-z.]+)?"
    if floor.post is None:  # the release itself, its post-releases, local builds
        out.append(same + r"(?:\.?post[0-9]*)?" + local)
    else:  # 2.8.3.post2: its post-releases from the second on (a floor's pre-release counts as its release)
        out.append(same + rf"\.?post(?:{floor.post}|{_greater(floor.post)})" + local)
    return "(?:" + "|".join(out) + ")"


def _ranges(floor: Version) -> str:
    """A range with a floor clause at or above ``floor``, as currentValue: the clause alone where it is
    no lone ``==``/``>=`` (which _ALONE reads), or among other clauses."""
    high = at_least(floor)
    floors = rf"(?:(?:>=|~=|>|===)[ \t]*{high}|==[ \t]*{high}\.\*)"  # ==2.7.*: the 2.7 series
    single = rf"(?:(?:~=|>|===)[ \t]*{high}|==[ \t]*{high}\.\*)"
    return (
        rf"(?<currentValue>(?:{_OP}{_COMMA})+{floors}(?:{_COMMA}{_OP})*|{floors}(?:{_COMMA}{_OP})+|{single})"
    )


def match(floor: Version) -> dict[str, tuple[str, ...]]:
    """Each custom manager's match strings, for a policy's floor (the ranges the managers may move)."""
    value = rf"{_QUOTE}?(?<currentValue>{_VERSION}){_QUOTE}?[ \t]*{_EOL}"
    ranged = _ranges(floor)
    return {
        "docker-arg": (rf"(?m:^)(?:{_COMMENT}|{_ARG}){_SET}{value}",),
        "docker-arg-used": (
            rf"{_SHORT_ARG}{_SET}{_QUOTE}?{_VERSION}[^\n]*\n(?:[^\n]*\n)*?[^\n]*{_USES}",
            rf"{_SHORT_ARG}{_SET}{value}",
        ),
        "pip-install": (_INSTALL + _ALONE + _END, _INSTALL + ranged),
        "constraint": (_LINE + _ALONE + _TAIL, _LINE + ranged + _TAIL),
    }


MATCH = match(Version("2.5.0"))  # the default policy's (tests read them; renovate() makes each policy's)
DOCKERFILES = ("/(^|/|\\.)([Dd]ocker|[Cc]ontainer)file$/", "/(^|/)([Dd]ocker|[Cc]ontainer)file[^/]*$/")
SHELL = ("/\\.(sh|bash)$/",)
CONSTRAINTS = ("/(^|/)constraints[^/]*\\.(txt|in)$/",)


def _manager(
    description: str, files: tuple[str, ...], strings: tuple[str, ...], strategy: str | None = None
) -> dict[str, object]:
    return {
        "customType": "regex",
        "description": f"fa-lint: {description}",
        "managerFilePatterns": list(files),
        "matchStrings": list(strings),
        **({"matchStringsStrategy": strategy} if strategy else {}),
        "depNameTemplate": FLASH_ATTN,
        "packageNameTemplate": FLASH_ATTN,
        "datasourceTemplate": "pypi",
        "versioningTemplate": "pep440",
    }


def renovate(policy: Policy, kb: KnowledgeBase) -> str:
    """A Renovate preset (JSON) that acts under Renovate's defaults; it needs Renovate 40 or later
    (``managerFilePatterns``, which replaced ``fileMatch`` there).

    ``allowedVersions`` keeps every proposal at or above the policy; ``rangeStrategy: bump`` raises a
    floor such as ``>=2.3`` in the files Renovate's own managers read (the default strategy leaves it,
    since the newest release already satisfies it); and regex managers show Renovate the pins its
    managers never read: Dockerfile ARG/ENV versions (and any variable under Renovate's
    ``# renovate: datasource=pypi depName=flash-attn`` comment), ``pip install`` lines in Dockerfiles
    and shell scripts, and constraints files.
    """
    strings = match(policy.min_version)
    doc = {
        "$schema": "https://docs.renovatebot.com/renovate-schema.json",
        "description": "fa-lint: flash-attn updates only to releases with paged KV",
        "customManagers": [
            _manager(
                "flash-attn versions in Dockerfile ARG and ENV lines, and under a `# renovate:` comment",
                DOCKERFILES + SHELL,
                strings["docker-arg"],
            ),
            _manager(
                "FA_VERSION in a Dockerfile that installs flash-attn with it",
                DOCKERFILES,
                strings["docker-arg-used"],
                "recursive",
            ),
            _manager(
                "pip install flash-attn lines in Dockerfiles and scripts",
                DOCKERFILES + SHELL,
                strings["pip-install"],
            ),
            _manager("flash-attn in pip constraints files", CONSTRAINTS, strings["constraint"]),
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


COOLDOWN = 7  # days: zizmor's dependabot-cooldown audit asks for at least a week
MAX_COOLDOWN = 90  # Dependabot's schema: default-days 1 to 90


def dependabot(
    policy: Policy,
    kb: KnowledgeBase,
    ecosystems: Sequence[str] = ("pip",),
    directories: Sequence[str] = ("/",),
    versioning: str = "increase",
    cooldown: int = COOLDOWN,
) -> str:
    """A dependabot.yml (YAML) whose ``ignore`` entry holds back every release below the policy.

    ``versioning`` "increase" raises a floor such as ``>=2.3`` with each update (Dependabot's default
    leaves a range the new release satisfies alone); "auto" leaves the key out. More than one
    directory, or a glob, becomes ``directories`` (Dependabot reads globs only there). ``cooldown``:
    the days a new release waits before Dependabot proposes it (a bad release is often yanked or fixed
    within days); 0 leaves the key out.
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
        lines += ["    schedule:", '      interval: "weekly"']
        if cooldown:
            lines += [
                "    cooldown:",
                f"      default-days: {cooldown}  # a new release waits before it is proposed",
            ]
        lines += [
            "    ignore:",
            f'      - dependency-name: "{FLASH_ATTN}"',
            f'        versions: ["< {policy.min_version}"]',
        ]
    return "\n".join(lines) + "\n"
