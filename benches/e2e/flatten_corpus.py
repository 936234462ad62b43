#!/usr/bin/env python3
"""Export the real corpus as the flat catalog the end-to-end harness serves: one folder per skill,
named as the skill (DIR/<name>/SKILL.md ...), so that every server (skillreg, rmcp's SkillCatalog,
the TypeScript reference server, FastMCP) reads the same skills.

    python3 benches/e2e/flatten_corpus.py --corpus ../shared/corpus/real --out /tmp/corpus-flat
    python3 benches/e2e/run.py --dir /tmp/corpus-flat ...

Every folder of the corpus holding a SKILL.md whose frontmatter `name` is a valid skill name
(lowercase letters, digits and single hyphens, at most 64) is copied whole, once per name (the
first in path order); the others (names that need `--fix`, repeats across repositories, folders
that are not skills) are left out and counted. Bytes are copied as they are. Standard library
only.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys

from scan_cost import frontmatter_name  # the same reading of a SKILL.md's `name`

NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="../shared/corpus/real")
    ap.add_argument("--out", required=True, help="a directory that does not exist yet")
    args = ap.parse_args()
    if os.path.exists(args.out):
        sys.exit(f"{args.out} exists: give a new directory")
    os.makedirs(args.out)
    taken, skipped = {}, {"invalid name": 0, "repeated name": 0, "inside another skill": 0}
    dirs = []
    for root, subdirs, files in os.walk(args.corpus):
        subdirs.sort()
        if "SKILL.md" in files:
            dirs.append(root)
    for d in dirs:
        if any(d.startswith(t + os.sep) for t in taken.values()):
            skipped["inside another skill"] += 1
            continue
        name = frontmatter_name(d)
        if not name or len(name) > 64 or not NAME.fullmatch(name):
            skipped["invalid name"] += 1
            continue
        if name in taken:
            skipped["repeated name"] += 1
            continue
        taken[name] = d
        shutil.copytree(d, os.path.join(args.out, name), symlinks=False)
    biggest = max(
        (os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(args.out) for f in fs),
        default=0,
    )
    print(f"{len(taken)} skills under {args.out} (largest file {biggest:,} bytes); left out: "
          + ", ".join(f"{n} {why}" for why, n in skipped.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
