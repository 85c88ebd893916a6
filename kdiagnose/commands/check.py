"""`kdiagnose check`: will these manifests schedule on this cluster? (the CI gate; logic in kdiagnose/gate/)

Exit codes: 0 every workload passes the --fail-on policy, 1 one fails it, 2 usage error, 3 input error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from kdiagnose.commands.common import keep_until_exit
from kdiagnose.errors import InputError, UsageError

__all__ = ["OUTPUTS", "check_command"]

OUTPUTS = ("human", "json", "yaml", "junit", "sarif", "github")


def _render(result: object, output: str, pools: dict[str, str]) -> str:
    from kdiagnose.gate.result import GateResult

    assert isinstance(result, GateResult)
    if output == "json":
        from kdiagnose.gate.formats.json import render as render_json

        return render_json(result, pools)
    if output == "yaml":
        from kdiagnose.gate.formats.json import check_document
        from kdiagnose.report.yaml import dump_document

        return dump_document(check_document(result, pools))
    if output == "junit":
        from kdiagnose.gate.formats.junit import render as render_junit

        return render_junit(result)
    if output == "sarif":
        from kdiagnose.gate.formats.sarif import render as render_sarif

        return render_sarif(result)
    if output == "github":
        from kdiagnose.gate.formats.github import render as render_github

        return render_github(result)
    from kdiagnose.gate.formats.text import render as render_text

    return render_text(result)


def _write_file(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        raise InputError(f"--output-file {path}: cannot write: {e.strerror or e}") from None


def _pools(path: str | None) -> list[Any] | None:
    if not path:
        return None
    from kdiagnose.model.pools import load_pools

    return list(load_pools(path))


def check_command(
    files: list[str] = typer.Option(
        ...,
        "-f",
        "--filename",
        metavar="PATH",
        help="Manifests: files, directories (recursive), - for stdin.",
    ),
    snapshot: list[str] = typer.Option(
        [],
        "--snapshot",
        metavar="SNAPSHOT",
        help="The cluster: dump files, directories, tar or zip archives (repeatable).",
    ),
    context: str | None = typer.Option(
        None, "--context", help="Check against a live cluster (read-only) instead of --snapshot."
    ),
    request_timeout: str = typer.Option(
        "30s", "--request-timeout", help="With --context: per-request timeout, e.g. 30s, 1m; 0 = none."
    ),
    kubeconfig: str | None = typer.Option(
        None, "--kubeconfig", help="Kubeconfig for --context (default: $KUBECONFIG, ~/.kube/config)."
    ),
    chunk_size: int = typer.Option(
        500,
        "--chunk-size",
        min=0,
        metavar="N",
        help="With --context: list in pages of this many objects; 0 = unpaginated.",
    ),
    namespace: str = typer.Option(
        "default", "-n", "--namespace", help="Namespace of manifests that set none (as kubectl apply -n)."
    ),
    k8s_version: str | None = typer.Option(
        None,
        "--k8s-version",
        help="kube-scheduler release to replay (default: inferred from the snapshot's kubelets, else the newest known).",
    ),
    output: str = typer.Option("human", "--output", "-o", metavar="|".join(OUTPUTS), help="Output format."),
    output_file: str | None = typer.Option(
        None,
        "--output-file",
        metavar="FILE",
        help="Write the report here (stdout then gets the human summary).",
    ),
    fail_on: str | None = typer.Option(
        None,
        "--fail-on",
        metavar="unschedulable|preemption|scale-up",
        help="Fail workloads with this outcome or worse (default unschedulable).",
    ),
    config: str | None = typer.Option(
        None, "--config", metavar="FILE", help="Gate config (default: .kdiagnose.yaml found upward)."
    ),
    no_config: bool = typer.Option(False, "--no-config", help="Do not look for .kdiagnose.yaml."),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="Remove the workloads' existing pods first (check an update, not an addition).",
    ),
    headroom: bool = typer.Option(
        False, "--headroom", help="Also report how many more replicas of each fit."
    ),
    headroom_cap: int = typer.Option(
        1000, "--headroom-cap", min=1, metavar="N", help="Stop counting headroom here."
    ),
    scheduler_config: str | None = typer.Option(
        None, "--scheduler-config", metavar="FILE", help="KubeSchedulerConfiguration to replay."
    ),
    strict_config: bool = typer.Option(
        False, "--strict-config", help="Reject scheduler configs with parts kdiagnose cannot replay."
    ),
    no_remedies: bool = typer.Option(False, "--no-remedies", help="Skip remedies (faster)."),
    pools_file: str | None = typer.Option(
        None, "--pools", metavar="FILE", help="Node pools for scale-up remedies (as for kdiagnose FILE)."
    ),
    path_base: str | None = typer.Option(
        None,
        "--path-base",
        metavar="DIR",
        help="Report manifest paths relative to DIR (default: the git work tree, else the working directory).",
    ),
    no_color: bool = typer.Option(False, "--no-color", help="No color (also: NO_COLOR set)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    """Check that workload manifests (Deployments, StatefulSets, DaemonSets, Jobs, ...) fit on a cluster snapshot."""
    from kdiagnose.gate.config import GateConfig, discover_config, load_gate_config
    from kdiagnose.gate.placement import default_remedy_fn, run_gate
    from kdiagnose.gate.policy import FAIL_ON, exit_code
    from kdiagnose.gate.result import GateOptions

    if output not in OUTPUTS:
        raise UsageError(f"invalid --output {output!r}: choose one of {', '.join(OUTPUTS)}")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise UsageError(f"invalid --fail-on {fail_on!r}: choose one of {', '.join(FAIL_ON)}")
    if config is not None:
        if not Path(config).is_file():
            raise UsageError(f"--config {config}: no such file")
        cfg = load_gate_config(Path(config))
    else:
        found = None if no_config else discover_config()
        cfg = load_gate_config(found) if found is not None else GateConfig()
    if context is not None and snapshot:
        raise UsageError("--context and --snapshot are exclusive: check against one cluster")
    snapshot_paths = list(snapshot) or ([cfg.snapshot] if cfg.snapshot and context is None else [])
    if not snapshot_paths and context is None:
        # --kubeconfig alone does not pick the live cluster: say which flag does.
        raise UsageError(
            "no cluster: pass --snapshot SNAPSHOT or --context CONTEXT (or set snapshot: in .kdiagnose.yaml)"
        )
    if "-" in snapshot_paths and "-" in files:
        raise UsageError("stdin (-) can feed either the manifests or the snapshot, not both")
    if path_base is not None and not Path(path_base).is_dir():
        raise UsageError(f"--path-base {path_base}: no such directory")

    from kdiagnose.gate.locate import PathBase, Sources

    paths = PathBase(path_base)
    sources = Sources()
    fail_on_value = fail_on or cfg.fail_on or "unschedulable"
    try:
        snap, workloads, other, snapshot_paths = _load(
            files,
            snapshot_paths,
            context,
            request_timeout,
            kubeconfig,
            chunk_size,
            namespace,
            k8s_version or cfg.k8s_version,
            sources,
        )
    except InputError as e:
        _error_report(e, output, output_file, paths, sources, fail_on_value, snapshot_paths)
        raise
    dialect = snap.dialect
    profiles = None
    sched_path = scheduler_config or cfg.scheduler_config
    if sched_path:
        from kdiagnose.schedconfig import load_scheduler_config

        profiles = list(load_scheduler_config(sched_path, dialect, strict=strict_config).profiles)
    try:
        result = run_gate(
            snap,
            workloads,
            profiles=profiles,
            options=GateOptions(
                fail_on=fail_on_value,
                replace=replace,
                headroom=headroom,
                headroom_cap=headroom_cap,
                config=cfg,
            ),
            remedy_fn=None if no_remedies else default_remedy_fn(_pools(pools_file)),
            ignored_kinds=other,
            snapshot_source=_shown(paths, snapshot_paths),
        )
    except InputError as e:  # a replica the API server's admission would reject
        _error_report(e, output, output_file, paths, sources, fail_on_value, snapshot_paths)
        raise
    result.paths, result.sources = paths, sources
    from kdiagnose.model.pools import pool_of

    pools = {ni.name: p for ni in snap.node_infos if (p := pool_of(ni.node)) is not None}
    if output_file:
        _write_file(output_file, _render(result, output, pools))
    if (output == "human" and not output_file) or (output_file and output != "human"):
        from kdiagnose.gate.formats.text import write

        write(result, None, color=False if no_color else None)  # the terminal's width and colour
    elif not output_file:
        sys.stdout.write(_render(result, output, pools))
    sys.stdout.flush()
    raise typer.Exit(int(exit_code(result)))


def _shown(paths: Any, snapshot_paths: list[str]) -> str:
    """The snapshot's files as the report names them: relative to the path base, as the manifests."""
    shown = []
    for p in snapshot_paths:
        rel = paths.relative(p)[0] if not p.startswith("context ") and p != "-" else ""
        shown.append(rel or p)
    return ", ".join(shown)


def _load(
    files: list[str],
    snapshot_paths: list[str],
    context: str | None,
    request_timeout: str,
    kubeconfig: str | None,
    chunk_size: int,
    namespace: str,
    version: str | None,
    sources: Any,
) -> tuple[Any, list[Any], dict[str, int], list[str]]:
    """(snapshot, workloads, other kinds, the snapshot's sources as reported): the manifests first, so a
    broken manifest is reported before a slow live fetch; InputError for anything unreadable."""
    from kdiagnose.commands.common import dialect_option
    from kdiagnose.gate.placement import load_workloads
    from kdiagnose.load.dump import load_snapshot

    workloads, other = load_workloads(files, default_namespace=namespace, sources=sources)
    if context is not None:
        from kdiagnose.commands.live import parse_timeout
        from kdiagnose.load.cluster import fetch_cluster, resolve_target
        from kdiagnose.load.snapshot import build_snapshot

        timeout = parse_timeout(request_timeout)
        fetched, dialect = fetch_cluster(
            resolve_target(kubeconfig, context, exec_timeout=timeout),
            timeout=timeout,
            k8s_version=version,
            chunk_size=chunk_size,
        )
        snap = build_snapshot(
            fetched.raw_objects(),
            dialect,
            list_kinds=fetched.listed_kinds,
            unreadable=fetched.unreadable,
        )
        snap.warnings[:0] = list(fetched.warnings)
        snapshot_paths = [f"context {context}"]
    else:
        # Without --k8s-version the release is inferred from the snapshot's kubelets (versions.py).
        snap, _ = load_snapshot(snapshot_paths, dialect_option(version) if version else None)
    if not snap.node_infos:
        # Nothing to place onto is no pass: the gate was fed the wrong snapshot (or an empty cluster).
        raise InputError(
            f"{', '.join(snapshot_paths)}: the snapshot has no Node objects: nothing to place the workloads on "
            "(dump the nodes too: kubectl get nodes -o yaml)"
        )
    keep_until_exit(snap)
    return snap, workloads, other, snapshot_paths


def _error_report(
    error: InputError,
    output: str,
    output_file: str | None,
    paths: Any,
    sources: Any,
    fail_on: str,
    snapshot_paths: list[str],
) -> None:
    """Input that cannot be read still gets its report (an <error> testcase, a SARIF notification with
    executionSuccessful false, a ::error annotation): CI shows what broke instead of a missing file. The
    one-line error and exit code 3 follow as for any input error."""
    if output == "human":
        return
    from kdiagnose.gate.findings import input_problem
    from kdiagnose.gate.result import GateResult

    result = GateResult([], fail_on, "", _shown(paths, snapshot_paths), 0, 0, paths=paths, sources=sources)
    result.errors.append(input_problem(error, paths, sources))
    text = _render(result, output, {})
    if output_file:
        _write_file(output_file, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
