#!/usr/bin/env python3
"""gen_data.py: input files for cairn's benchmarks (bench/run.sh).

Two jobs, both deterministic so that runs on different days compare:

  gen_data.py ingest OUT.jsonl [--sessions N] [--messages M] [--seed S]
      A synthetic `cairn add` JSONL (docs/FORMAT.md shape): N sessions
      holding exactly M messages, alternating user/assistant. The text is a
      mix meant to cost what real chat history costs to index: English
      prose drawn from a Zipf-weighted vocabulary with a long tail of rare
      identifiers, numbers and paths; code blocks (Python, C, JS, shell);
      Chinese sessions and stray Chinese sentences; a few secrets so the
      masking path runs. User turns are short, assistant turns longer.
      Half the sessions give message ids, half leave dedupe to the content
      hash, so a re-add exercises both paths.

  gen_data.py dev DATA_DIR OUT.jsonl QUESTIONS.txt [--questions N]
      The dev data (LoCoMo, BEAM) converted to `cairn add` JSONL: all of
      LoCoMo, then BEAM chats until the text reaches about 240k tokens
      (~1 MB). QUESTIONS.txt gets the datasets' own questions, one a line:
      BEAM's questions for the chats taken, then LoCoMo's sampled with an
      even stride up to N in all.

Nothing here is written into the repository: run.sh points OUT at a
temporary folder. Python 3 standard library only.
"""
import argparse
import datetime
import glob
import json
import math
import os
import random
import re
import sys

# ---------------------------------------------------------------------------
# Vocabulary. Order matters: rank sets the Zipf weight, so the function
# words come first, like in real text.

FUNCTION_WORDS = """the of and to a in is it that for you this was on with as are be
have not at or but what from we can they if there all an by my so do your
will one would about which when out up just more some like then them been
has no how than its other into could only also our new these over after
should any most now very well where here because those through each while
why both before again same being under such many then does did during""".split()

COMMON_WORDS = """time work file code function test data error user value change
problem question answer idea case system way thing part point example result
version build run project issue list line number name type string return
call method class object array table query index server client request
response memory cache store session message model input output path config
option default update check fix add remove use make need want try think know
see look find help show give keep start stop read write open close load save
send get set create delete handle parse format print log debug trace step
first last next previous small large fast slow simple clear better good bad
right wrong sure maybe probably actually really still already always never
often sometimes usually today yesterday tomorrow week month year morning
evening meeting team plan schedule deadline release review merge branch
commit push pull deploy production staging local remote database schema
migration column row field key record batch job queue worker thread process
signal event loop timer network socket port host address route endpoint api
token auth password account permission role group policy rule limit size
count total average median percent rate speed latency throughput budget
cost price order payment invoice customer product feature design layout
page screen button form field image photo video music book movie game trip
travel family friend kids dog cat garden kitchen dinner lunch coffee weekend
holiday birthday party school class teacher student course lesson exam
health doctor exercise running walking hiking camping painting reading
writing cooking baking guitar piano concert museum beach mountain lake park
city country house apartment car bike train flight hotel ticket weather rain
snow summer winter spring autumn happy sad tired excited worried curious
interesting important difficult easy possible different similar specific
general local global private public internal external manual automatic""".split()

TECH_WORDS = """sqlite postgres redis kafka docker kubernetes nginx linux
ubuntu debian python rust golang javascript typescript react vue node npm
pip cargo gcc clang cmake makefile valgrind gdb perf flamegraph mutex
semaphore atomic pointer struct enum union malloc free realloc segfault
overflow underflow unicode utf8 ascii regex tokenizer lexer parser compiler
interpreter bytecode runtime garbage collector allocator benchmark profiler
histogram percentile embedding vector cosine similarity transformer
attention encoder decoder gradient optimizer checkpoint inference latency
quantization int8 float32 bfloat16 avx512 simd cuda tensor matrix sgemm
blas lapack numpy pandas matplotlib jupyter notebook csv json yaml toml xml
html css webpack vite eslint prettier pytest unittest mock fixture coverage
refactor rollback hotfix backport changelog semver dependency lockfile
monorepo submodule rebase cherry squash bisect blame stash worktree""".split()

ZH_WORDS = """我们 你们 他们 今天 明天 昨天 时间 问题 工作 项目 代码 数据 文件
系统 用户 功能 测试 错误 版本 服务器 数据库 接口 配置 部署 性能 内存 缓存
索引 查询 结果 需要 可以 应该 已经 还是 因为 所以 但是 如果 然后 现在 之前
之后 一个 这个 那个 什么 怎么 为什么 非常 比较 可能 一定 觉得 知道 希望
喜欢 周末 朋友 家人 孩子 学校 老师 学生 医生 旅行 电影 音乐 书 咖啡 晚饭
早上 下午 晚上 天气 下雨 公园 城市 北京 上海 成都 杭州 深圳 会议 计划 安排
完成 开始 结束 修改 更新 删除 添加 检查 运行 编译 调试 优化 分析 设计 实现
支持 使用 处理 返回 参数 函数 变量 类型 对象 数组 字符串 整数 线程 进程
网络 请求 响应 日志 记录 模型 训练 推理 向量 相似 搜索 排序 分词 中文 英文""".split()

ZH_PUNCT = ["，", "，", "，", "。", "；", "？", "！"]

LANGS = ["python", "c", "js", "sh"]


def zipf_weights(n, s=1.07):
    return [1.0 / math.pow(r + 1, s) for r in range(n)]


class TextGen:
    """Draws words and builds turns; every draw goes through self.rng."""

    def __init__(self, rng):
        self.rng = rng
        # A long tail of rare tokens: identifiers, version strings, ids.
        # Real histories have tens of thousands of distinct terms; these
        # keep the FTS vocabulary (and so index size) honest.
        tail = []
        parts = COMMON_WORDS + TECH_WORDS
        for i in range(30000):
            k = rng.random()
            if k < 0.45:
                tail.append("%s_%s" % (rng.choice(parts), rng.choice(parts)))
            elif k < 0.6:
                tail.append("%s%s" % (rng.choice(parts).capitalize(),
                                      rng.choice(parts).capitalize()))
            elif k < 0.75:
                tail.append("v%d.%d.%d" % (rng.randint(0, 9), rng.randint(0, 40),
                                           rng.randint(0, 99)))
            elif k < 0.9:
                tail.append("%x" % rng.getrandbits(28))
            else:
                tail.append(str(rng.randint(0, 99999)))
        self.words = FUNCTION_WORDS + COMMON_WORDS + TECH_WORDS
        self.cum = list(accumulate(zipf_weights(len(self.words), 0.95)))
        self.tail = tail
        self.tail_cum = list(accumulate(zipf_weights(len(tail), 0.8)))
        self.zh_cum = list(accumulate(zipf_weights(len(ZH_WORDS), 0.9)))
        self.idents = tail[:3000:3]

    def en_sentence(self):
        n = max(3, int(self.rng.lognormvariate(math.log(13), 0.5)))
        w = self.rng.choices(self.words, cum_weights=self.cum, k=n)
        # About one word in 16 comes from the rare tail.
        for i in range(n):
            if self.rng.random() < 0.06:
                w[i] = self.rng.choices(self.tail, cum_weights=self.tail_cum)[0]
        w[0] = w[0].capitalize()
        if self.rng.random() < 0.08:
            w.insert(self.rng.randrange(len(w)),
                     "`%s()`" % self.rng.choice(self.idents))
        if self.rng.random() < 0.05:
            w.insert(self.rng.randrange(len(w)), "src/%s/%s.c" % (
                self.rng.choice(self.idents), self.rng.choice(self.idents)))
        end = self.rng.choice(".....?!")
        return " ".join(w) + end

    def zh_sentence(self):
        n = max(3, int(self.rng.lognormvariate(math.log(12), 0.5)))
        w = self.rng.choices(ZH_WORDS, cum_weights=self.zh_cum, k=n)
        out = []
        for i, x in enumerate(w):
            out.append(x)
            if i and i < n - 1 and self.rng.random() < 0.12:
                out.append(self.rng.choice(ZH_PUNCT[:3]))
            if self.rng.random() < 0.03:
                out.append(" %s " % self.rng.choice(TECH_WORDS))
        return "".join(out) + self.rng.choice(["。", "。", "？", "！"])

    def prose(self, nwords, zh):
        """About nwords words (for Chinese, about 1.6 chars a word) in
        paragraphs of 2-6 sentences."""
        paras, cur, got = [], [], 0
        while got < nwords:
            if zh:
                s = self.zh_sentence()
                got += len(s) // 2
            else:
                s = self.zh_sentence() if self.rng.random() < 0.02 else self.en_sentence()
                got += s.count(" ") + 1
            cur.append(s)
            if len(cur) >= self.rng.randint(2, 6):
                paras.append(("" if zh else " ").join(cur))
                cur = []
        if cur:
            paras.append(("" if zh else " ").join(cur))
        return "\n\n".join(paras)

    def code(self, lines):
        r = self.rng
        lang = r.choice(LANGS)
        idn = lambda: r.choice(self.idents).lower().replace(".", "_")
        out = []
        if lang == "python":
            out.append("def %s(%s, %s=None):" % (idn(), idn(), idn()))
            for _ in range(lines):
                k = r.random()
                if k < 0.3:
                    out.append("    %s = %s(%s, %d)" % (idn(), idn(), idn(), r.randint(0, 512)))
                elif k < 0.5:
                    out.append("    if %s is None or len(%s) > %d:" % (idn(), idn(), r.randint(1, 99)))
                    out.append("        raise ValueError(\"%s: %s\")" % (idn(), r.choice(COMMON_WORDS)))
                elif k < 0.7:
                    out.append("    for %s in %s.items():" % (idn(), idn()))
                    out.append("        %s[%s] += 1" % (idn(), idn()))
                elif k < 0.85:
                    out.append("    # %s" % " ".join(r.choices(COMMON_WORDS, k=r.randint(3, 9))))
                else:
                    out.append("    return {\"%s\": %s, \"%s\": %d}" % (idn(), idn(), idn(), r.randint(0, 9)))
        elif lang == "c":
            out.append("static int %s(struct %s *%s, size_t n)" % (idn(), idn(), idn()))
            out.append("{")
            for _ in range(lines):
                k = r.random()
                if k < 0.3:
                    out.append("    int %s = %s(%s, %d);" % (idn(), idn(), idn(), r.randint(0, 64)))
                elif k < 0.5:
                    out.append("    if (!%s || n > %d)" % (idn(), r.randint(1, 4096)))
                    out.append("        goto out;")
                elif k < 0.7:
                    out.append("    for (size_t i = 0; i < n; i++)")
                    out.append("        %s[i] = %s->%s[i] * %d;" % (idn(), idn(), idn(), r.randint(2, 9)))
                elif k < 0.85:
                    out.append("    /* %s */" % " ".join(r.choices(COMMON_WORDS, k=r.randint(3, 9))))
                else:
                    out.append("    memcpy(%s, %s, sizeof *%s);" % (idn(), idn(), idn()))
            out.append("out:")
            out.append("    return rc;")
            out.append("}")
        elif lang == "js":
            out.append("export async function %s(%s) {" % (idn(), idn()))
            for _ in range(lines):
                k = r.random()
                if k < 0.35:
                    out.append("  const %s = await %s.%s(%s);" % (idn(), idn(), idn(), idn()))
                elif k < 0.6:
                    out.append("  if (!%s) throw new Error(`%s ${%s}`);" % (idn(), r.choice(COMMON_WORDS), idn()))
                elif k < 0.8:
                    out.append("  %s.push({ %s: %d, %s });" % (idn(), idn(), r.randint(0, 99), idn()))
                else:
                    out.append("  // %s" % " ".join(r.choices(COMMON_WORDS, k=r.randint(3, 9))))
            out.append("}")
        else:
            for _ in range(lines):
                k = r.random()
                if k < 0.3:
                    out.append("$ %s %s --%s=%d" % (r.choice(TECH_WORDS), idn(), r.choice(COMMON_WORDS), r.randint(1, 64)))
                elif k < 0.6:
                    out.append("%s: %s: %s (line %d)" % (r.choice(["error", "warning", "note"]), idn(), " ".join(r.choices(COMMON_WORDS, k=4)), r.randint(1, 2000)))
                else:
                    out.append("  %s/%s.%s  %dK" % (idn(), idn(), r.choice(["c", "py", "json", "log"]), r.randint(1, 900)))
        return "```%s\n%s\n```" % (lang, "\n".join(out))

    def secret(self):
        r = self.rng
        an = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        up = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        k = r.random()
        if k < 0.4:
            return "export OPENAI_API_KEY=sk-proj-%s" % "".join(r.choices(an, k=48))
        if k < 0.7:
            return "aws_access_key_id = AKIA%s" % "".join(r.choices(up, k=16))
        return "GITHUB_TOKEN=ghp_%s" % "".join(r.choices(an, k=36))

    def user_turn(self, zh):
        r = self.rng
        n = min(400, max(1, int(r.lognormvariate(math.log(16), 0.9))))
        text = self.prose(n, zh)
        k = r.random()
        if k < 0.08:
            text += "\n\n" + self.code(r.randint(2, 10))
        elif k < 0.10:
            text = r.choice(["ok", "thanks", "yes", "go on", "好的", "continue"])
        if r.random() < 0.002:
            text += "\n" + self.secret()
        return text

    def assistant_turn(self, zh):
        r = self.rng
        n = min(2000, max(5, int(r.lognormvariate(math.log(95), 0.8))))
        text = self.prose(n, zh)
        if r.random() < 0.3:
            cut = text.find("\n\n")
            block = self.code(int(min(60, r.lognormvariate(math.log(10), 0.6))))
            text = (text[:cut] + "\n\n" + block + text[cut:]) if cut > 0 else text + "\n\n" + block
        if r.random() < 0.001:
            text += "\n" + self.secret()
        return text


def accumulate(xs):
    t = 0.0
    for x in xs:
        t += x
        yield t


def split_lengths(rng, n_sessions, n_messages):
    """Session lengths (at least 2, lognormal) summing exactly to n_messages."""
    raw = [max(2.0, rng.lognormvariate(math.log(14), 0.8)) for _ in range(n_sessions)]
    scale = n_messages / sum(raw)
    lens = [max(2, int(x * scale) & ~1) for x in raw]
    diff = n_messages - sum(lens)
    i = 0
    while diff != 0:
        j = i % n_sessions
        if diff > 0:
            lens[j] += 1
            diff -= 1
        elif lens[j] > 2:
            lens[j] -= 1
            diff += 1
        i += 1
    return lens


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def gen_ingest(out, n_sessions, n_messages, seed):
    rng = random.Random(seed)
    tg = TextGen(rng)
    lens = split_lengths(rng, n_sessions, n_messages)
    projects = ["cairn", "webshop", "infra", "thesis", "mobile-app", "data-pipeline",
                "homelab", "blog", "ml-experiments", "billing", "docs", "game"]
    sources = ["claude-code", "chatgpt", "codex", "claude-ai"]
    t0 = 1672531200  # 2023-01-01
    span = 900 * 86400
    starts = sorted(rng.randrange(span) for _ in range(n_sessions))
    nbytes = 0
    with open(out, "w", encoding="utf-8") as f:
        for si in range(n_sessions):
            zh = rng.random() < 0.07
            with_ids = rng.random() < 0.5
            src = rng.choice(sources)
            proj = rng.choice(projects)
            t = t0 + starts[si]
            msgs = []
            for mi in range(lens[si]):
                user = mi % 2 == 0
                m = {"role": "user" if user else "assistant",
                     "content": tg.user_turn(zh) if user else tg.assistant_turn(zh),
                     "at": iso(t)}
                if with_ids:
                    m["id"] = "%08x-%04d" % (si * 7919 + 104729, mi)
                msgs.append(m)
                t += rng.randint(5, 400)
            s = {"id": "bench-%05d" % si, "source": src, "project": proj,
                 "title": tg.en_sentence()[:60] if rng.random() < 0.7 else None,
                 "messages": msgs}
            if src == "claude-code":
                s["meta"] = {"cwd": "/home/dev/%s" % proj, "branch": rng.choice(["main", "dev", "fix"])}
            line = json.dumps(s, ensure_ascii=False)
            nbytes += len(line.encode("utf-8")) + 1
            f.write(line)
            f.write("\n")
    print("wrote %s: %d sessions, %d messages, %.1f MB" % (out, n_sessions, n_messages, nbytes / 1e6),
          file=sys.stderr)


LOCOMO_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
MONTHS = {m: i + 1 for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july",
                                          "august", "september", "october", "november", "december"])}


def locomo_time(s):
    m = LOCOMO_DATE.search(s or "")
    if not m:
        return None
    h, mi, ap, d, mon, y = m.groups()
    h = int(h) % 12 + (12 if ap.lower() == "pm" else 0)
    mo = MONTHS.get(mon.lower())
    if not mo:
        return None
    return datetime.datetime(int(y), mo, int(d), h, int(mi))


def gen_dev(data, out, qout, n_questions, target_chars):
    locomo = os.path.join(data, "locomo-dev", "locomo10-dev.json")
    beams = sorted(glob.glob(os.path.join(data, "beam-100k-dev", "*", "chat.json")),
                   key=lambda p: int(os.path.basename(os.path.dirname(p)))
                   if os.path.basename(os.path.dirname(p)).isdigit() else 1 << 30)
    if not os.path.exists(locomo):
        print("gen_data: %s not found" % locomo, file=sys.stderr)
        return 3
    chars = 0
    nsess = nmsg = 0
    loq, beq = [], []
    with open(out, "w", encoding="utf-8") as f:
        for conv in json.load(open(locomo, encoding="utf-8")):
            c = conv["conversation"]
            a = c.get("speaker_a")
            keys = sorted((k for k in c if re.fullmatch(r"session_\d+", k) and isinstance(c[k], list)),
                          key=lambda k: int(k.split("_")[1]))
            for k in keys:
                start = locomo_time(c.get(k + "_date_time"))
                msgs = []
                for i, t in enumerate(c[k]):
                    text = t.get("text", "")
                    if t.get("blip_caption"):
                        text += " [photo: %s]" % t["blip_caption"]
                    m = {"id": t.get("dia_id"), "role": "user" if t.get("speaker") == a else "assistant",
                         "speaker": t.get("speaker"), "content": text}
                    if start:
                        m["at"] = (start + datetime.timedelta(seconds=30 * i)).strftime("%Y-%m-%dT%H:%M:%S")
                    msgs.append(m)
                    chars += len(text)
                if not msgs:
                    continue
                s = {"id": "%s-%s" % (conv.get("sample_id"), k), "source": "locomo",
                     "project": "locomo", "messages": msgs}
                if start:
                    s["started_at"] = start.strftime("%Y-%m-%dT%H:%M:%S")
                f.write(json.dumps(s, ensure_ascii=False) + "\n")
                nsess += 1
                nmsg += len(msgs)
            for q in conv.get("qa", []):
                if q.get("question"):
                    loq.append(q["question"])
        for path in beams:
            if chars >= target_chars:
                break
            chat = os.path.basename(os.path.dirname(path))
            for b in json.load(open(path, encoding="utf-8")):
                msgs = []
                for turn in b.get("turns", []):
                    for m in turn:
                        if m.get("role") not in ("user", "assistant") or not isinstance(m.get("content"), str):
                            continue
                        msgs.append({"id": str(m.get("id")), "role": m["role"], "content": m["content"]})
                        chars += len(m["content"])
                if msgs:
                    s = {"id": "beam%s-b%s" % (chat, b.get("batch_number")), "source": "beam",
                         "project": "beam", "messages": msgs}
                    f.write(json.dumps(s, ensure_ascii=False) + "\n")
                    nsess += 1
                    nmsg += len(msgs)
            qp = os.path.join(os.path.dirname(path), "probing_questions.json")
            if os.path.exists(qp):
                for ability in sorted(json.load(open(qp, encoding="utf-8")).items()):
                    for q in ability[1]:
                        if isinstance(q, dict) and q.get("question"):
                            beq.append(q["question"])
    qs = beq[:n_questions]
    need = n_questions - len(qs)
    if need > 0 and loq:
        stride = len(loq) / need
        qs += [loq[int(i * stride)] for i in range(min(need, len(loq)))]
    with open(qout, "w", encoding="utf-8") as f:
        for q in qs:
            f.write(" ".join(q.split()) + "\n")
    print("wrote %s: %d sessions, %d messages, %.2f MB of text (~%dk tokens at chars/4); %d questions" %
          (out, nsess, nmsg, chars / 1e6, chars // 4000, len(qs)), file=sys.stderr)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("ingest")
    a.add_argument("out")
    a.add_argument("--sessions", type=int, default=5000)
    a.add_argument("--messages", type=int, default=100000)
    a.add_argument("--seed", type=int, default=20261129)
    d = sub.add_parser("dev")
    d.add_argument("data")
    d.add_argument("out")
    d.add_argument("questions")
    d.add_argument("--questions", dest="nq", type=int, default=300)
    d.add_argument("--chars", type=int, default=900000)
    args = ap.parse_args()
    if args.cmd == "ingest":
        if args.messages < 2 * args.sessions:
            ap.error("need at least 2 messages a session")
        gen_ingest(args.out, args.sessions, args.messages, args.seed)
        return 0
    return gen_dev(args.data, args.out, args.questions, args.nq, args.chars)


if __name__ == "__main__":
    sys.exit(main())
