from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def vnni() -> bool:
    """Whether this CPU has the integer dot-product instructions (x86 VNNI) the int8 graph was
    measured with (rag_graph/retrieval/onnx_encoder.py `_quick`). Without them (AVX2 only, as on
    an AMD EPYC here) ONNX Runtime's int8 kernels saturate, the form strays (cosine 0.970 on the
    long probe), the agreement check refuses it, and the exact graph serves every call. 7-bit
    weights (`reduce_range`) agree there but flipped two 18F answers (one right answer declined,
    one unanswerable answered), so the refusal stands."""
    cpuinfo = Path("/proc/cpuinfo")
    flags = cpuinfo.read_text() if cpuinfo.exists() else ""
    return "avx512_vnni" in flags or "avx_vnni" in flags
