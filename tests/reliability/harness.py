"""The harness of the bad-input suite: run one case, classify its outcome.

Outcomes (``Observation.outcome``):

- ``clear_error``: a :class:`~graphpriv.errors.GraphPrivError` from a Python entry point, or from
  the CLI the expected exit code (2 unless the case says otherwise) with an ``error:`` line (or a
  Typer usage-error panel), no ``Traceback``, no pydantic URL, and the message's first line naming
  what the case says it must name (``mentions``, all of them, case-insensitive).
- ``handled``: valid-but-odd input, the run succeeded and the expected handling is visible (the
  case's ``check`` says so: e.g. a normalisation recorded, a store failure reported with every
  result file written).
- ``traceback``: any other exception escaping a Python entry point; from the CLI a traceback, an
  ``internal error`` line, exit code 3, or an exception the runner caught.
- ``silent_accept``: doubtful input accepted with no word (or a ``handled`` case whose handling is
  not visible).
- ``result_lost``: a finished result neither printed nor written.
- ``unclear_error``: the error path was taken cleanly but the message does not name the argument
  (or carries a pydantic URL, several lines, or an unexpected exit code).

Nothing here spawns a process: CLI cases run in-process with ``typer.testing.CliRunner``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLEAR = "clear_error"
HANDLED = "handled"
TRACEBACK = "traceback"
SILENT = "silent_accept"
LOST = "result_lost"
UNCLEAR = "unclear_error"
OUTCOMES = (CLEAR, HANDLED, TRACEBACK, SILENT, LOST, UNCLEAR)

PYDANTIC_URL = "errors.pydantic.dev"


@dataclass
class Observation:
    """What a case did: its outcome and one line saying why (the message, the traceback head)."""

    outcome: str
    detail: str = ""


@dataclass
class Ctx:
    """What a case runs in: a fresh working directory (the cwd while the case runs) and the
    ``graphpriv.*`` log records (WARNING and up) emitted meanwhile, one formatted line each."""

    tmp: Path
    logs: list[str] = field(default_factory=list)
    env: dict[str, Any] = field(default_factory=dict)

    def path(self, name: str) -> Path:
        return self.tmp / name

    def logged(self, phrase: str) -> bool:
        return any(phrase.lower() in line.lower() for line in self.logs)


@dataclass(frozen=True)
class Case:
    """One bad input. ``run(ctx)`` returns the :class:`Observation`; ``expect`` is the outcome
    the case must have (``clear_error`` or ``handled``)."""

    id: str
    category: str
    expect: str
    run: Callable[[Ctx], Observation]
    what: str = ""
    slow: bool = False
    needs_data: bool = False  # reads a registry dataset (the GRAPHPRIV_DATA mirror)


class _ListHandler(logging.Handler):
    def __init__(self, sink: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.sink.append(f"{record.name}: {record.getMessage()}")
        except Exception:  # noqa: BLE001 - a log line must never break a case
            self.sink.append(f"{record.name}: {record.msg}")


def one_line(text: object, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def first_line(text: object) -> str:
    lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
    return lines[0].strip() if lines else ""


#: The working directory of the running case: removed from messages before their words are
#: checked, so a word of the folder's name (a pytest test name) never counts as named.
_CURRENT: dict[str, str] = {}


def _without_tmp(text: str) -> str:
    tmp = _CURRENT.get("tmp")
    if not tmp:
        return text
    for form in {tmp, os.path.realpath(tmp)}:
        text = text.replace(form, "<tmp>")
    return text


def run_case(case: Case, tmp: Path) -> Observation:
    """Run ``case`` in ``tmp`` (created; the cwd meanwhile), warnings ignored (pytest's
    ``filterwarnings = error`` and a plain interpreter then agree), logs captured."""
    tmp.mkdir(parents=True, exist_ok=True)
    _CURRENT["tmp"] = str(tmp)
    ctx = Ctx(tmp)
    handler = _ListHandler(ctx.logs)
    logger = logging.getLogger("graphpriv")
    logger.addHandler(handler)
    cwd = os.getcwd()
    os.chdir(tmp)
    # a third-party handler (absl, distributed) bound to an earlier runner's closed stream must not
    # print "--- Logging error ---" tracebacks into this case's output
    raise_exceptions, logging.raiseExceptions = logging.raiseExceptions, False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obs = case.run(ctx)
    except Exception as exc:  # noqa: BLE001 - an exception the case itself did not classify
        obs = Observation(TRACEBACK, f"(escaped the case) {type(exc).__name__}: {first_line(exc)}")
    finally:
        _CURRENT.pop("tmp", None)
        os.chdir(cwd)
        logging.raiseExceptions = raise_exceptions
        logger.removeHandler(handler)
        _reset_cli()
    return obs


def _reset_cli() -> None:
    """A ``--debug`` case must not leak into the next one."""
    with contextlib.suppress(Exception):
        from graphpriv import cli

        cli._DEBUG["on"] = False


@contextlib.contextmanager
def patched(obj: Any, name: str, value: Any) -> Iterator[None]:
    """``setattr(obj, name, value)`` for the block (works outside pytest too)."""
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


# -- mentions --------------------------------------------------------------------------------------


def _names_all(line: str, mentions: Sequence[str]) -> str | None:
    """None when ``line`` names every mention (a str, or a compiled regex); else the first missing."""
    low = line.lower()
    for m in mentions:
        if isinstance(m, re.Pattern):
            if not m.search(line):
                return m.pattern
        elif m.lower() not in low:
            return m
    return None


def judge_message(line: str, mentions: Sequence[str], whole: str = "") -> Observation:
    """``clear_error`` when the first message line names every mention and nothing in ``whole``
    is a pydantic URL or a traceback; otherwise ``unclear_error``. The case's working directory
    is cut out of the line first (its name must not count as a word of the message)."""
    line = _without_tmp(line)
    if PYDANTIC_URL in whole or PYDANTIC_URL in line:
        return Observation(UNCLEAR, f"pydantic URL in the message: {one_line(line)}")
    if len(line.strip()) < 12:
        return Observation(UNCLEAR, f"message too short to name anything: {line!r}")
    missing = _names_all(line, mentions)
    if missing is not None:
        return Observation(UNCLEAR, f"message does not name {missing!r}: {one_line(line)}")
    return Observation(CLEAR, one_line(line))


# -- Python entry points ---------------------------------------------------------------------------


def call(fn: Callable[[], Any], mentions: Sequence[str] = (),
         check: Callable[[Any], tuple[bool, str]] | None = None) -> Observation:
    """Classify a Python call: a GraphPrivError is judged by its first line; another exception is
    a ``traceback``; a return is ``handled`` when ``check(value)`` is ``(True, ...)``, else
    ``silent_accept``."""
    from graphpriv.errors import GraphPrivError

    try:
        value = fn()
    except GraphPrivError as exc:
        return judge_message(first_line(exc), mentions, str(exc))
    except Exception as exc:  # noqa: BLE001 - the point: any other type is a traceback
        return Observation(TRACEBACK, f"{type(exc).__module__}.{type(exc).__qualname__}: {one_line(first_line(exc))}")
    if check is None:
        return Observation(SILENT, f"accepted: returned {_summary(value)}")
    ok, detail = check(value)
    return Observation(HANDLED if ok else SILENT, detail)


def _summary(value: Any) -> str:
    from graphpriv.methods.base import Result

    if isinstance(value, Result):
        return f"a Result (metrics {sorted(value.metrics)[:3]}, info.input_normalisations " \
               f"{value.info.get('input_normalisations')!r})"
    return one_line(repr(value), 120)


# -- CLI -------------------------------------------------------------------------------------------

_PANEL_EDGE = re.compile(r"^[╭╰│]")


def invoke(args: Sequence[object], **kwargs: Any):
    """``graphpriv ARGS`` in-process (``typer.testing.CliRunner``); exceptions are caught."""
    from typer.testing import CliRunner

    from graphpriv import cli

    cli._DEBUG["on"] = False
    return CliRunner().invoke(cli.app, [str(a) for a in args], **kwargs)


_LOGGING_ERROR = re.compile(r"--- Logging error ---\n.*?\nArguments: [^\n]*\n?", re.DOTALL)


def output_of(result) -> str:
    """stdout and stderr of a CLI result, without the ``--- Logging error ---`` blocks a third-party
    log handler bound to an earlier runner's (closed) stream prints: an artefact of running many
    commands in one process, not graphpriv's output."""
    text = result.output or ""
    try:
        err = result.stderr
    except (ValueError, AttributeError):
        err = ""
    if err and err not in text:
        text += err
    return _LOGGING_ERROR.sub("", text)


def _panel(lines: list[str], i: int) -> str:
    body = []
    for inner in lines[i + 1:]:
        if inner.startswith("╰"):
            break
        body.append(inner.strip("│ ").strip())
    return " ".join(body)


def error_lines(text: str, markers: Sequence[str] = ("error:",)) -> list[str]:
    """Every line holding a marker (``error:`` and anything before it dropped; other markers kept
    whole), and the text of each Typer usage-error panel, in order."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        low = line.lower()
        if line.startswith("╭") and "Error" in line:
            out.append(_panel(lines, i))
        elif "error:" in markers and "error:" in low:
            out.append(line[low.index("error:") + len("error:"):].strip())
        elif any(m != "error:" and m.lower() in low for m in markers):
            out.append(line.strip())
    return out


def error_line(text: str, markers: Sequence[str] = ("error:",)) -> str | None:
    """The first ``error:`` line (marker and anything before it dropped) or usage-error panel,
    else the first line holding another marker; None when there is none."""
    found = error_lines(text, markers)
    first = [ln for ln in error_lines(text, ("error:",))] if "error:" in markers else []
    return (first or found or [None])[0]


def cli_failure(result, text: str) -> Observation | None:
    """``traceback`` when the run raised, printed a traceback, an internal error or exit code 3."""
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        return Observation(TRACEBACK, f"{type(exc).__module__}.{type(exc).__qualname__}: {one_line(first_line(exc))}")
    if "Traceback (most recent call last)" in text:
        tail = [ln for ln in text.strip().splitlines() if ln.strip()][-1]
        return Observation(TRACEBACK, f"traceback printed (exit {result.exit_code}): {one_line(tail)}")
    for line in text.splitlines():
        if "internal error" in line.lower():
            return Observation(TRACEBACK, f"exit {result.exit_code}: {one_line(line.strip())}")
    if result.exit_code == 3:
        return Observation(TRACEBACK, f"exit 3: {one_line(text[-300:])}")
    return None


def judge_cli(result, *, mentions: Sequence[str] = (), codes: Sequence[int] = (2,),
              markers: Sequence[str] = ("error:",), scope: str = "line",
              check: Callable[[str], tuple[bool, str]] | None = None) -> Observation:
    """Classify a CLI result (see the module docstring). ``check(output)`` runs on exit 0 and
    decides between ``handled`` and ``silent_accept``. ``scope="line"``: the mentions must be in
    the first error line; ``"lines"``: in the error lines together (a sweep names each failing cell
    on its own ``would fail:`` / ``invalid:`` / ``failed:`` line before its summary)."""
    text = output_of(result)
    failed = cli_failure(result, text)
    if failed is not None:
        return failed
    code = result.exit_code
    if code == 0:
        if check is None:
            return Observation(SILENT, f"exit 0: {one_line(_last_lines(text), 200)}")
        ok, detail = check(text)
        return Observation(HANDLED if ok else SILENT, detail)
    line = error_line(text, markers)
    if code not in codes:
        return Observation(UNCLEAR, f"exit {code} (expected {'/'.join(map(str, codes))}): "
                                    f"{one_line(line or _last_lines(text), 200)}")
    if line is None:
        return Observation(UNCLEAR, f"exit {code} without an error line: {one_line(_last_lines(text), 200)}")
    if scope == "lines":
        return judge_message(" | ".join(error_lines(text, markers)), mentions, text)
    return judge_message(line, mentions, text)


def _last_lines(text: str, n: int = 2) -> str:
    return " | ".join([ln.strip() for ln in text.strip().splitlines() if ln.strip()][-n:])
