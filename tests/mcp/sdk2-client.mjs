// Drive `cairn mcp` with the TypeScript SDK v2 client (@modelcontextprotocol/client@2.4.0),
// the runtime Claude Code uses; adapted from ../shared/tools/mcp-harness.
//   legacy : initialize handshake (2025-11-25)
//   auto   : server/discover probe on a throw-away sibling process, then 2026-07-28
//   pin    : 2026-07-28 only
// usage: node sdk2-client.mjs <legacy|auto|pin> <cairn binary>
// Prints PASS/FAIL lines and "N passed, N failed".
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [mode, cairn] = process.argv.slice(2);
const versionNegotiation = mode === "pin" ? { mode: { pin: "2026-07-28" } } : { mode };
let passed = 0, failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? "PASS" : "FAIL"} [sdk2 ${mode}] ${what}`);
  if (ok) passed++; else failed++;
};
const text = (r) => r?.content?.[0]?.text ?? "";

try {
  const transport = new StdioClientTransport({
    command: cairn, args: ["mcp"], stderr: "ignore", env: { ...process.env },
  });
  const client = new Client({ name: "cairn-sdk2-test", version: "1.0.0" },
    { capabilities: {}, versionNegotiation });
  await client.connect(transport);
  const negotiated = client.getNegotiatedProtocolVersion?.();
  const want = mode === "legacy" ? "2025-11-25" : "2026-07-28";
  check(negotiated === want, `negotiated ${negotiated} (want ${want})`);
  check(client.getServerVersion?.()?.name === "cairn", `server ${JSON.stringify(client.getServerVersion?.())}`);

  const { tools } = await client.listTools();
  check(tools.length === 6 && tools[0].name === "recall", `tools/list -> ${tools.map((t) => t.name).join(",")}`);
  check(tools.find((t) => t.name === "forget_session")?.annotations?.destructiveHint === true,
    "forget_session is destructive");

  const sid = `sdk2-${mode}`;
  const saved = await client.callTool({ name: "save_conversation", arguments: {
    session_id: sid, title: `Kayak ${mode}`,
    messages: [{ role: "user", content: `The kayak rental in Tavira (${mode}) costs 35 EUR a day.` },
               { role: "assistant", content: "Noted: 35 EUR a day in Tavira." }] } });
  check(!saved.isError && /2 new messages/.test(text(saved)), `save_conversation: ${text(saved)}`);

  const rec = await client.callTool({ name: "recall", arguments: { query: `kayak rental Tavira ${mode}` } });
  check(!rec.isError && text(rec).includes(`Tavira (${mode}) costs 35 EUR`), "recall finds it");
  check(rec.structuredContent === undefined, "no structuredContent");

  const conv = await client.callTool({ name: "get_conversation", arguments: { session_id: sid } });
  check(text(conv).includes("[#1 ·"), "get_conversation");

  const bad = await client.callTool({ name: "list_sessions", arguments: { limit: 0 } });
  check(bad.isError === true, `bad arguments -> isError: ${text(bad)}`);
  try {
    await client.callTool({ name: "nope", arguments: {} });
    check(false, "unknown tool rejected");
  } catch (e) {
    check(true, `unknown tool -> ${e.code ?? ""} ${e.message}`);
  }

  const gone = await client.callTool({ name: "forget_session", arguments: { session_id: sid } });
  check(!gone.isError, "forget_session");
  await client.close();
} catch (e) {
  check(false, `unexpected error: ${e.stack ?? e}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
