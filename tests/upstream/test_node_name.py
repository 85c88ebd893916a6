"""Port of pkg/scheduler/framework/plugins/nodename/node_name_test.go (TestNodeName).

Skipped, Go-only mechanics: the EnqueueExtensions/queueing-hint tests.
"""

from __future__ import annotations

import pytest

from kdiagnose.model.snapshot import NodeInfo
from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.nodename.node_name import ERR_REASON, NodeName
from tests.upstream.basic_builders import make_node, make_pod
from tests.upstream.builders import new_plugin, new_snapshot


@pytest.mark.parametrize(
    ("pod_node", "node", "want_fail"),
    [
        pytest.param("", "", False, id="no host specified"),
        pytest.param("foo", "foo", False, id="host matches"),
        pytest.param("bar", "foo", True, id="host doesn't match"),
    ],
)
def test_node_name(pod_node: str, node: str, want_fail: bool) -> None:
    w = make_pod().name("p")
    if pod_node:
        w.spec(nodeName=pod_node)
    pod = w.obj()
    n = make_node().name(node).obj()
    plugin = new_plugin(NodeName, new_snapshot([], [n]))
    st = plugin.filter(CycleState(), pod, NodeInfo(n))
    if want_fail:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st.reasons == (ERR_REASON,)
    else:
        assert st.code == Code.SUCCESS
