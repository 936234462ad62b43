#!/usr/bin/env python3
"""Regenerate the hand-written seed corpus under fuzz/seeds/<target>/ (deterministic).

Run from anywhere: python3 fuzz/seeds/generate.py

fuzz/seeds/bundle/ is not written here: that target's input is `arbitrary`-structured, and its
seeds are found by the ignored test `generate_bundle_seeds` in tests/integration/fuzz_corpus.rs.
"""
import gzip
import io
import os
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SKILL = b"---\nname: demo\ndescription: d\n---\n"


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- frontmatter ---------------------------------------------------------------------------
fm = {
    "minimal": SKILL,
    "full": b"---\nname: pdf-tools\ndescription: Extract text.\nlicense: MIT\ncompatibility: any\n"
    b"metadata:\n  author: me\n  version: \"1.0.0\"\nallowed-tools: Bash Read\n---\n# Body\n",
    "bom-crlf": "\ufeff---\r\nname: a\r\ndescription: d\r\r\n---\r\nbody\r\n".encode(),
    "quoted-folded": b"---\nname: \"demo\"\ndescription: >-\n  folded\n  text\nx: |\n  lit\n---\n",
    "flow": b"---\n{name: demo, description: 'd', x: [1, 2.5, ~, true, {a: b}]}\n---\n",
    "anchors": b"---\nname: demo\ndescription: &d desc\nx: *d\ny: &l [a, b]\nz: [*l, *l]\n---\n",
    "desc-1024": b"---\nname: a\ndescription: " + "\u00e9".encode() * 1024 + b"\n---\n",
    "name-64": b"---\nname: " + b"a" * 64 + b"\ndescription: d\n---\n",
    "unicode-escapes": b"---\nname: \"\\x64emo\"\ndescription: \"\\u00e9\\t\\U0001F600\"\n---\n",
    "tags-and-numbers": b"---\nname: demo\ndescription: d\nn: 0x1F\nf: 1e3\no: 0o17\ns: !!str 3\n---\n",
    "unterminated": b"---\nname: demo\ndescription: d\n",
}
for k, v in fm.items():
    write("frontmatter", k, v)

# ---- uri -----------------------------------------------------------------------------------
uris = {
    "skill-md": "skill://acme/refunds/SKILL.md",
    "root": "skill://acme/refunds",
    "pinned": "skill://acme/@1.2.0-rc.1+build.7/refunds/examples/a%20b.md",
    "encoded": "skill://acme/x/dir/(quality)%20%C3%BC%3F%23%25.md",
    "noncanonical": "skill://acme/%78/%41.md",
    "literal-unicode": "skill://acme/x/caf\u00e9 ol\u00e9.md",
    "pinned-encoded-at": "skill://acme/%401.0.0/x/SKILL.md",
    # Near MAX_URI_BYTES (4096): boundary for the length check.
    "long": "skill://acme/x/" + "/".join(["seg" + str(i) for i in range(800)])[:4070] + "x.md",
}
for k, v in uris.items():
    write("uri", k, v.encode())


# ---- archive -------------------------------------------------------------------------------
# First byte selects the mode (see fuzz_targets/archive.rs): 0 tar.gz, 1 zip, 2 raw tar.
def tar_bytes(entries, fmt=tarfile.GNU_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, data, kind, mode in entries:
            info = tarfile.TarInfo(name)
            info.mtime = 0
            info.mode = mode
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = "SKILL.md"
            if kind == tarfile.DIRTYPE:
                t.addfile(info)
            else:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    # Drop the record padding (tar pads to 10 KiB): keep the entries and one zero block, so the
    # seeds stay small for the fuzzer.
    raw = buf.getvalue().rstrip(b"\0")
    raw += b"\0" * (-len(raw) % 512)
    return raw + b"\0" * 512


def gz(raw):
    return gzip.compress(raw, compresslevel=6, mtime=0)


def zip_bytes(entries, method=zipfile.ZIP_DEFLATED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as z:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            info.create_system = 3
            info.external_attr = (mode & 0xFFFF) << 16
            z.writestr(info, data)
    return buf.getvalue()


R, D, S = tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE
simple = [("SKILL.md", SKILL, R, 0o644)]
multi = [
    ("./", b"", D, 0o755),
    ("./SKILL.md", SKILL, R, 0o644),
    ("./scripts/", b"", D, 0o755),
    ("./scripts/run.sh", b"#!/bin/sh\necho hi\n", R, 0o755),
    ("./refs/GUIDE.md", b"# Guide\n", R, 0o644),
    ("./sub/inner/SKILL.md", b"---\nname: inner\ndescription: nested\n---\n", R, 0o644),
]
hostile = [("SKILL.md", SKILL, R, 0o644), ("link", b"", S, 0o777), ("../evil", b"x", R, 0o644)]
longname = [("SKILL.md", SKILL, R, 0o644), ("d/" * 70 + "x.md", b"long", R, 0o644)]

write("archive", "targz-simple", b"\x00" + gz(tar_bytes(simple)))
write("archive", "targz-multi", b"\x00" + gz(tar_bytes(multi)))
write("archive", "targz-pax-long", b"\x00" + gz(tar_bytes(longname, tarfile.PAX_FORMAT)))
write("archive", "rawtar-simple", b"\x02" + tar_bytes(simple))
write("archive", "rawtar-multi", b"\x02" + tar_bytes(multi))
write("archive", "rawtar-hostile", b"\x02" + tar_bytes(hostile))
write("archive", "rawtar-gnu-long", b"\x02" + tar_bytes(longname))
write("archive", "zip-simple", b"\x01" + zip_bytes([("SKILL.md", SKILL, 0o100644)]))
write(
    "archive",
    "zip-stored-multi",
    b"\x01"
    + zip_bytes(
        [
            ("refs/", b"", 0o040755),
            ("SKILL.md", SKILL, 0o100644),
            ("run.sh", b"#!/bin/sh\n", 0o100755),
            ("link", b"SKILL.md", 0o120777),
            ("sub/inner/SKILL.md", b"---\nname: inner\ndescription: nested\n---\n", 0o100644),
        ],
        zipfile.ZIP_STORED,
    ),
)
write(
    "archive",
    "zip-deflated-multi",
    b"\x01"
    + zip_bytes([("SKILL.md", SKILL, 0o100644), ("./refs/a.md", b"a" * 100, 0o100644)]),
)
