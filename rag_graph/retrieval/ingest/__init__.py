"""Load documents (markdown with or without YAML front matter, and what loaders.py converts to
markdown) and cut them into section chunks. Internal front matter fields and sections marked
`<!-- internal -->` never reach a chunk.

documents.py   the document model
corpus.py      the corpus walk
front_matter.py  the public fields of the front matter
dialects.py    docs sites' syntaxes, rendered as a reader sees them
chunking.py    sections, anchors and chunk ids
"""
from .chunking import chunk_document, slugify
from .corpus import load_corpus, parse_document
from .documents import Chunk, Corpus, Document
from .front_matter import FrontMatterError, split_front_matter

__all__ = ["Chunk", "Corpus", "Document", "FrontMatterError", "chunk_document", "load_corpus", "parse_document",
           "slugify", "split_front_matter"]
