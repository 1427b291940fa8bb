"""Paper and audit tables as data: the schema of ``experiments/grids/*.yaml`` and its loader.

A grid file is one table of ``docs/reproduction/``: what runs (rows x datasets x seeds), what it
shows, and the paper's numbers beside it with their source (title and section). Three kinds:

- ``runs``: a sweep grid. Each row is a registry method with a preset, settings and per-dataset
  settings; every (row, dataset, seed) is one run of the results store (the cell runner of
  ``graphpriv run`` and ``graphpriv sweep``). ``paper`` holds the paper's value per dataset.
- ``audit``: privacy audits (:func:`graphpriv.experiments.auditing.run_audit`), one per (row,
  dataset): correct runs, runs without noise and the deliberate fault (``noise_scale``).
- ``proximity``: the PPGSL paper's Table I (hop distances of visible, hidden and no-link pairs).

``graphpriv reproduce NAME`` runs and renders any of them (:mod:`graphpriv.experiments.reproduce`).
A file that fails its schema is a :class:`~graphpriv.errors.ConfigError` naming the file and the
field, before any work.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from graphpriv.errors import ConfigError, PrivacyError, describe_validation_error
from graphpriv.experiments.registry import make_config, method_spec, preset_settings

__all__ = ["GRID_DIR", "AuditGrid", "AuditRow", "Grid", "GridRow", "ProximityGrid", "RunsGrid", "WinnerRule",
           "grid_names", "load_grid", "read_grid"]

#: The folder of the grid files (installed with the package).
GRID_DIR = Path(__file__).parent / "grids"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Grid(_Strict):
    """What every grid file has: its name (the file's stem), the table's heading, the source of
    the paper's numbers (title and section, or why the table is not in a paper), optional
    Markdown between heading and table, and its datasets."""

    name: str
    title: str
    source: str
    intro: str = ""
    datasets: list[str] = Field(min_length=1)


class GridRow(_Strict):
    """One row of a ``runs`` grid.

    Attributes:
        label: the row's name in the table. method: a registry id.
        preset: a named preset of the method (:data:`graphpriv.experiments.registry.PRESETS`),
            applied first. per_dataset: settings for one dataset, over the preset. settings: over
            both, on every dataset. paper: the paper's value per dataset (in the table's unit, %).
        max_seeds: fewer seeds on a dataset (0: the cell is not run there).
        series: the line the row belongs to in the grid's plot (:attr:`RunsGrid.plot`): rows of
            one series at different epsilons form a curve; a row without a series is a horizontal
            reference line (a non-private model) there.
    """

    label: str
    method: str
    series: str | None = None
    preset: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    per_dataset: dict[str, dict[str, Any]] = Field(default_factory=dict)
    paper: dict[str, float] = Field(default_factory=dict)
    max_seeds: dict[str, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)

    def settings_for(self, dataset: str) -> dict[str, Any]:
        """The run's overrides on ``dataset``: preset, then per-dataset, then the row's settings."""
        return {**preset_settings(self.method, self.preset, dataset), **self.per_dataset.get(dataset, {}),
                **self.settings}

    def seeds_on(self, dataset: str, seeds: int) -> int:
        """How many of ``seeds`` this row runs on ``dataset``."""
        return min(seeds, self.max_seeds.get(dataset, seeds))


class WinnerRule(_Strict):
    """A metric of a ``runs`` grid's "which series wins" section
    (:mod:`graphpriv.experiments.winners`): its key and whether ``higher`` or ``lower`` is better."""

    metric: str
    better: Literal["higher", "lower"]


class RunsGrid(_Grid):
    """A table of runs: rows x datasets x seeds ``first_seed .. first_seed + seeds - 1``.

    Attributes:
        name: the table's name (the file's stem). title: the table's heading. source: the
            paper's title and section (or why the table is not in a paper). metric: the main
            metric (a key of ``Result.metrics``, shown x 100). columns: further metrics shown as
            mean ± std (x 100); ``baseline:METRIC`` is the trivial baseline each run measured for
            METRIC on its own split (e.g. ``baseline:accuracy``, the majority class; the first when a
            run has several), ``baseline:METRIC@NAME`` its baseline of that name (e.g.
            ``baseline:lp_auc@input graph``). raw_columns: diagnostics shown as their mean in
            scientific notation. seeds: the seed count of the committed table. first_seed: the first seed
            (validation grids use seeds apart from the reported ones). max_seeds: fewer seeds on
            a dataset for every row (a row's own ``max_seeds`` for that dataset wins). intro: Markdown shown
            between the heading and the table (every kind has it). allow_large_delta: the
            papers' deltas above 1 / (privacy units) are kept (the delta rule is not applied).
        plot: ``epsilon`` draws ``docs/<name>.png`` beside the table: one panel per dataset, the
            metric against each series' epsilon (mean and std over seeds), the rows without a
            series as horizontal lines (:func:`graphpriv.experiments.plots.plot_grid`).
        winners: metrics of the table (main, ``columns`` or ``raw_columns``) for a section after it
            naming the best series per dataset and epsilon (:mod:`graphpriv.experiments.winners`);
            every row with a series must then set ``epsilon``. winners_exclude: series left out of
            that section (e.g. a node-level method among edge-level ones).
    """

    kind: Literal["runs"] = "runs"
    rows: list[GridRow] = Field(min_length=1)
    metric: str = "test_auc"
    columns: list[str] = Field(default_factory=list)
    raw_columns: list[str] = Field(default_factory=list)
    seeds: int = Field(5, ge=1, le=1000)
    first_seed: int = Field(0, ge=0)
    max_seeds: dict[str, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)
    allow_large_delta: bool = True
    plot: Literal["epsilon"] | None = None
    winners: list[WinnerRule] = Field(default_factory=list)
    winners_exclude: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _shared_max_seeds(cls, data: Any) -> Any:
        """The grid's ``max_seeds`` under each row's own (what :meth:`GridRow.seeds_on` reads)."""
        if not (isinstance(data, dict) and isinstance(data.get("max_seeds"), dict) and data["max_seeds"]
                and isinstance(data.get("rows"), list)):
            return data
        shared, rows = data["max_seeds"], []
        for row in data["rows"]:
            if isinstance(row, dict) and isinstance(row.get("max_seeds", {}), dict):
                row = {**row, "max_seeds": {**shared, **row.get("max_seeds", {})}}
            elif isinstance(row, GridRow):
                row = row.model_copy(update={"max_seeds": {**shared, **row.max_seeds}})
            rows.append(row)
        return {**data, "rows": rows}

    @model_validator(mode="after")
    def _rows_valid(self) -> RunsGrid:
        labels = [r.label for r in self.rows]
        repeated = sorted({x for x in labels if labels.count(x) > 1})
        if repeated:
            raise ValueError(f"row labels must be unique (repeated: {repeated})")
        for row in self.rows:
            for key in (*row.paper, *row.per_dataset, *row.max_seeds):
                if key not in self.datasets:
                    raise ValueError(f"row {row.label!r} names dataset {key!r}, which is not in datasets "
                                     f"{self.datasets}")
            if (self.plot or self.winners) and row.series is not None and "epsilon" not in row.settings:
                raise ValueError(f"row {row.label!r} of series {row.series!r} sets no epsilon, the plot's x axis "
                                 "and the winners' columns")
        shown = {self.metric, *self.columns, *self.raw_columns}
        for rule in self.winners:
            if rule.metric not in shown:
                raise ValueError(f"winners metric {rule.metric!r} is not shown by the table (metric, columns or "
                                 f"raw_columns: {sorted(shown)})")
        series = {r.series for r in self.rows if r.series is not None}
        if self.winners:
            points = [(r.series, r.settings["epsilon"]) for r in self.rows if r.series is not None]
            repeated = sorted({f"{s} at epsilon {e}" for s, e in points if points.count((s, e)) > 1})
            if repeated:
                raise ValueError(f"winners compares one row per series and epsilon; repeated: {repeated}")
        for name in self.winners_exclude:
            if name not in series:
                raise ValueError(f"winners_exclude names series {name!r}, which no row has (series: {sorted(series)})")
        return self


class AuditRow(_Strict):
    """One row of an ``audit`` grid: the arguments of
    :func:`graphpriv.experiments.auditing.run_audit`.

    Attributes:
        label: the row's name. method: an auditable registry id. epsilon: the target the method
            is calibrated to. preset, settings: hyperparameters (as in :class:`GridRow`).
        private: False audits the same training without noise. noise_scale: the deliberate fault
            (0.01: the noise 100 times too small; the claim stays the calibrated one).
        canaries, epochs, ratio, attack: the audit's options (None: its defaults).
        datasets: the row's datasets (default: the grid's).
    """

    label: str
    method: str
    epsilon: float = Field(1.0, gt=0)
    preset: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    private: bool = True
    noise_scale: float = Field(1.0, ge=0)
    canaries: int | None = Field(None, ge=2)
    epochs: int | None = Field(None, ge=1)
    ratio: float | None = None
    attack: str | None = None
    datasets: list[str] | None = None

    def settings_for(self, dataset: str) -> dict[str, Any]:
        """The audit's hyperparameters on ``dataset``: the preset, then the row's settings."""
        return {**preset_settings(self.method, self.preset, dataset), **self.settings}


class AuditGrid(_Grid):
    """A table of privacy audits, one report per (row, dataset, attack), all at seed ``seed``."""

    kind: Literal["audit"]
    rows: list[AuditRow] = Field(min_length=1)
    seed: int = Field(0, ge=0)


class ProximityGrid(_Grid):
    """The PPGSL paper's Table I: hop distances of visible-link, hidden-link and no-link pairs, one
    table per visible graph: ``without-test`` (G minus the hidden links E_s and the held-out
    link-prediction test edges, the paper's protocol) or ``with-test`` (G minus E_s only, the test
    edges kept); ``paper[dataset][pair type]`` is (mean distance, disconnected ratio)."""

    kind: Literal["proximity"]
    seeds: int = Field(5, ge=1, le=1000)
    sensitive_ratio: float = Field(0.1, gt=0, lt=1)
    test_ratio: float = Field(0.1, gt=0, lt=1)
    visible: list[Literal["without-test", "with-test"]] = Field(default_factory=lambda: ["without-test"],
                                                                  min_length=1)
    paper: dict[str, dict[str, tuple[float, float]]] = Field(default_factory=dict)


Grid = RunsGrid | AuditGrid | ProximityGrid
_KINDS: dict[str, type[RunsGrid | AuditGrid | ProximityGrid]] = {"runs": RunsGrid, "audit": AuditGrid,
                                                                 "proximity": ProximityGrid}


def grid_names() -> list[str]:
    """The names of the grid files, sorted."""
    return sorted(p.stem for p in GRID_DIR.glob("*.yaml"))


def read_grid(path: str | Path) -> RunsGrid | AuditGrid | ProximityGrid:
    """Read and validate one grid file; its rows' methods, presets and settings are checked too.

    Args:
        path: a YAML file (a ``kind`` of ``runs``, the default, ``audit`` or ``proximity``).

    Returns:
        The grid.

    Raises:
        ConfigError: a missing or unreadable file, a field that fails the schema, a name other
            than the file's stem, an unknown method or preset, an invalid setting, or audit options
            ``graphpriv audit`` would refuse (a non-private method audited as private, an attack
            or ratio the method has not; each message names the file and the row).
    """
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read grid file {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"grid file {path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"grid file {path} must be a mapping of fields (name, title, rows, ...)")
    kind = raw.get("kind", "runs")
    if kind not in _KINDS:
        raise ConfigError(f"grid file {path} fails its schema: kind: {kind!r} is none of "
                          f"{', '.join(sorted(_KINDS))}")
    try:
        grid = _KINDS[kind].model_validate(raw)
    except ValueError as exc:
        raise ConfigError(f"grid file {path} fails its schema: {describe_validation_error(exc)}") from None
    if grid.name != path.stem:
        raise ConfigError(f"grid file {path} is named {grid.name!r}; a grid's name is its file's stem ({path.stem!r})")
    if isinstance(grid, (RunsGrid, AuditGrid)):
        for row in grid.rows:
            _check_row(path, grid, row)
    return grid


def _check_row(path: Path, grid: RunsGrid | AuditGrid, row: GridRow | AuditRow) -> None:
    datasets = (row.datasets or grid.datasets) if isinstance(row, AuditRow) else grid.datasets
    try:
        method_spec(row.method)
        if isinstance(row, AuditRow):  # the audit's own options, as graphpriv audit checks them
            from graphpriv.experiments.auditing import check_audit_options

            check_audit_options(row.method, epsilon=row.epsilon, canaries=row.canaries, seed=grid.seed,
                                epochs=row.epochs, ratio=row.ratio, attack=row.attack, private=row.private)
        for dataset in datasets:
            make_config(row.method, row.settings_for(dataset))
    except (ConfigError, PrivacyError) as exc:
        raise ConfigError(f"grid file {path}, row {row.label!r}: {exc}") from None


def load_grid(name: str) -> RunsGrid | AuditGrid | ProximityGrid:
    """The grid ``name`` of :data:`GRID_DIR`.

    Raises:
        ConfigError: no such grid (the message lists them), or the file fails its schema.
    """
    path = GRID_DIR / f"{name}.yaml"
    if "/" in name or not path.is_file():
        raise ConfigError(f"unknown table {name!r}; known tables: {', '.join(grid_names())}")
    return read_grid(path)
