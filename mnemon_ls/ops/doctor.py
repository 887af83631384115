"""The ``storage.doctor`` operation (``mnemon-ls doctor``): every directory mnemon-ls writes
(:mod:`mnemon_ls.footprint`), every Source's read-only findings (settings, root, branch, runtime stores, git,
older roots, space names and lineage, the stores of deleted spaces kept in ``data/.deleted/``, entries an
interrupted archival left in MEMORY.md, third-party providers, registry repairs, semantic recall, documents,
stored credentials) and the summary line.

The result (``--json``): ``{version, workspace, root, userRoot, scope, branch, branchReason, writes: [{what,
path, holds}], findings: [{level, subject, message, advice}], secrets: [{location, kind, position}]}``; the
command exits 1 when a finding is a problem (a warning never changes the exit code). Reads only: a storage
root that leads elsewhere through a link (a ``problem`` of :func:`mnemon_ls.roots_safety.storage_findings`) is not
read further.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool

from .. import __version__
from ..errors import EXIT_FAILURE, EXIT_OK
from .base import Call, CliArg, CliCommand, Operation, WorkspaceParams

#: How a finding's level starts its line in the text.
MARKS = {"ok": "ok     ", "warning": "warning", "problem": "PROBLEM"}


class DoctorParams(WorkspaceParams):
    """``{workspace?, providers?}``."""

    providers: StrictBool = Field(False, description="also open and check enabled third-party providers")


def diagnose(call: Call, p: DoctorParams) -> dict[str, Any]:
    """The doctor's result for ``call.host`` (module doc); opens third-party engines only with ``providers``."""
    from ..findings import Finding
    from ..footprint import written_places
    from ..roots_safety import storage_findings
    from ..runtime.store import diagnose as diagnose_runtime

    host = call.host
    branch = host.branch_state()
    places = written_places(host)
    findings = storage_findings(host.resolution)
    unsafe = any(f.level == "problem" for f in findings)  # then the Sources would read through the links
    if not unsafe:
        findings.extend(f for store in host.runtime.stores for f in diagnose_runtime(store))
        from ..migrate_survey import survey
        from ..roots_gitignore import diagnose_git

        for root in dict.fromkeys((host.root, host.resolution.user_root)):
            findings.extend(diagnose_git(root))
        findings.extend(survey(host))
        if (host.root / "data").is_dir():
            from ..spaces.naming import diagnose_names
            from ..spaces.storecheck import store_findings

            state = host.spaces.state()
            if state.native_refused is not None:  # a newer version's catalog: read-only, its spaces not shown
                findings.append(Finding("warning", "spaces", state.native_refused.message,
                                        "upgrade mnemon-ls; the file is left as it is"))
            findings.extend(diagnose_names(state.all))
            findings.extend(store_findings(state.all, host.spaces.registry.store_path))
            from ..spaces.deleted import kept_line, kept_summary

            kept = kept_summary(host.root / "data")
            if kept is not None:  # never a problem: what `space delete` keeps, until purge-deleted removes it
                findings.append(Finding("ok", str(kept["path"]), kept_line(kept),
                                        "`mnemon-ls space purge-deleted --confirm` removes the kept stores for good"))
        from ..maintenance import verify_lineage

        findings.extend(verify_lineage(host.runtime.memory_store.root,
                                       host.spaces if (host.root / "data").is_dir() else None,
                                       third_party=p.providers))
        from ..maintenance.leftovers import doctor_findings as interrupted_archivals

        findings.extend(interrupted_archivals(host.runtime.memory_store.root,
                                              host.runtime.memory_store.read().entries,
                                              host.spaces if (host.root / "data").is_dir() else None,
                                              third_party=p.providers))  # in MEMORY.md and archived
        findings.extend(host.spaces.thirdparty.diagnose(open_engines=p.providers))  # engines only when asked
        from ..spaces.registry_repair import quarantine_findings

        findings.extend(quarantine_findings(host.root))  # registry files a repair rebuilt
        from ..citations.reviewed import findings as reviewed_findings

        findings.extend(reviewed_findings(host.root))  # "still true" confirmations
        findings.extend(host.records.quarantine_findings())  # damaged records lines a read moved aside
        from ..packs.swap import displaced_findings

        for root in dict.fromkeys((host.root, host.resolution.user_root)):
            findings.extend(displaced_findings(root))  # what a pack swap kept aside
        from ..semantic.doctor import diagnose as diagnose_semantic

        findings.extend(diagnose_semantic(host))
        if (host.root / "documents").exists():
            from ..documents import diagnose as diagnose_documents

            findings.extend(diagnose_documents(host.documents))
    secrets = [] if unsafe else host.stored_secrets()["findings"]  # never read through a refused link
    if secrets:
        where = sorted({f["location"].split(" ")[0] for f in secrets})
        kinds = sorted({f["kind"] for f in secrets})
        findings.append(Finding("warning", "secrets", f"{len(secrets)} stored value(s) look like credentials "
                                f"({', '.join(kinds)}) in {', '.join(where)}",
                                "`mnemon-ls redact` lists them; `mnemon-ls redact --apply` replaces them with "
                                "placeholders"))
    return {"version": __version__, "workspace": str(host.workspace) if host.workspace else None,
            "root": str(host.root), "userRoot": str(host.resolution.user_root), "scope": host.resolution.scope,
            "branch": branch.branch, "branchReason": branch.reason, "writes": [p.to_dict() for p in places],
            "findings": [f.to_dict() for f in findings], "secrets": secrets}


def doctor_summary(findings: list[dict[str, Any]]) -> str:
    """The last line of ``doctor``: ``no problems found`` only when no finding (``{level, subject, ...}``) is a
    problem or a warning; otherwise the counts, with the warnings' subjects, e.g. ``no problems; 1 warning:
    semantic``."""
    problems = [f for f in findings if f["level"] == "problem"]
    warnings = [f for f in findings if f["level"] == "warning"]
    if not problems and not warnings:
        return "no problems found"
    parts = [f"{len(problems)} problem(s) found" if problems else "no problems"]
    if warnings:
        parts.append(f"{len(warnings)} warning{'' if len(warnings) == 1 else 's'}: "
                     + ", ".join(dict.fromkeys(f["subject"] for f in warnings)))
    return "; ".join(parts)


def doctor_text(data: dict[str, Any], call: Call, _p: Any) -> str:
    """The doctor's result as a person reads it: version, workspace, root, branch, the directories written,
    one line per finding (and its advice), the summary (:func:`doctor_summary`)."""
    from ..footprint import ONLY_WHEN_ASKED
    from ..gitstate import BranchState

    resolution = call.host.resolution
    lines = [
        f"mnemon-ls {data['version']}",
        f"workspace: {data['workspace'] or 'none'}" + (f" (a linked worktree; memory shared with "
                                                       f"{resolution.workspace})" if resolution.shared_from else ""),
        f"storage scope: {data['scope']}; root: {data['root']}",
    ]
    if resolution.split_user:
        lines.append(f"USER.md root (runtimeUserScope=global): {data['userRoot']}")
    if data["workspace"] is None:
        lines.append("no workspace: no directory from here upward holds .git or .mnemon, so the global root is used"
                     " (give --workspace DIR for another folder)")
    branch = BranchState(branch=data["branch"], detached=data["branch"] is None, reason=data["branchReason"])
    lines.append(f"git branch: {branch.describe()}")  # describe() reads the branch and the reason only
    lines += ["writes to:", *(f"  {w['what']}: {w['path']} ({w['holds']})" for w in data["writes"]),
              f"  {ONLY_WHEN_ASKED}"]
    for finding in data["findings"]:
        lines.append(f"[{MARKS[finding['level']]}] {finding['subject']}: {finding['message']}")
        if finding["advice"]:
            lines.append(f"          -> {finding['advice']}")
    lines.append(doctor_summary(data["findings"]))
    return "\n".join(lines)


def _exit_code(data: dict[str, Any]) -> int:
    """1 when a finding is a problem, else 0."""
    return EXIT_FAILURE if any(f["level"] == "problem" for f in data["findings"]) else EXIT_OK


OPERATIONS = (
    Operation(
        "storage.doctor", DoctorParams, diagnose,
        "Explain the state of the storage root: the directories written, every Source's findings, stored "
        "credentials (reads only).",
        cli=CliCommand(("doctor",), "explain the state of the storage root",
                       (CliArg("providers", flag="--providers", kind="flag"),), text=doctor_text,
                       exit_code=_exit_code)),
)
