"""Port of pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates_test.go (TestPreEnqueue), against
the plugin and the runner (which applies the gate before any scheduling attempt).

Skipped, Go-only mechanics: TestIsSchedulableAfterUpdateTargetPodSchedulingGatesEliminated (queueing hints).
"""

from __future__ import annotations

import pytest

from kdiagnose.scheduler.framework import Code
from kdiagnose.scheduler.plugins.schedulinggates.scheduling_gates import SchedulingGates
from tests.upstream.basic_builders import make_pod
from tests.upstream.builders import new_plugin, new_snapshot


@pytest.mark.parametrize(
    ("gates", "want"),
    [
        pytest.param([], None, id="pod does not carry scheduling gates"),
        pytest.param(
            ["foo", "bar"], "waiting for scheduling gates: [foo bar]", id="pod carries scheduling gates"
        ),
    ],
)
def test_pre_enqueue(gates: list[str], want: str | None) -> None:
    w = make_pod().name("p")
    if gates:
        w.scheduling_gates(gates)
    pod = w.obj()
    plugin = new_plugin(SchedulingGates, new_snapshot([], []))
    assert isinstance(plugin, SchedulingGates)
    st = plugin.pre_enqueue(pod)
    if want is None:
        assert st.code == Code.SUCCESS
    else:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st.reasons == (want,)
