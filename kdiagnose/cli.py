"""The `kdiagnose` command line (Typer): options -> load -> pipeline -> report -> exit code; no logic here.

Imports stay light at module level (`kdiagnose --help` must be instant): loaders, the scheduler, rich and the
kubernetes client are imported inside the commands that need them.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from kdiagnose import __version__
from kdiagnose.errors import KdiagnoseError, UsageError
from kdiagnose.exitcodes import ExitCode

__all__ = ["app", "main"]

F = TypeVar("F", bound=Callable[..., Any])

app = typer.Typer(
    name="kdiagnose",
    help="Why is my pod Pending? Replays kube-scheduler's filters and scores against a dump or a live cluster.\n\n"
    "kdiagnose FILE... is short for kdiagnose diagnose FILE...",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _debug_requested(kwargs: dict[str, Any]) -> bool:
    # Commands plugged in from kdiagnose/commands may not take --debug themselves: the root option counts.
    return bool(kwargs.get("debug")) or "--debug" in sys.argv[1:] or bool(os.environ.get("KDIAGNOSE_DEBUG"))


def guarded(fn: F) -> F:
    """Every command runs through here: a KdiagnoseError is one stderr line and its exit code, anything
    else is a bug reported as one line (the traceback only with --debug) and exit 3."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except KdiagnoseError as e:
            if _debug_requested(kwargs):
                import traceback

                traceback.print_exc()
            message = " ".join(line.strip() for line in str(e).splitlines() if line.strip())
            print(f"kdiagnose: error: {message}", file=sys.stderr)
            if e.hint:
                print(f"kdiagnose: hint: {e.hint}", file=sys.stderr)
            raise typer.Exit(int(e.exit_code)) from None
        except (KeyboardInterrupt, BrokenPipeError):
            raise typer.Exit(int(ExitCode.ERROR)) from None
        except Exception as e:
            if _debug_requested(kwargs):
                import traceback

                traceback.print_exc()
            detail = str(e).splitlines()[0] if str(e) else ""
            print(
                f"kdiagnose: internal error: {type(e).__name__}{': ' + detail if detail else ''} "
                "(run with --debug for the traceback)",
                file=sys.stderr,
            )
            raise typer.Exit(int(ExitCode.ERROR)) from None

    return wrapper  # type: ignore[return-value]


def _version_callback(value: bool) -> None:
    if value:
        print(f"kdiagnose {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    ctx.obj = {"debug": debug}


# ---------------------------------------------------------------------------------------------- diagnose

OUTPUT_FORMATS = ("human", "json", "yaml")


def exit_code_for(report: Any) -> ExitCode:
    """0 when every diagnosed pod is schedulable, 1 when at least one is not."""
    return ExitCode.UNSCHEDULABLE if any(not p.diagnosis.scheduled for p in report.pods) else ExitCode.OK


def dialect_option(version: str) -> Any:
    from kdiagnose.versions import VersionError, dialect_for

    try:
        return dialect_for(version)
    except VersionError as e:
        raise UsageError(str(e)) from None


@app.command("diagnose")
@guarded
def diagnose_command(
    files: list[str] = typer.Argument(
        ..., metavar="FILE...", help="YAML/JSON files, directories, tarballs, - for stdin."
    ),
    pod: list[str] = typer.Option([], "--pod", "-p", metavar="NS/NAME", help="Only this pod (repeatable)."),
    namespace: str | None = typer.Option(None, "--namespace", "-n", help="Only pods of this namespace."),
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
    k8s_version: str = typer.Option(
        "v1.34.1", "--k8s-version", help="kube-scheduler release to replay (v1.31-v1.35)."
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
    top: int = typer.Option(5, "--top", min=1, help="Show the scores of the top N feasible nodes."),
    all_nodes: bool = typer.Option(False, "--all-nodes", help="Show every node, not groups and the top N."),
    all_remedies: bool = typer.Option(False, "--all-remedies", help="Show every remedy, not the top 3."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    """Diagnose the pending pods of a dump (files, directories, kubectl cluster-info dump, tarballs, -)."""
    if output not in OUTPUT_FORMATS:
        raise UsageError(f"invalid --output {output!r}: choose one of {', '.join(OUTPUT_FORMATS)}")
    dialect = dialect_option(k8s_version)
    from kdiagnose.load.dump import load_snapshot, require_known_kinds
    from kdiagnose.pipeline import diagnose_snapshot

    profiles = None
    notes: list[str] = []
    if scheduler_config:
        from kdiagnose.schedconfig import load_scheduler_config

        cfg = load_scheduler_config(scheduler_config, dialect, strict=strict_config)
        profiles, notes = list(cfg.profiles), list(cfg.notes)
    pools = None
    if pools_file:
        from kdiagnose.model.pools import load_pools

        pools = load_pools(pools_file)
    snapshot, loaded = load_snapshot(files, dialect)
    require_known_kinds(snapshot, loaded, files)
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
    )
    from kdiagnose.report.emit import emit

    emit(report, output, no_color=no_color, top=top, all_nodes=all_nodes, all_remedies=all_remedies)
    raise typer.Exit(int(exit_code_for(report)))


# ---------------------------------------------------------------------------------------------- plug-ins
# Other commands live in kdiagnose/commands/ and are registered only when their module imports, so the CLI
# works before (and without) them. Each is wrapped by `guarded` for the shared error handling.

_PLUGGED: list[tuple[str, str, str]] = [
    # (command name, module, function)
    ("pod", "kdiagnose.commands.live", "pod_command"),  # live: one pod of the current kube context
    ("pods", "kdiagnose.commands.live", "pods_command"),  # live: every pending pod of the cluster
    ("check", "kdiagnose.commands.check", "check_command"),  # CI gate over manifests
]


def _register_plugged() -> None:
    import importlib

    for name, module, func in _PLUGGED:
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        fn = getattr(mod, func, None)
        if callable(fn):
            app.command(name)(guarded(fn))


_register_plugged()

_SUBCOMMANDS = {"diagnose"} | {name for name, _, _ in _PLUGGED}
_ROOT_OPTIONS = {"--help", "-h", "--version"}


def dispatch_args(argv: list[str]) -> list[str]:
    """`kdiagnose dump.yaml ...` (and `kdiagnose -o json dump.yaml`) mean `kdiagnose diagnose ...`."""
    if not argv:
        return argv
    first = argv[0]
    if first in _SUBCOMMANDS or first in _ROOT_OPTIONS:
        return argv
    if first == "--debug" and len(argv) > 1 and argv[1] in _SUBCOMMANDS:
        return argv
    return ["diagnose", *argv]


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point.

    Runs Typer in non-standalone mode so that its usage errors (missing option, bad value) come out as one
    `kdiagnose: error:` line with exit 2, like every other error, instead of Click's three-line block.
    """
    from typer._click.exceptions import ClickException, NoArgsIsHelpError
    from typer._click.exceptions import UsageError as ClickUsageError

    args = dispatch_args(list(sys.argv[1:] if argv is None else argv))
    try:
        rc = app(args=args, prog_name="kdiagnose", standalone_mode=False)
    except NoArgsIsHelpError as e:
        e.show()  # `kdiagnose check` alone prints its help, as before
        sys.exit(e.exit_code)
    except ClickUsageError as e:
        where = e.ctx.command_path if e.ctx is not None else "kdiagnose"
        message = " ".join(e.format_message().split()).rstrip(".")
        print(f"kdiagnose: error: {message} (see '{where} -h')", file=sys.stderr)
        sys.exit(int(ExitCode.USAGE))
    except ClickException as e:
        print(f"kdiagnose: error: {' '.join(e.format_message().split())}", file=sys.stderr)
        sys.exit(e.exit_code)
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
