"""The fixed lists of the retrieval set's cases for issue 27 item 8 (bench/retrieval_set.py draws them with a
generator of its own, after every other part, so the first 2,232 memories and 410 queries stay as they were):

- ``crowded`` (item 8a): ten made-up components per language with seven facts each; the question names the
  component and asks for one fact in other words, so its answer is one of seven items that tie on the words
  they share with it (all *medium*): a policy that sends four medium results cuts the answer about half the
  time although the ranking has it in its top ten.
- ``meaning`` (item 8b): a fact and a question that share no indexed term, while some of the question's words
  are held by more than ten other memories: found by meaning alone, among many keyword matches.
- ``one-term`` (item 8c): questions nothing answers that share exactly one term with the stored memories, a
  word more than ten of them hold.
- ``dated`` (item 8d): weekly status notes of four projects per language, whose text has no date; questions
  name a month ("in April 2025", "2025年4月"), a year ("in 2024", "2024年"), "yesterday", "last week" (昨天,
  上周), relative to the set's clock (``retrieval_set.NOW``, Monday 2025-06-16).

tests/bench/test_retrieval_set.py checks what each promises (ties, shared terms, no shared terms, ranges).
"""

from __future__ import annotations

# ------------------------------------------------------------------ crowded (item 8a)

EN_CROWDED_COMPONENTS = ["badge stamper", "payout batcher", "carrier poller", "receipt minter", "locale loader",
                         "banner rotator", "parcel weigher", "kiosk syncer", "glossary compiler", "tariff ticker"]
#: (fact about {s}, a question about it with {s} that shares no other term with any fact of this list)
EN_CROWDED_FACTS = [
    ("The {s} writes its output as gzipped CSV files.", "What format does the {s} produce?"),
    ("The {s} runs every fifteen minutes from a cron entry.", "How often does the {s} fire?"),
    ("The {s} stops after three consecutive failures and pages the owner.",
     "What happens when the {s} fails repeatedly?"),
    ("The {s} reads its settings from the shared TOML file.", "Where does the {s} get configured?"),
    ("The {s} is written in Go and built with Bazel.", "Which language and build tooling is the {s} made with?"),
    ("The {s} holds a lock in Postgres so only one copy works at a time.",
     "Can two instances of the {s} be active together?"),
    ("The {s} sends its metrics to Prometheus under the batch namespace.",
     "Where can I see numbers about the {s}?"),
    ("The {s} was added in 2023 to replace a manual spreadsheet.", "Why did we build the {s} originally?"),
    ("The {s} skips weekends and public holidays.", "Does the {s} work on Saturdays?"),
    ("The {s} logs every decision with a correlation id.",
     "How can I trace what the {s} did for a particular request?"),
    ("The {s} has an integration test suite that needs Docker.",
     "What must be installed to check the {s} locally?"),
    ("The {s} times out each call after eight seconds.", "How long does the {s} wait before giving up?"),
    ("The {s} keeps thirty days of history and deletes older rows.", "How far back does the {s} remember?"),
    ("The {s} is deployed as a single replica in the EU region.", "How many instances of the {s} exist?"),
]
ZH_CROWDED_COMPONENTS = ["徽章盖印器", "打款批处理器", "承运商轮询器", "收据铸造器", "语言包加载器", "横幅轮播器",
                         "包裹称重器", "自助机同步器", "术语表编译器", "关税计价器"]
ZH_CROWDED_FACTS = [
    ("{s}输出 gzip 压缩的 CSV 文件。", "{s}产出的结果是什么格式？"),
    ("{s}由 cron 每十五分钟触发一次。", "{s}多久跑一回？"),
    ("{s}连续失败三次就停下并呼叫负责人。", "{s}老是出错会怎样？"),
    ("{s}从共享的 TOML 文件读取设置。", "{s}在哪儿改参数？"),
    ("{s}用 Go 编写，用 Bazel 构建。", "{s}是拿什么语言和工具做的？"),
    ("{s}在 Postgres 里加锁，同一时间只有一个副本工作。", "{s}能不能两个实例并行？"),
    ("{s}把指标发到 Prometheus 的批处理命名空间。", "{s}的运行数字在哪看？"),
    ("{s}是二零二三年为了替代手工表格而加的。", "当初为何要做{s}？"),
    ("{s}周末和法定假日不运行。", "{s}星期六干活吗？"),
    ("{s}给每个决策记一条带关联编号的日志。", "怎么追查{s}对某个请求做了啥？"),
    ("{s}跑集成测试要用 Docker。", "本地检查{s}得先装好什么？"),
    ("{s}每次调用八秒超时。", "{s}最多等多长时间就放弃？"),
    ("{s}保留三十天历史，更早的行会删掉。", "{s}能往回查多远？"),
    ("{s}在欧盟区域只部署一个副本。", "{s}一共有几个实例？"),
]

# ------------------------------------------------------------------ meaning among keyword matches (item 8b)

#: (fact, question): no indexed term in common; the question holds words many other memories hold
EN_MEANING = [
    ("Nightly backups of the ledger land in a bucket in Frankfurt",
     "Where does each service keep its data copies overnight?"),
    ("Access to staging is granted through a ticket to the security desk",
     "How does a new team member get into the test environment?"),
    ("Releases are frozen from mid December until the second week of January",
     "When can the mobile team not ship anything around the holidays?"),
    ("Interns may not approve changes to production firewalls",
     "Which service team members are forbidden to sign off network rules?"),
    ("Customer exports above one gigabyte are emailed as a download link",
     "What does the API do with very large data dumps requested by clients?"),
    ("Every quarter somebody rehearses restoring the billing replica from scratch",
     "How often do we practise disaster recovery for the database?"),
    ("Only two people hold the root password of the cloud account",
     "Which team members have full admin power over our hosting?"),
    ("Third-party fonts are self-hosted because of privacy rules",
     "Why does the web app not load typefaces from a public CDN service?"),
    ("Load spikes on Black Friday are handled by pre-warming twice the usual capacity",
     "How does the API service cope with the biggest shopping day of the year?"),
    ("Office wifi blocks outbound SMTP, so mail tests use a sandbox relay",
     "Why do email checks from the team laptops fail unless they go elsewhere?"),
]
ZH_MEANING = [
    ("账本每晚的备份放在法兰克福的存储桶里", "各个服务夜里把数据副本存到哪儿？"),
    ("预发环境的访问权限要向安全组提工单申请", "新来的团队成员怎样拿到测试服务器的账号？"),
    ("十二月中旬到一月第二周之间冻结上线", "假期前后移动端什么时候不能发布？"),
    ("实习生不能批准生产防火墙的改动", "哪些服务团队成员不可以签核网络规则？"),
    ("超过一个吉字节的客户导出改成邮件发下载链接", "用户要特别大的数据时接口怎么处理？"),
    ("每季度有人演练从零恢复计费副本", "数据库的灾备多久练一次？"),
    ("只有两个人知道云账号的根密码", "哪几位团队成员拥有托管平台的全部管理权限？"),
    ("第三方字体自行托管，原因是隐私规定", "网页端为什么不从公共 CDN 服务加载字型？"),
    ("黑色星期五的流量高峰靠提前预热两倍容量应对", "接口服务怎么扛住一年里购物最多的那天？"),
    ("办公室无线网封了对外的 SMTP，所以邮件测试走沙箱中继", "团队笔记本上的发信检查为何总是失败？"),
]

# ------------------------------------------------------------------ one common term (item 8c)

#: questions nothing answers that share one term (a common one) with the memories
EN_ONE_TERM = [
    "Which team knits scarves for charity?", "What colour is the service mascot?",
    "Who organises the mobile hackathon dinner?", "What did the customer choir sing at the picnic?",
    "Which cache of snacks is in the kitchen cupboard?", "Where is the queue for the coffee machine?",
    "Is there a database of canteen recipes?", "What plants decorate the tests corner?",
    "Who painted the mural near the API floor?", "When does the staging orchestra rehearse?",
]
ZH_ONE_TERM = [
    "哪个团队下象棋最厉害？", "服务吉祥物是什么颜色？", "谁组织团队黑客松的晚餐？", "客户合唱团在年会上唱了哪首歌？",
    "厨房柜子缓存零食有哪些？", "咖啡机旁边那本日志归谁？", "食堂哪本数据菜谱最受欢迎？", "测试实验室的天花板多高？",
    "接口楼层旁边的壁画是谁画的？", "那只猫最爱哪项任务？",
]

# ------------------------------------------------------------------ dated status notes (item 8d)

#: (English name, Chinese name) of the projects
DATED_PROJECTS = [("payments migration", "支付迁移"), ("search rewrite", "搜索重构"),
                  ("mobile relaunch", "移动端改版"), ("warehouse move", "仓库搬迁")]
#: the days of the notes (every project has one on each; the set's clock is Monday 2025-06-16)
DATED_DAYS = ["2024-02-14", "2024-07-09", "2024-11-20", "2025-01-15", "2025-03-12", "2025-04-08", "2025-04-23",
              "2025-05-21", "2025-06-04", "2025-06-11", "2025-06-15"]
EN_DATED_NOTES = [
    "scope agreed and the first owner assigned", "the prototype handled a tenth of real traffic",
    "the second phase slipped by two weeks", "half of the tenants switched over without incident",
    "a rollback drill took eleven minutes", "the old path now serves only read requests",
    "the vendor contract was signed for three years", "performance matched the old system at peak",
    "the last blocker is a missing export format", "a pilot group of twenty customers started",
    "the go-live checklist has four open items"]
ZH_DATED_NOTES = [
    "范围已经确定，第一位负责人到位", "原型扛住了十分之一的真实流量", "第二阶段推迟了两周", "一半租户已平稳切换",
    "回滚演练用了十一分钟", "旧链路现在只处理读请求", "供应商合同签了三年", "高峰期性能与旧系统持平",
    "最后一个阻碍是缺少一种导出格式", "二十位客户组成的试点组已经开始", "上线检查单还有四项未完成"]
#: (English question with {p}, Chinese question with {p}, [start, end) dates): the range each names
DATED_QUESTIONS = [
    ("What was the status of the {p} in April 2025?", "2025年4月{p}的状态怎么样？", "2025-04-01", "2025-05-01"),
    ("How did the {p} stand yesterday?", "昨天{p}的状态怎么样？", "2025-06-15", "2025-06-16"),
    ("What was noted about the {p} last week?", "上周{p}记录了什么？", "2025-06-09", "2025-06-16"),
    ("What happened with the {p} in 2024?", "2024年{p}有哪些状态？", "2024-01-01", "2025-01-01"),
]
