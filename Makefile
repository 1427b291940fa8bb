# graphpriv: `make demo` runs the main job, `make test` the test suite; both set up .venv first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SHARED_DATA := $(abspath ../shared/datasets)
ifneq ($(wildcard $(SHARED_DATA)),)
export GRAPHPRIV_DATA ?= $(SHARED_DATA)
endif
# numba's kernel cache: graphpriv sets NUMBA_CACHE_DIR (unless set) to ~/.cache/graphpriv/numba (linkpred/_numba_cache.py)

.PHONY: setup demo test reproduce bench clean

#: docs/dpar_epsilon.png: one line per DPAR variant (the default rows exclude the one-row variant)
DPAR_CURVES = --curve "Features (dp-mlp)=dp-mlp" \
  --curve "DPAR-EM0, rigorous=dpar-em0:accounting=rigorous,max_rows=null,k=2,appr_share=0.5" \
  --curve "DPAR-GM, rigorous=dpar-gm:accounting=rigorous,max_rows=null,k=2,appr_share=0.5" \
  --curve "DPAR-EM0, paper=dpar-em0:accounting=paper,k=2,appr_share=0.5" \
  --curve "DPAR-EM1, paper=dpar-em1:accounting=paper,k=2,appr_share=0.5" \
  --curve "DPAR-GM, paper=dpar-gm:accounting=paper,k=2,appr_share=0.5" \
  --curve "DPAR-GM, rigorous, one row per node=dpar-gm:accounting=rigorous,max_rows=1,k=2"

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[test]"
	touch $@

setup: $(BIN)/.installed

demo: setup
	$(BIN)/graphpriv run dplp-ps --dataset usair --epsilon 4 --seed 0

#: one pytest-xdist process per core (a test file stays on one, so its module fixtures run once)
test: setup
	$(BIN)/python -m pytest -q -n auto --dist loadfile --durations=20

#: every table of docs/reproduction: the grid files of experiments/grids (one store, runs/results.sqlite)
TABLES = $(sort $(basename $(notdir $(wildcard src/graphpriv/experiments/grids/*.yaml))))

reproduce: setup
	$(BIN)/python -m pytest -q -m slow
	for table in $(TABLES); do $(BIN)/graphpriv reproduce $$table --workers 2 || exit 1; done
	$(BIN)/graphpriv plot --methods "dplp-ps lapgraph-sgnn" --datasets "yeast usair celegans pb" \
	  --epsilons 1 --epsilons 2.5 --epsilons 4 --epsilons 5 --epsilons 7.5 --epsilons 10 --out docs/dplp_eps_sweep.png
	$(BIN)/graphpriv plot --rank-sweeps --datasets yeast --out docs/dplp_rank_sweeps.png
	for m in lp_auc err_tc; do $(BIN)/graphpriv plot --datasets "cora citeseer p2p_gnutella08 chicago" \
	  --metric $$m --xlabel "epsilon (node-level, rigorous)" \
	  --curve "PrivDPR, rigorous=privdpr:accounting=rigorous,edge_count=input,s=8.0,d=64,attacks=none" \
	  --out docs/privdpr_$$m.png; done
	$(BIN)/graphpriv plot --methods "ppgsl random-perturb dice edgerand lapgraph" --tradeoff \
	  --datasets "cora citeseer polblogs lastfm_asia pubmed deezer_europe" --out docs/ppgsl_tradeoff.png
	$(BIN)/graphpriv plot --datasets "cora_ml cora citeseer" --metric accuracy --xlabel "epsilon (node-level)" \
	  $(DPAR_CURVES) --out docs/dpar_epsilon.png

bench: setup
	$(BIN)/python benchmarks/bench_dpar.py --nodes 100000 --seeds 70 1000 --dataset cora_ml
	$(BIN)/python benchmarks/bench_sweep.py --runs 40 --workers 2
	$(BIN)/python benchmarks/bench_calibration.py
	$(BIN)/python benchmarks/bench_path_extraction.py --dataset usair --theta 40 --k 2
	$(BIN)/python benchmarks/bench_path_extraction.py --dataset yeast --theta 40 --k 4 --sample 100
	$(BIN)/python benchmarks/bench_dpsgd_step.py --dataset yeast --theta 8 --k 4
	$(BIN)/python benchmarks/bench_dpsgd_step.py --dataset usair --theta 8 --k 2
	$(BIN)/python benchmarks/bench_dpsgd_step.py --dataset yeast --theta 40 --k 3
	$(BIN)/python benchmarks/bench_validation_pass.py --dataset pb --k 4
	$(BIN)/python benchmarks/bench_subgraph_sage_gin.py --dataset pb --k 4
	$(BIN)/python benchmarks/bench_attacks.py
	$(BIN)/python benchmarks/bench_seal_step.py --steps 40
	$(BIN)/python benchmarks/bench_sparse_features.py
	$(BIN)/python benchmarks/bench_linear_clipping.py
	$(BIN)/python benchmarks/bench_attacks.py --dense-release
	$(BIN)/python benchmarks/bench_publishing.py --dataset deezer_europe --epsilon 1 4 8
	$(BIN)/python benchmarks/bench_ppgsl_scale.py --sizes 10000 50000 100000 --steps 500
	$(BIN)/python benchmarks/bench_dplp_rank.py --dataset facebook --base aa
	$(BIN)/python benchmarks/bench_privdpr_scale.py --nodes 410236 --edges 3356824 --batch-nodes 1024
	$(BIN)/python benchmarks/bench_spectral_norm.py
	$(BIN)/python benchmarks/bench_startup.py --repeats 5
	$(BIN)/python benchmarks/bench_gap.py

clean:
	rm -rf $(VENV) .numba-cache .pytest_cache runs
