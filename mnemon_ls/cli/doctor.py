"""``mnemon-ls doctor``: every directory mnemon-ls writes (:mod:`mnemon_ls.footprint`), every Source's
read-only findings (settings, root, branch, runtime stores, git, older roots, space names and lineage,
entries an interrupted archival left in MEMORY.md, third-party providers, registry repairs, semantic
recall, documents, stored credentials) and the summary line. Split out of :mod:`mnemon_ls.cli.full` (which
passes its host factory and output function)."""

from __future__ import annotations

import argparse
from typing import Any, Callable

from .. import __version__
from ..errors import EXIT_FAILURE, EXIT_OK
from ..footprint import ONLY_WHEN_ASKED, written_places
from ..roots import storage_findings
from ..runtime.store import diagnose


def doctor_summary(findings: list) -> str:
    """The last line of ``doctor``: ``no problems found`` only when no finding is a problem or a warning;
    otherwise the counts, with the warnings' subjects, e.g. ``no problems; 1 warning: semantic``. Warnings never change
    the exit code (1 only for a problem)."""
    problems = [f for f in findings if f.level == "problem"]
    warnings = [f for f in findings if f.level == "warning"]
    if not problems and not warnings:
        return "no problems found"
    parts = [f"{len(problems)} problem(s) found" if problems else "no problems"]
    if warnings:
        parts.append(f"{len(warnings)} warning{'' if len(warnings) == 1 else 's'}: "
                     + ", ".join(dict.fromkeys(f.subject for f in warnings)))
    return "; ".join(parts)


def cmd_doctor(args: argparse.Namespace, make_host: Callable[[argparse.Namespace], Any],
               emit: Callable[..., None]) -> int:
    """``mnemon-ls doctor``: settings, root, branch and every Source's findings, printed (``emit``: text or
    ``--json``) for the host ``make_host(args)`` builds; returns exit code 1 when a finding is a problem, else 0."""
    host = make_host(args)
    branch = host.branch_state()
    lines = [
        f"mnemon-ls {__version__}",
        f"workspace: {host.workspace or 'none'}" + (f" (a linked worktree; memory shared with {host.resolution.workspace})"
                                          if host.resolution.shared_from else ""),
        f"storage scope: {host.resolution.scope}; root: {host.root}",
    ]
    if host.resolution.split_user:
        lines.append(f"USER.md root (runtimeUserScope=global): {host.resolution.user_root}")
    if host.workspace is None:
        lines.append("no workspace: no directory from here upward holds .git or .mnemon, so the global root is used"
                     " (give --workspace DIR for another folder)")
    lines.append(f"git branch: {branch.describe()}")
    places = written_places(host)
    lines += ["writes to:", *(place.line() for place in places), f"  {ONLY_WHEN_ASKED}"]
    findings = storage_findings(host.resolution)
    unsafe = any(f.level == "problem" for f in findings)  # then the Sources would read through the links
    if not unsafe:
        findings.extend(f for store in host.runtime.stores for f in diagnose(store))
        from ..migrate import survey
        from ..roots import diagnose_git

        for root in dict.fromkeys((host.root, host.resolution.user_root)):
            findings.extend(diagnose_git(root))
        findings.extend(survey(host))
        if (host.root / "data").is_dir():
            from ..spaces.naming import diagnose_names

            findings.extend(diagnose_names(host.spaces.state().all))
        from ..maintenance import verify_lineage

        findings.extend(verify_lineage(host.runtime.memory_store.root,
                                       host.spaces if (host.root / "data").is_dir() else None,
                                       third_party=args.providers))
        from ..maintenance.leftovers import doctor_findings as interrupted_archivals

        findings.extend(interrupted_archivals(host.runtime.memory_store.root,
                                              host.runtime.memory_store.read().entries,
                                              host.spaces if (host.root / "data").is_dir() else None,
                                              third_party=args.providers))  # in MEMORY.md and archived
        findings.extend(host.spaces.thirdparty.diagnose(open_engines=args.providers))  # engines only when asked
        from ..spaces.registry import quarantine_findings

        findings.extend(quarantine_findings(host.root))  # registry files a repair rebuilt
        from ..packs.swap import displaced_findings

        for root in dict.fromkeys((host.root, host.resolution.user_root)):
            findings.extend(displaced_findings(root))  # what a pack swap kept aside
    if not unsafe:
        from ..semantic.doctor import diagnose as diagnose_semantic

        findings.extend(diagnose_semantic(host))
    if (host.root / "documents").exists() and not unsafe:
        from ..documents import diagnose as diagnose_documents

        findings.extend(diagnose_documents(host.documents))
    marks = {"ok": "ok     ", "warning": "warning", "problem": "PROBLEM"}
    for finding in findings:
        lines.append(f"[{marks[finding.level]}] {finding.subject}: {finding.message}")
        if finding.advice:
            lines.append(f"          -> {finding.advice}")
    secrets = [] if unsafe else host.stored_secrets()["findings"]  # never read through a refused link
    if secrets:
        from ..findings import Finding

        where = sorted({f["location"].split(" ")[0] for f in secrets})
        kinds = sorted({f["kind"] for f in secrets})
        finding = Finding("warning", "secrets", f"{len(secrets)} stored value(s) look like credentials "
                          f"({', '.join(kinds)}) in {', '.join(where)}",
                          "`mnemon-ls redact` lists them; `mnemon-ls redact --apply` replaces them with placeholders")
        findings.append(finding)
        lines.append(f"[{marks[finding.level]}] {finding.subject}: {finding.message}")
        lines.append(f"          -> {finding.advice}")
    problems = [f for f in findings if f.level == "problem"]
    lines.append(doctor_summary(findings))
    data = {"version": __version__, "workspace": str(host.workspace) if host.workspace else None,
            "root": str(host.root), "userRoot": str(host.resolution.user_root), "scope": host.resolution.scope,
            "branch": branch.branch, "branchReason": branch.reason, "writes": [p.to_dict() for p in places],
            "findings": [f.to_dict() for f in findings],
            "secrets": secrets}
    emit(args, data, "\n".join(lines))
    return EXIT_FAILURE if problems else EXIT_OK
