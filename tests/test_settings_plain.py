"""mnemon_ls.settings without pydantic: strict values, field-named errors for every setting (nested ones by their
dotted JSON name), the value semantics of the groups, and an import that loads neither pydantic nor typing
(``mnemon-ls hook prompt`` loads the settings at every prompt). The rules each setting had with pydantic are in
tests/test_settings_roots.py; this file covers what the plain declaration adds or words itself."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.settings import (DocumentsSettings, RuntimeMemorySettings, SemanticSettings, Settings,
                                load_settings)


def test_importing_the_settings_loads_neither_pydantic_nor_typing():
    code = ("import sys; import mnemon_ls.settings as s; s.load_settings({'recallMode': 'off'}); "
            "print([m for m in ('pydantic', 'typing') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": ":".join(p for p in sys.path if p)}).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("raw, field, rule", [
    ({"wakeBudgetChars": True}, "wakeBudgetChars", "must be an integer in 1024..4194304"),
    ({"wakeBudgetChars": 2048.0}, "wakeBudgetChars", "must be an integer in 1024..4194304"),
    ({"providerTimeoutMs": 99}, "providerTimeoutMs", "must be an integer in 100..600000 (milliseconds)"),
    ({"lifecycleEnabled": 1}, "lifecycleEnabled", "must be true or false"),
    ({"records": {"autoWriter": "yes"}}, "records.autoWriter", "must be true or false"),
    ({"documents": {"maxBodyBytes": 0}}, "documents.maxBodyBytes", "must be an integer in 1..67108864"),
    ({"semantic": {"enabled": "yes"}}, "semantic.enabled", 'must be true, false or "auto"'),
    ({"semantic": {"model": ""}}, "semantic.model", "must be a model name of 1..200 characters"),
    ({"semantic": {"endpoint": "ftp://x"}}, "semantic.endpoint", "must be an http:// or https:// URL without spaces"),
    ({"semantic": {"endpoint": "http://a b"}}, "semantic.endpoint", "must be an http:// or https:// URL without spaces"),
    ({"semantic": {"device": "gpu"}}, "semantic.device", "is not a known setting"),
    ({"runtimeMemory": 5}, "runtimeMemory", "must be an object"),
    ({"dataDir": 5}, "dataDir", "must be a string: an absolute path or one that starts with ~/"),
    ({"recallMode": None}, "recallMode", "must be one of guided, off"),
])
def test_a_bad_value_is_refused_naming_its_dotted_field(raw, field, rule):
    with pytest.raises(InvalidInput) as info:
        load_settings(raw)
    assert (info.value.field, info.value.rule.split(" (got ")[0]) == (field, rule)
    assert info.value.data["errors"][0]["field"] == field


def test_json_and_python_names_both_work_and_nested_groups_take_dicts_or_instances():
    by_alias = load_settings({"runtimeMemory": {"memoryLimitBytes": 20480}, "recallMode": "off"})
    by_name = Settings(runtime_memory=RuntimeMemorySettings(memory_limit_bytes=20480), recall_mode="off")
    assert by_alias == by_name and hash(by_alias) == hash(by_name)
    assert by_alias.runtime_memory.limit_for("memory") == 20480 and by_alias.documents == DocumentsSettings()
    assert Settings().semantic == SemanticSettings(enabled="auto")


def test_settings_are_frozen_and_with_overrides_revalidates():
    settings = load_settings({})
    with pytest.raises(AttributeError):
        settings.recall_mode = "off"  # type: ignore[misc]
    assert settings.with_overrides(recallMode="off", userLimitBytes=None).recall_mode == "off"
    with pytest.raises(InvalidInput) as info:
        settings.with_overrides(memoryLimitBytes=0)
    assert info.value.field == "runtimeMemory.memoryLimitBytes"


def test_model_dump_and_schema_use_the_json_names():
    dumped = load_settings({}).model_dump(by_alias=True)
    assert dumped["runtimeMemory"] == {"userLimitBytes": 4096, "memoryLimitBytes": 10240, "maintenance": "archive"}
    schema = Settings.model_json_schema(by_alias=True)
    assert schema["properties"]["runtimeMemory"] == {"$ref": "#/$defs/RuntimeMemorySettings"}
    assert schema["$defs"]["RuntimeMemorySettings"]["properties"]["userLimitBytes"] == {
        "default": 4096, "maximum": 1048576, "minimum": 1, "type": "integer"}
    assert list(schema["properties"]) == [s.alias for s in Settings.SETTINGS]
    assert {f.alias for f in Settings.model_fields.values()} >= {"storageScope", "semantic", "providerTimeoutMs"}
