"""The live-read modules (kdiagnose/load/{kinds,kubeconfig,apireader,cluster}.py) and the options shared by
`kdiagnose pod` and `kdiagnose pods`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from kdiagnose.cli import app
from kdiagnose.load.kinds import (
    KINDS,
    needs_default_spreading,
    needs_dra,
    needs_preemption,
    needs_storage,
    uses_namespace_selector,
)

ROOT = Path(__file__).resolve().parent.parent
Obj = dict[str, Any]


@pytest.mark.parametrize(
    ("kind", "namespace", "name", "path"),
    [
        pytest.param(
            "Pod", "default", "web-1", "/api/v1/namespaces/default/pods/web-1", id="core namespaced get"
        ),
        pytest.param(
            "Node", "default", None, "/api/v1/nodes", id="cluster-scoped kind ignores the namespace"
        ),
        pytest.param(
            "CSIStorageCapacity",
            None,
            None,
            "/apis/storage.k8s.io/v1/csistoragecapacities",
            id="namespaced list across all namespaces",
        ),
        pytest.param(
            "PodDisruptionBudget",
            "a/b",
            "x y",
            "/apis/policy/v1/namespaces/a%2Fb/poddisruptionbudgets/x%20y",
            id="namespace and name are quoted",
        ),
    ],
)
def test_kind_paths(kind: str, namespace: str | None, name: str | None, path: str) -> None:
    assert KINDS[kind].path(namespace, name) == path


def _spec(**spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


@pytest.mark.parametrize(
    ("pod", "storage", "preemption", "spreading", "dra", "ns_selector"),
    [
        pytest.param(
            _spec(), False, True, True, False, False, id="a bare pod needs preemption and spreading"
        ),
        pytest.param(
            _spec(volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}]),
            True,
            True,
            True,
            False,
            False,
            id="a claim needs the storage kinds",
        ),
        pytest.param(
            _spec(volumes=[{"name": "t", "emptyDir": {}}, {"name": "c", "configMap": {"name": "x"}}]),
            False,
            True,
            True,
            False,
            False,
            id="emptyDir and configMap volumes need no storage kind",
        ),
        pytest.param(
            _spec(preemptionPolicy="Never", topologySpreadConstraints=[{"maxSkew": 1}]),
            False,
            False,
            False,
            False,
            False,
            id="preemptionPolicy Never and own constraints skip preemption and default spreading",
        ),
        pytest.param(
            _spec(resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-claim"}]),
            False,
            True,
            True,
            True,
            False,
            id="resourceClaims need the DRA kinds",
        ),
        pytest.param(
            _spec(
                affinity={
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 1, "podAffinityTerm": {"topologyKey": "zone", "namespaceSelector": {}}}
                        ]
                    }
                }
            ),
            False,
            True,
            True,
            False,
            True,
            id="an empty namespaceSelector in a preferred term needs the Namespaces",
        ),
        pytest.param(
            {"kind": "Pod", "spec": "garbage"},
            False,
            True,
            True,
            False,
            False,
            id="a malformed spec is empty",
        ),
    ],
)
def test_needs_predicates(
    pod: Obj, storage: bool, preemption: bool, spreading: bool, dra: bool, ns_selector: bool
) -> None:
    assert needs_storage(pod) is storage
    assert needs_preemption(pod) is preemption
    assert needs_default_spreading(pod) is spreading
    assert needs_dra(pod) is dra
    assert uses_namespace_selector(pod) is ns_selector


def test_importing_the_live_modules_loads_no_kubernetes() -> None:
    code = (
        "import sys\n"
        "import kdiagnose.load.cluster, kdiagnose.load.kinds, kdiagnose.load.kubeconfig, kdiagnose.load.apireader\n"
        "import kdiagnose.commands.live\n"
        "print('HEAVY', [m for m in sys.modules if m.split('.')[0] in ('kubernetes', 'urllib3')])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert "HEAVY []" in proc.stdout, proc.stdout + proc.stderr


_SHARED = [
    (["--kubeconfig"], None),
    (["--context"], None),
    (["--request-timeout"], "30s"),
    (["--chunk-size"], 500),
    (["-o", "--output"], "human"),
    (["--no-color"], False),
    (["--k8s-version"], None),
    (["--scheduler-config"], None),
    (["--scheduler-config-from"], None),
    (["--strict-config"], False),
    (["--save-snapshot"], None),
    (["--full"], False),
    (["--top"], 5),
    (["--pools"], None),
    (["--all-nodes"], False),
    (["--all-remedies"], False),
    (["--summary"], False),
    (["--debug"], False),
]


@pytest.mark.parametrize(
    ("command", "own"),
    [
        pytest.param("pod", [(["name"], None), (["-n", "--namespace"], None)], id="pod: NAME and -n first"),
        pytest.param(
            "pods",
            [(["-n", "--namespace"], None), (["-A", "--all-namespaces"], False), (["-l", "--selector"], "")],
            id="pods: -n, -A and -l first",
        ),
    ],
)
def test_live_commands_take_their_own_options_then_the_shared_ones(
    command: str, own: list[tuple[list[str], Any]]
) -> None:
    group: Any = typer.main.get_command(app)
    params = group.commands[command].params
    assert [(p.opts, p.default) for p in params] == [*own, *_SHARED]
    helps = {p.name: p.help for p in params}
    assert helps["request_timeout"] == "Per-request timeout, e.g. 30s, 1m; 0 = none."
    assert helps["debug"] == "Tracebacks and request statistics on stderr."
