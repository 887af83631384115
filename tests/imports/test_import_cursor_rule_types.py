"""Cursor's rule types (https://docs.cursor.com/context/rules, "Rule types"): a ``.mdc`` rule with ``alwaysApply:
false``, no ``globs`` and a ``description`` ("Agent Requested": the agent pulls it in when the description says it
is relevant) and one with none of the three ("Manual": only when a person names it, ``@rule-name``) were imported
as rules of the whole repository, their entries in MEMORY.md and so in every wake. Now an Agent Requested rule's
entries keep its condition (``When relevant (<description>): ...``), as a path-scoped rule's keep its globs, and a
Manual rule becomes one Document saying it applies only when asked for by name (read on request, never in the
wake). Run for real: the console script in a git workspace, with the real files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import Cli

AGENT_REQUESTED = ("---\ndescription: Error handling for payment API routes.\nglobs:\nalwaysApply: false\n---\n"
                   "- Return typed errors, never raw strings.\n\n## Retries\n\n- Retry twice, then give up.\n\n"
                   "## Example\n\n```ts\nthrow new PaymentError('declined')\n```\n")
MANUAL = "---\ndescription:\nglobs:\nalwaysApply: false\n---\n# Release checklist\n\n- Bump the version.\n- Tag it.\n"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def plan_of(cli: Cli, source: str = "cursor") -> dict:
    """The dry-run plan (``--json``) of ``import <source>`` in ``cli``'s workspace."""
    return json.loads(cli.ok("import", source, "--dry-run", "--json"))


def test_an_agent_requested_rule_keeps_its_condition(tmp_path):
    cli = Cli(tmp_path)
    write(cli.ws / ".cursor" / "rules" / "payments.mdc", AGENT_REQUESTED)
    plan = plan_of(cli)
    assert [(i["text"], i["destination"]) for i in plan["items"]] == [
        ("When relevant (Error handling for payment API routes): Return typed errors, never raw strings.", "memory"),
        ("When relevant (Error handling for payment API routes): Retries: Retry twice, then give up.", "memory"),
        ("# Example\n\nApplies when relevant: Error handling for payment API routes.\n\n```ts\nthrow new "
         "PaymentError('declined')\n```\n", "document")]
    assert plan["items"][0]["bareKey"] is not None  # the rule as the file has it is known too (no second import)
    cli.ok("import", "cursor")
    memory = (cli.runtime / "MEMORY.md").read_text("utf-8")
    assert "When relevant (Error handling for payment API routes): Return typed errors, never raw strings." in memory
    assert "\nReturn typed errors" not in memory and not memory.startswith("Return typed errors")
    again = plan_of(cli)
    assert not again["items"] and again["counts"]["alreadyImported"] == 3


def test_an_agent_requested_rule_without_always_apply_is_still_one(tmp_path):
    """``alwaysApply`` missing is ``false`` (Cursor writes it, a hand-written rule may not)."""
    cli = Cli(tmp_path)
    write(cli.ws / ".cursor" / "rules" / "sql.mdc", "---\ndescription: Writing SQL migrations\n---\n"
                                                     "- Every migration is reversible.\n")
    assert [i["text"] for i in plan_of(cli)["items"]] == [
        "When relevant (Writing SQL migrations): Every migration is reversible."]


def test_a_manual_rule_becomes_one_document_applied_only_when_asked_for(tmp_path):
    cli = Cli(tmp_path)
    write(cli.ws / ".cursor" / "rules" / "release-checklist.mdc", MANUAL)
    write(cli.ws / ".cursor" / "rules" / "empty.mdc", "---\nalwaysApply: false\n---\n\n")  # nothing to import
    plan = plan_of(cli)
    body = ("# release-checklist\n\nApplies only when asked for by name (@release-checklist): a Cursor manual rule, "
            "never applied by itself.\n\n# Release checklist\n\n- Bump the version.\n- Tag it.\n")
    assert [(i["name"], i["destination"], i["reason"], i["text"]) for i in plan["items"]] == [
        ("release-checklist", "document", "a Cursor manual rule (applied only when asked for by name, "
                                          "@release-checklist): a Document, read on request", body)]
    assert plan["counts"]["memory"] == plan["counts"]["user"] == 0
    cli.ok("import", "cursor")
    assert not (cli.runtime / "MEMORY.md").exists() or "Bump the version" not in (cli.runtime / "MEMORY.md").read_text()
    [doc] = json.loads(cli.ok("doc", "list", "--json"))["documents"]
    assert doc["title"] == "release-checklist"
    shown = json.loads(cli.ok("doc", "get", doc["id"], "--json"))
    assert "Applies only when asked for by name (@release-checklist)" in shown["content"]
    assert "- Bump the version.\n- Tag it." in shown["content"]


def test_always_globbed_and_front_matter_less_rules_are_as_before(tmp_path):
    cli = Cli(tmp_path)
    write(cli.ws / ".cursor" / "rules" / "a.mdc", "---\ndescription: Style\nalwaysApply: true\n---\n- Tabs.\n")
    write(cli.ws / ".cursor" / "rules" / "b.mdc", "---\ndescription: Go\nglobs: '*.go'\n---\n- Use gofmt.\n")
    write(cli.ws / ".cursor" / "rules" / "c.mdc", "- Keep functions short.\n")
    write(cli.ws / ".cursorrules", "- Answer briefly.\n")
    assert [i["text"] for i in plan_of(cli)["items"]] == [
        "Tabs.", "For *.go: Use gofmt.", "Keep functions short.", "Answer briefly."]


def test_relevance_text():
    from mnemon_ls.imports.reading import markdown_items, relevance_text

    assert relevance_text("Payments.") == "When relevant (Payments): "
    assert relevance_text("Payments", section=True) == "Applies when relevant: Payments."
    [item] = markdown_items("- Use tabs.\n", "/x/r.mdc", "Go", relevant="Go code")
    assert (item.text, item.extra) == ("When relevant (Go code): Use tabs.", {"bare": "Use tabs."})
    [scoped] = markdown_items("- Use tabs.\n", "/x/r.mdc", "Go", scope=("*.go",), relevant="Go code")
    assert scoped.text == "For *.go: Use tabs."


def test_front_matter_values_are_read_as_yaml_scalars(tmp_path):
    """``alwaysApply: true # always`` was read as not true (the comment kept in the value), so an Always rule became
    a Manual Document, never applied; a folded ``description: >`` titled the rule ``>``. A value is now a YAML
    scalar as rule files write one: a `` #`` comment dropped, a block scalar joined into one line, a quoted value up
    to its closing quote (a ``#`` inside kept)."""
    cli = Cli(tmp_path)
    write(cli.ws / ".cursor" / "rules" / "always.mdc", "---\ndescription: Style\nglobs:\nalwaysApply: true  # always\n"
                                                         "---\n- Use tabs.\n")
    write(cli.ws / ".cursor" / "rules" / "folded.mdc", "---\ndescription: >\n  Writing SQL\n  migrations\n"
                                                         "alwaysApply: false # requested\n---\n- Reversible.\n")
    write(cli.ws / ".cursor" / "rules" / "quoted.mdc", "---\ndescription: \"C# code # style\" # note\n---\n"
                                                         "- PascalCase.\n")
    assert sorted((i["text"], i["destination"]) for i in plan_of(cli)["items"]) == [
        ("Use tabs.", "memory"),
        ("When relevant (C# code # style): PascalCase.", "memory"),
        ("When relevant (Writing SQL migrations): Reversible.", "memory")]
