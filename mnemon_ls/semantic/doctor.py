"""``mnemon-ls doctor`` findings of semantic recall: the model, its load state or error, and per native space
the vector coverage and vectors of other models."""

from __future__ import annotations

from typing import Any

from ..findings import Finding
from .backends import INSTALL_HINT


def diagnose(host: Any) -> list[Finding]:
    """Findings for ``host`` (a :class:`mnemon_ls.host.WorkspaceHost`): none when semantic recall is switched
    off; else one ``semantic`` finding (``ok`` with model and dimension, or, the extra being optional, with the
    install hint when it is missing; ``warning`` when the model failed to load, naming the error), then one per
    active native space with its coverage (embedded / total), or a ``warning`` naming an unusable vector file and
    the rule (it is left alone; moving it away rebuilds it). Loads the model (about 0.1 s); reads only."""
    engine = host.semantic
    if engine is None:
        return []  # switched off (semantic.enabled false, or MNEMON_SEMANTIC=off): nothing to report
    if not engine.enabled:
        return [Finding("ok", "semantic", "semantic recall (an optional extra) is not installed; recall is "
                        "keyword-only", INSTALL_HINT)]
    embedder = engine.embedder()
    if embedder is None:
        return [_unusable(engine)]
    findings = [Finding("ok", "semantic", f"model {embedder.model_id} ({embedder.dim} dimensions) loaded"
                        + (f"; last error: {engine.last_error}" if engine.last_error else ""))]
    try:
        spaces = host.spaces
        records = [r for r in spaces.state().all if r.active and r.native]
    except Exception as exc:  # noqa: BLE001 - doctor reports, never fails on a broken registry
        return findings + _documents(host) + [Finding("warning", "semantic", f"spaces unreadable: {exc}")]
    findings.extend(_documents(host))
    for record in records:
        try:
            provider = spaces.provider(record)
            side = getattr(provider, "semantic", None)
            if side is None:
                continue
            info = side.status()
        except Exception as exc:  # noqa: BLE001
            findings.append(Finding("warning", f"space {record.id}", f"semantic status unreadable: {exc}"))
            continue
        if info.get("unusable"):
            findings.append(Finding("warning", f"space {record.id}", f"semantic recall is keyword-only: "
                                    f"{info['unusable']}", "mnemon-ls leaves a file it did not create as a regular "
                                    "SQLite file alone: move it away and the next recall rebuilds the index"))
            continue
        total, embedded = info.get("total") or 0, info.get("embedded") or 0
        others = ", ".join(f"{m['model']}/{m['dim']} ({m['vectors']})" for m in info.get("otherModels") or [])
        message = (f"semantic: {embedded} of {total} item{'' if total == 1 else 's'} embedded with "
                   f"{info.get('model')}")  # the words of `space status`
        if others:
            message += f"; vectors of other models kept aside: {others}"
        level = "ok" if embedded >= total else "warning"
        findings.append(Finding(level, f"space {record.id}", message,
                                "" if level == "ok" else "embedding runs in the language server's background; "
                                f"`mnemon-ls space embed {record.id}` finishes it now"))
    return findings


def _documents(host: Any) -> list[Finding]:
    """A ``warning`` (subject ``documents``) when the Documents chunk vector file
    (:data:`~.documents.FILE_NAME` in the documents directory) is unusable (:func:`~.engine.unusable_reason`):
    the same rule as a Memory Space's vector file. Reads only (an ``lstat`` and at most 16 bytes)."""
    from .documents import FILE_NAME, unusable_notice
    from .engine import VectorIndexUnusable, unusable_reason

    try:
        path = host.documents.documents_dir / FILE_NAME
    except Exception:  # noqa: BLE001 - the Documents part of doctor reports an unreadable store
        return []
    reason = unusable_reason(path)
    if reason is None:
        return []
    return [Finding("warning", "documents", unusable_notice(VectorIndexUnusable(path, reason).reason),
                    "mnemon-ls leaves a file it did not create as a regular SQLite file alone: move it away and "
                    "the next document search rebuilds the index")]


def _unusable(engine: Any) -> Finding:
    """The finding of a backend that did not load, naming the one :func:`~.backends.load_embedder` chose:
    the Mnemon CLI's endpoint (``MNEMON_EMBED_ENDPOINT``/``_MODEL``), ``semantic.endpoint``, or the local model."""
    from .backends import cli_endpoint

    cli = cli_endpoint(engine.env)
    if cli is not None:
        what, fix = (f"embedding model {cli['model']} at MNEMON_EMBED_ENDPOINT",
                     "check MNEMON_EMBED_ENDPOINT / MNEMON_EMBED_MODEL, or start that server")
    elif engine.config.endpoint:
        what, fix = (f"embedding model {engine.config.model} at semantic.endpoint",
                     "check semantic.endpoint / semantic.model, or start that server")
    else:
        what, fix = f"model {engine.config.model}", "check semantic.model, or reinstall 'mnemon-ls[semantic]'"
    return Finding("warning", "semantic", f"{what} is not usable: {engine.last_error}; recall is keyword-only", fix)
