"""Score plugins worked out by hand: ImageLocality with init containers, default tags and digests;
TaintToleration PreferNoSchedule against tolerations with an empty or a different effect; BalancedAllocation
over three configured resources; system-default spreading from a Service or a ReplicaSet.

Sources (v1.34.1): imagelocality/image_locality.go (init + regular containers, `:latest` appended to untagged
names, size x nodesWithImage/allNodes, clamped to [23 MiB, 1000 MiB x containers] and scaled to 0-100);
tainttoleration/taint_toleration.go (only tolerations with empty or PreferNoSchedule effect count; reverse
normalization); noderesources/balanced_allocation.go (population std of the fractions when more than two);
podtopologyspread/scoring.go (defaults hostname maxSkew 3 / zone maxSkew 5; a filtered node without a zone
adds an "" domain to the zone's size but scores no zone part).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.scenarios.helpers import diagnose, node, pod, scenario

MB = 1024 * 1024


def _image(names: list[str], size: int) -> dict[str, Any]:
    return {"names": names, "sizeBytes": size}


def _scores(tmp_path: Path, text: str, plugin: str, config: str | None = None) -> dict[str, tuple[int, int]]:
    d = diagnose(tmp_path, text, "default/p", config=config)
    return {
        n: (b.plugins[plugin].score, b.plugins[plugin].weighted)
        for n, b in d.scores.items()
        if plugin in b.plugins
    }


def test_image_locality_init_containers_tags_and_digests(tmp_path: Path) -> None:
    """n1: busybox:latest 300 MiB on 1 of 2 nodes (150) + registry/app:1.0 500 MiB on both (500) = 650 MiB.
    n2: 500 + nginx@sha256:abc 200 MiB on one node (100) = 600 MiB. Three containers: max 3000 MiB.
    n1: 100*(650-23)/(3000-23) = 21; n2: 100*(600-23)/2977 = 19."""
    text = scenario(
        node("n1", images=[_image(["registry/app:1.0"], 500 * MB), _image(["busybox:latest"], 300 * MB)]),
        node("n2", images=[_image(["registry/app:1.0"], 500 * MB), _image(["nginx@sha256:abc"], 200 * MB)]),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {
                "initContainers": [{"name": "i", "image": "busybox"}],
                "containers": [
                    {"name": "a", "image": "registry/app:1.0"},
                    {"name": "b", "image": "nginx@sha256:abc"},
                ],
            },
        },
    )
    assert _scores(tmp_path, text, "ImageLocality") == {"n1": (21, 21), "n2": (19, 19)}


def test_prefer_no_schedule_tolerations(tmp_path: Path) -> None:
    """The empty-effect toleration of `b` tolerates b:PreferNoSchedule; the NoSchedule toleration of `a` does
    not count for scoring. Raw: n1 1, n2 1, n3 0; reversed over max 1: 0, 0, 100 (weight 3)."""

    def prefer(*kv: tuple[str, str]) -> list[dict[str, str]]:
        return [{"key": k, "value": v, "effect": "PreferNoSchedule"} for k, v in kv]

    text = scenario(
        node("n1", taints=prefer(("a", "1"), ("b", "2"))),
        node("n2", taints=prefer(("a", "1"))),
        node("n3"),
        pod(
            "p",
            tolerations=[
                {"key": "b", "operator": "Exists"},
                {"key": "a", "value": "1", "effect": "NoSchedule"},
            ],
        ),
    )
    assert _scores(tmp_path, text, "TaintToleration") == {"n1": (0, 0), "n2": (0, 0), "n3": (100, 300)}


BALANCED_3 = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesBalancedAllocation
    args:
      resources:
      - {name: cpu, weight: 1}
      - {name: memory, weight: 1}
      - {name: ephemeral-storage, weight: 1}
"""


@pytest.mark.parametrize(
    ("config", "want"),
    [
        pytest.param(
            BALANCED_3,
            {"n1": (83, 83), "n2": (92, 92)},
            id="three resources: population std (n1 fractions .5/.375/.1, n2 .25/.25/.1)",
        ),
        pytest.param(None, {"n1": (93, 93), "n2": (100, 100)}, id="default cpu+memory: |f1-f2|/2"),
    ],
)
def test_balanced_allocation_resources(
    tmp_path: Path, config: str | None, want: dict[str, tuple[int, int]]
) -> None:
    text = scenario(
        node("n1"),
        node("n2"),
        pod("x", node_name="n1", cpu="1", memory="2Gi"),
        pod("p", cpu="1", memory="4Gi", extra_requests={"ephemeral-storage": "10Gi"}),
    )
    assert _scores(tmp_path, text, "NodeResourcesBalancedAllocation", config) == want


ZONE = "topology.kubernetes.io/zone"
WEB = {"app": "web"}
SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"selector": WEB, "ports": [{"port": 80}]},
}
REPLICA_SET = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "web-rs", "namespace": "default", "uid": "rs-uid"},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": WEB},
        "template": {"metadata": {"labels": WEB}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
    },
}


def _owned(p: dict[str, Any]) -> dict[str, Any]:
    p["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-rs", "uid": "rs-uid", "controller": True}
    ]
    return p


@pytest.mark.parametrize(
    ("extra", "pending", "want"),
    [
        pytest.param(
            [SERVICE],
            pod("p", labels=WEB),
            {"n1": (33, 66), "n2": (83, 166), "n3": (100, 200)},
            id="Service selector: hostname + zone defaults, the zone-less node scores its host part only",
        ),
        pytest.param(
            [REPLICA_SET],
            _owned(pod("p", labels=WEB)),
            {"n1": (33, 66), "n2": (83, 166), "n3": (100, 200)},
            id="ReplicaSet owner: same selector, same scores",
        ),
        pytest.param(
            [], pod("p", labels=WEB), {}, id="no Service/RS selects the pod: PodTopologySpread skips"
        ),
    ],
)
def test_system_default_spreading(
    tmp_path: Path, extra: list[dict[str, Any]], pending: dict[str, Any], want: dict[str, tuple[int, int]]
) -> None:
    """Zones a, b and "" (n3 has none) give the zone weight ln(3+2); 3 filtered nodes give the hostname weight
    ln(5). Raw: n1 2*ln5+2 + 2*ln5+4 = 12.4 -> 12; n2 2 + 4 = 6; n3 1*ln5+2 = 3.6 -> 4.
    Normalized 100*(max+min-s)/max with max 12, min 4: 33, 83, 100."""
    text = scenario(
        node("n1", labels={ZONE: "a"}),
        node("n2", labels={ZONE: "b"}),
        node("n3"),
        pod("w1", node_name="n1", labels=WEB),
        pod("w2", node_name="n1", labels=WEB),
        pod("w3", node_name="n3", labels=WEB),
        *extra,
        pending,
    )
    assert _scores(tmp_path, text, "PodTopologySpread") == want
