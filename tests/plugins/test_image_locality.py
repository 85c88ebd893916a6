"""ImageLocality: name normalization, spread over all nodes, thresholds."""

from __future__ import annotations

import pytest

from kdiagnose.scheduler.framework import CycleState
from kdiagnose.scheduler.plugins.imagelocality.image_locality import ImageLocality, normalized_image_name
from tests.plugins.basic_factories import container, handle, node, pod, snapshot

MB = 1024 * 1024


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("nginx", "nginx:latest", id="no tag gets latest"),
        pytest.param("nginx:1.27", "nginx:1.27", id="a tag stays"),
        pytest.param("localhost:5000/app", "localhost:5000/app:latest", id="a registry port is not a tag"),
        pytest.param(
            "docker.io/library/nginx", "docker.io/library/nginx:latest", id="no docker.io rewriting"
        ),
        pytest.param("repo/app@sha256:abc", "repo/app@sha256:abc", id="a digest counts as tagged"),
    ],
)
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want


def test_score_scales_by_spread_and_thresholds() -> None:
    big = {"names": ["nginx:latest", "docker.io/library/nginx:latest"], "sizeBytes": 500 * MB}
    tiny = {"names": ["pause:3.9"], "sizeBytes": 1 * MB}
    nodes = [
        node("n1", images=[big, tiny]),
        node("n2", images=[big]),
        node("n3"),
        node("n4", images=[{"names": ["huge:1"], "sizeBytes": 5000 * MB}]),
    ]
    snap = snapshot(nodes)
    pl = ImageLocality(handle(snap))
    scores = {}
    p = pod(containers=[container(image="nginx")])
    for ni in snap.node_infos:
        scores[ni.name] = pl.score(CycleState(), p, ni)[0]
    # 500MB * 2/4 nodes = 250MB: 100 * (250 - 23) / (1000 - 23) = 23.
    assert scores == {"n1": 23, "n2": 23, "n3": 0, "n4": 0}
    # Below the 23MB minimum scores 0; above 1000MB per container is capped at 100.
    assert pl.score(CycleState(), pod(containers=[container(image="pause:3.9")]), snap.node_infos[0])[0] == 0
    # 5000MB * 1/4 nodes = 1250MB, over the 1000MB maximum for one container.
    assert pl.score(CycleState(), pod(containers=[container(image="huge:1")]), snap.node_infos[3])[0] == 100


def test_score_caps_and_counts_init_containers() -> None:
    huge = {"names": ["huge:1"], "sizeBytes": 4000 * MB}
    snap = snapshot([node("n1", images=[huge])])
    pl = ImageLocality(handle(snap))
    assert pl.score(CycleState(), pod(containers=[container(image="huge:1")]), snap.node_infos[0])[0] == 100
    # Two containers double the maximum: 4000MB capped at 2000MB is 100 again; 1000MB of 2000MB is 49.
    snap2 = snapshot([node("n1", images=[{"names": ["a:1"], "sizeBytes": 1000 * MB}])])
    pl2 = ImageLocality(handle(snap2))
    p = pod(containers=[container(image="a:1")], init=[container("init", image="other:1")])
    # 100 * (1000 - 23) / (2000 - 23) = 49.4 -> 49.
    assert pl2.score(CycleState(), p, snap2.node_infos[0])[0] == 49
