"""Which release a replay uses: --k8s-version parsing, the supported range, and the default from a dump."""

from __future__ import annotations

import itertools

import pytest

from kdiagnose.versions import DEFAULT_VERSION, VersionError, dialect_for, infer_from_kubelets


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("v1.34", "v1.34.12", id="a bare minor is its newest known patch"),
        pytest.param("v1.35", "v1.35.8", id="v1.35's newest patch"),
        pytest.param("1.36", "v1.36.5", id="v1.36's newest patch"),
        pytest.param("v1.37", "v1.37.2", id="v1.37's newest patch"),
        pytest.param("v1.34.1", "v1.34.1", id="an exact patch is kept"),
        pytest.param("v1.37.9", "v1.37.9", id="a later patch than known is kept"),
        pytest.param("v1.33.3-eks-1234", "v1.33.3", id="a distribution suffix is dropped"),
        pytest.param("v1.31", "v1.31.8", id="the oldest supported minor"),
    ],
)
def test_dialect_for(text: str, want: str) -> None:
    d = dialect_for(text)
    assert d.name == want and d.reason == f"--k8s-version {text}"


def test_default_is_the_newest_supported_release() -> None:
    assert DEFAULT_VERSION == "v1.37.2" and dialect_for(None).name == "v1.37.2"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        pytest.param("v1.30.14", r"older than v1\.31, the oldest release kdiagnose replays", id="v1.30"),
        pytest.param("v1.20", r"older than v1\.31", id="v1.20"),
        pytest.param(
            "v1.38.0", r"unsupported Kubernetes version 'v1.38.0': kdiagnose knows v1.31-v1.37", id="v1.38"
        ),
        pytest.param("v2.0", r"unsupported", id="major 2"),
        pytest.param("latest", r"invalid Kubernetes version", id="not a version"),
    ],
)
def test_refused(text: str, match: str) -> None:
    with pytest.raises(VersionError, match=match):
        dialect_for(text)


def test_inferred_from_the_highest_kubelet_minor_in_any_order() -> None:
    nodes = [("b", "v1.35.9"), ("a", "v1.36.1"), ("c", "v1.36.1"), ("d", "garbage"), ("e", "")]
    results = {
        (d.name, d.reason, tuple(w))
        for perm in itertools.permutations(nodes)
        for d, w in [infer_from_kubelets(perm)]
    }
    assert results == {
        (
            "v1.36.5",
            "inferred from the nodes: node a runs kubelet v1.36.1, and the control plane is never older than "
            "its kubelets",
            (),
        )
    }


def test_inferred_without_kubelet_versions_is_the_newest() -> None:
    d, warnings = infer_from_kubelets([("a", ""), ("b", "unknown")])
    assert d.name == DEFAULT_VERSION and warnings == []
    assert d.reason == "the newest release kdiagnose knows (no node reports a kubelet version)"


def test_inferred_newer_than_known_warns_naming_both() -> None:
    d, warnings = infer_from_kubelets([("gpu-1", "v1.38.2"), ("a", "v1.37.1")])
    assert d.name == "v1.37.2"
    assert warnings == [
        "node gpu-1 runs kubelet v1.38.2, newer than v1.37.2, the newest release kdiagnose knows: replaying as "
        "v1.37.2 (use --k8s-version)"
    ]


def test_inferred_older_than_supported_uses_the_oldest_with_a_warning() -> None:
    d, warnings = infer_from_kubelets([("old", "v1.29.3")])
    assert d.name == "v1.31.8"
    assert len(warnings) == 1 and "v1.29.3" in warnings[0] and "v1.31.8" in warnings[0]


def test_preemption_skips_terminating_victims_by_patch() -> None:
    """#133213 (v1.34.0) skipped the delete call for a terminating victim, v1.34.2 reverted it, v1.35 has it
    again: the real v1.34.1 scheduler sends no Preempted event for it, v1.34.12 does
    (fixtures/fuzz-found/v1341-preemption-terminating-victim, recorded with both)."""
    assert not dialect_for("v1.33.3").preemption_skips_terminating_victims
    assert dialect_for("v1.34.1").preemption_skips_terminating_victims
    assert not dialect_for("v1.34.2").preemption_skips_terminating_victims
    assert not dialect_for("v1.34.12").preemption_skips_terminating_victims
    assert dialect_for("v1.35.4").preemption_skips_terminating_victims
    assert dialect_for("v1.37.2").preemption_skips_terminating_victims
