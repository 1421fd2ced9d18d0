# Citebot's image: `citebot serve` as a non-root user, with the embedding model and its ONNX
# export inside (no download at run time, no PyTorch import at start), the index and the
# feedback and gap logs on the /data volume. docs/deploy.md says how to build and run it.
#
# BASE_IMAGE: any Debian-like image with Python 3.10+ and its venv module (the official python
# image by default). TORCH_SPEC / TORCH_INDEX: the CPU build of PyTorch by default.
ARG BASE_IMAGE=python:3.11-slim-bookworm

FROM ${BASE_IMAGE} AS build
ARG TORCH_SPEC="torch==2.13.0"
ARG TORCH_INDEX="--index-url https://download.pytorch.org/whl/cpu"
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore
RUN python3 -m venv /opt/citebot
WORKDIR /src
COPY pyproject.toml requirements.lock README.md ./
COPY bot bot
COPY rag_graph rag_graph
# The runtime dependencies exactly as locked (hashes checked), then Citebot itself without them.
RUN /opt/citebot/bin/pip install ${TORCH_INDEX} "${TORCH_SPEC}" \
 && /opt/citebot/bin/pip install --require-hashes --no-deps -r requirements.lock \
 && /opt/citebot/bin/pip install --no-deps . \
 && /opt/citebot/bin/pip check
# The model's ONNX export, made once here; its files are checked against their pinned sums.
ENV CITEBOT_CACHE=/opt/citebot/cache HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
RUN cd / && /opt/citebot/bin/python -c "from rag_graph.retrieval.embeddings import Embedder; Embedder(None).encode_query('warm up')" \
 && chmod -R a+rX /opt/citebot/cache
# The image's SBOM (CycloneDX JSON) of every Python package installed above, by cyclonedx-py from
# a virtualenv of its own (hashes checked), which is then removed.
COPY deploy/sbom-tool.lock ./
RUN python3 -m venv /tmp/sbom-tool \
 && /tmp/sbom-tool/bin/pip install --require-hashes --no-deps -r sbom-tool.lock \
 && /tmp/sbom-tool/bin/cyclonedx-py environment /opt/citebot/bin/python --pyproject pyproject.toml \
      --output-reproducible -o /opt/citebot/sbom.cdx.json \
 && rm -rf /tmp/sbom-tool

FROM ${BASE_IMAGE}
RUN useradd --system --uid 10001 --user-group --home-dir /data --no-create-home citebot \
 && mkdir -p /data && chown citebot:citebot /data
COPY --from=build /opt/citebot /opt/citebot
COPY corpus /opt/citebot/corpus
ENV PATH=/opt/citebot/bin:$PATH \
    CITEBOT_CACHE=/opt/citebot/cache HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \
    CITEBOT_CORPUS=/opt/citebot/corpus CITEBOT_DB=/data/lancedb \
    CITEBOT_STATE_DIR=/data \
    PORT=3000 TEAMS_PORT=3978
VOLUME ["/data"]
WORKDIR /data
USER citebot
EXPOSE 3000 3978
# /healthz answers on every port served: Slack's PORT, or TEAMS_PORT when only Teams is on.
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 CMD ["python3", "-c", "import os, sys, urllib.request as r\nfor port in (os.environ['PORT'], os.environ['TEAMS_PORT']):\n    try:\n        r.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=4); sys.exit(0)\n    except OSError:\n        pass\nsys.exit(1)"]
ENTRYPOINT ["citebot"]
CMD ["serve"]
