// Drive `cairn mcp` with the official TypeScript SDK v1 client
// (@modelcontextprotocol/sdk@1.32.2), adapted from ../shared/tools/mcp-harness.
// usage: node sdk-client.mjs <cairn binary>
// Run from a folder where the package is installed (tests/t/t0301-mcp-clients.sh
// copies this file there). Prints PASS/FAIL lines and "N passed, N failed".
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const cairn = process.argv[2];
let passed = 0, failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? "PASS" : "FAIL"} [sdk1] ${what}`);
  if (ok) passed++; else failed++;
};
const text = (r) => r?.content?.[0]?.text ?? "";

async function connect(extraEnv = {}) {
  const transport = new StdioClientTransport({
    command: cairn, args: ["mcp"], stderr: "ignore",
    env: { ...process.env, ...extraEnv },
  });
  const client = new Client({ name: "cairn-sdk1-test", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

try {
  const client = await connect();
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  check(client.getServerVersion()?.name === "cairn", `serverInfo ${JSON.stringify(client.getServerVersion())}`);
  check(/recall/.test(client.getInstructions() ?? ""), "instructions mention recall");

  const { tools } = await client.listTools();
  check(tools.map((t) => t.name).join(",") ===
    "recall,save_conversation,list_sessions,get_conversation,forget_session,memory",
    `tools/list -> ${tools.map((t) => t.name).join(",")}`);

  const saved = await client.callTool({ name: "save_conversation", arguments: {
    session_id: "sdk1-s1", title: "Sourdough",
    messages: [
      { role: "user", content: "My sourdough starter is called Brunhilde.\nFeed it at 8am.", at: "2026-06-10T08:00" },
      { role: "assistant", content: "Noted: Brunhilde, fed at 8am. ✓ héllo" },
    ] } });
  check(!saved.isError && /2 new messages/.test(text(saved)), `save_conversation: ${text(saved)}`);

  const rec = await client.callTool({ name: "recall", arguments: { query: "what is my sourdough starter called" } });
  check(!rec.isError && text(rec).includes("Brunhilde.\nFeed it at 8am.") && text(rec).includes("✓ héllo"),
    "recall returns the fact verbatim (newline, unicode)");
  check(rec.structuredContent === undefined, "no structuredContent");
  check(text(rec).startsWith("Past conversations from memory"), "recall text is fenced as data");

  const list = await client.callTool({ name: "list_sessions", arguments: { limit: 5 } });
  check(text(list).includes('"sdk1-s1"'), "list_sessions");
  const conv = await client.callTool({ name: "get_conversation", arguments: { session_id: "sdk1-s1", from: 1 } });
  check(text(conv).includes("[#1 ·") && !text(conv).includes("[#0 ·"), "get_conversation window");

  const bad = await client.callTool({ name: "recall", arguments: { budget_tokens: "many" } });
  check(bad.isError === true && /query/.test(text(bad)), `bad arguments -> isError: ${text(bad)}`);
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
    check(false, "unknown tool rejected");
  } catch (e) {
    check(e.code === -32602, `unknown tool -> ${e.code} ${e.message}`);
  }

  await client.ping();
  check(true, "ping");

  await client.setLoggingLevel("debug");
  await client.callTool({ name: "list_sessions", arguments: {} });
  await new Promise((r) => setTimeout(r, 50));
  check(logs.some((l) => /list_sessions/.test(String(l.data))), `log notification (${logs.length})`);

  const five = "ledger kumquat ".repeat(Math.ceil((5 * 1024 * 1024) / 15)).slice(0, 5 * 1024 * 1024);
  const big = await client.callTool({ name: "save_conversation", arguments: {
    session_id: "sdk1-5mb", messages: [{ role: "user", content: five }] } });
  check(!big.isError && /1 new message/.test(text(big)), `5 MB argument: ${text(big)}`);

  const gone = await client.callTool({ name: "forget_session", arguments: { session_id: "sdk1-5mb" } });
  check(!gone.isError && /Forgot session/.test(text(gone)), "forget_session");
  await client.close();

  // Cancellation: every call is held 3 s by the test hook; abort after 200 ms.
  const slow = await connect({ CAIRN_MCP_TEST_DELAY_MS: "3000" });
  const ac = new AbortController();
  setTimeout(() => ac.abort("user cancelled"), 200);
  const t0 = Date.now();
  try {
    await slow.callTool({ name: "list_sessions", arguments: {} }, undefined, { signal: ac.signal });
    check(false, "cancellation");
  } catch (e) {
    check(Date.now() - t0 < 2000, `cancellation sends notifications/cancelled (${e.name})`);
  }
  await slow.ping();
  check(true, "server still answers after a cancelled call");
  await slow.close();
} catch (e) {
  check(false, `unexpected error: ${e.stack ?? e}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
