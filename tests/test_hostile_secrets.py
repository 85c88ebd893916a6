"""Secrets stay out of what kdiagnose writes, and a closed stdout keeps the exit code's meaning.

--save-snapshot (stripped) drops the secret-bearing fields no plugin reads: CSI volume attributes (pod and
PV), FlexVolume options, StorageClass parameters, DRA opaque driver parameters. A server URL with userinfo
(`https://user:password@host`) is redacted in the report, in error lines and in the snapshot's header.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from kdiagnose.load.kubeconfig import redact_url
from tests.fake_apiserver import FakeAPIServer
from tests.test_hostile_live import run
from tests.test_live import PV_CASE, SEED, _isolated_env, _objects  # noqa: F401  (the autouse fixture)

ROOT = Path(__file__).resolve().parent.parent
SECRET = "s3cr3t-value"
Obj = dict[str, Any]


def _secret_objects() -> list[Obj]:
    objs = _objects(PV_CASE)
    for o in objs:
        if o["kind"] == "Pod":
            o["spec"].setdefault("volumes", []).extend(
                [
                    {
                        "name": "c",
                        "csi": {"driver": "secrets.csi.k8s.io", "volumeAttributes": {"token": SECRET}},
                    },
                    {"name": "f", "flexVolume": {"driver": "ex/flex", "options": {"password": SECRET}}},
                ]
            )
        if o["kind"] == "PersistentVolume":
            o["spec"]["csi"] = {
                "driver": "ebs.csi.aws.com",
                "volumeHandle": "vol-1",
                "volumeAttributes": {"key": SECRET},
            }
    objs.append(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "secret-sc"},
            "provisioner": "ebs.csi.aws.com",
            "parameters": {"csi.storage.k8s.io/provisioner-secret-name": SECRET},
        }
    )
    objs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"key": SECRET}}}]},
        }
    )
    return objs


def test_save_snapshot_strips_secret_bearing_fields(tmp_path: Path) -> None:
    with FakeAPIServer(_secret_objects()) as srv:
        kc = srv.kubeconfig(tmp_path / "kc")
        snap = tmp_path / "snap.yaml"
        res = run("pods", "--kubeconfig", str(kc), "--save-snapshot", str(snap), "-o", "json")
        assert res.exit_code in (0, 1), res.stderr
        full = tmp_path / "full.yaml"
        res = run("pods", "--kubeconfig", str(kc), "--save-snapshot", str(full), "--full", "-o", "json")
        assert res.exit_code in (0, 1), res.stderr
    text = snap.read_text()
    assert SECRET not in text
    assert SECRET in full.read_text()  # --full keeps them, as documented
    docs = [d for d in yaml.safe_load_all(text) if d]
    pv = next(d for d in docs if d["kind"] == "PersistentVolume")
    assert pv["spec"]["csi"] == {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}  # what plugins read
    # The stripped snapshot replays to the same verdict.
    offline = run(str(snap), "-o", "json")
    assert offline.exit_code in (0, 1), offline.stderr


def test_userinfo_in_the_server_url_is_redacted_everywhere(tmp_path: Path) -> None:
    with FakeAPIServer(_objects(SEED)) as srv:
        server = srv.url.replace("http://", "http://admin:hunter2@")
        kc = srv.kubeconfig(tmp_path / "kc", server=server)
        snap = tmp_path / "snap.yaml"
        ok = run(
            "pod", "hello-web-new", "-n", "default", "--kubeconfig", str(kc), "--save-snapshot", str(snap)
        )
        srv.faults["/api/v1/nodes"] = "status-500"
        failed = run("pods", "--kubeconfig", str(kc))
    assert ok.exit_code in (0, 1), ok.stderr
    for text in (ok.stdout, ok.stderr, failed.stderr, snap.read_text().splitlines()[0]):
        assert "hunter2" not in text and "admin" not in text, text
    assert "***@127.0.0.1" in ok.stdout + snap.read_text().splitlines()[0]
    with FakeAPIServer(_objects(SEED)) as srv:
        kc = srv.kubeconfig(tmp_path / "kc2", server="http://admin:hunter2@127.0.0.1:9")  # nothing listens
        refused = run("pods", "--kubeconfig", str(kc), "--request-timeout", "2s")
    assert refused.exit_code == 3 and "hunter2" not in refused.stderr and "***@" in refused.stderr


def test_redact_url() -> None:
    assert redact_url("https://u:p@h:6443/x") == "https://***@h:6443/x"
    assert redact_url("https://h:6443") == "https://h:6443"
    assert redact_url("https://token@h") == "https://***@h"


def test_closed_stdout_keeps_the_exit_code(tmp_path: Path) -> None:
    # `kdiagnose FILE | head -1`: the verdict's exit code (1: a pod is unschedulable), nothing on stderr.
    fixture = str(ROOT / "fixtures" / "golden" / "seed-hello-web.yaml")
    cmd = [sys.executable, "-c", "from kdiagnose.cli import main; main()", fixture]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    whole = subprocess.run(cmd, capture_output=True, env=env, timeout=60)
    head = subprocess.run(
        f"{subprocess.list2cmdline(cmd)} | head -1; exit ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert whole.returncode == 1
    assert head.returncode == whole.returncode, head.stderr
    assert head.stderr == b"", head.stderr
    assert len(head.stdout.splitlines()) == 1
    json_doc = subprocess.run([*cmd, "-o", "json"], capture_output=True, env=env, timeout=60)
    assert json.loads(json_doc.stdout)["kind"] == "Diagnosis"
