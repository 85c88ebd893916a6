"""The DynamicResources "which request failed" detail (Allocator.explain) is report-only: the Filter runs for
every node and again in preemption, so it must not compute it; the report computes it when it reads the
details, with the same words as before it was deferred."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from kdiagnose.load.dump import load_snapshot
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.scheduler.framework import LazyDetails, Status
from kdiagnose.scheduler.plugins.dynamicresources.allocator import Allocator
from kdiagnose.versions import dialect_for

_FIXTURE = (
    Path(__file__).resolve().parent.parent / "fixtures" / "golden" / "dra-template-gpus-on-some-nodes.yaml"
)


def test_filter_defers_explain_and_the_report_words_are_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    from kdiagnose.report.details import describe_details

    calls: list[str] = []
    real = Allocator.explain

    def counting(self: Allocator, node: object) -> object:
        calls.append(str(getattr(node, "name", "")))
        return real(self, node)  # type: ignore[arg-type]

    monkeypatch.setattr(Allocator, "explain", counting)
    snap, _ = load_snapshot([str(_FIXTURE)], dialect_for("v1.34.12"))
    pod = next(p for p in snap.pending if p.key == "ml/llm-pretrain-0")
    d = Scheduler(snap).diagnose(pod)
    assert calls == []  # the replay (Filter, PostFilter) never explained a node
    st = d.verdicts["gpu-a100-1"]
    assert isinstance(st.details, LazyDetails) and not st.details.computed
    assert describe_details(st.details) == (
        "claim ml/llm-pretrain-0-gpu request gpu needs 4 device(s): 4 device(s) match DeviceClass "
        "gpu.example.com, 2 of them unallocated"
    )
    assert calls == ["gpu-a100-1"]
    assert describe_details(d.verdicts["cpu-1"].details) == (
        "claim ml/llm-pretrain-0-gpu request gpu needs 4 device(s): no device on the node matches DeviceClass "
        "gpu.example.com and the request's selectors"
    )
    describe_details(st.details)
    assert calls == ["gpu-a100-1", "cpu-1"]  # computed once per node, then kept


def test_lazy_details_read_compare_and_pickle_as_the_tuple() -> None:
    made: list[int] = []

    def more() -> list[dict[str, object]]:
        made.append(1)
        return [{"b": 2}]

    lazy = LazyDetails(({"a": 1},), more)
    assert lazy  # truthiness from the head alone
    assert made == []
    assert lazy == ({"a": 1}, {"b": 2})
    # Status equality compares a plain tuple with the lazy one (the reflected __eq__).
    assert Status(details=({"a": 1}, {"b": 2})) == Status(details=lazy)
    assert list(lazy) == [{"a": 1}, {"b": 2}] and len(lazy) == 2 and lazy[1] == {"b": 2}
    assert pickle.loads(pickle.dumps(lazy)) == ({"a": 1}, {"b": 2})
    assert made == [1]


@pytest.mark.parametrize("nodes", [1, 2])
def test_a_selector_the_explanation_cannot_evaluate_is_noted(nodes: int) -> None:
    """The explanation (report-only) reads every request's selectors, also those allocate() never reached:
    one beyond the CEL subset is read as not matching ("no device on the node matches"), and the report must
    say it was not evaluated, whatever the node count and order. Compared with the eager explanation: every
    expression it records as unsupported is among the diagnosis's notes."""
    from kdiagnose.model.snapshot import Snapshot
    from kdiagnose.report.details import describe_details
    from kdiagnose.scheduler.plugins.dynamicresources.allocator import dra_index, parse_claim_requests
    from tests.plugins.test_dynamic_resources import GPU_CLASS, claim, exact, gpu, mk_node, mk_pod, rslice

    dialect = dialect_for("v1.34.1")
    names = [f"n{i}" for i in range(1, nodes + 1)]
    first = claim("a", [exact(name="big", count=2)])
    second = claim("b", [exact(name="odd", sel="device.attributes.map(d, d)")])
    objs = [
        GPU_CLASS,
        *(rslice(f"s-{n}", [gpu(f"gpu-{n}")], node=n) for n in names),
        # The first claim fails on every node (one GPU each), so allocate() never reads the second's selector.
        first,
        second,
    ]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for o in objs:
        by_kind.setdefault(str(o["kind"]), []).append(o)
    present = {"DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"}
    snap = Snapshot(dialect, [mk_node(n) for n in names], [], by_kind, present)
    pod = mk_pod(claims=[{"name": "a", "resourceClaimName": "a"}, {"name": "b", "resourceClaimName": "b"}])
    d = Scheduler(snap).diagnose(pod)
    assert not d.feasible and set(d.verdicts) == set(names)

    # The slow path: the explanation computed eagerly, node by node, on a fresh allocator.
    claims = [
        parse_claim_requests("default/a", first["spec"]),
        parse_claim_requests("default/b", second["spec"]),
    ]
    eager = Allocator(dra_index(snap), claims)
    for name in names:
        node = snap.node_info_by_name[name].node
        want = tuple(eager.explain(node))
        assert tuple(d.verdicts[name].details)[1:] == want
        assert "request odd needs 1 device(s): no device on the node matches" in describe_details(
            d.verdicts[name].details
        )
    assert eager.unsupported  # the eager explanation did read the selector as not matching
    for expr, why in eager.unsupported.items():
        assert f"not evaluated: CEL selector {expr!r} {why}; treated as not matching" in d.notes


def test_the_explanation_written_by_a_pod_worker_is_the_serial_text(forks: list[int]) -> None:
    """A pod worker computes the deferred explanation in its own (forked) process, the serial run in the
    parent: the same bytes, and the explanation is in them."""
    from tests.test_parallel_pods import _written

    forked = forks
    for name in ("dra-template-gpus-on-some-nodes", "dra-shared-claim-pending-pods"):
        path = _FIXTURE.with_name(name + ".yaml")
        serial = _written(load_snapshot([str(path)], dialect_for("v1.34.12"))[0], 1, None, path.name)
        before = len(forked)
        assert _written(load_snapshot([str(path)], dialect_for("v1.34.12"))[0], 2, None, path.name) == serial
        assert len(forked) > before and b'"matching"' in serial, name
