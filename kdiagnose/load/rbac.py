"""The read-only RBAC kdiagnose needs for a live replay, as a ready ClusterRole + ClusterRoleBinding.

Derived from what kdiagnose.load.cluster and kdiagnose.load.apireader actually send (kinds.KINDS and the
two Event APIs): `get` only where an object is read by name (the pod of `kdiagnose pod`, cluster-autoscaler's
status ConfigMap), `list` for every kind the replay reads. Never `watch`, never a write verb: the snippet
grants exactly the requests kdiagnose makes. No I/O and no `kubernetes` import.
"""

from __future__ import annotations

import re

from kdiagnose.load.kinds import CA_STATUS_CONFIGMAP, EVENTS_CORE, EVENTS_V1, KINDS, KindSpec

__all__ = ["ROLE_NAME", "Subject", "needed_rules", "rbac_snippet", "subject_from_denial"]

ROLE_NAME = "kdiagnose-reader"

# (apiGroup, verbs, resources, resourceNames) in the order the snippet prints them.
Rule = tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]
# (kind, name, namespace): an RBAC subject ("User" | "ServiceAccount" | "Group").
Subject = tuple[str, str, str]

# Objects kdiagnose GETs by name (everything else it LISTs).
_GET_BY_NAME = {"Pod"}
_NAMED_GETS = {"ConfigMap": (CA_STATUS_CONFIGMAP[1],)}


def _group(spec: KindSpec) -> str:
    return spec.group_version.rpartition("/")[0] if "/" in spec.group_version else ""


def needed_rules() -> list[Rule]:
    """Every rule, grouped by API group and verbs: core group first, then groups alphabetically."""
    by: dict[tuple[str, tuple[str, ...], tuple[str, ...]], set[str]] = {}
    for spec in (*KINDS.values(), EVENTS_V1, EVENTS_CORE):
        group = _group(spec)
        names = _NAMED_GETS.get(spec.kind, ())
        if names:
            by.setdefault((group, ("get",), names), set()).add(spec.plural)
            continue
        verbs = ("get", "list") if spec.kind in _GET_BY_NAME else ("list",)
        by.setdefault((group, verbs, ()), set()).add(spec.plural)
    rules = [(g, verbs, tuple(sorted(res)), names) for (g, verbs, names), res in by.items()]
    return sorted(rules, key=lambda r: (r[0] != "", r[0], bool(r[3]), r[1] != ("get", "list"), r[2]))


_FORBIDDEN_USER_RE = re.compile(r'is forbidden: User "([^"]*)" cannot ')
_SA_RE = re.compile(r"^system:serviceaccount:([^:]+):([^:]+)$")


def subject_from_denial(message: str) -> Subject | None:
    """The subject the API server's 403 message names (`User "x" cannot list ...`; a service account's
    user name is system:serviceaccount:NS:NAME), or None when it names none."""
    m = _FORBIDDEN_USER_RE.search(message)
    if not m or not m.group(1):
        return None
    user = m.group(1)
    sa = _SA_RE.match(user)
    if sa:
        return ("ServiceAccount", sa.group(2), sa.group(1))
    return ("User", user, "")


def _yaml_str(s: str) -> str:
    """A YAML scalar: plain when safe, else double-quoted (names with ':' or '@', the core group "")."""
    if s and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/-]*", s):
        return s
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _flow(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(_yaml_str(i) for i in items) + "]"


def rbac_snippet(subject: Subject | None) -> str:
    """The ClusterRole and ClusterRoleBinding (YAML, lines under 80 columns) that let `subject` run every
    kdiagnose live command; a placeholder subject when the denial named none."""
    lines = [
        "# Read-only access for kdiagnose live mode: exactly what it sends (get, list).",
        "# (--scheduler-config-from also needs get on that one ConfigMap.)",
        "apiVersion: rbac.authorization.k8s.io/v1",
        "kind: ClusterRole",
        "metadata:",
        f"  name: {ROLE_NAME}",
        "rules:",
    ]
    for group, verbs, resources, names in needed_rules():
        lines.append(f"- apiGroups: [{_yaml_str(group)}]")
        flow = f"  resources: {_flow(resources)}"
        if len(flow) <= 78:
            lines.append(flow)
        else:
            lines.append("  resources:")
            lines.extend(f"  - {_yaml_str(r)}" for r in resources)
        if names:
            lines.append(f"  resourceNames: {_flow(names)}")
        lines.append(f"  verbs: {_flow(verbs)}")
    kind, name, namespace = subject or ("User", "REPLACE-WITH-YOUR-USER", "")
    binding = f"{ROLE_NAME}-{re.sub(r'[^a-z0-9.-]+', '-', name.lower()).strip('-.') or 'user'}"[:253]
    lines += [
        "---",
        "apiVersion: rbac.authorization.k8s.io/v1",
        "kind: ClusterRoleBinding",
        "metadata:",
        f"  name: {binding}",
        "roleRef:",
        "  apiGroup: rbac.authorization.k8s.io",
        "  kind: ClusterRole",
        f"  name: {ROLE_NAME}",
        "subjects:",
    ]
    if kind == "ServiceAccount":
        lines += [
            "- kind: ServiceAccount",
            f"  name: {_yaml_str(name)}",
            f"  namespace: {_yaml_str(namespace)}",
        ]
    else:
        lines += ["- apiGroup: rbac.authorization.k8s.io", f"  kind: {kind}", f"  name: {_yaml_str(name)}"]
    return "\n".join(lines) + "\n"
