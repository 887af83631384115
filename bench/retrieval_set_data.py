"""The fixed lists bench/retrieval_set.py draws the retrieval-quality set from (issue 27 item 7): templates and
facts of a software project in English and Chinese, by category. Changing any of them changes the committed set
(``python bench/retrieval_set.py`` rewrites it; tests/bench/test_retrieval_set.py compares)."""

from __future__ import annotations

# ------------------------------------------------------------------ decisions (components x topics)

EN_COMPONENTS = ["billing service", "order service", "search service", "notification worker", "admin dashboard",
                 "inventory API", "checkout frontend", "reporting pipeline", "auth gateway", "mobile backend"]
EN_TOPICS = [
    ("message broker", ["RabbitMQ", "Kafka", "NATS", "Amazon SQS"]),
    ("primary database", ["PostgreSQL", "MySQL", "CockroachDB", "SQLite"]),
    ("web framework", ["FastAPI", "Flask", "Django", "Starlette"]),
    ("test runner", ["pytest", "unittest", "Vitest", "Jest"]),
    ("logging library", ["structlog", "loguru", "the standard logging module", "pino"]),
    ("feature flag tool", ["LaunchDarkly", "Unleash", "a flags table in Postgres", "GrowthBook"]),
    ("cache", ["Redis", "Memcached", "an in-process LRU cache", "Valkey"]),
    ("CI system", ["GitHub Actions", "GitLab CI", "Buildkite", "CircleCI"]),
    ("container base image", ["Debian slim", "Alpine", "distroless", "Ubuntu 22.04"]),
    ("wire format", ["JSON", "MessagePack", "Protocol Buffers", "Avro"]),
    ("background job runner", ["Celery", "RQ", "Dramatiq", "Temporal"]),
    ("secrets manager", ["HashiCorp Vault", "AWS Secrets Manager", "SOPS-encrypted files", "Doppler"]),
    ("HTTP client", ["httpx", "requests", "aiohttp", "urllib3"]),
    ("API style", ["REST", "GraphQL", "gRPC", "JSON-RPC"]),
    ("error tracker", ["Sentry", "Rollbar", "Bugsnag", "Honeybadger"]),
]
EN_REASONS = ["because the team already runs it in production", "after it won the latency comparison in our load test",
              "to keep the number of moving parts small", "because the platform team supports it",
              "since the license of the alternative was too expensive",
              "because it has the best documentation of the candidates",
              "after the spike showed it copes with peak traffic", "because it works offline in local development"]
EN_DECISION_QUERIES = ["Which {t} did we choose for the {c}?", "What {t} does the {c} use?",
                       "{t} decision for the {c}"]
ZH_COMPONENTS = ["计费服务", "订单服务", "搜索服务", "通知进程", "管理后台", "库存接口", "结算前端", "报表流水线",
                 "鉴权网关", "移动端后台"]
ZH_TOPICS = [
    ("消息中间件", ["RabbitMQ", "Kafka", "NATS", "Amazon SQS"]),
    ("主数据库", ["PostgreSQL", "MySQL", "TiDB", "SQLite"]),
    ("Web 框架", ["FastAPI", "Flask", "Django", "Gin"]),
    ("测试框架", ["pytest", "unittest", "Vitest", "Jest"]),
    ("日志库", ["structlog", "loguru", "标准库 logging", "zap"]),
    ("功能开关工具", ["LaunchDarkly", "Unleash", "Postgres 里的开关表", "GrowthBook"]),
    ("缓存", ["Redis", "Memcached", "进程内 LRU 缓存", "Valkey"]),
    ("持续集成系统", ["GitHub Actions", "GitLab CI", "Jenkins", "Buildkite"]),
    ("容器基础镜像", ["Debian slim", "Alpine", "distroless", "Ubuntu 22.04"]),
    ("序列化格式", ["JSON", "MessagePack", "Protocol Buffers", "Avro"]),
    ("后台任务框架", ["Celery", "RQ", "Dramatiq", "Temporal"]),
    ("密钥管理", ["HashiCorp Vault", "阿里云 KMS", "SOPS 加密文件", "Doppler"]),
    ("HTTP 客户端", ["httpx", "requests", "aiohttp", "urllib3"]),
    ("接口风格", ["REST", "GraphQL", "gRPC", "JSON-RPC"]),
    ("错误追踪平台", ["Sentry", "Rollbar", "Bugsnag", "自建告警平台"]),
]
ZH_REASONS = ["因为团队已经在生产环境用过它", "压测中它的延迟最低", "为了减少需要维护的组件", "因为平台组负责支持它",
              "另一个方案的授权费用太高", "它的文档在候选方案里最完整", "预研证明它扛得住高峰流量",
              "本地开发时可以离线使用"]
ZH_DECISION_QUERIES = ["{c}的{t}最后选了哪个？", "{c}用的是什么{t}？", "{c}{t}的选型"]

# ------------------------------------------------------------------ conventions (modules x rules)

EN_MODULES = ["payments module", "search module", "web app", "data pipeline", "infra repo", "mobile app",
              "admin tool", "notifications package", "public API", "analytics jobs"]
EN_RULES = [
    ("lines are limited to {v} characters", ["79", "88", "100", "120"], "What is the maximum line length in the {m}?"),
    ("test files are named {v}", ["test_<module>.py", "<module>_test.py", "<module>.spec.ts", "<module>.test.ts"],
     "How are test files named in the {m}?"),
    ("JSON keys are written in {v}", ["snake_case", "camelCase", "kebab-case", "PascalCase"],
     "Which case do JSON keys use in the {m}?"),
    ("timestamps in payloads are {v}", ["ISO 8601 strings in UTC", "Unix epoch milliseconds", "Unix epoch seconds",
                                        "RFC 3339 strings with an offset"],
     "How are timestamps encoded in payloads of the {m}?"),
    ("money amounts are stored as {v}", ["integer cents", "decimal strings", "minor units plus a currency code",
                                         "Decimal objects, never floats"], "How do we store money amounts in the {m}?"),
    ("commit messages follow {v}", ["Conventional Commits", "the ticket number first",
                                    "an imperative subject under 50 characters", "the gitmoji style"],
     "What commit message style does the {m} follow?"),
    ("imports are ordered by {v}", ["isort with the black profile", "ruff's import rules", "the IDE's organise imports",
                                    "eslint-plugin-import"], "What orders imports in the {m}?"),
    ("errors returned to clients use {v}", ["application/problem+json", "a code and message envelope",
                                            "plain text bodies", "GraphQL error extensions"],
     "What format do client errors use in the {m}?"),
    ("new records get {v} as primary keys", ["ULIDs", "UUIDv7", "auto-increment integers", "Snowflake ids"],
     "What kind of primary key do new records get in the {m}?"),
    ("a pull request needs {v} before merging", ["one approval", "two approvals", "a code owner's approval",
                                                 "a green build and one approval"],
     "How many approvals does a pull request need in the {m}?"),
    ("branches are {v}", ["rebased onto main", "squash-merged", "merged with a merge commit", "fast-forwarded only"],
     "How are branches integrated in the {m}?"),
    ("log lines are written as {v}", ["JSON objects", "logfmt pairs", "plain text", "OpenTelemetry records"],
     "In which format are log lines written in the {m}?"),
    ("configuration comes from {v}", ["environment variables", "a TOML file", "the settings service",
                                      "a YAML file per environment"],
     "Where does the {m} read its configuration from?"),
    ("public functions need {v}", ["a docstring with the units of every argument", "type hints and a docstring",
                                   "a usage example in the docstring", "a unit test in the same pull request"],
     "What must every public function have in the {m}?"),
    ("dependencies are pinned with {v}", ["a lock file", "exact versions in requirements.txt",
                                          "Renovate pull requests", "hash-checked constraints"],
     "How are dependencies pinned in the {m}?"),
]
ZH_MODULES = ["支付模块", "搜索模块", "网页端", "数据管道", "基础设施仓库", "移动端应用", "运营工具", "通知组件", "开放接口",
              "分析任务"]
ZH_RULES = [
    ("每行不超过 {v} 个字符", ["79", "88", "100", "120"], "{m}的单行长度上限是多少？"),
    ("测试文件命名为 {v}", ["test_<module>.py", "<module>_test.py", "<module>.spec.ts", "<module>.test.ts"],
     "{m}的测试文件怎么命名？"),
    ("JSON 字段名使用 {v}", ["snake_case", "camelCase", "kebab-case", "PascalCase"], "{m}的 JSON 字段用什么命名风格？"),
    ("接口里的时间统一用{v}", ["UTC 的 ISO 8601 字符串", "毫秒级 Unix 时间戳", "秒级 Unix 时间戳", "带时区偏移的 RFC 3339 字符串"],
     "{m}接口里的时间是什么格式？"),
    ("金额一律存成{v}", ["以分为单位的整数", "十进制字符串", "最小货币单位加币种代码", "Decimal 对象，禁止浮点数"],
     "{m}里金额是怎么存的？"),
    ("提交信息遵循{v}", ["Conventional Commits 规范", "工单号开头的格式", "五十字以内的祈使句标题", "gitmoji 风格"],
     "{m}的提交信息用什么格式？"),
    ("导入语句由{v}排序", ["isort 的 black 配置", "ruff 的导入规则", "编辑器自带的整理导入", "eslint-plugin-import"],
     "{m}的导入顺序靠什么工具整理？"),
    ("返回给客户端的错误使用{v}", ["application/problem+json", "code 加 message 的结构", "纯文本", "GraphQL 错误扩展字段"],
     "{m}返回错误用什么格式？"),
    ("新记录的主键使用{v}", ["ULID", "UUIDv7", "自增整数", "雪花算法编号"], "{m}新记录的主键是什么类型？"),
    ("合并请求需要{v}才能合入", ["一人批准", "两人批准", "代码负责人批准", "构建通过并有一人批准"], "{m}的合并请求需要几个人审批？"),
    ("分支合入方式是{v}", ["变基到主干", "压缩合并", "保留合并提交", "只允许快进"], "{m}的分支怎么合入主干？"),
    ("日志写成{v}", ["JSON 对象", "logfmt 键值对", "纯文本行", "OpenTelemetry 记录"], "{m}的日志是什么格式？"),
    ("配置来自{v}", ["环境变量", "TOML 文件", "配置中心", "每个环境一个 YAML 文件"], "{m}从哪里读取配置？"),
    ("公开函数必须有{v}", ["写明参数单位的文档字符串", "类型标注和文档字符串", "文档字符串里的用法示例", "同一合并请求里的单元测试"],
     "{m}的公开函数有什么硬性要求？"),
    ("依赖版本通过{v}锁定", ["锁文件", "requirements.txt 里的精确版本", "Renovate 自动合并请求", "带哈希校验的约束文件"],
     "{m}的依赖版本是怎么锁定的？"),
]

# ------------------------------------------------------------------ superseded (services x attributes)

EN_SERVICES = ["billing service", "order service", "search service", "notification worker", "admin dashboard",
               "inventory API", "checkout frontend", "reporting pipeline", "auth gateway", "mobile backend",
               "export job", "image resizer", "webhook relay", "pricing engine", "audit logger"]
#: (fact with {s} and {v}, [(old value, new value)], question with {s})
EN_ATTRIBUTES = [
    ("The request timeout of the {s} is {v} seconds.", [("30", "10"), ("60", "15"), ("20", "5"), ("45", "30")],
     "What is the request timeout of the {s}?"),
    ("The {s} is hosted on {v}.", [("Heroku", "our Kubernetes cluster"), ("a single EC2 instance", "AWS Fargate"),
                                   ("the old VMware farm", "Google Cloud Run"),
                                   ("DigitalOcean droplets", "Hetzner bare metal")], "Where is the {s} hosted?"),
    ("The {s} is owned by the {v} team.", [("platform", "payments"), ("core", "growth"), ("data", "infrastructure"),
                                           ("mobile", "web")], "Which team owns the {s}?"),
    ("The {s} listens on port {v}.", [("8080", "8443"), ("5000", "7000"), ("3000", "3100"), ("9000", "9090")],
     "Which port does the {s} listen on?"),
    ("Deploys of the {s} happen on {v}.", [("Tuesdays", "Thursdays"), ("Mondays", "every weekday"),
                                           ("Fridays", "Wednesdays"),
                                           ("the first day of the month", "Tuesdays and Thursdays")],
     "On which day is the {s} deployed?"),
    ("The database connection pool of the {s} has {v} connections.", [("10", "40"), ("20", "8"), ("50", "25"),
                                                                       ("5", "15")],
     "How many database connections does the pool of the {s} hold?"),
    ("The {s} retries a failed call {v} times.", [("3", "5"), ("5", "2"), ("2", "4"), ("10", "3")],
     "How many times does the {s} retry a failed call?"),
    ("The {s} runs on Python {v}.", [("3.9", "3.11"), ("3.10", "3.12"), ("3.8", "3.11"), ("3.11", "3.13")],
     "Which Python version does the {s} run on?"),
    ("Alerts of the {s} go to {v}.", [("the ops-alerts channel", "PagerDuty"), ("Opsgenie", "the on-call phone"),
                                      ("a mailing list", "the incident Slack channel"), ("PagerDuty", "Opsgenie")],
     "Where do alerts of the {s} go?"),
    ("The {s} allows {v} requests per minute per client.", [("600", "1200"), ("100", "300"), ("60", "120"),
                                                             ("1000", "500")], "What is the rate limit of the {s}?"),
]
ZH_SERVICES = ["计费服务", "订单服务", "搜索服务", "通知进程", "管理后台", "库存接口", "结算前端", "报表流水线", "鉴权网关",
               "移动端后台", "导出任务", "图片压缩服务", "回调转发服务", "定价引擎", "审计日志服务"]
ZH_ATTRIBUTES = [
    ("{s}的请求超时是 {v} 秒。", [("30", "10"), ("60", "15"), ("20", "5"), ("45", "30")], "{s}的请求超时是多少？"),
    ("{s}部署在{v}上。", [("Heroku", "自建 Kubernetes 集群"), ("一台云主机", "阿里云函数计算"), ("旧的 VMware 机房", "腾讯云容器服务"),
                     ("物理机", "AWS Fargate")], "{s}部署在哪里？"),
    ("{s}由{v}组负责。", [("平台", "支付"), ("基础", "增长"), ("数据", "运维"), ("移动", "前端")], "{s}归哪个组负责？"),
    ("{s}监听 {v} 端口。", [("8080", "8443"), ("5000", "7000"), ("3000", "3100"), ("9000", "9090")], "{s}用的是哪个端口？"),
    ("{s}在{v}发布。", [("每周二", "每周四"), ("每周一", "每个工作日"), ("每周五", "每周三"), ("每月第一天", "每周二和周四")],
     "{s}一般哪天发布？"),
    ("{s}的数据库连接池有 {v} 个连接。", [("10", "40"), ("20", "8"), ("50", "25"), ("5", "15")], "{s}的数据库连接池多大？"),
    ("{s}调用失败后重试 {v} 次。", [("3", "5"), ("5", "2"), ("2", "4"), ("10", "3")], "{s}失败后重试几次？"),
    ("{s}运行在 Python {v} 上。", [("3.9", "3.11"), ("3.10", "3.12"), ("3.8", "3.11"), ("3.11", "3.13")],
     "{s}用的 Python 版本是多少？"),
    ("{s}的告警发到{v}。", [("运维告警群", "PagerDuty"), ("钉钉值班群", "值班手机"), ("邮件列表", "飞书告警机器人"),
                       ("Opsgenie", "企业微信群")], "{s}的告警发到哪里？"),
    ("{s}每个客户端每分钟限流 {v} 次请求。", [("600", "1200"), ("100", "300"), ("60", "120"), ("1000", "500")],
     "{s}的限流是多少？"),
]

# ------------------------------------------------------------------ branch-only facts

BRANCHES = ["feature/payments-v2", "feature/new-search", "spike/grpc-gateway", "feature/dark-mode",
            "fix/session-expiry"]
#: (main fact, the branch's fact, question), with {s}
EN_COUNTERPARTS = [
    ("The {s} stores sessions in Redis.", "The {s} stores sessions in Postgres.", "Where does the {s} store sessions?"),
    ("The {s} serializes events as JSON.", "The {s} serializes events as Protocol Buffers.",
     "How does the {s} serialize events?"),
    ("The {s} paginates lists with offset and limit.", "The {s} paginates lists with opaque cursors.",
     "How does the {s} paginate lists?"),
    ("The {s} authenticates callers with API keys.", "The {s} authenticates callers with OAuth client credentials.",
     "How does the {s} authenticate callers?"),
    ("The {s} renders charts with Chart.js.", "The {s} renders charts with ECharts.",
     "What renders charts in the {s}?"),
]
#: (a fact that exists only on a branch, question), with {s}, {slug}, {SLUG}, {n}
EN_BRANCH_ONLY = [
    ("The {s} has a temporary endpoint /debug/{slug} for profiling requests.",
     "Does the {s} have an endpoint for profiling?"),
    ("The {s} writes a shadow copy of every request to the {slug}_shadow table.",
     "Where does the {s} write shadow copies of requests?"),
    ("Tests of the {s} need the FAKE_{SLUG}_CLOCK variable set.", "Which variable do the tests of the {s} need?"),
    ("The {s} calls the ranking sidecar on port 7{n}.", "On which port does the {s} call the ranking sidecar?"),
    ("The {s} sends five percent of its traffic to the rewritten handler.",
     "How much traffic does the {s} send to the rewritten handler?"),
]
ZH_COUNTERPARTS = [
    ("{s}把会话存在 Redis 里。", "{s}把会话存在 Postgres 里。", "{s}的会话存在哪里？"),
    ("{s}用 JSON 序列化事件。", "{s}用 Protocol Buffers 序列化事件。", "{s}怎么序列化事件？"),
    ("{s}的列表用偏移量加条数分页。", "{s}的列表用游标分页。", "{s}的列表怎么分页？"),
    ("{s}用 API 密钥校验调用方。", "{s}用 OAuth 客户端凭证校验调用方。", "{s}怎么校验调用方身份？"),
    ("{s}用 Chart.js 画图表。", "{s}用 ECharts 画图表。", "{s}的图表用什么库画？"),
]
ZH_BRANCH_ONLY = [
    ("{s}有一个临时接口 /debug/{slug} 用来做性能分析。", "{s}有做性能分析的接口吗？"),
    ("{s}会把每个请求的影子副本写到 {slug}_shadow 表。", "{s}把请求的影子副本写在哪张表？"),
    ("{s}的测试需要设置 FAKE_{SLUG}_CLOCK 变量。", "{s}的测试需要设置哪个变量？"),
    ("{s}通过 7{n} 端口调用排序边车服务。", "{s}通过哪个端口调用排序边车服务？"),
    ("{s}把百分之五的流量转给重写后的处理器。", "{s}转了多少流量给重写后的处理器？"),
]
SLUGS = {"billing service": "billing", "order service": "orders", "search service": "search",
         "notification worker": "notify", "admin dashboard": "admin", "inventory API": "inventory",
         "checkout frontend": "checkout", "reporting pipeline": "reports", "auth gateway": "auth",
         "mobile backend": "mobile", "export job": "export", "image resizer": "images", "webhook relay": "hooks",
         "pricing engine": "pricing", "audit logger": "audit",
         "计费服务": "billing", "订单服务": "orders", "搜索服务": "search", "通知进程": "notify", "管理后台": "admin",
         "库存接口": "inventory", "结算前端": "checkout", "报表流水线": "reports", "鉴权网关": "auth", "移动端后台": "mobile",
         "导出任务": "export", "图片压缩服务": "images", "回调转发服务": "hooks", "定价引擎": "pricing", "审计日志服务": "audit"}

# ------------------------------------------------------------------ identifiers with near-miss siblings

EN_NOUNS = ["Invoice", "Payment", "Session", "Cart", "Report", "Shipment", "Account", "Token", "Webhook", "Tenant",
            "Coupon", "Subscription", "Audit", "Order", "Customer"]
ZH_NOUNS = ["Product", "Warehouse", "Refund", "Ticket", "Message", "Channel", "Profile", "Quota", "Device", "Schedule",
            "Catalog", "Review", "Member", "Budget", "Voucher"]
PREFIXES = ["User", "Admin", "Remote", "Local", "Shared"]
#: per family, the behaviours of its first and of its second variant
EN_BEHAVIOURS = [
    (["reads YAML and ignores unknown keys", "returns a frozen dataclass", "raises ConfigError when a field is missing",
      "is only used by the migration scripts"],
     ["reads TOML and rejects unknown keys", "returns a plain dict with defaults filled in",
      "logs a warning and falls back to defaults on bad input", "is the version the API handlers call"]),
    (["keeps entries in Postgres so they survive restarts", "is the only class allowed to write to its table",
      "is created once in the dependency container"],
     ["keeps entries in memory and expires them after ten minutes", "wraps Redis and is safe to share between threads",
      "is deprecated; new code should use the other implementation"]),
    (["calls the REST API and caches the result for a minute", "returns null when the record is missing",
      "is used only by the admin dashboard"],
     ["batches at most 100 ids per request", "throws NotFoundError when a record is missing",
      "retries twice on a 503 response"]),
    (["is 5 and applies to outbound HTTP calls", "is 3 and is read from the environment at startup",
      "is overridden to 0 in tests", "is 8 for the nightly batch"],
     ["is 250 and doubles after each attempt", "is 10000 in production and 10 in tests",
      "must stay below the load balancer timeout", "is read from settings.toml at startup"]),
]
ZH_BEHAVIOURS = [
    (["读取 YAML，忽略未知字段", "返回不可变的数据类", "缺少字段时抛出 ConfigError", "只在迁移脚本里使用"],
     ["读取 TOML，遇到未知字段直接报错", "返回补全了默认值的字典", "解析失败时记录警告并回退到默认值", "是接口处理函数实际调用的版本"]),
    (["把数据存在 Postgres 里，重启后不会丢", "是唯一允许写这张表的类", "只在依赖注入容器里创建一次"],
     ["只存在内存里，十分钟后过期", "封装了 Redis，可以在线程之间共享", "已经废弃，新代码请用另一个实现"]),
    (["调用 REST 接口并把结果缓存一分钟", "找不到记录时返回 null", "只有管理后台在用"],
     ["每次请求最多批量查 100 个编号", "找不到记录时抛出 NotFoundError", "遇到 503 会重试两次"]),
    (["是 5，用于对外的 HTTP 调用", "是 3，启动时从环境变量读取", "在测试里被改成 0", "夜间批处理里是 8"],
     ["是 250，每次重试后翻倍", "生产环境是 10000，测试里是 10", "必须小于负载均衡的超时时间", "启动时从 settings.toml 读取"]),
]
EN_IDENTIFIER_QUERIES = ["What does {i} do?", "{i}", "Remind me how {i} behaves", "Anything to know about {i}?"]
ZH_IDENTIFIER_QUERIES = ["{i} 是干什么的？", "{i}", "{i} 有什么需要注意的？", "说说 {i} 的行为"]

# ------------------------------------------------------------------ paraphrases (no indexed term shared)

EN_PARAPHRASES = [
    ("The nightly database dump is copied to a bucket in Frankfurt", "where do our backups of stored records end up"),
    ("Integration tests are skipped when the DOCKER_HOST variable is missing",
     "why do some suites not run on machines without a container daemon"),
    ("Ravi rewrote the PDF exporter in Go last quarter", "who ported the document printing code to another language"),
    ("We never call the payment provider from the browser", "is the card processor contacted by client-side code"),
    ("The API gateway strips cookies before forwarding requests to internal services",
     "what happens to session headers at the edge proxy"),
    ("Flaky tests are quarantined with the @unstable marker and fixed within a week",
     "what do we do about checks that fail randomly"),
    ("Frontend bundles larger than 300 kilobytes fail the build", "is there a size budget for shipped JavaScript"),
    ("Release tags are signed with the team's GPG key", "how do we prove a version label is authentic"),
    ("Customer addresses are geocoded once and cached for ninety days",
     "how long do we keep map coordinates of shipping locations"),
    ("The search index is rebuilt when the synonym list changes", "what triggers a full reindexing of lookup data"),
    ("Only the release manager may push to the production branch", "who is allowed to update the live code line"),
    ("Cron jobs run in the Europe/Berlin timezone, not UTC", "which clock do scheduled tasks follow"),
    ("Uploading avatars larger than two megabytes returns HTTP 413",
     "what error does a user get for a huge profile picture"),
    ("Dependabot updates are merged on Mondays after the test suite passes",
     "when do automatic library bumps get accepted"),
    ("Passwords must contain at least twelve characters", "what is the minimum length for login secrets"),
    ("The mobile app caches the product catalogue for offline use",
     "can phone users browse items without a network connection"),
    ("Analytics events are batched and sent every thirty seconds", "how often does tracking data leave the client"),
    ("Terraform state lives in an S3 bucket with versioning enabled",
     "where is the infrastructure-as-code bookkeeping kept"),
    ("Every schema change is reviewed by Lena from the data team", "who approves table alterations"),
    ("The CSV importer rejects files with more than fifty thousand rows", "is there a cap on spreadsheet uploads"),
    ("Translations are managed in Crowdin and synced weekly",
     "where do localized strings come from and how often are they refreshed"),
    ("Hotfixes skip the staging environment but still need a second reviewer",
     "can an urgent patch go straight to live"),
    ("The websocket server drops idle connections after five minutes", "what happens to quiet realtime clients"),
    ("Feature branches older than ninety days are deleted automatically",
     "are forgotten git topics cleaned up eventually"),
    ("Our Python services are formatted with Black at line length 100",
     "which code style tool do backend programs use"),
    ("Image uploads are resized to three widths by a Lambda function",
     "how are pictures shrunk after someone sends them"),
    ("The on-call rotation changes every Wednesday at noon", "when does pager duty hand over"),
    ("Load balancer health checks hit the /healthz endpoint every ten seconds",
     "how does the traffic distributor know an instance is alive"),
    ("Secrets are rotated every quarter by a scheduled pipeline", "how often do credentials get replaced"),
    ("The legacy SOAP API will be switched off in December", "when does the old XML web interface go away"),
    ("Email templates are written in MJML and compiled during the build",
     "what markup do we use for messages sent to inboxes"),
    ("Sentry samples ten percent of transactions in production", "what share of requests get traced on live servers"),
    ("Database backups are restored into a scratch instance every month to verify them",
     "do we test that saved snapshots can actually be recovered"),
    ("Marketing pages are served from a CDN with a one hour cache", "how fresh is the promotional website content"),
    ("The GraphQL endpoint limits query depth to seven levels", "how deeply can clients nest fields in one call"),
]
ZH_PARAPHRASES = [
    ("每晚的数据库导出会复制到法兰克福的存储桶", "备份最后放在哪里"),
    ("没有 DOCKER_HOST 变量时集成测试会被跳过", "为什么有些用例在缺少容器守护进程的机器上不跑"),
    ("拉维上个季度用 Go 重写了 PDF 导出器", "谁把打印文档的代码移植成了别的语言"),
    ("浏览器端绝不直接调用支付渠道", "客户端网页能不能自己去连收单机构"),
    ("网关在转发请求给内部服务之前会去掉 Cookie", "边缘代理会怎么处理浏览器的会话头"),
    ("不稳定的测试会打上 @unstable 标记并在一周内修好", "随机失败的检查项我们怎么处理"),
    ("前端打包产物超过三百 KB 就让构建失败", "发布出去的脚本体积有上限吗"),
    ("发布标签用团队的 GPG 密钥签名", "怎么证明某个版本号是真的"),
    ("客户地址只做一次地理编码，结果缓存九十天", "收货位置的经纬度会保留多久"),
    ("同义词表变化时会重建搜索索引", "什么情况下要把检索数据全部重新整理"),
    ("只有发版负责人可以推送到生产分支", "谁有权限更新线上代码线"),
    ("定时任务按柏林时区运行，不是 UTC", "计划作业跟的是哪个钟点"),
    ("上传超过两兆的头像会返回 413", "用户传很大的个人照片会看到什么错误"),
    ("Dependabot 的升级在周一测试通过后合并", "自动提的库版本更新什么时候被接受"),
    ("密码至少要十二个字符", "登录口令最短多长"),
    ("移动端会缓存商品目录供离线浏览", "手机用户没网的时候还能看货品吗"),
    ("埋点事件攒一批后每三十秒发送一次", "统计数据多久从客户端上报一回"),
    ("Terraform 状态文件放在开启版本控制的 S3 桶里", "基础设施代码的记账信息保存在哪"),
    ("每次表结构变更都由数据组的莉娜审核", "谁来批准改表"),
    ("表格导入器拒绝超过五万行的文件", "上传的 Excel 最多能有多少条"),
    ("翻译在 Crowdin 上管理，每周同步一次", "本地化文案从哪来，多久刷新"),
    ("紧急修复可以跳过预发环境，但仍需第二位审核人", "加急补丁能直接上线吗"),
    ("长连接服务会在空闲五分钟后断开连接", "安静不说话的实时客户端会怎样"),
    ("超过九十天的功能分支会被自动删除", "被遗忘的开发线最终会清理掉吗"),
    ("Python 服务用 Black 格式化，行宽 100", "后端程序用什么代码风格工具"),
    ("上传的图片由 Lambda 函数缩放成三种宽度", "别人发来的照片是怎么变小的"),
    ("值班轮换在每周三中午交接", "告警接收人什么时候换班"),
    ("负载均衡每十秒访问一次 /healthz 做健康检查", "流量分发器怎么知道实例还活着"),
    ("密钥每季度由定时流水线轮换一次", "凭证隔多长时间更新"),
    ("老的 SOAP 接口十二月下线", "旧的 XML 服务什么时候停用"),
    ("邮件模板用 MJML 编写并在构建时编译", "发到收件箱的消息用什么标记语言写"),
    ("Sentry 在生产环境采样百分之十的事务", "线上有多大比例的请求被追踪"),
    ("每月把数据库备份恢复到临时实例里做校验", "保存的快照真能还原吗，我们验证过没有"),
    ("营销页面走 CDN，缓存一小时", "推广网站的内容有多新"),
    ("GraphQL 接口把查询深度限制在七层", "客户端最多能嵌套几级请求"),
]

# ------------------------------------------------------------------ meeting series (dates only in createdAt)

#: series id -> (English prefix, Chinese prefix)
SERIES = {"incident-review": ("Incident review", "故障复盘"), "sprint-retro": ("Sprint retro", "迭代回顾"),
          "architecture-review": ("Architecture review", "架构评审"),
          "customer-escalation": ("Customer escalation", "客户升级")}
EN_SERIES = {
    "incident-review": [
        "the checkout outage came from an expired TLS certificate on the load balancer",
        "a runaway cron job filled the disk of the primary database",
        "a bad feature flag default disabled logins for mobile users",
        "the DNS provider dropped our records for forty minutes",
        "a schema migration locked the orders table during peak hours",
        "the message broker ran out of file descriptors",
        "a memory leak in the image resizer crashed every pod",
        "an expired API token broke the shipping label integration",
        "a misconfigured CDN rule cached private account pages",
        "a deploy script deleted the wrong autoscaling group",
        "clock skew on one node invalidated session tokens",
        "the search cluster lost quorum after a network partition",
        "a full connection pool made the pricing engine time out"],
    "sprint-retro": [
        "we agreed to cap work in progress at three tickets per person",
        "the team wants smaller pull requests, under 400 lines",
        "we will pair on every change to the billing code",
        "standups move to 9:45 so the Berlin office can join",
        "we drop the Friday demo and record short videos instead",
        "flaky tests get an owner within a day",
        "design reviews happen before the first line of code",
        "we budget one day per sprint for paying down debt",
        "on-call handover now includes a written summary",
        "we stop estimating bugs and only estimate features",
        "every ticket needs acceptance criteria before planning",
        "we rotate the retro facilitator each sprint",
        "release notes are drafted during the sprint, not after it"],
    "architecture-review": [
        "we approved splitting notifications into their own service",
        "the proposal to adopt event sourcing for orders was rejected",
        "we agreed to move file storage from NFS to object storage",
        "the read replica plan for reporting queries was approved",
        "we chose to keep the monolith for the admin tool",
        "the team approved a shared authentication library",
        "we decided to put a queue in front of the email sender",
        "the GraphQL gateway proposal was postponed",
        "we approved caching product pages at the edge",
        "the move to a service mesh was rejected for now",
        "we agreed on a single observability vendor",
        "the plan to shard the users table was approved"],
    "customer-escalation": [
        "a large retailer reported duplicate invoices after a retry storm",
        "a bank asked for audit logs of every admin action",
        "a customer in Japan saw prices in the wrong currency",
        "an enterprise tenant hit the export row limit",
        "a hospital needed data deletion confirmed in writing",
        "a reseller could not log in because of an SSO misconfiguration",
        "a school district reported slow report generation",
        "a logistics partner received webhooks out of order",
        "a customer lost saved filters after the redesign",
        "a marketplace seller was charged twice for one plan",
        "a government client required data to stay in the EU",
        "a startup asked for higher API rate limits during a launch"],
}
ZH_SERIES = {
    "incident-review": [
        "支付回调积压是因为消费者进程被错误地缩容到零", "一次配置推送把缓存过期时间设成了零", "证书轮换脚本漏掉了内部网关",
        "日志磁盘写满导致订单服务无法启动", "第三方短信通道限流让验证码发不出去", "主从切换后应用仍然连着旧的主库",
        "一个慢查询拖垮了报表数据库", "对象存储的生命周期规则误删了发票附件", "灰度发布时新旧版本的序列化格式不兼容",
        "机房网络抖动让定时任务重复执行", "前端资源的哈希冲突导致页面白屏", "搜索索引重建期间返回了空结果",
        "鉴权服务的令牌缓存穿透压垮了数据库"],
    "sprint-retro": [
        "每个需求开始前先写好验收标准", "代码评审要在一个工作日内给出反馈", "把每日站会缩短到十五分钟以内",
        "线上问题的复盘要在三天内写完", "测试环境的数据每周重置一次", "新人入职第一周要和导师结对",
        "迭代计划会前先把需求拆成小任务", "不再在周五下午发布", "技术债单独建看板跟踪", "接口变更必须提前通知前端",
        "每个迭代留出半天做文档整理", "把构建时间压到十分钟以内", "需求评审邀请测试同学一起参加"],
    "architecture-review": [
        "同意把消息推送拆成独立服务", "否决了用事件溯源重写订单模块的方案", "决定把文件存储从共享盘迁到对象存储",
        "批准为报表查询增加只读副本", "管理后台继续保留单体架构", "同意建设统一的登录组件", "决定在邮件发送前加一层队列",
        "推迟了网关改造方案", "批准在边缘节点缓存商品页", "暂不引入服务网格", "统一使用一家可观测性厂商",
        "批准对用户表做分库分表", "同意把定时任务迁到统一调度平台"],
    "customer-escalation": [
        "一家连锁超市反映重试风暴之后收到了重复发票", "一家银行要求提供所有管理员操作的审计日志", "一位日本客户看到的价格币种不对",
        "一个企业租户碰到了导出行数上限", "一家医院要求书面确认数据已删除", "一家代理商因为单点登录配置错误无法登录",
        "一个学区反映报表生成太慢", "一家物流伙伴收到的回调顺序是乱的", "一位客户在改版后丢失了保存的筛选条件",
        "一位商家同一个套餐被扣了两次钱", "一个政府客户要求数据必须留在境内", "一家创业公司在发布会期间要求提高接口限额",
        "一家航空公司要求把接口超时延长到两分钟"],
}
#: memories of a series created outside its monthly run: (series, lang, date) for the relative-date questions
SERIES_EXTRA = [("incident-review", "en", "2025-06-10"), ("sprint-retro", "en", "2025-06-11"),
                ("architecture-review", "zh", "2025-06-10"), ("customer-escalation", "zh", "2025-06-12"),
                ("incident-review", "zh", "2025-06-04"), ("sprint-retro", "zh", "2025-06-03")]
#: relative questions: (lang, series, text, [start, end) as dates)
RELATIVE = [
    ("en", "incident-review", "What did last week's incident review find?", "2025-06-09", "2025-06-16"),
    ("en", "sprint-retro", "What came out of last week's sprint retro?", "2025-06-09", "2025-06-16"),
    ("en", "incident-review", "What did the incident review last month find?", "2025-05-01", "2025-06-01"),
    ("en", "sprint-retro", "What did we agree at last month's sprint retro?", "2025-05-01", "2025-06-01"),
    ("en", "architecture-review", "What did the architecture review decide last month?", "2025-05-01", "2025-06-01"),
    ("zh", "architecture-review", "上周的架构评审决定了什么？", "2025-06-09", "2025-06-16"),
    ("zh", "customer-escalation", "上周有哪个客户升级投诉？", "2025-06-09", "2025-06-16"),
    ("zh", "incident-review", "两周前的故障复盘查出了什么原因？", "2025-06-02", "2025-06-09"),
    ("zh", "sprint-retro", "两周前的迭代回顾有什么结论？", "2025-06-02", "2025-06-09"),
    ("zh", "customer-escalation", "这个月的客户升级是什么问题？", "2025-06-01", "2025-07-01"),
]
EN_DATE_QUERIES = {"incident-review": "What did the incident review in {when} find?",
                   "sprint-retro": "What came out of the sprint retro in {when}?",
                   "architecture-review": "What was decided at the architecture review in {when}?",
                   "customer-escalation": "Which customer escalation did we have in {when}?"}
EN_QUARTER_QUERIES = {"incident-review": "What did the incident reviews in {when} find?",
                      "sprint-retro": "What came out of the sprint retros in {when}?",
                      "architecture-review": "What did the architecture reviews in {when} decide?",
                      "customer-escalation": "Which customer escalations did we have in {when}?"}
ZH_DATE_QUERIES = {"incident-review": "{when}的故障复盘查出了什么原因？", "sprint-retro": "{when}的迭代回顾有什么结论？",
                   "architecture-review": "{when}的架构评审决定了什么？", "customer-escalation": "{when}有哪个客户升级投诉？"}
QUARTER_NAMES = ("first", "second", "third", "fourth")

# ------------------------------------------------------------------ people

EN_PEOPLE = ["Priya Raman", "Tomasz Nowak", "Aisha Bello", "Lukas Meyer", "Hannah Cohen", "Diego Alvarez",
             "Mei Tanaka", "Oluwaseun Adeyemi", "Sven Lindqvist", "Rosa Martins", "Kenji Watanabe", "Fatima Zahra",
             "Noah Fischer", "Elena Petrova", "Marco Bianchi"]
ZH_PEOPLE = ["王磊", "李娜", "张伟", "刘洋", "陈静", "杨帆", "赵敏", "黄涛", "周琳", "吴昊", "徐婷", "孙凯", "马丽", "朱峰",
             "胡雪"]
EN_PERSON_FACTS = ["{p} owns the {thing} and reviews every change to it.",
                   "Ask {p} before touching the {thing}; {p} wrote most of it.",
                   "{p} is our contact at the {vendor} for the contract.",
                   "{p} prefers asynchronous code reviews to meetings.",
                   "{p} maintains the runbook for the {thing}.",
                   "{p} moved to the {team} team last year and works on the {thing}."]
ZH_PERSON_FACTS = ["{thing}由{p}负责，改动前先找{p}确认。", "{p}写了{thing}的大部分代码，动它之前先问一下。",
                   "{p}是{vendor}那边跟我们对接合同的联系人。", "{p}更喜欢异步的代码评审，不爱开会。", "{p}维护{thing}的运维手册。",
                   "{p}去年调到了{team}组，现在负责{thing}。"]
EN_THINGS = ["billing migration", "deployment pipeline", "tax rules engine", "search relevance tuning",
             "mobile release process", "data retention policy", "SSO integration", "load testing setup",
             "fraud scoring model", "customer import tool", "invoice templates", "observability stack"]
ZH_THINGS = ["计费迁移", "部署流水线", "税务规则引擎", "搜索相关性调优", "移动端发版流程", "数据保留策略", "单点登录对接", "压测环境",
             "风控评分模型", "客户导入工具", "发票模板", "可观测性平台"]
EN_VENDORS = ["payment processor", "cloud provider", "CDN vendor", "email delivery service", "translation agency"]
ZH_VENDORS = ["支付机构", "云厂商", "CDN 服务商", "邮件投递服务商", "翻译公司"]
EN_TEAMS = ["platform", "payments", "growth", "data", "infrastructure"]
ZH_TEAMS = ["平台", "支付", "增长", "数据", "基础设施"]
EN_NAME_QUERIES = ["{p}", "What do we know about {p}?", "{first}"]
ZH_NAME_QUERIES = ["{p}", "关于{p}有什么要知道的？", "{p}负责什么"]
EN_NAME_UNKNOWN = ["What is {p}'s GitHub handle?", "When is {p}'s birthday?", "Which laptop does {p} use?",
                   "What did {p} present at the last conference?", "Where does {p} live?",
                   "What is {p}'s phone number?", "Which football team does {p} support?",
                   "What is {p}'s favourite editor theme?", "When is {p} on holiday next?",
                   "Which university did {p} attend?"]
ZH_NAME_UNKNOWN = ["{p}的 GitHub 账号是什么？", "{p}的生日是哪天？", "{p}用的是什么笔记本电脑？", "{p}在上次技术大会上讲了什么？",
                   "{p}住在哪个城市？", "{p}的手机号是多少？", "{p}支持哪支足球队？", "{p}最喜欢的编辑器主题是什么？",
                   "{p}下次休假是什么时候？", "{p}是哪所大学毕业的？"]

# ------------------------------------------------------------------ questions nothing answers

EN_NO_ANSWER = [
    "best hiking trails in Patagonia", "how to make a sourdough starter", "who won the 1998 football world cup",
    "lyrics of a famous opera aria", "how far is the moon from earth", "symptoms of a cold in cats",
    "origami crane folding steps", "history of the Byzantine empire", "how to tune a ukulele", "recipe for lemon tart",
    "How do we configure the Kubernetes ingress for staging?", "What is the VPN password rotation policy?",
    "Which Figma library do the designers use?", "How do we run the Android emulator on CI?",
    "What is the SLA of the data warehouse?", "Who approves travel expenses?",
    "Which Elasticsearch version does the logging stack use?",
    "How do we renew the Apple push notification certificate?", "What is the naming scheme for Grafana dashboards?",
    "How often is the code mirror synchronised?"]
ZH_NO_ANSWER = [
    "明天北京的天气怎么样", "红烧肉怎么做", "上届世界杯冠军是哪个国家", "怎么养兰花", "长江有多长", "如何学习书法",
    "猫为什么喜欢钻纸箱", "春节的由来", "怎么折纸鹤", "西湖的门票多少钱",
    "预发环境的 Kubernetes Ingress 怎么配置？", "VPN 密码多久轮换一次？", "设计师用的是哪套 Figma 组件库？",
    "持续集成里怎么跑安卓模拟器？", "数据仓库的服务等级协议是多少？", "差旅报销谁来审批？", "Elasticsearch 用的是哪个版本？",
    "苹果推送证书怎么续期？", "Grafana 看板的命名规则是什么？", "代码镜像多久同步一次？"]

# ------------------------------------------------------------------ filler (other project facts)

EN_FILLER_SUBJECTS = ["The cron scheduler", "The CSV exporter", "The audit trail", "The PDF renderer",
                      "The rate limiter", "The email relay", "The thumbnail worker", "The metrics collector",
                      "The session sweeper", "The ledger service", "The tax calculator", "The geo lookup",
                      "The address validator", "The SMS gateway", "The data retention job", "The sitemap generator",
                      "The permission checker", "The invoice mailer", "The currency converter", "The fraud detector",
                      "The warehouse sync", "The label printer bridge", "The product importer",
                      "The review moderator", "The loyalty points engine"]
EN_FILLER_PREDICATES = ["writes structured logs to stdout", "runs two replicas in each region",
                        "is covered by contract tests against the staging API",
                        "keeps a local copy of the exchange rates",
                        "publishes events to the internal bus", "must answer within 300 ms at the 99th percentile",
                        "is scheduled to be rewritten next year", "uses optimistic locking on updates",
                        "caches results for five minutes", "has a known slow path for very large accounts",
                        "is enabled only for beta tenants", "depends on the legacy SOAP client",
                        "validates input with JSON Schema", "was split out of the monolith in 2023",
                        "is monitored by a synthetic check every minute",
                        "emits a warning when its queue exceeds a thousand jobs", "runs its cleanup at 02:00 UTC",
                        "reads feature toggles at startup only", "stores its state in a dedicated schema",
                        "is documented in the engineering handbook"]
ZH_FILLER_SUBJECTS = ["定时调度器", "表格导出器", "审计轨迹", "文档渲染器", "限流器", "邮件中转", "缩略图进程", "指标采集器",
                      "会话清理任务", "账本服务", "税费计算器", "地理位置查询", "地址校验器", "短信网关", "数据保留任务",
                      "站点地图生成器", "权限检查器", "发票邮件服务", "汇率换算器", "风控检测器", "仓库同步任务",
                      "标签打印桥接", "商品导入器", "评论审核器", "积分引擎"]
ZH_FILLER_PREDICATES = ["把结构化日志写到标准输出", "每个区域跑两个副本", "有针对预发接口的契约测试", "在本地保留一份汇率",
                        "把事件发布到内部总线", "第九十九百分位必须在三百毫秒内响应", "计划明年重写", "更新时使用乐观锁",
                        "结果缓存五分钟", "超大账户走一条已知的慢路径", "只对内测租户开放", "依赖旧的 SOAP 客户端",
                        "用 JSON Schema 校验输入", "二零二三年从单体应用拆了出来", "每分钟有一次拨测监控",
                        "队列超过一千个任务时报警", "每天凌晨两点做清理", "只在启动时读取功能开关", "状态存在单独的库表结构里",
                        "文档写在工程手册里"]
