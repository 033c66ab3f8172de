#!/usr/bin/env python3
"""A made-up coding-assistant history for the tests of recall on coding
stores (t0217-hook-gate-code, t0303-mcp-follow): 150 sessions of one project
that say "error", "fix", "test" and "CI" all the time, and one session, 8
days before now, whose assistant reply holds the fix of an ECONNRESET error
("keepAlive: false"). Dates are relative to the real clock, so "last week"
in a prompt reads against them. Prints the sessions as JSONL (cairn add -).
"""
import datetime
import json
import random

random.seed(7)
now = datetime.datetime.now()


def at(days):
    return (now - datetime.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S")


topics = ["the build", "the parser", "the login page", "the API client", "the database migration",
          "the test suite", "the CI pipeline", "the cache layer", "the config loader", "the CLI flags"]
verbs = ["fails", "is slow", "throws an error", "breaks", "crashes", "times out"]
fixes = ["I fixed it by updating the function and adding a test.",
         "The fix was to handle the error case and retry.",
         "I changed the config and the tests pass now.",
         "Fixed: the error came from a missing null check; I added it and a regression test.",
         "I refactored the function so the error is handled; CI is green."]
for i in range(150):
    t = random.choice(topics)
    msgs = [{"role": "user", "content": "%s %s with an error when I run the tests, can you fix it?"
             % (t.capitalize(), random.choice(verbs))},
            {"role": "assistant", "content": "Let me look at %s. %s" % (t, random.choice(fixes))},
            {"role": "user", "content": "ok, what about the error in %s?" % random.choice(topics)},
            {"role": "assistant", "content": random.choice(fixes)}]
    print(json.dumps({"id": "s%03d" % i, "project": "webapp", "title": "%s issue" % t,
                      "started_at": at(10 + i * 0.7), "messages": msgs}))
print(json.dumps({
    "id": "econn", "project": "webapp", "title": "integration tests in CI", "started_at": at(8),
    "messages": [
        {"role": "user", "content": "The integration tests fail with an ECONNRESET error in CI, "
                                    "locally they pass."},
        {"role": "assistant", "content": "The ECONNRESET comes from the HTTP agent reusing sockets the "
         "test server already closed. Fix: in tests/setup.js create the agent with keepAlive: false, "
         "and close the server in afterAll. I changed tests/setup.js; the suite passes in CI now."},
        {"role": "user", "content": "great, thanks"}]}))
