"""The offline answer writer, in the order it works: `candidates` scores every sentence of the
context, `pick` chooses the best and the sentences that belong with it, `compose` writes them
as one answer with the subjects that say which is which; `generator` runs the three."""
from .generator import ExtractiveGenerator

__all__ = ["ExtractiveGenerator"]
