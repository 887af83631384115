"""The shared refusals of third-party spaces without a related walk, links or merge
(:class:`mnemon_ls.spaces.providers.base.NoGraphNoMerge`, used by providers/mem0, hindsight, postgres and
holographic)."""

from __future__ import annotations

import pytest

from mnemon_ls.errors import SpaceRefused
from mnemon_ls.spaces.providers.base import NoGraphNoMerge


class Engine(NoGraphNoMerge):
    engine_label = "Example"

    def __init__(self) -> None:
        self.space_id = "example-1"


@pytest.mark.parametrize("call, reason, message", [
    (lambda s: s.related("a"), "related", "Example spaces have no related walk"),
    (lambda s: s.link("a", "b"), "link", "Example spaces cannot link items"),
    (lambda s: s.export_items(), "merge", "merge is Mnemon-native only"),
    (lambda s: s.import_items([]), "merge", "merge is Mnemon-native only"),
])
def test_each_refusal_names_the_engine_the_space_and_the_reason(call, reason: str, message: str) -> None:
    with pytest.raises(SpaceRefused) as refused:
        call(Engine())
    assert refused.value.data["reason"] == reason and refused.value.data["spaceId"] == "example-1"
    assert message in refused.value.message
