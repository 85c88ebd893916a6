"""The `kdiagnose` command line (Typer): the app, shared error handling, dispatch; one module per command in
kdiagnose/commands/ (diagnose, pod, pods, check), no logic here.

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
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, powershell)
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
        except BrokenPipeError:
            # stdout was closed while the report was being written (`| head`): the report is incomplete.
            _flush_stdout()
            print("kdiagnose: error: stdout was closed before the report was written", file=sys.stderr)
            raise typer.Exit(int(ExitCode.ERROR)) from None
        except KeyboardInterrupt:
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


# ---------------------------------------------------------------------------------------------- plug-ins
# Every command lives in kdiagnose/commands/ (one module each), registered here in help order. Each is
# wrapped by `guarded` for the shared error handling.

_PLUGGED: list[tuple[str, str, str]] = [
    # (command name, module, function)
    ("diagnose", "kdiagnose.commands.diagnose", "diagnose_command"),  # offline: dumps, files, stdin
    ("pod", "kdiagnose.commands.live", "pod_command"),  # live: one pod of the current kube context
    ("pods", "kdiagnose.commands.live", "pods_command"),  # live: every pending pod of the cluster
    ("check", "kdiagnose.commands.check", "check_command"),  # CI gate over manifests
]

# The command list of `kdiagnose -h` (click cuts a docstring's first line at 45 characters with "..."),
# and each command's exit codes (README "Exit codes"; kdiagnose/exitcodes.py), for scripts and CI.
_DIAGNOSE_EXIT = (
    "Exit codes: 0 every diagnosed pod is schedulable, 1 at least one is not, 2 usage error (bad flags, "
    "version or scheduler configuration), 3 unreadable input or another error."
)
_HELP: dict[str, tuple[str, str]] = {
    "diagnose": ("Diagnose the pending pods of a dump (offline).", _DIAGNOSE_EXIT),
    "pod": ("Explain why a pod of the current cluster is Pending.", _DIAGNOSE_EXIT),
    "pods": ("Explain every Pending pod of the current cluster.", _DIAGNOSE_EXIT),
    "check": (
        "CI gate: do workload manifests fit a cluster snapshot?",
        "Exit codes: 0 pass, 1 the policy (--fail-on) failed, 2 usage error, 3 unreadable manifests or "
        "snapshot.",
    ),
}


def _register_plugged() -> None:
    import importlib

    for name, module, func in _PLUGGED:
        short, epilog = _HELP[name]
        app.command(name, short_help=short, epilog=epilog)(
            guarded(getattr(importlib.import_module(module), func))
        )


_register_plugged()

_SUBCOMMANDS = {name for name, _, _ in _PLUGGED}
_ROOT_OPTIONS = {"--help", "-h", "--version", "--install-completion", "--show-completion"}


def _prog() -> str:
    """`kubectl kdiagnose` when run as the kubectl plugin (kubectl runs `kubectl-kdiagnose`), else `kdiagnose`."""
    from kdiagnose.commands.common import prog_name

    return prog_name()


def dispatch_args(argv: list[str]) -> list[str]:
    """`kdiagnose dump.yaml ...` (and `kdiagnose -o json dump.yaml`) mean `kdiagnose diagnose ...`.

    Two kubectl habits are usage errors that name the right command instead of "no such file": options
    before the command (`kdiagnose -n payments pod X`) and a mistyped command (`kdiagnose pdo X`)."""
    if not argv:
        return argv
    first = argv[0]
    if first in _SUBCOMMANDS or first.split("=", 1)[0] in _ROOT_OPTIONS:
        return argv
    if first == "--debug" and len(argv) > 1 and argv[1] in _SUBCOMMANDS:
        return argv
    if first.startswith("-"):
        later = next((a for a in argv[1:] if a in _SUBCOMMANDS and a != "diagnose"), None)
        if later is not None and not any(os.path.exists(a) for a in argv if a != later):
            i = argv.index(later)
            fixed = " ".join([later, *argv[:i], *argv[i + 1 :]])
            raise UsageError(f"options go after the command: {_prog()} {fixed}")
    elif not os.path.exists(first) and first != "-" and "/" not in first and "." not in first:
        import difflib

        close = difflib.get_close_matches(first, sorted(_SUBCOMMANDS), n=1, cutoff=0.5)
        if close:
            rest = " ".join([close[0], *argv[1:]])
            raise UsageError(f"unknown command {first!r}: did you mean {_prog()} {rest}?")
    return ["diagnose", *argv]


def _completing(args: list[str]) -> bool:
    """A shell asking for completions (Click's _<PROG>_COMPLETE protocol), or --show/--install-completion."""
    if any(k.endswith("_COMPLETE") and k.startswith("_KUBECTL") for k in os.environ):
        return True
    return any(a.split("=", 1)[0] in ("--show-completion", "--install-completion") for a in args)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point.

    Runs Typer in non-standalone mode so that its usage errors (missing option, bad value) come out as one
    `kdiagnose: error:` line with exit 2, like every other error, instead of Click's three-line block.
    """
    from typer._click.exceptions import ClickException, NoArgsIsHelpError
    from typer._click.exceptions import UsageError as ClickUsageError

    try:
        args = dispatch_args(list(sys.argv[1:] if argv is None else argv))
    except UsageError as e:
        print(f"kdiagnose: error: {e}", file=sys.stderr)
        sys.exit(int(ExitCode.USAGE))
    prog = _prog()
    if prog != "kdiagnose" and _completing(args):
        # Click names the completion variable and the script's shell function after the program, and
        # "kubectl kdiagnose" has a space: complete the executable's own name (kubectl completes
        # `kubectl kdiagnose <TAB>` through kubectl_complete-kdiagnose: kubectl_complete_main).
        prog = "kubectl-kdiagnose"
        if any(a.split("=", 1)[0] == "--show-completion" for a in args):
            print(
                "# kubectl 1.26+ completes `kubectl kdiagnose <TAB>` itself, with kubectl_complete-kdiagnose\n"
                "# (installed beside kubectl-kdiagnose); this script completes the kubectl-kdiagnose command."
            )
    from kdiagnose.commands.common import set_hard_exit

    set_hard_exit(argv is None)
    try:
        rc = app(args=args, prog_name=prog, standalone_mode=False)
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
    _flush_stdout()
    _exit(rc if isinstance(rc, int) else 0, hard=argv is None)


def _exit(code: int, *, hard: bool) -> None:
    """The process's end. When a command kept what it loaded (commands/common.py `held`) and this is the
    program itself (not main() called with arguments, as the tests do), os._exit after flushing: the
    kernel frees the snapshot at once instead of Python freeing its millions of objects one by one. Every
    file the run wrote is closed by then; worker pools and spool directories were shut down and removed
    where they were used."""
    from kdiagnose.commands.common import held, set_hard_exit

    if hard and held:
        sys.stderr.flush()
        os._exit(code)
    set_hard_exit(False)
    sys.exit(code)


def _flush_stdout() -> None:
    """`kdiagnose FILE | head -1`: the reader may close the pipe before Python flushes at exit, which would
    turn the verdict's exit code into 120 with a stray "Exception ignored" line. Flush now and, if the pipe
    is gone, point stdout at /dev/null so the exit code keeps its meaning (as the human report does when
    the pipe closes while it is written)."""
    from kdiagnose.report.console_layout import flush_stdout

    flush_stdout()


def kubectl_main() -> None:
    """The `kubectl-kdiagnose` entry point: `kubectl kdiagnose pod X` (kubectl finds plugins on PATH)."""
    main()


def kubectl_complete_main(argv: list[str] | None = None) -> None:
    """The `kubectl_complete-kdiagnose` entry point: kubectl (1.26+) runs it for `kubectl kdiagnose ...<TAB>`
    with the words typed after `kdiagnose` and the one being completed last (kdiagnose.commands.completion)."""
    from typer.main import get_command

    from kdiagnose.commands.completion import plugin_completions

    args = list(sys.argv[1:] if argv is None else argv)
    incomplete = args.pop() if args else ""
    # `kubectl kdiagnose dump.yaml -o <TAB>` is the diagnose shorthand, as dispatch_args reads it.
    if args and args[0] not in _SUBCOMMANDS and args[0].split("=", 1)[0] not in (*_ROOT_OPTIONS, "--debug"):
        args = ["diagnose", *args]
    sys.stdout.write(plugin_completions(get_command(app), args, incomplete))
    _flush_stdout()


if __name__ == "__main__":  # pragma: no cover
    main()
