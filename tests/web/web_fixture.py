#!/usr/bin/env python3
"""web_fixture.py OUT.jsonl: the small made-up store `cairn web`'s tests
read (tests/t/t0540-web.sh, t0541-web-browser.sh): hostile titles and
messages (HTML and script), English and Chinese, a 400-turn session and
a 1 MB message. Made up here; no dataset text."""
import json
import sys

def msg(role, content, at):
    return {"role": role, "content": content, "at": at}

sessions = [
    {"id": "s-hostile", "source": "claude-code", "project": "alpha",
     "title": "<script>window.__pwned=1</script> deploy notes",
     "started_at": "2024-03-01T10:00:00Z",
     "messages": [
         msg("user", "We moved the database to Postgres <img src=x onerror=\"window.__pwned=2\"> "
             "and the key is sk-ant-api03-" + "A" * 90 + " keep it", "2024-03-01T10:00:00Z"),
         msg("assistant", "Noted: the Postgres migration is done. <script>window.__pwned=3</script>",
             "2024-03-01T10:01:00Z")]},
    {"id": "s-zh", "source": "codex", "project": "beta", "title": "缓存策略讨论",
     "started_at": "2024-04-02T10:00:00Z",
     "messages": [msg("user", "我们上周讨论了缓存策略，决定用 Redis", "2024-04-02T10:00:00Z"),
                  msg("assistant", "是的，缓存使用 Redis，过期时间十分钟。", "2024-04-02T10:01:00Z")]},
    {"id": "s-long", "source": "claude-code", "project": "gamma", "title": "a long session",
     "started_at": "2024-05-03T09:00:00Z",
     "messages": [msg("user" if i % 2 == 0 else "assistant",
                      "turn %d about the marmalade pipeline, step %d" % (i, i),
                      "2024-05-03T09:%02d:%02dZ" % (i // 60 % 60, i % 60)) for i in range(400)]},
    {"id": "s-big", "source": "chatgpt", "project": "gamma", "title": "one huge message",
     "started_at": "2024-06-04T08:00:00Z",
     "messages": [msg("user", "paste of the zanzibar log follows", "2024-06-04T08:00:00Z"),
                  msg("assistant", ("zanzibar line of log output, nothing secret here\n" * 22000)[:1 << 20],
                      "2024-06-04T08:00:30Z")]},
]
with open(sys.argv[1], "w", encoding="utf-8") as f:
    for s in sessions:
        f.write(json.dumps(s, ensure_ascii=False) + "\n")
