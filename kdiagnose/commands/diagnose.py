"""`kdiagnose diagnose FILE...` (also `kdiagnose FILE...`): the pending pods of a dump, offline.

Options -> load -> pipeline.diagnose_snapshot -> report.emit -> exit code (0 all schedulable, 1 not).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from kdiagnose.commands.common import dialect_option, keep_until_exit
from kdiagnose.errors import UsageError
from kdiagnose.exitcodes import ExitCode

if TYPE_CHECKING:
    from kdiagnose.report.console_stream import PodSections
    from kdiagnose.report.json import PodStream

__all__ = ["OUTPUT_FORMATS", "diagnose_command", "exit_code_for"]

OUTPUT_FORMATS = ("human", "json", "yaml")


def exit_code_for(report: Any) -> ExitCode:
    """0 when every diagnosed pod is schedulable, 1 when at least one is not."""
    return ExitCode.UNSCHEDULABLE if any(not p.diagnosis.scheduled for p in report.pods) else ExitCode.OK


def _set_jobs(jobs: int | None) -> None:
    import os

    from kdiagnose.load.parallel import JOBS_ENV, set_jobs

    env = os.environ.get(JOBS_ENV, "").strip()
    if jobs is None and env and not (env.isdigit() and int(env) >= 1):
        raise UsageError(f"invalid {JOBS_ENV}={env!r}: expected a number of processes (1 or more)")
    set_jobs(jobs)


def diagnose_command(
    files: list[str] = typer.Argument(
        ..., metavar="FILE...", help="YAML/JSON files, directories, tar or zip archives, - for stdin."
    ),
    pod: list[str] = typer.Option([], "--pod", "-p", metavar="NS/NAME", help="Only this pod (repeatable)."),
    namespace: str | None = typer.Option(None, "--namespace", "-n", help="Only pods of this namespace."),
    all_namespaces: bool = typer.Option(
        False, "--all-namespaces", "-A", help="Pods of every namespace (the default; as kubectl's -A)."
    ),
    selector: str | None = typer.Option(
        None, "--selector", "-l", help="Only pods matching this label selector."
    ),
    scheduler_name: str | None = typer.Option(
        None,
        "--scheduler-name",
        help="Replay pods of this schedulerName (with the default profile if unconfigured).",
    ),
    output: str = typer.Option("human", "--output", "-o", metavar="human|json|yaml", help="Output format."),
    no_color: bool = typer.Option(False, "--no-color", help="No color (also: NO_COLOR set)."),
    k8s_version: str | None = typer.Option(
        None,
        "--k8s-version",
        help="kube-scheduler release to replay (v1.31-v1.37; default: inferred from the nodes' kubelets).",
    ),
    scheduler_config: str | None = typer.Option(
        None,
        "--scheduler-config",
        metavar="FILE",
        help="KubeSchedulerConfiguration to replay instead of the default.",
    ),
    strict_config: bool = typer.Option(
        False, "--strict-config", help="Reject configs with parts kdiagnose cannot replay."
    ),
    pools_file: str | None = typer.Option(
        None,
        "--pools",
        metavar="FILE",
        help="Node pools for scale-up remedies (YAML list of name, labels, taints, allocatable, min/max/current).",
    ),
    top: int = typer.Option(
        5, "--top", min=1, metavar="N", help="Show the scores of the top N feasible nodes."
    ),
    all_nodes: bool = typer.Option(False, "--all-nodes", help="Show every node, not groups and the top N."),
    all_remedies: bool = typer.Option(
        False,
        "--all-remedies",
        help="Search for and show every remedy (default: only the top 3 are searched for and shown).",
    ),
    summary: bool = typer.Option(
        False, "--summary", help="One line per owner (or pod): verdict, cause, fix."
    ),
    jobs: int | None = typer.Option(
        None,
        "--jobs",
        min=1,
        metavar="N",
        help="Processes decoding a big JSON or YAML dump, and diagnosing many pending pods (-o json and human) (default: KDIAGNOSE_JOBS, else the cores available).",
    ),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    """Diagnose the pending pods of a dump (files, directories, kubectl cluster-info dump, tar/zip archives, -)."""
    if all_namespaces and namespace:
        raise UsageError("-A/--all-namespaces and -n/--namespace are exclusive")
    if output not in OUTPUT_FORMATS:
        raise UsageError(f"invalid --output {output!r}: choose one of {', '.join(OUTPUT_FORMATS)}")
    explicit = dialect_option(k8s_version) if k8s_version is not None else None
    _set_jobs(jobs)
    from kdiagnose.load.dump import load_snapshot, require_known_kinds
    from kdiagnose.load.parallel import idle_work
    from kdiagnose.load.parallel import jobs as parallel_jobs
    from kdiagnose.pipeline import diagnose_snapshot, import_ahead
    from kdiagnose.results import MAX_REMEDIES

    pools = None
    if pools_file:
        from kdiagnose.model.pools import load_pools

        pools = load_pools(pools_file)
    # Without --k8s-version the release is known only once the dump is read (from its kubelets).
    with idle_work(import_ahead):
        snapshot, loaded = load_snapshot(files, explicit)
    keep_until_exit(snapshot, loaded)
    require_known_kinds(snapshot, loaded, files)
    dialect = snapshot.dialect
    profiles = None
    notes: list[str] = []
    if scheduler_config:
        from kdiagnose.schedconfig import load_scheduler_config

        cfg = load_scheduler_config(scheduler_config, dialect, strict=strict_config)
        profiles, notes = list(cfg.profiles), list(cfg.notes)
    import sys

    stream: PodStream | None = None
    sections: PodSections | None = None
    binary = getattr(sys.stdout, "buffer", None)
    if output == "json" and binary is not None:
        from kdiagnose.report.json import PodStream

        # Each pod's JSON is written as soon as it is diagnosed and its verdicts are dropped (1,000 pods
        # at 5,000 nodes would keep GBs of them until the end); the bytes are the whole document's.
        sys.stdout.flush()
        stream = PodStream(binary)
    elif output == "human":
        from kdiagnose.report.console_stream import PodSections
        from kdiagnose.report.emit import human_options

        # Each pod's section is rendered as it is diagnosed (in the workers when there are several), its
        # verdicts dropped; printed in the report's order at the end: the bytes `render` gives.
        sections = PodSections(human_options(no_color, top, all_nodes, all_remedies, summary, not pod))
    report = diagnose_snapshot(
        snapshot,
        profiles,
        pods=pod,
        namespace=namespace,
        selector=selector,
        scheduler_name=scheduler_name,
        source=", ".join(files),
        profile_notes=notes,
        pools=pools,
        # The report shows the top remedies: only those are searched for unless --all-remedies.
        remedy_limit=None if all_remedies else MAX_REMEDIES,
        sink=stream if stream is not None else sections,
        # The pods in worker processes too (--jobs / KDIAGNOSE_JOBS, as the load): -o json and human.
        jobs=parallel_jobs(),
    )
    keep_until_exit(report)
    if stream is not None and binary is not None:
        stream.finish(report)
        binary.flush()
        raise typer.Exit(int(exit_code_for(report)))
    if sections is not None:
        from kdiagnose.report.console_layout import flush_stdout

        sections.finish(report)
        flush_stdout()
        raise typer.Exit(int(exit_code_for(report)))
    from kdiagnose.report.emit import emit

    emit(
        report,
        output,
        no_color=no_color,
        top=top,
        all_nodes=all_nodes,
        all_remedies=all_remedies,
        summary=summary,
        group=not pod,  # --pod: every named pod in full
    )
    raise typer.Exit(int(exit_code_for(report)))
