"""The seed case's ranked remedies (issue 6's done-when)."""

from __future__ import annotations

from tests.remedies.helpers import remedies_for

SEED = "golden/seed-hello-web.yaml"


def test_seed_ranking_is_capacity_then_toleration_affinity_right_size() -> None:
    remedies, _ = remedies_for(SEED, "default/hello-web-new")
    assert [(r.kind, r.unblocks) for r in remedies] == [
        ("scale-pool", ["workload-web-simulated-1"]),
        ("toleration", ["node-b"]),
        ("relax-affinity", ["node-d"]),
        ("right-size", ["node-a", "node-c"]),
    ]
    assert [r.rank for r in remedies] == [1, 2, 3, 4]


def test_seed_every_remedy_has_a_caveat_and_a_way_to_verify() -> None:
    remedies, _ = remedies_for(SEED, "default/hello-web-new")
    for r in remedies:
        assert r.risk
        assert r.verify


def test_seed_right_size_is_500m() -> None:
    remedies, _ = remedies_for(SEED, "default/hello-web-new")
    rs = remedies[3]
    assert "cpu <= 500m" in rs.summary
    assert "cpu: 500m" in rs.patch
    assert "low live usage is not evidence" in rs.risk


def test_never_suggests_deleting_the_pod() -> None:
    remedies, _ = remedies_for(SEED, "default/hello-web-new")
    assert not any("delete" in r.summary.lower() for r in remedies)
