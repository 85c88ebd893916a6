"""A ReadWriteOncePod claim held by another pod (plugins/volumerestrictions/volume_restrictions.go): only
one pod in the cluster may use it. When the holder is Terminating (its node never confirmed the deletion),
force-deleting it frees the claim: proven by replaying with the holder gone. A running holder is a note:
freeing the claim means stopping that workload, which is not a fix kdiagnose proposes."""

from __future__ import annotations

from kdiagnose.remedies.whatif import Context, owner_of
from kdiagnose.results import SAFE, Remedy
from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.plugins.volumerestrictions.volume_restrictions import (
    ERR_REASON_RWOP_CONFLICT,
    ERR_REASON_RWOP_CONFLICT_OLD,
)

__all__ = ["remedies"]


def _rwop_claims(ctx: Context) -> list[str]:
    claims: set[str] = set()
    for st in ctx.d.verdicts.values():
        if st.plugin == n.VOLUME_RESTRICTIONS and any(
            r in (ERR_REASON_RWOP_CONFLICT, ERR_REASON_RWOP_CONFLICT_OLD) for r in st.reasons
        ):
            for det in st.details:
                claims.update(str(c) for c in det.get("claims") or [])
    return sorted(claims)


def remedies(ctx: Context) -> tuple[list[Remedy], list[str]]:
    claims = _rwop_claims(ctx)
    if not claims:
        return [], []
    ns = ctx.pod.namespace
    holders = sorted(
        (
            p
            for p in ctx.snapshot.bound_pods()
            if p.namespace == ns
            and p is not ctx.pod
            and any(
                isinstance(v.get("persistentVolumeClaim"), dict)
                and str(v["persistentVolumeClaim"].get("claimName") or "") in claims
                for v in p.volumes
            )
        ),
        key=lambda p: p.key,
    )
    running = [p for p in holders if not p.deletion_timestamp]
    terminating = [p for p in holders if p.deletion_timestamp]
    notes = [
        f"ReadWriteOncePod: claim(s) {', '.join(claims)} in use by {p.key} ({owner_of(ctx.snapshot, p)}) on "
        f"{p.node_name}: only one pod may use a ReadWriteOncePod claim; it is free once that pod is gone"
        for p in running
    ]
    if not terminating or running:
        return [], notes
    r = ctx.replay(ctx.snapshot.derive(remove_pods=terminating))
    if not r.schedules:
        return [], [
            *notes,
            f"ReadWriteOncePod: deleting the Terminating holder(s) {', '.join(p.key for p in terminating)} "
            "would not be enough",
        ]
    who = ", ".join(
        f"{p.key} (Terminating since {p.deletion_timestamp}, on {p.node_name})" for p in terminating
    )
    return [
        Remedy(
            kind="free-claim",
            summary=f"force-delete {who}: it still holds ReadWriteOncePod claim(s) {', '.join(claims)}",
            plugin=n.VOLUME_RESTRICTIONS,
            target=", ".join(p.key for p in terminating),
            unblocks=list(r.feasible),
            risk=(
                "a force delete skips the kubelet's confirmation: first make sure the container stopped on its "
                "node (a node that is down may still have the volume attached; two writers corrupt it)"
            ),
            commands=[
                f"kubectl delete pod/{p.name} -n {p.namespace} --grace-period=0 --force" for p in terminating
            ],
            verify=f"kubectl get pod/{ctx.pod.name} -n {ns} -o wide  # bound to a node",
            rollback="# a deleted pod is not restored: its controller re-creates it",
            apply_note="the scheduler retries the pod once the holder is gone",
            safety=SAFE,
            change_size=float(len(terminating)),
            details={"claims": claims, "holders": [p.key for p in terminating]},
        )
    ], notes
