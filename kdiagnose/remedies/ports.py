"""Free a host port: the bound pods holding a port the pod wants (plugins/nodeports/node_ports.go), proven by
replaying with those pods gone from one node. DaemonSet pods hold their port on every node: not suggested."""

from __future__ import annotations

from kdiagnose.model.objects import Pod
from kdiagnose.remedies.whatif import Context, describe_status, owner_of
from kdiagnose.results import RISKY, SAFE, Remedy
from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.plugins.nodeports.node_ports import port_conflicts

__all__ = ["MAX_NODES_TRIED", "remedies"]

MAX_NODES_TRIED = 3


def _holders(ctx: Context, node: str) -> list[Pod]:
    wanted = ctx.pod.host_ports()
    ni = ctx.snapshot.node_info_by_name[node]
    return [p for p in ni.pods if any(port_conflicts(w, u) for w in wanted for u in p.host_ports())]


def remedies(ctx: Context) -> tuple[list[Remedy], list[str]]:
    failing = ctx.nodes_failing(n.NODE_PORTS)
    if not failing:
        return [], []
    notes: list[str] = []
    options: list[tuple[int, str, list[Pod]]] = []
    daemon_held = 0
    for node in failing:
        holders = _holders(ctx, node)
        if not holders:
            continue
        if any((p.controller_ref() or {}).get("kind") == "DaemonSet" for p in holders):
            daemon_held += 1
            continue
        options.append((len(holders), node, holders))
    if daemon_held:
        notes.append(
            f"host port: on {daemon_held} node(s) a DaemonSet pod holds the port: it holds it on every node it runs on"
        )
    options.sort(key=lambda o: (o[0], o[1]))
    for _, node, holders in options[:MAX_NODES_TRIED]:
        r = ctx.replay(ctx.snapshot.derive(remove_pods=holders), nodes=[node])
        if not r.schedules:
            st = r.verdicts.get(node)
            notes.append(
                f"host port: freeing the port on {node} would not help: {describe_status(st) if st else ''}"
            )
            continue
        # Port number first, as a number (80 before 443 before 8080, not as text), then the protocol name
        # byte-wise (SCTP, TCP, UDP) for one number held on several protocols; the host IP is not shown,
        # so holders of one port and protocol on different IPs are one entry.
        ports = [
            f"{port}/{proto}"
            for port, proto in sorted(
                {
                    (u[2], u[1])
                    for p in holders
                    for u in p.host_ports()
                    for w in ctx.pod.host_ports()
                    if port_conflicts(w, u)
                }
            )
        ]
        owners = [owner_of(ctx.snapshot, p) for p in holders]
        # A bare pod is its own owner: "(Pod ns/x)" after ns/x would only repeat its name.
        who = ", ".join(
            f"{p.key} ({'no controller' if o.is_pod else o}{', Terminating' if p.deletion_timestamp else ''})"
            for p, o in zip(holders, owners, strict=True)
        )
        it = "them" if len(holders) > 1 else "it"
        terminating = [p for p in holders if p.deletion_timestamp]
        # A bare pod (no controller) that is not already Terminating is gone for good once deleted: that
        # removes a workload, which is not a safe fix; a controller's pod is re-created by the controller.
        bare = [p for p, o in zip(holders, owners, strict=True) if o.is_pod and not p.deletion_timestamp]
        managed = sorted({str(o) for o in owners if not o.is_pod})
        risk_parts = []
        if bare:
            risk_parts.append(
                f"{', '.join(p.key for p in bare)} has no controller: deleting it removes it for good (nothing "
                "re-creates it); re-create it from its manifest with another hostPort, or elsewhere"
            )
        if managed:
            risk_parts.append(
                (
                    f"{managed[0]} re-creates its pod, which may land on {node} again and take the port back, "
                    "or fit nowhere else; until it runs again the workload has one pod less"
                )
                if len(managed) == 1
                else (
                    f"{' and '.join(managed)} re-create their pods, which may land on {node} again and take "
                    "the port back, or fit nowhere else; until they run again each workload has one pod less"
                )
            )
        if terminating:
            risk_parts.append(
                "a force delete skips the kubelet's confirmation: if the node is still running the old "
                "container, it keeps the port until the kubelet stops it"
            )
        if len(terminating) == len(holders):
            lasting = "the pod binds once the port is free"  # they were being deleted already
        elif managed:
            lasting = (
                f"for a lasting fix change {' and '.join(managed)}: another hostPort, or a podAntiAffinity "
                "against this workload"
            )
        else:
            lasting = "for a lasting fix give the holder another hostPort"
        others = len(options) - 1
        return [
            Remedy(
                kind="free-port",
                summary=(
                    f"host port {', '.join(ports)} on {node} is held by {who}: "
                    + (
                        f"force-delete the stuck Terminating pod{'s' if len(holders) > 1 else ''}"
                        if len(terminating) == len(holders)
                        else f"move {it} to another node or give {it} another hostPort"
                    )
                    # A clause, not a parenthesis: holders are in parentheses already, and `check` appends
                    # "(free-port)".
                    + (f"; {others} other node(s) have the same conflict" if others > 0 else "")
                ),
                plugin=n.NODE_PORTS,
                target=", ".join(p.key for p in holders),
                unblocks=[node],
                risk="; ".join(risk_parts),
                safety=RISKY if bare else SAFE,
                commands=[
                    f"kubectl delete pod/{p.name} -n {p.namespace}"
                    + (" --grace-period=0 --force" if p.deletion_timestamp else "")
                    for p in holders
                ],
                apply_note=(
                    "a Terminating pod is force-deleted (its kubelet never confirmed it); "
                    if terminating
                    else ""
                )
                + lasting,
                verify=f"kubectl get pods -A -o wide --field-selector spec.nodeName={node}  # the holder is gone",
                rollback=(
                    "# nothing to undo: the pod was being deleted already"
                    if len(terminating) == len(holders)
                    else "# a deleted pod is not restored: "
                    + (
                        f"{' and '.join(managed)} re-creates it"
                        if managed and not bare
                        else "re-create a bare pod from its manifest"
                    )
                ),
                change_size=float(len(holders)),
                details={"node": node, "ports": ports, "holders": [p.key for p in holders]},
            )
        ], notes
    return [], notes
