"""The NodePorts per-node cause in words (scheduler/describe.py), shared by the diagnose report, the
remedies' notes and the `check` gate: the last two put it after the reason as `reason: cause`
(tests/test_cause_parentheses.py), and the holder's binding is named without parentheses of its own."""

from __future__ import annotations

import textwrap

import pytest
import yaml

from kdiagnose.gate.formats.text import failure_text, node_causes
from kdiagnose.gate.placement import run_gate
from kdiagnose.load.files import RawObject, load_paths
from kdiagnose.load.manifests import expand_workloads
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.remedies.whatif import describe_status
from kdiagnose.report.console import RenderOptions, render_text
from kdiagnose.scheduler.describe import describe_details
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.versions import dialect_for
from tests.remedies.helpers import FIXTURES

HELD = FIXTURES / "remedies" / "host-port-held.yaml"  # default/metrics-1 holds 8080/TCP on node-1
CAUSE = "host port 0.0.0.0:8080/TCP used by default/metrics-1"
REASON = "node(s) didn't have free ports for the requested pod ports"


@pytest.mark.parametrize(
    ("details", "text"),
    [
        pytest.param(
            {"port": "0.0.0.0:80/TCP", "usedBy": "ns/a", "usedAs": "0.0.0.0:80/TCP"},
            "host port 0.0.0.0:80/TCP used by ns/a",
            id="the holder's binding is the wanted one: not repeated",
        ),
        pytest.param(
            {"port": "0.0.0.0:80/TCP", "usedBy": "ns/a", "usedAs": "10.0.0.7:80/TCP"},
            "host port 0.0.0.0:80/TCP used by ns/a as 10.0.0.7:80/TCP",
            id="a different binding (0.0.0.0 conflicts with every IP) is named, without parentheses",
        ),
        pytest.param(
            {"port": "0.0.0.0:80/TCP", "usedAs": "10.0.0.7:80/TCP"},
            "host port 0.0.0.0:80/TCP in use on the node as 10.0.0.7:80/TCP",
            id="no holding pod found: a sentence, not usedAs=...",
        ),
    ],
)
def test_host_port_cause_words(details: dict[str, str], text: str) -> None:
    assert describe_details([details]) == text


def test_remedy_notes_put_the_cause_after_the_reason() -> None:
    snap = build_snapshot(load_paths([str(HELD)]).objects, dialect_for(None))
    d = Scheduler(snap).diagnose(next(p for p in snap.pending if p.key == "default/agent"))
    assert describe_status(d.verdicts["node-1"]) == f"{REASON}: {CAUSE}"


def test_diagnose_report_names_the_holder_once() -> None:
    snap = build_snapshot(load_paths([str(HELD)]).objects, dialect_for("v1.34.1"))
    out = render_text(diagnose_snapshot(snap, source="x.yaml"), RenderOptions(color=False, width=80))
    assert f"    node-1  {CAUSE}\n" in out
    assert "(0.0.0.0:8080/TCP)" not in out


def test_check_gate_reads_right() -> None:
    snap = build_snapshot(load_paths([str(HELD)]).objects, dialect_for("v1.34.1"))
    manifest = """
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: agent2}
    spec:
      replicas: 1
      selector: {matchLabels: {app: agent2}}
      template:
        metadata: {labels: {app: agent2}}
        spec:
          containers:
          - {name: a, image: a:1, ports: [{containerPort: 8080, hostPort: 8080}], resources: {requests: {cpu: 100m}}}
    """
    docs = [d for d in yaml.safe_load_all(textwrap.dedent(manifest)) if d]
    workloads = expand_workloads([RawObject(d, "app.yaml", i, i + 1) for i, d in enumerate(docs)])[0]
    (r,) = run_gate(snap, workloads).results
    assert r.failure is not None
    causes = node_causes(r.failure)
    assert f"node-1: NodePorts: {REASON}: {CAUSE}" in causes
    assert "))" not in failure_text(r)
