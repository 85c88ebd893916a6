"""Port of pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go (TestNodeUnschedulable).

Skipped, Go-only mechanics: TestIsSchedulableAfterNodeChange (queueing hints).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.snapshot import NodeInfo
from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.nodeunschedulable.node_unschedulable import (
    ERR_REASON_UNSCHEDULABLE,
    NodeUnschedulable,
)
from tests.upstream.basic_builders import make_node, make_pod
from tests.upstream.builders import new_plugin, new_snapshot

Obj = dict[str, Any]


@pytest.mark.parametrize(
    ("tolerations", "unschedulable", "want_fail"),
    [
        pytest.param(
            [],
            True,
            True,
            id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        pytest.param([], False, False, id="Schedule pod to normal node"),
        pytest.param(
            [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
            True,
            False,
            id="Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        # ToleratesTaint semantics on the synthetic taint (k8s.io/api/core/v1/toleration.go).
        pytest.param(
            [{"operator": "Exists"}],
            True,
            False,
            id="an empty-key Exists toleration tolerates the unschedulable taint",
        ),
        pytest.param(
            [{"key": "node.kubernetes.io/unschedulable", "effect": "NoExecute", "operator": "Exists"}],
            True,
            True,
            id="a toleration for another effect does not tolerate it",
        ),
        pytest.param(
            [{"key": "node.kubernetes.io/unschedulable", "operator": "Equal", "value": "true"}],
            True,
            True,
            id="the synthetic taint has an empty value, so Equal true does not tolerate it",
        ),
    ],
)
def test_node_unschedulable(tolerations: list[Obj], unschedulable: bool, want_fail: bool) -> None:
    pod = make_pod().name("p").spec(tolerations=tolerations).obj()
    node = make_node().name("n").unschedulable(unschedulable).obj()
    plugin = new_plugin(NodeUnschedulable, new_snapshot([], [node]))
    st = plugin.filter(CycleState(), pod, NodeInfo(node))
    if want_fail:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st.reasons == (ERR_REASON_UNSCHEDULABLE,)
    else:
        assert st.code == Code.SUCCESS
