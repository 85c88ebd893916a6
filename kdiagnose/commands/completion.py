"""Shell completion: live pod and namespace names, and completion under `kubectl kdiagnose`.

Pod names (`kdiagnose pod <TAB>`, also NAMESPACE/<TAB> and pod/<TAB>) and namespace names (`-n <TAB>`)
come from the current context (or the --kubeconfig/--context typed before): one GET of one page, a short
timeout, and silence on any error (a completion must never print an error or hang the shell).

kubectl completes its plugins itself (kubectl 1.26+, k8s.io/kubectl/pkg/cmd/plugin/plugin_completion.go):
`kubectl kdiagnose ARGS <TAB>` runs `kubectl_complete-kdiagnose ARGS INCOMPLETE` from $PATH and reads one
candidate per line (`value<TAB>description`), then `:<cobra ShellCompDirective>`: `plugin_completions`
(kdiagnose.cli.kubectl_complete_main is that executable), on the same Click completion as `kdiagnose`.
"""

from __future__ import annotations

from typing import Any

import typer  # the callbacks' annotations are read at run time (Typer passes the Context by its type)

__all__ = [
    "COMPLETION_TIMEOUT",
    "MAX_CANDIDATES",
    "complete_namespace",
    "complete_output",
    "complete_pod",
    "plugin_completions",
]

COMPLETION_TIMEOUT = 2.0  # seconds per request; a shell waiting longer feels hung
MAX_CANDIDATES = 500  # one page: a shell shows no more usefully

# cobra's ShellCompDirective (spf13/cobra completions.go).
_DEFAULT = 0  # the shell may fall back to file names
_NO_FILE_COMP = 4


def _param(ctx: typer.Context | None, name: str) -> Any:
    """A value typed before the word being completed, on this command or its parents."""
    cur: Any = ctx
    while cur is not None:
        value = cur.params.get(name)
        if value:
            return value
        cur = cur.parent
    return None


def _names(ctx: typer.Context | None, plural: str, namespace: str | None) -> list[tuple[str, str]]:
    """(name, description) of one page of `plural` (pods: in `namespace`, else the context's), or []."""
    import logging

    from kdiagnose.load.apireader import ApiReader
    from kdiagnose.load.kinds import KINDS
    from kdiagnose.load.kubeconfig import resolve_target

    logging.getLogger("urllib3").setLevel(logging.CRITICAL)
    target = resolve_target(
        _param(ctx, "kubeconfig"), _param(ctx, "context"), exec_timeout=COMPLETION_TIMEOUT
    )
    spec = KINDS["Pod" if plural == "pods" else "Namespace"]
    ns = (namespace or target.namespace) if spec.namespaced else None
    reader = ApiReader(target, COMPLETION_TIMEOUT)
    try:
        doc = reader.get_json(spec.path(ns), [("limit", str(MAX_CANDIDATES))])
    finally:
        reader.close()
    out = []
    for item in doc.get("items") or ():
        if not isinstance(item, dict):
            continue
        name = (item.get("metadata") or {}).get("name")
        phase = (item.get("status") or {}).get("phase") or ""
        if isinstance(name, str) and name:
            out.append((name, str(phase)))
    return sorted(out)


def _silently(fn: Any, *args: Any) -> list[tuple[str, str]]:
    try:
        result: list[tuple[str, str]] = fn(*args)
        return result
    except Exception:  # a completion says nothing rather than break the shell line
        return []


def complete_namespace(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """`-n <TAB>`: the cluster's namespaces (a user who may not list them gets none)."""
    return [(n, "") for n, _ in _silently(_names, ctx, "namespaces", None) if n.startswith(incomplete)]


def complete_output(incomplete: str) -> list[str]:
    """`-o <TAB>`: the live commands' formats."""
    return [o for o in ("human", "json", "yaml") if o.startswith(incomplete)]


def complete_pod(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """`pod <TAB>`: the pods of -n (or the context's namespace), their phase as the description;
    `NAMESPACE/<TAB>` and `pod/<TAB>` as the argument accepts them."""
    prefix, rest = "", incomplete
    namespace = _param(ctx, "namespace")
    head, sep, tail = incomplete.partition("/")
    if sep:
        prefix, rest = head + "/", tail
        if head not in ("pod", "pods", "po"):
            namespace = head
    got = _silently(_names, ctx, "pods", namespace)
    return [(prefix + n, phase) for n, phase in got if n.startswith(rest)]


def plugin_completions(cli: Any, args: list[str], incomplete: str) -> str:
    """kubectl's plugin-completion answer for `cli` (a Click command): candidates, one a line
    (`value<TAB>help`), then `:<directive>`; no candidates (never an error) when anything fails."""
    from typer._click.shell_completion import ShellComplete

    class _Complete(ShellComplete):
        name = "kubectl"
        source_template = ""

        def source_vars(self) -> dict[str, Any]:
            return {}

        def get_completion_args(self) -> tuple[list[str], str]:
            return [], ""

        def format_completion(self, item: Any) -> str:
            return str(item.value)

    lines: list[str] = []
    directive = _DEFAULT
    try:
        comp = _Complete(cli, {}, "kubectl kdiagnose", "_KUBECTL_KDIAGNOSE_COMPLETE")
        items = comp.get_completions(args, incomplete)
        for item in items:
            value = str(item.value).replace("\n", " ")
            help_text = " ".join(str(item.help or "").split())
            lines.append(f"{value}\t{help_text}" if help_text else value)
        if items and not any(item.type in ("file", "dir") for item in items):
            directive = _NO_FILE_COMP
    except BaseException:  # no candidates rather than an error in the user's shell (also Click's Exit)
        lines = []
    return "".join(f"{line}\n" for line in lines) + f":{directive}\n"
