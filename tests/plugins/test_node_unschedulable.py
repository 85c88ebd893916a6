"""NodeUnschedulable and NodeName filters."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.nodename.node_name import NodeName
from kdiagnose.scheduler.plugins.nodeunschedulable.node_unschedulable import NodeUnschedulable
from tests.plugins.basic_factories import handle, node, pod, snapshot


@pytest.mark.parametrize(
    ("unschedulable", "tolerations", "ok"),
    [
        pytest.param(False, [], True, id="schedulable node passes"),
        pytest.param(True, [], False, id="cordoned node rejects"),
        pytest.param(
            True,
            [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}],
            True,
            id="the unschedulable toleration passes",
        ),
        pytest.param(True, [{"operator": "Exists"}], True, id="a key-less Exists toleration passes"),
        pytest.param(
            True,
            [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"}],
            False,
            id="a toleration for another effect does not",
        ),
    ],
)
def test_node_unschedulable(unschedulable: bool, tolerations: list[dict[str, Any]], ok: bool) -> None:
    n = node(unschedulable=unschedulable)
    snap = snapshot([n])
    st = NodeUnschedulable(handle(snap)).filter(
        CycleState(), pod(tolerations=tolerations), snap.node_infos[0]
    )
    assert st.ok is ok
    if not ok:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st.reasons == ("node(s) were unschedulable",)


def test_node_name() -> None:
    snap = snapshot([node("n1"), node("n2")])
    pl = NodeName(handle(snap))
    p = pod(node="")
    p.node_name = "n2"
    assert not pl.filter(CycleState(), p, snap.node_infos[0]).ok
    assert pl.filter(CycleState(), p, snap.node_infos[1]).ok
    assert pl.filter(CycleState(), pod(), snap.node_infos[0]).ok
    st = pl.filter(CycleState(), p, snap.node_infos[0])
    assert st.reasons == ("node(s) didn't match the requested node name",)
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
