"""Fake plugins mirroring pkg/scheduler/testing/framework/fake_plugins.go and framework_test.go's TestPlugin,
plus a Framework whose extension points are set by hand (tf.NewFramework with RegisterXPlugin calls).

Every fake is a Plugin subclass created per name (the runner reads `name` from the class), configured with
the status codes the upstream case injects.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kdiagnose.model.objects import Pod
from kdiagnose.model.snapshot import NodeInfo, Snapshot
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.framework import (
    SKIP,
    SUCCESS,
    Code,
    CycleState,
    Handle,
    Plugin,
    PreFilterResult,
    Status,
)
from kdiagnose.scheduler.profiles import Profile
from kdiagnose.scheduler.runner import Framework

__all__ = ["ERR_REASON_FAKE", "INJECT_REASON", "Inject", "fake", "framework_with"]

# tf.ErrReasonFake and framework_test.go's injectReason / injectFilterReason.
ERR_REASON_FAKE = "Nodes failed the fake plugin"
INJECT_REASON = "injected status"


@dataclass
class Inject:
    """framework_test.go injectedResult: a code per extension point (None = Success)."""

    pre_filter: Code | None = None
    pre_filter_result: frozenset[str] | None = None
    filter: Code | None = None
    # FakeFilterPlugin.FailedNodeReturnCodeMap: a code for some nodes only.
    filter_by_node: dict[str, Code] = field(default_factory=dict)
    filter_reason: str = INJECT_REASON
    add_pod: Code | None = None
    remove_pod: Code | None = None
    post_filter: Code | None = None
    pre_score: Code | None = None
    score: dict[str, int] = field(default_factory=dict)
    score_error: bool = False
    normalize: str = ""  # "" | "reverse" (ReverseNumericMap-like: 100 - score) | "double"
    calls: dict[str, int] = field(default_factory=dict)


def _status(code: Code | None, reason: str) -> Status:
    if code is None or code == Code.SUCCESS:
        return SUCCESS
    if code == Code.SKIP:
        return SKIP
    return Status(code, (reason,))


class _Fake(Plugin):
    inj: Inject

    def _called(self, point: str) -> None:
        self.inj.calls[point] = self.inj.calls.get(point, 0) + 1

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        self._called("pre_filter")
        result = (
            PreFilterResult(self.inj.pre_filter_result) if self.inj.pre_filter_result is not None else None
        )
        return result, _status(self.inj.pre_filter, INJECT_REASON)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        self._called("filter")
        code = self.inj.filter_by_node.get(node_info.name, self.inj.filter)
        return _status(code, self.inj.filter_reason)

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        self._called("add_pod")
        return _status(self.inj.add_pod, INJECT_REASON)

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        self._called("remove_pod")
        return _status(self.inj.remove_pod, INJECT_REASON)

    def post_filter(self, state: CycleState, pod: Pod, diagnosis: Diagnosis, framework: Any) -> Status:
        self._called("post_filter")
        return _status(self.inj.post_filter, INJECT_REASON)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        self._called("pre_score")
        return _status(self.inj.pre_score, INJECT_REASON)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        self._called("score")
        if self.inj.score_error:
            return 0, Status.error(INJECT_REASON)
        return self.inj.score.get(node_info.name, 0), SUCCESS

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
        if self.inj.normalize == "reverse":
            top = max(scores.values(), default=0)
            for k, v in scores.items():
                scores[k] = 100 * (top - v) // top if top else 0
        return SUCCESS


def fake(name: str, snap: Snapshot, inj: Inject | None = None) -> _Fake:
    cls = type(f"Fake_{name}", (_Fake,), {"name": name, "inj": inj or Inject()})
    plugin: _Fake = cls(Handle(snap, snap.dialect, {}))
    return plugin


def framework_with(
    snap: Snapshot,
    *,
    pre_filter: Iterable[Plugin] = (),
    filter: Iterable[Plugin] = (),
    post_filter: Iterable[Plugin] = (),
    pre_score: Iterable[Plugin] = (),
    score: Iterable[tuple[Plugin, int]] = (),
) -> Framework:
    """A Framework over `snap` with exactly these plugins at these points, in this order."""
    pre_filter, filter, post_filter = list(pre_filter), list(filter), list(post_filter)
    pre_score, score = list(pre_score), list(score)
    profile = Profile(
        pre_filter=[p.name for p in pre_filter],
        filter=[p.name for p in filter],
        post_filter=[p.name for p in post_filter],
        pre_score=[p.name for p in pre_score],
        score={p.name: w for p, w in score},
    )
    fw = Framework(snap, Profile())
    fw.profile = profile
    fw.pre_filter_plugins = list(pre_filter)
    fw.filter_plugins = list(filter)
    fw.extension_plugins = list(fw.pre_filter_plugins)
    fw.post_filter_plugins = list(post_filter)
    fw.pre_score_plugins = list(pre_score)
    fw.score_plugins = [(p, w or 1) for p, w in score]
    return fw
