"""Replay entry point: pick each pending pod's profile by schedulerName and run one cycle for it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.profiles import Profile, default_profile
from kdiagnose.scheduler.runner import Framework

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import Snapshot

__all__ = ["Scheduler"]


class Scheduler:
    """All profiles of one scheduler instance over one snapshot; frameworks are built once and reused."""

    def __init__(self, snapshot: Snapshot, profiles: list[Profile] | None = None) -> None:
        self.snapshot = snapshot
        self.profiles = profiles or [default_profile(snapshot.dialect)]
        self._frameworks: dict[str, Framework] = {}

    def framework(self, scheduler_name: str) -> Framework | None:
        fw = self._frameworks.get(scheduler_name)
        if fw is None:
            for p in self.profiles:
                if p.scheduler_name == scheduler_name:
                    fw = Framework(self.snapshot, p)
                    self._frameworks[scheduler_name] = fw
                    break
        return fw

    def invalidate(self) -> None:
        """Forget frameworks after the snapshot changed (bind/remove): plugins re-read it."""
        self._frameworks.clear()

    def handles(self, pod: Pod) -> bool:
        return any(p.scheduler_name == pod.scheduler_name for p in self.profiles)

    def diagnose(self, pod: Pod) -> Diagnosis:
        fw = self.framework(pod.scheduler_name)
        if fw is None:
            names = ", ".join(p.scheduler_name for p in self.profiles)
            return Diagnosis(
                pod=pod,
                profile=pod.scheduler_name,
                num_all_nodes=self.snapshot.num_nodes,
                handled=False,
                not_handled_reason=(
                    f'no profile with schedulerName "{pod.scheduler_name}" (profiles: {names}): kube-scheduler ignores the pod'
                ),
            )
        return fw.schedule(pod)

    def diagnose_all(self, pods: Iterable[Pod]) -> list[Diagnosis]:
        return [self.diagnose(p) for p in pods]
