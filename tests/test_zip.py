"""`.zip` archives load like tarballs: the same objects and verdicts as the files they hold, nested archives
both ways, stdin, and the tarballs' limits (members, declared sizes, nesting) as one-line errors (exit 3).

Hostile archives are built here byte by byte (a patched flag or size), and run through the real CLI in a
child process under the 1 GiB limit of tests/test_hostile_limits.py.
"""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from kdiagnose.load import files
from kdiagnose.load.files import load_paths
from tests.test_hostile_limits import NODE, POD, ROOT, cli, one_error

DEMO = ROOT / "fixtures" / "demo" / "cluster.yaml"


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _verdicts(*args: str, stdin: bytes | None = None) -> list[tuple[str, str, str]]:
    proc = subprocess.run(
        [sys.executable, "-m", "kdiagnose.cli", *args, "-o", "json"],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr.decode()
    doc = json.loads(proc.stdout)
    return [(p["pod"], p["fullMessage"], json.dumps(p["remedies"])) for p in doc["pods"]]


def test_a_zip_gives_the_verdicts_of_the_file_it_holds(tmp_path: Path) -> None:
    archive = tmp_path / "dump.zip"
    archive.write_bytes(_zip({"cluster/cluster.yaml": DEMO.read_bytes()}))
    want = _verdicts(str(DEMO))
    assert want and any(message for _, message, _ in want)
    assert _verdicts(str(archive)) == want
    assert _verdicts("-", stdin=archive.read_bytes()) == want


def test_members_are_named_inside_the_archive(tmp_path: Path) -> None:
    archive = tmp_path / "dump.zip"
    archive.write_bytes(_zip({"a/nodes.yaml": NODE.encode(), "b/pods.yaml": POD.encode(), "notes.txt": b"x"}))
    result = load_paths([str(archive)])
    assert sorted((r.kind, r.source) for r in result.objects) == [
        ("Node", f"{archive}:a/nodes.yaml"),
        ("Pod", f"{archive}:b/pods.yaml"),
    ]


def test_a_tarball_in_a_zip_and_a_zip_in_a_tarball(tmp_path: Path) -> None:
    tar_buf = io.BytesIO()
    with tarfile.open(fileobj=tar_buf, mode="w:gz") as tar:
        data = NODE.encode()
        info = tarfile.TarInfo("n.yaml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    outer = tmp_path / "outer.zip"
    outer.write_bytes(_zip({"inner.tgz": tar_buf.getvalue(), "p.yaml": POD.encode()}))
    assert sorted(r.source for r in load_paths([str(outer)]).objects) == [
        f"{outer}:inner.tgz:n.yaml",
        f"{outer}:p.yaml",
    ]
    inner = _zip({"n.yaml": NODE.encode()})
    tgz = tmp_path / "outer.tar.gz"
    with tarfile.open(tgz, "w:gz") as tar:
        info = tarfile.TarInfo("inner.zip")
        info.size = len(inner)
        tar.addfile(info, io.BytesIO(inner))
    assert [r.source for r in load_paths([str(tgz)]).objects] == [f"{tgz}:inner.zip:n.yaml"]


def test_symlinks_and_directories_in_a_zip_are_skipped(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("d/", b"")
        link = zipfile.ZipInfo("link.yaml")
        link.external_attr = (0o120777 << 16) | 0
        zf.writestr(link, b"/etc/passwd")
        zf.writestr("n.yaml", NODE)
    archive = tmp_path / "links.zip"
    archive.write_bytes(buf.getvalue())
    assert [r.source for r in load_paths([str(archive)]).objects] == [f"{archive}:n.yaml"]


def _patch_central(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    """Set a field of the first central directory entry (and, for the flags, of the local header too)."""
    out = bytearray(data)
    at = data.index(b"PK\x01\x02")
    struct.pack_into(fmt, out, at + offset, value)
    if offset == 8:
        struct.pack_into(fmt, out, data.index(b"PK\x03\x04") + 6, value)
    return bytes(out)


def test_an_encrypted_member_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "secret.zip"
    archive.write_bytes(_patch_central(_zip({"n.yaml": NODE.encode()}), 8, "<H", 0x1))
    code, err, _ = cli(str(archive))
    one_error(code, err, f"{archive}:n.yaml: encrypted archive member")


def test_an_unsupported_compression_method_is_named(tmp_path: Path) -> None:
    archive = tmp_path / "bz.zip"
    archive.write_bytes(_zip({"n.yaml": NODE.encode()}, zipfile.ZIP_BZIP2))
    code, err, _ = cli(str(archive))
    one_error(code, err, "unsupported zip compression method 12")


def test_a_declared_size_over_the_budget_is_refused_before_inflating(tmp_path: Path) -> None:
    # Central directory entry: uncompressed size at offset 24. 700 MiB declared, a few bytes stored.
    archive = tmp_path / "bomb.zip"
    archive.write_bytes(_patch_central(_zip({"big.yaml": NODE.encode()}), 24, "<I", 700 << 20))
    code, err, cpu = cli(str(archive))
    one_error(code, err, "expands to more than 512 MiB")
    assert cpu < 10


def test_a_member_that_inflates_past_its_declared_size_is_an_error(tmp_path: Path) -> None:
    archive = tmp_path / "liar.zip"
    archive.write_bytes(_patch_central(_zip({"big.yaml": (NODE * 1000).encode()}), 24, "<I", 10))
    code, err, _ = cli(str(archive))
    one_error(code, err, f"{archive}: cannot read archive")


def test_more_members_than_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "many.zip"
    archive.write_bytes(_zip({f"e{i}.txt": b"" for i in range(30)}, zipfile.ZIP_STORED))
    monkeypatch.setattr(files, "Budget", lambda source: _SmallBudget(source))
    with pytest.raises(files.LimitError, match="archive members"):
        load_paths([str(archive)])


class _SmallBudget(files.Budget):
    def __init__(self, source: str) -> None:
        super().__init__(source)
        self.members = 10


def test_zips_nested_too_deep(tmp_path: Path) -> None:
    data, name = NODE.encode(), "n.yaml"
    for i in range(5):
        data, name = _zip({name: data}), f"n{i}.zip"
    archive = tmp_path / "nested.zip"
    archive.write_bytes(data)
    code, err, _ = cli(str(archive))
    one_error(code, err, "archives nested more than 3 deep")


@pytest.mark.parametrize(
    "payload", [b"PK\x03\x04" + b"\xff" * 200, None], ids=["garbage after the magic", "truncated"]
)
def test_a_broken_zip_is_one_line(tmp_path: Path, payload: bytes | None) -> None:
    if payload is None:
        payload = _zip({"n.yaml": (NODE * 50).encode()})[:120]
    archive = tmp_path / "broken.zip"
    archive.write_bytes(payload)
    code, err, _ = cli(str(archive))
    one_error(code, err, str(archive))
    code, err, _ = cli("-", stdin=payload)
    one_error(code, err, "<stdin>")
