"""Tiny object factories for the node-basics plugin tests (Pods, Nodes and Snapshots from small dicts)."""

from __future__ import annotations

from typing import Any

from kdiagnose.model.objects import Node, Pod
from kdiagnose.model.requests import finish_pod
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.scheduler.framework import Handle
from kdiagnose.versions import Dialect, dialect_for

V134 = dialect_for("v1.34.1")


def container(
    name: str = "c",
    requests: dict[str, str] | None = None,
    image: str = "img:1",
    ports: list[dict[str, Any]] | None = None,
    restart_policy: str | None = None,
) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": image}
    if requests is not None:
        c["resources"] = {"requests": requests}
    if ports:
        c["ports"] = ports
    if restart_policy:
        c["restartPolicy"] = restart_policy
    return c


def pod(
    name: str = "p",
    *,
    node: str = "",
    containers: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
    dialect: Dialect = V134,
    **spec: Any,
) -> Pod:
    body: dict[str, Any] = {"containers": containers if containers is not None else [container()], **spec}
    if init:
        body["initContainers"] = init
    if node:
        body["nodeName"] = node
    p = Pod({"metadata": {"name": name, "namespace": "default"}, "spec": body})
    finish_pod(p, dialect)
    return p


def node(
    name: str = "n1",
    *,
    labels: dict[str, str] | None = None,
    allocatable: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    images: list[dict[str, Any]] | None = None,
) -> Node:
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    status: dict[str, Any] = {"allocatable": allocatable or {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    if images:
        status["images"] = images
    return Node({"metadata": {"name": name, "labels": labels or {}}, "spec": spec, "status": status})


def snapshot(nodes: list[Node], pods: list[Pod] | None = None, dialect: Dialect = V134) -> Snapshot:
    return Snapshot(dialect, nodes, pods or [])


def handle(snap: Snapshot, args: dict[str, Any] | None = None) -> Handle:
    return Handle(snap, snap.dialect, args or {})
