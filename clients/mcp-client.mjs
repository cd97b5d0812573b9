// The official TypeScript MCP SDK's client against acu, as a host built on
// it (OpenClaw, most desktop and IDE hosts) uses it: initialize,
// listTools (which validates every tool's schemas), then a callTool of
// every tool with a minimal valid input. The SDK's callTool validates
// structuredContent against the tool's outputSchema; this script also
// decodes every image and counts smart_wait's progress notifications.
//
//   node mcp-client.mjs http URL TOKEN
//   node mcp-client.mjs stdio COMMAND [ARGS...]   (environment passed on)
//
// ACU_CLIENT_TRIGGER: a file to create at the first progress notification
// (the test's xterm shows the awaited text then). ACU_CLIENT_WINDOW: the
// title of the test's xterm. Prints one JSON report on stdout; exits 0
// when every call went as planned, 1 otherwise.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { writeFileSync, readFileSync } from "node:fs";

const [mode, ...rest] = process.argv.slice(2);
const sdkVersion = JSON.parse(readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url))).version;
const report = { client: "@modelcontextprotocol/sdk", version: sdkVersion, transport: mode, tools: [], calls: [], progress: 0, failures: [] };
const fail = (what) => report.failures.push(what);

let transport;
if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]), { requestInit: { headers: { Authorization: `Bearer ${rest[1]}` } } });
} else if (mode === "stdio") {
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: process.env, stderr: "inherit" });
} else {
  console.error("usage: mcp-client.mjs http URL TOKEN | stdio COMMAND [ARGS...]");
  process.exit(2);
}

const win = process.env.ACU_CLIENT_WINDOW || "clients";
const trigger = process.env.ACU_CLIENT_TRIGGER;

// imageSize reads a PNG's or JPEG's dimensions from its bytes.
function imageSize(mime, b64) {
  const b = Buffer.from(b64, "base64");
  if (mime === "image/png") {
    if (b.subarray(0, 8).toString("hex") !== "89504e470d0a1a0a") throw new Error("not a PNG");
    return [b.readUInt32BE(16), b.readUInt32BE(20)];
  }
  if (mime === "image/jpeg") {
    if (b[0] !== 0xff || b[1] !== 0xd8) throw new Error("not a JPEG");
    for (let i = 2; i + 9 < b.length; ) {
      if (b[i] !== 0xff) throw new Error("bad JPEG marker");
      const m = b[i + 1], len = b.readUInt16BE(i + 2);
      if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) return [b.readUInt16BE(i + 7), b.readUInt16BE(i + 5)];
      i += 2 + len;
    }
    throw new Error("no JPEG frame header");
  }
  throw new Error(`unknown image type ${mime}`);
}

// call runs one tool. expect is "ok", or "error:<text the message holds>"
// for a call whose refusal is the point.
async function call(name, args, { expect = "ok", progress = false, timeout = 120000 } = {}) {
  const t0 = Date.now();
  const entry = { tool: name, expect };
  try {
    const opts = { timeout };
    if (progress) {
      opts.onprogress = () => {
        report.progress++;
        if (report.progress === 1 && trigger) writeFileSync(trigger, "");
      };
      opts.resetTimeoutOnProgress = true;
    }
    const res = await client.callTool({ name, arguments: args }, undefined, opts);
    entry.ms = Date.now() - t0;
    entry.isError = !!res.isError;
    const text = (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
    entry.structured = res.structuredContent !== undefined;
    for (const c of res.content || []) {
      if (c.type === "image") {
        const [w, h] = imageSize(c.mimeType, c.data);
        (entry.images ||= []).push({ mime: c.mimeType, width: w, height: h });
        if (!(w > 0 && h > 0)) fail(`${name}: image ${c.mimeType} ${w}x${h}`);
      }
    }
    if (expect === "ok") {
      if (res.isError) fail(`${name}: tool error: ${text.slice(0, 300)}`);
      else if (!entry.structured) fail(`${name}: no structuredContent though the tool declares an outputSchema`);
    } else {
      const want = expect.slice("error:".length);
      if (!res.isError || !text.includes(want)) fail(`${name}: want a tool error holding "${want}", got ${res.isError ? "error" : "success"}: ${text.slice(0, 300)}`);
    }
    entry.text = text.slice(0, 200);
    report.calls.push(entry);
    return res.structuredContent || {};
  } catch (e) {
    entry.ms = Date.now() - t0;
    entry.thrown = String(e).slice(0, 500);
    fail(`${name}: ${entry.thrown}`);
    report.calls.push(entry);
    return {};
  }
}

const client = new Client({ name: "acu-clients-check", version: "1.0.0" });
try {
  await client.connect(transport);
  report.server = client.getServerVersion();
  report.protocolVersion = transport.protocolVersion ?? null;
  const listed = await client.listTools();
  report.tools = listed.tools.map((t) => t.name);
  const offered = new Set(report.tools);

  // Eyes.
  await call("screenshot", {});
  await call("screenshot", { target: `window:${win}`, format: "png" });
  await call("settle", { quiet: 0.3, timeout: 10 });
  await call("desktop_state", {});
  await call("desktop_look", {});
  await call("list_windows", {});
  await call("pointer", {});

  // A wait that resolves while this call blocks, with progress.
  const waited = await call("smart_wait", { criteria: '"CLIENTS READY" is visible', timeout: 60, target: `window:${win}`, block_seconds: 50 }, { progress: true });
  if (waited.state !== "resolved") fail(`smart_wait: state ${waited.state}, want resolved`);
  if (report.progress === 0) fail("smart_wait: no progress notification while blocking");
  // A wait to look at, change and cancel.
  const job = await call("smart_wait", { criteria: '"Never shown" is visible', timeout: 120 });
  await call("wait_status", { id: job.id });
  await call("wait_update", { id: job.id, timeout: 300 });
  await call("wait_cancel", { id: job.id, reason: "clients check over" });

  // Hands, all on the test's own xterm.
  const inWin = { window: win };
  await call("move_pointer", { x: 500, y: 500, ...inWin, no_settle: true });
  await call("click", { x: 500, y: 500, ...inWin, no_settle: true });
  await call("scroll", { dy: 1, x: 500, y: 500, ...inWin, no_settle: true });
  await call("drag", { from: { x: 400, y: 400, ...inWin }, to: { x: 600, y: 600, ...inWin }, no_settle: true });
  await call("type_text", { text: "acu", no_settle: true });
  await call("press_key", { keys: "BackSpace", repeat: 3, no_settle: true });
  await call("act", { actions: [{ kind: "move", at: { x: 500, y: 500, window: win } }], screenshot: { format: "jpeg", max_width: 640 } });
  await call("focus_window", { window: win });
  await call("window", { window: win, op: "focus" });
  await call("clipboard_set", { text: "acu clients check" });
  const clip = await call("clipboard_get", {});
  if (clip.text !== "acu clients check") fail(`clipboard_get: ${JSON.stringify(clip).slice(0, 200)}`);
  await call("launch_app", { argv: ["true"] });

  // The vendors' computer-use dialects: a screenshot action each.
  await call("computer_anthropic", { item: { type: "tool_use", id: "toolu_1", name: "computer", input: { action: "screenshot" } } });
  await call("computer_openai", { item: { type: "computer_call", id: "cu_1", call_id: "call_1", action: { type: "screenshot" }, pending_safety_checks: [], status: "completed" } });
  await call("computer_uitars", { item: "Thought: I look at the screen.\nAction: wait()" });

  // The task log (DETM's tools).
  const reg = await call("task_register", { name: "clients check", plan: ["list every tool", "call every tool"] });
  const tid = reg.task_id;
  await call("task_log_action", { task_id: tid, action_type: "other", summary: "called every tool" });
  await call("task_update", { task_id: tid, message: "halfway" });
  await call("task_summary", { task_id: tid });
  await call("task_thread", { task_id: tid });
  await call("task_list", {});

  // Tasks, run by the test's scripted models on a real dialog.
  const task = await call("run_task", { task: "Enter Grace Hopper as the name and press OK", block_seconds: 50 }, { timeout: 90000 });
  if (task.status !== "completed") fail(`run_task: status ${task.status}, want completed`);
  await call("task_status", { id: task.run_id });
  const agent = await call("gui_agent", { instruction: "Confirm the dialog is gone", timeout: 60 }, { timeout: 90000 });
  if (agent.status !== "completed") fail(`gui_agent: status ${agent.status}, want completed`);
  // run_resume answers only a run that waits for the user: a finished
  // task's run is refused, with the reason.
  await call("run_resume", { run_id: task.run_id }, { expect: "error:nothing to resume" });

  const called = new Set(report.calls.map((c) => c.tool));
  report.notCalled = report.tools.filter((t) => !called.has(t));
  for (const t of report.notCalled) fail(`${t}: listed but not called by this check: add a call`);
  for (const t of called) if (!offered.has(t)) fail(`${t}: called but not listed`);
} catch (e) {
  fail(`session: ${String(e).slice(0, 2000)}`);
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify(report));
process.exit(report.failures.length ? 1 : 0);
