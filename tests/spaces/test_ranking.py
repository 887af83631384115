"""Ranking that uses what the query says (issue 27 item 8), on real native stores (SQLite, the side index) with
keyword recall: the strict policy keeps the rows the ranking cannot tell from its best one (8a); the results of
one provider are ranked by score whatever found them (8b); a match on only a name or one common word is low
(8c); a time range in the query ranks the items of that range first (8d); Chinese question words do not dilute
what the question names. The fusion with vectors is tested in tests/semantic/test_fusion_order.py, the date
parser in tests/test_querytime.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mnemon_ls.spaces import RecallQuality, SpacesService
from mnemon_ls.spaces.index import TOKENIZER
from mnemon_ls.spaces.model import Item
from mnemon_ls.spaces.policy import HEAD_RATIO, plan, select
from mnemon_ls.spaces.providers.base import Capabilities, SearchOutcome
from mnemon_ls.spaces.querysense import COMMON_TERM_ITEMS, sense, weak_match

from tests.conftest import FrozenClock

STRICT_V1 = RecallQuality(policy="strict-v1")
EXHAUSTIVE = RecallQuality(policy="exhaustive-v1")


def picked(scores: list[Any], quality: RecallQuality = RecallQuality(), limit: int = 10):
    return select([(s, True) for s in scores], limit, quality, plan(limit, quality))


# --------------------------------------------------------------------------- the policy (8a)


def test_strict_v2_is_the_default_and_the_fallback() -> None:
    assert RecallQuality().policy == "strict-v2"
    chosen = plan(10, RecallQuality(policy="no-such-policy"))
    assert (chosen.policy.id, chosen.fallback_from) == ("strict-v2", "no-such-policy")


def test_strict_v2_keeps_every_row_the_ranking_cannot_tell_from_its_best_one() -> None:
    # seven medium rows within 0.9 of the best (facts tied on the words they share with the question), the
    # answer sixth; then a medium row further down and a low one
    scores = [0.40, 0.398, 0.395, 0.39, 0.385, 0.38, 0.37, 0.30, 0.2]
    v1, v2 = picked(scores, STRICT_V1), picked(scores)
    assert v1.indexes == [0, 1, 2, 3]  # strict-v1: four medium rows, the answer cut
    assert v2.indexes == [0, 1, 2, 3, 4, 5, 6, 7]  # the head, then one more medium (of at most four)
    assert [d.head for d in v2.decisions] == [True] * 7 + [False, False]
    assert v2.policy_id == "strict-v2" and 0.30 < HEAD_RATIO * 0.40


def test_strict_v2_keeps_a_low_row_of_the_head_and_nothing_when_the_best_is_low() -> None:
    near = picked([0.27, 0.245, 0.1])  # 0.245 is low, but within 0.9 of a medium best
    assert near.indexes == [0, 1] and near.decisions[1].tier == "low" and near.decisions[1].head
    assert picked([0.2, 0.19, 0.18]).indexes == []  # the best is low: no head, nothing sent
    assert picked([0.2, 0.19], RecallQuality(policy="balanced-v1")).indexes == [0, 1]  # a person's list


def test_strict_v2_caps_the_medium_rows_outside_the_head() -> None:
    got = picked([0.9] + [0.5] * 6 + [None] * 3)
    assert [got.decisions[i].tier for i in got.indexes] == ["high"] + ["medium"] * 4 + ["unknown"] * 2


# --------------------------------------------------------------------------- through a native store


@pytest.fixture
def service(root: Path, clock: FrozenClock) -> SpacesService:
    clock.set("2025-06-16T09:00:00Z")  # a Monday
    svc = SpacesService(root, clock=clock)
    svc.create_space("Project", "facts of this repository", active=True)
    yield svc
    svc.close()


def remember(service: SpacesService, clock: FrozenClock, texts: list[str], at: str = "2025-03-03T10:00:00Z") -> None:
    now = clock.now
    clock.set(at)
    for text in texts:
        assert service.remember(text).to_dict()["status"] == "committed"
    clock.now = now


def contents(result: Any) -> list[str]:
    return [r["content"] for r in result.to_dict()["results"]]


SEVEN = ["The badge stamper writes its output as gzipped CSV files.",
         "The badge stamper runs every fifteen minutes from a cron entry.",
         "The badge stamper stops after three consecutive failures and pages the owner.",
         "The badge stamper reads its settings from the shared TOML file.",
         "The badge stamper is written in Go and built with Bazel.",
         "The badge stamper skips weekends and public holidays.",
         "The badge stamper times out each call after eight seconds."]


def test_a_strict_recall_sends_every_fact_tied_with_the_best(service: SpacesService, clock: FrozenClock) -> None:
    remember(service, clock, SEVEN)
    question = "Why does the badge stamper fire twice?"  # seven facts tie on half of its words ("how often": 2 of 3)
    assert sorted(contents(service.recall(question))) == sorted(SEVEN)  # the default, strict-v2
    assert len(contents(service.recall(question, quality=STRICT_V1))) == 4  # the cap of four medium rows


def test_a_match_on_only_a_name_is_low(service: SpacesService, clock: FrozenClock) -> None:
    remember(service, clock, ["Kenji Watanabe maintains the runbook for the mobile release process.",
                              "Kenji Watanabe is our contact at the CDN vendor for the contract."])
    birthday = service.recall("When is Kenji Watanabe's birthday?", quality=EXHAUSTIVE).to_dict()["results"]
    assert len(birthday) == 2 and {r["tier"] for r in birthday} == {"low"}
    assert service.recall("When is Kenji Watanabe's birthday?").to_dict()["results"] == []
    about = service.recall("What do we know about Kenji Watanabe?").to_dict()["results"]  # asking words only
    assert len(about) == 2 and {r["tier"] for r in about} == {"high"}
    # Chinese: a rare pair starting with a common surname is taken for a name
    remember(service, clock, ["吴昊更喜欢异步的代码评审，不爱开会。"])
    [chinese] = service.recall("吴昊的生日是哪天？", quality=EXHAUSTIVE).to_dict()["results"]
    assert chinese["tier"] == "low"
    assert service.recall("吴昊", quality=EXHAUSTIVE).to_dict()["results"][0]["tier"] == "high"


def test_a_match_that_misses_the_person_asked_about_is_low(service: SpacesService, clock: FrozenClock) -> None:
    remember(service, clock, ["Priya Raman owns the release train for the mobile apps.",
                              "Status of the warehouse move: the go-live checklist has four open items.",
                              "移动端后台的告警发到值班手机。"])
    # "live" of the question is held by the go-live note, which says nothing of Priya Raman
    [go_live] = service.recall("Where does Priya Raman live?", quality=EXHAUSTIVE).to_dict()["results"][1:]
    assert go_live["content"].startswith("Status of the warehouse move") and go_live["tier"] == "low"
    assert service.recall("Where does Priya Raman live?").to_dict()["results"] == []  # her note is name-only too
    assert service.recall("黄涛的手机号是多少？").to_dict()["results"] == []  # 手机 alone, 黄涛 is no item's
    [phone] = service.recall("黄涛的手机号是多少？", quality=EXHAUSTIVE).to_dict()["results"]
    assert phone["tier"] == "low"
    # one capitalised word is not a person: the same go-live match keeps its label
    remember(service, clock, ["Android builds are signed on the release machine."])
    results = service.recall("Where does Android live?", quality=EXHAUSTIVE).to_dict()["results"]
    [go_live] = [r for r in results if r["content"].startswith("Status of the warehouse move")]
    assert go_live["tier"] == "medium"


def test_a_question_about_a_name_no_item_holds_is_low_unless_only_the_name_is_missing(
        service: SpacesService, clock: FrozenClock) -> None:
    remember(service, clock, ["预发环境的访问权限要向安全组提工单申请", "Ingress 的证书由平台组统一配置",
                              "Configure the ingress with the nginx controller and one TLS secret per host.",
                              "密钥每季度由定时流水线轮换一次"])
    # an acronym is a name too: no item names a VPN, so "rotated once" is no answer to its password
    [rotation] = service.recall("VPN 密码多久轮换一次？", quality=EXHAUSTIVE).to_dict()["results"]
    assert rotation["tier"] == "low" and service.recall("VPN 密码多久轮换一次？").to_dict()["results"] == []
    # no item names Kubernetes: what the staging items hold is not an answer
    staging = service.recall("预发环境的 Kubernetes Ingress 怎么配置？", quality=EXHAUSTIVE).to_dict()["results"]
    assert any(r["content"].startswith("预发环境") for r in staging)
    assert {r["tier"] for r in staging if r["content"].startswith("预发环境")} == {"low"}
    # an item that holds most of the question keeps its label, an unknown qualifier or not
    remember(service, clock, ["The staging database password is rotated every 30 days by the platform team."])
    [staging_db] = service.recall("Who rotates the SSO staging database password?").to_dict()["results"]
    assert staging_db["content"].startswith("The staging database password") and staging_db["tier"] != "low"
    # an item that lacks only the unknown name (it may be a typo) is not weakened
    [first, *_] = service.recall("How do I configure Kuberntes ingress?", quality=EXHAUSTIVE).to_dict()["results"]
    assert first["content"].startswith("Configure the ingress") and first["tier"] != "low"


def test_a_match_on_one_common_word_is_low_and_on_one_rare_word_is_not(service: SpacesService,
                                                                        clock: FrozenClock) -> None:
    teams = [f"The service number {n} is owned by the team of floor {n}." for n in range(COMMON_TERM_ITEMS + 1)]
    remember(service, clock, [*teams, "The heliotrope dashboard shows the deploy queue."])
    common = service.recall("Which team knits scarves for charity?", limit=20, quality=EXHAUSTIVE).to_dict()["results"]
    assert len(common) == COMMON_TERM_ITEMS + 1 and {r["tier"] for r in common} == {"low"}
    assert service.recall("Which team knits scarves for charity?").to_dict()["results"] == []
    [rare] = service.recall("heliotrope scarves", quality=EXHAUSTIVE).to_dict()["results"]
    assert rare["tier"] == "medium"  # one word of two, but a word only this item holds


def test_a_near_miss_of_a_stored_identifier_is_low(service: SpacesService, clock: FrozenClock) -> None:
    # the new user: "OPS-105" labelled nine other tickets "0.78 high" (they share only OPS) and sent them on
    remember(service, clock, [f"Ticket OPS-{n}: service {n} needs a restart after deploys." for n in range(100, 115)])
    found = service.recall("OPS-105", limit=12, quality=EXHAUSTIVE).to_dict()["results"]
    assert found[0]["content"].startswith("Ticket OPS-105:") and found[0]["tier"] == "high"
    assert len(found) > 1 and {r["tier"] for r in found[1:]} == {"low"}
    assert contents(service.recall("OPS-105")) == ["Ticket OPS-105: service 105 needs a restart after deploys."]
    # no ticket is OPS-999: what holds a part of it is all there is, and is not pushed down
    missing = service.recall("OPS-999", limit=12, quality=EXHAUSTIVE).to_dict()["results"]
    assert missing and "low" not in {r["tier"] for r in missing}


def test_chinese_question_words_do_not_dilute_what_the_question_names(service: SpacesService,
                                                                         clock: FrozenClock) -> None:
    remember(service, clock, ["parse_message_v3 是接口处理函数实际调用的版本。", "parse_message_v2 只在迁移脚本里使用。"])
    [first, *_] = service.recall("parse_message_v3 是干什么的？").to_dict()["results"]  # it names nothing else
    assert first["content"].startswith("parse_message_v3 ") and first["tier"] == "high"
    [first, *_] = service.recall("parse_message_v3 有什么需要注意的？").to_dict()["results"]  # 需要 is kept
    assert first["content"].startswith("parse_message_v3 ") and first["tier"] == "medium"  # was low (0.12)


def test_a_time_range_in_the_query_ranks_the_items_of_the_range_first(service: SpacesService,
                                                                       clock: FrozenClock) -> None:
    notes = {"2025-03-12T10:00:00Z": "Status of the payments migration: the prototype handled real traffic.",
             "2025-04-08T10:00:00Z": "Status of the payments migration: the old path now serves only reads.",
             "2025-05-21T10:00:00Z": "Status of the payments migration: performance matched the old system.",
             "2025-06-11T10:00:00Z": "Status of the payments migration: a pilot group of customers started.",
             "2025-06-15T10:00:00Z": "Status of the payments migration: the checklist has four open items."}
    for at, text in notes.items():
        remember(service, clock, [text], at=at)
    for question, expected in (("What was the status of the payments migration in April 2025?", ["04-08"]),
                               ("How did the payments migration stand yesterday?", ["06-15"]),
                               ("What was noted about the payments migration last week?", ["06-11", "06-15"]),
                               ("上周 payments migration 的状态", ["06-11", "06-15"])):
        results = service.recall(question).to_dict()["results"]
        first = results[:len(expected)]
        assert sorted(r["content"] for r in first) == sorted(notes[f"2025-{d}T10:00:00Z"] for d in expected), question
        assert min(r["score"] for r in first) > results[len(expected)]["score"], question
    # the date words are not searched as words, and a question naming only a range finds what is in it
    assert contents(service.recall("what happened yesterday", quality=EXHAUSTIVE))[0] == notes["2025-06-15T10:00:00Z"]
    # outside the range named: medium at most, whatever its words
    assert {r["tier"] for r in service.recall("payments migration in 2023").to_dict()["results"]} == {"medium"}


def test_sense_drops_date_phrases_and_asking_words_and_finds_names() -> None:
    got = sense("What do we know about Priya Raman in April 2025?", TOKENIZER, FrozenClock()())
    assert [t.text for t in got.terms] == ["priya", "raman"] and got.names == {0, 1} and got.groups == 2
    assert got.when is not None and got.when.start.month == 4
    assert [t.text for t in sense("parse_message_v3 是干什么的？", TOKENIZER, None).terms][0] == "parse_message_v3"
    assert sense("是什么", TOKENIZER, None).terms  # nothing else left: the terms are kept as they were
    # "how often", "how long", "how much" ask for a kind of answer: their second word is not a term
    for asked, rest in (("How often does the cache refresh?", ["cache", "refresh"]),
                        ("how LONG is the session timeout", ["session", "timeout"]), ("how much memory", ["memory"])):
        assert [t.text for t in sense(asked, TOKENIZER, None).terms] == rest, asked
    kept = ["long", "run", "often", "fails"]  # not after "how"
    assert [t.text for t in sense("the long run often fails", TOKENIZER, None).terms] == kept
    assert [t.text for t in sense("how often", TOKENIZER, None).terms] == ["often"]  # nothing else: kept
    # weak_match: only names with something else asked; one common term; one rare term by its whole word
    kenji = sense("When is Kenji Watanabe's birthday?", TOKENIZER, None)
    assert weak_match([0, 1], True, kenji, {}) and not weak_match([0, 1, 2], True, kenji, {})
    team = sense("Which team knits scarves?", TOKENIZER, None)
    assert weak_match([0], True, team, {0: COMMON_TERM_ITEMS + 1}) and not weak_match([0], True, team, {0: 2})
    assert weak_match([0], False, team, {0: 2})  # held by a part of an identifier only
    # one group of a question whose other groups no item holds: about something not stored
    byzantine = sense("history of the Byzantine empire", TOKENIZER, None)
    assert byzantine.groups == 3
    assert weak_match([0], True, byzantine, {0: 5, 1: 0, 2: 0})
    eastern = sense("history of the eastern empire", TOKENIZER, None)  # no name in it
    assert not weak_match([0], True, eastern, {0: 5, 1: 0, 2: 3})  # another group is held somewhere
    assert weak_match([0], True, byzantine, {0: 5, 1: 0, 2: 3})  # ... but Byzantine is a name no item holds
    assert not weak_match([0], True, byzantine, {0: 5})  # absent counts are not taken for zero
    typo = sense("deploy the sevrice", TOKENIZER, None)  # one group no item holds: maybe a typo, not weak
    assert typo.groups == 2 and not weak_match([0], True, typo, {0: 3, 1: 0})
    # a person's full name is two names in a row; weekdays and months are no names
    priya = sense("Where does Priya Raman live?", TOKENIZER, None)
    assert [t.text for t in priya.terms] == ["priya", "raman", "live"] and priya.people == {0, 1}
    assert weak_match([2], True, priya, {0: 1, 1: 1, 2: 4}) and not weak_match([0, 2], True, priya, {0: 1, 1: 1, 2: 4})
    product = sense("How do we configure Kubernetes?", TOKENIZER, None)
    assert product.names and not product.people and not weak_match([0], True, product, {0: 4, 1: 3})
    assert not sense("Does the stamper run on Saturdays in April?", TOKENIZER, None).names
    # a name no item holds, with another group the item lacks: weak; lacking only that name: not weak
    unknown = sense("configure Kubernetes ingress", TOKENIZER, None)
    assert unknown.names == {1}
    assert weak_match([2], True, unknown, {0: 3, 1: 0, 2: 2})
    assert not weak_match([0, 2], True, unknown, {0: 3, 1: 0, 2: 2})
    assert not weak_match([2], True, unknown, {0: 3, 2: 2})  # a count not given is not taken for zero
    vpn = sense("rotate the VPN password", TOKENIZER, None)
    assert vpn.acronyms == {1} and not vpn.names and weak_match([0], True, vpn, {0: 2, 1: 0, 2: 1})
    sso = sense("who rotates the SSO staging database password", TOKENIZER, None)  # 5 groups, 3 held
    assert sso.groups == 5 and not weak_match([2, 3, 4], True, sso, {0: 0, 1: 0, 2: 3, 3: 3, 4: 3})
    assert weak_match([2, 3], True, sso, {0: 0, 1: 0, 2: 3, 3: 3, 4: 3})  # 2 of 5 held: weak


def test_weak_match_on_a_chinese_phrase_the_space_does_not_know() -> None:
    # the phrases: runs of the query's pairs, cut where a question character or pair was dropped (多久 asks)
    mirror = sense("代码镜像多久同步一次？", TOKENIZER, None)
    assert [t.text for t in mirror.terms] == ["代码", "码镜", "镜像", "像多", "久同", "同步", "步一", "一次"]
    assert mirror.phrases == ((0, 1, 2, 3), (4, 5, 6, 7))
    emulator = sense("持续集成里怎么跑安卓模拟器？", TOKENIZER, None)
    assert emulator.phrases == ((0, 1, 2, 3), (4, 5, 6, 7, 8))
    assert sense("Grafana 看板的命名规则是什么？", TOKENIZER, None).phrases == ((1,), (2, 3, 4))
    # a phrase no item holds a pair of is a word the space does not know: an item holding the rest is weak
    ci = {0: 10, 1: 10, 2: 15, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0, 8: 0}
    assert weak_match([0, 1, 2], True, emulator, ci)
    assert not weak_match([0, 1, 2], True, emulator, {**ci, 7: 1})  # a pair of it is held: the words are known
    assert not weak_match([0, 1, 2], True, emulator, {0: 10, 1: 10, 2: 15})  # counts not given are not zero
    # the topic (the phrase the question opens with) written nowhere whole, and the item holds none of it
    sync = {0: 17, 1: 0, 2: 10, 3: 0, 4: 0, 5: 26, 6: 1, 7: 39}
    assert weak_match([5, 6, 7], True, mirror, sync)
    assert not weak_match([0, 2, 5, 6, 7], True, mirror, sync)  # more than half of the query held
    assert not weak_match([5, 6, 7], True, mirror, {**sync, 1: 2, 3: 1})  # the topic is written somewhere
    # a later phrase written nowhere whole is not the topic: the item holding the topic is not weak
    width = sense("搜索模块的单行长度上限是多少？", TOKENIZER, None)
    assert width.phrases == ((0, 1, 2), (3, 4, 5, 6, 7))
    assert not weak_match([0, 1, 2], True, width, {0: 53, 1: 15, 2: 31, 3: 0, 4: 0, 5: 0, 6: 0, 7: 1})
    # a phrase of two pairs may be one word and the question word's last character: not taken as unknown
    version = sense("数据库是哪个版本？", TOKENIZER, None)
    assert [t.text for t in version.terms] == ["数据", "据库", "个版", "版本"] and version.phrases == ((0, 1), (2, 3))
    assert not weak_match([0, 1], True, version, {0: 3, 1: 3, 2: 0, 3: 0})


# --------------------------------------------------------------------------- one provider: by score (8b)


class _Answers:
    """A third-party space answering fixed items (a real implementation of the provider protocol)."""

    provider_id = "holographic"
    capabilities = Capabilities(normalized_scores=True)

    def __init__(self, items: list[Item]) -> None:
        self.items = items

    def search(self, query, *, limit, mode="smart", category=None, source=None, intent=None, keep=None):
        return SearchOutcome(self.items[:limit], None, fetched=len(self.items))

    def count(self):
        return len(self.items)

    def close(self):
        pass


def test_one_providers_results_are_ranked_by_score_whatever_found_them(service: SpacesService) -> None:
    service.configure_provider("holographic", {}, enabled=True)
    [other] = service.registry.provider_plane.sync_namespaces("holographic", [{"externalId": "ops"}])
    service.activate(other.id)
    service._providers[other.id] = _Answers([
        Item("k", "a word match sharing one word", score=0.3, matched_via="holographic"),
        Item("v", "found by meaning, scoring higher", score=0.5, matched_via="holographic-vector")])
    result = service.recall("anything", spaces=[other.id], quality=EXHAUSTIVE).to_dict()
    assert [r["id"] for r in result["results"]] == ["v", "k"]  # was ["k", "v"]: every word match first
    for_assistant = service.recall("anything", spaces=[other.id], audience="assistant").to_dict()
    assert [r["id"] for r in for_assistant["results"]] == ["v", "k"] and for_assistant["withheld"] == {
        "lowConfidence": 0}
