"""Replay entry point: pick each pending pod's profile by schedulerName and run one cycle for it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.profiles import Profile, default_profile
from kdiagnose.scheduler.runner import Framework

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import Snapshot

__all__ = ["Scheduler", "scheduling_signature"]

_MEMO_SIZE = 64


def scheduling_signature(pod: Pod) -> bytes | None:
    """Everything of a pending pod the replay can read except its name, or None when unknown.

    The name enters only through names derived from it (generic ephemeral volume claims `<pod>-<volume>`),
    so pods with such volumes keep their name in the key. A pod's own object is needed (pending pods keep
    it); without it no signature is claimed.
    """
    raw = pod.raw
    if raw is None:
        return None
    import orjson

    meta: dict[str, Any] = raw.get("metadata") or {}
    spec: dict[str, Any] = raw.get("spec") or {}
    status: dict[str, Any] = raw.get("status") or {}
    named = any(isinstance(v, dict) and "ephemeral" in v for v in spec.get("volumes") or [])
    key = (
        pod.name if named else "",
        meta.get("namespace"),
        meta.get("labels"),
        [
            (r.get("kind"), r.get("name"), r.get("uid"))
            for r in meta.get("ownerReferences") or []
            if isinstance(r, dict)
        ],
        meta.get("deletionTimestamp"),
        spec,
        status.get("nominatedNodeName"),
        status.get("resourceClaimStatuses"),
        status.get("conditions"),
    )
    try:
        data: bytes = orjson.dumps(key, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None
    return data


class Scheduler:
    """All profiles of one scheduler instance over one snapshot; frameworks are built once and reused."""

    def __init__(
        self, snapshot: Snapshot, profiles: list[Profile] | None = None, *, nominated: bool = False
    ) -> None:
        self.snapshot = snapshot
        self.nominated = nominated
        self.profiles = profiles or [default_profile(snapshot.dialect)]
        self._frameworks: dict[str, Framework] = {}
        # Diagnoses by pod signature: replicas of one workload share every scheduling input, so one replay
        # answers for all of them (as kube-scheduler v1.35's OpportunisticBatching reuses a signature's work).
        self._memo: dict[bytes, Diagnosis] = {}
        self._memo_generation = snapshot.generation

    def framework(self, scheduler_name: str) -> Framework | None:
        fw = self._frameworks.get(scheduler_name)
        if fw is None:
            for p in self.profiles:
                if p.scheduler_name == scheduler_name:
                    fw = Framework(self.snapshot, p, nominated=self.nominated)
                    self._frameworks[scheduler_name] = fw
                    break
        return fw

    def invalidate(self) -> None:
        """Forget frameworks after the snapshot changed (bind/remove): plugins re-read it."""
        self._frameworks.clear()
        self._memo.clear()

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
        key = scheduling_signature(pod)
        if key is None:
            return fw.schedule(pod)
        if self._memo_generation != self.snapshot.generation:
            self._memo.clear()
            self._memo_generation = self.snapshot.generation
        cached = self._memo.get(key)
        if cached is None:
            cached = fw.schedule(pod)
            if len(self._memo) >= _MEMO_SIZE:
                # Bounded: 1,000 distinct pending pods must not keep 1,000 full diagnoses alive here.
                del self._memo[next(iter(self._memo))]
            self._memo[key] = cached
        # A copy for every pod, the first too: callers add the pod's own notes (the pipeline's platform
        # warning, live mode's triage) to its diagnosis, which must not reach the replicas diagnosed next.
        return replace(cached, pod=pod, notes=list(cached.notes))

    def diagnose_all(self, pods: Iterable[Pod]) -> list[Diagnosis]:
        return [self.diagnose(p) for p in pods]
