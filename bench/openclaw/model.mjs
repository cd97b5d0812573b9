// A scripted OpenAI-compatible model for scripts/openclaw-e2e.sh. It
// speaks the chat-completions wire format that OpenClaw's
// "openai-completions" provider API sends (POST /v1/chat/completions,
// streamed as server-sent events when asked, as OpenClaw asks; GET
// /v1/models), and plays one agent's part, decided from the whole
// conversation each request carries:
//
//  1. asked by the user to watch for the download (a user message holds
//     TRIGGER), it calls smart_wait with CRITERIA: directly when OpenClaw
//     offers a tool whose name ends in "smart_wait", else through Tool
//     Search, OpenClaw's default (tool_search, then tool_call with the id
//     found, "mcp:acu:acu__smart_wait");
//  2. given smart_wait's result, it answers that it is waiting;
//  3. given a request that holds "[smart_wait resolved]" (the system event
//     acu's notifier sent through `openclaw system event`), it answers
//     WOKE;
//  4. anything else (a heartbeat with nothing to do) gets NO_REPLY.
//
// Every request body is appended, with the reply, one JSON object a line,
// to the file named by the second argument, for the script's checks.
// Usage: node model.mjs <port file> <request log>. It listens on a free
// loopback port and writes that port to the port file.
import { appendFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";

const TRIGGER = "Watch for the download";
const CRITERIA = '"DOWNLOAD COMPLETE" is visible';

const [portFile, logFile] = process.argv.slice(2);
if (!portFile || !logFile) {
  console.error("usage: node model.mjs <port file> <request log>");
  process.exit(2);
}

// text is the content of one chat message as a string, whatever its shape.
function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === "string" ? p : p.text ?? "")).join("");
  return "";
}

let calls = 0;

// toolCall is one assistant tool call.
function toolCall(name, args) {
  calls++;
  return { tool: { id: `call_${calls}`, name, arguments: JSON.stringify(args) } };
}

const WAIT_ARGS = { criteria: CRITERIA, timeout: 120 };

// reply decides the next assistant turn from the whole conversation, so it
// does not depend on how OpenClaw orders its context messages. OpenClaw
// either offers acu's tool directly (a tool whose name ends in
// "smart_wait") or, with Tool Search (its default), behind tool_search
// and tool_call: then the model searches for it and calls the id found.
function reply(body) {
  const msgs = body.messages ?? [];
  const all = msgs.map((m) => text(m.content)).join("\n");
  if (all.includes("[smart_wait resolved]")) return { text: "WOKE: the download is complete." };
  if (!msgs.some((m) => m.role === "user" && text(m.content).includes(TRIGGER))) return { text: "NO_REPLY" };
  // What this conversation's assistant turns already called, by call id.
  const called = new Map();
  for (const m of msgs) for (const c of m.tool_calls ?? []) called.set(c.id, { name: c.function?.name ?? "", args: c.function?.arguments ?? "" });
  const isWait = (c) => c.name.endsWith("smart_wait") || (c.name === "tool_call" && c.args.includes("smart_wait"));
  let searchResult = null;
  for (const m of msgs) {
    if (m.role !== "tool") continue;
    const c = called.get(m.tool_call_id);
    if (!c) continue;
    if (isWait(c)) return { text: "acu is watching the screen; I will continue when it wakes me." };
    if (c.name === "tool_search") searchResult = text(m.content);
  }
  if ([...called.values()].some(isWait)) return { text: "NO_REPLY" }; // called, no result yet
  const names = (body.tools ?? []).map((t) => t.function?.name ?? "");
  const direct = names.find((n) => n.endsWith("smart_wait"));
  if (direct) return toolCall(direct, WAIT_ARGS);
  if (searchResult !== null) {
    // The first id or name in the search result that names smart_wait.
    const id = (searchResult.match(/[A-Za-z0-9_.:-]*smart_wait[A-Za-z0-9_.:-]*/) ?? [])[0];
    if (!id) return { text: `NO_TOOL: tool_search found no smart_wait: ${searchResult.slice(0, 500)}` };
    return toolCall("tool_call", { id, args: WAIT_ARGS });
  }
  if (names.includes("tool_search")) return toolCall("tool_search", { query: "smart_wait: wait until a condition is visible on screen" });
  return { text: `NO_TOOL: neither smart_wait nor tool_search was offered (tools: ${names.join(", ")})` };
}

function completion(body, r) {
  const id = `chatcmpl-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const model = body.model ?? "scripted";
  const message = r.tool
    ? { role: "assistant", content: null, tool_calls: [{ id: r.tool.id, type: "function", function: { name: r.tool.name, arguments: r.tool.arguments } }] }
    : { role: "assistant", content: r.text };
  const finish = r.tool ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (!body.stream) {
    return { json: { id, object: "chat.completion", created, model, choices: [{ index: 0, message, finish_reason: finish }], usage } };
  }
  const chunk = (delta, finish_reason = null, extra = {}) => ({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason }], ...extra });
  const events = [chunk({ role: "assistant", content: "" })];
  if (r.tool) {
    events.push(chunk({ tool_calls: [{ index: 0, id: r.tool.id, type: "function", function: { name: r.tool.name, arguments: "" } }] }));
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: r.tool.arguments } }] }));
  } else {
    events.push(chunk({ content: r.text }));
  }
  events.push(chunk({}, finish));
  if (body.stream_options?.include_usage) events.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
  return { sse: events };
}

const server = createServer((req, res) => {
  let raw = "";
  req.on("data", (d) => (raw += d));
  req.on("end", () => {
    const path = req.url.replace(/\?.*$/, "");
    if (req.method === "GET" && path.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "scripted", object: "model", created: 0, owned_by: "acu" }] }));
      return;
    }
    if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}`, type: "invalid_request_error" } }));
      return;
    }
    let body;
    try {
      body = JSON.parse(raw);
    } catch (err) {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `body is not JSON: ${err.message}`, type: "invalid_request_error" } }));
      return;
    }
    const r = reply(body);
    appendFileSync(logFile, JSON.stringify({ at: new Date().toISOString(), reply: r, body }) + "\n");
    const out = completion(body, r);
    if (out.json) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(out.json));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    for (const e of out.sse) res.write(`data: ${JSON.stringify(e)}\n\n`);
    res.end("data: [DONE]\n\n");
  });
});

server.listen(0, "127.0.0.1", () => {
  writeFileSync(portFile, String(server.address().port));
});
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => server.close(() => process.exit(0)));
