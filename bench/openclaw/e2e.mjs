// Helpers of scripts/openclaw-e2e.sh that want JSON or HTTP, run with the
// pinned Node:
//
//	node e2e.mjs freeport                         print a free loopback TCP port
//	node e2e.mjs health <port> <seconds>          wait until acu's /health answers
//	node e2e.mjs wait-id <model log> <seconds>    wait for the smart_wait job id in a tool result OpenClaw sent the model
//	node e2e.mjs watching <port> <token file> <id> <seconds>
//	                                              wait until the job has judged the screen at least once and still watches
//	node e2e.mjs check <port> <token file> <id> <model log> <argv log> <seconds>
//	                                              wait for the wake, then prove it (see check below)
//
// Each prints what it found on stdout and exits 0, or says what is wrong on
// stderr and exits 1.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function fail(msg) {
  console.error(`openclaw-e2e: ${msg}`);
  process.exit(1);
}

// poll calls f every 200 ms until it returns a value other than undefined,
// or fails with what() after seconds.
async function poll(seconds, f, what) {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) fail(`after ${seconds}s: ${what()}`);
    await sleep(200);
  }
}

function lines(path) {
  let raw = "";
  try {
    raw = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  return raw.split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === "string" ? p : p.text ?? "")).join("");
  return "";
}

async function getWait(port, tokenFile, id) {
  const token = readFileSync(tokenFile, "utf8").trim();
  const res = await fetch(`http://127.0.0.1:${port}/v1/waits/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) fail(`GET /v1/waits/${id}: ${res.status} ${await res.text()}`);
  return res.json();
}

// waitID finds the job id in the result of the smart_wait call (direct,
// or through Tool Search's tool_call) that OpenClaw passed back to the
// model: the job came back through OpenClaw's MCP client.
function waitID(logFile) {
  for (const { body } of lines(logFile)) {
    const calls = new Map();
    for (const m of body.messages ?? []) for (const c of m.tool_calls ?? []) calls.set(c.id, c.function ?? {});
    const isWait = (f) => (f.name ?? "").endsWith("smart_wait") || (f.name === "tool_call" && (f.arguments ?? "").includes("smart_wait"));
    for (const m of body.messages ?? []) {
      if (m.role !== "tool" || !isWait(calls.get(m.tool_call_id) ?? {})) continue;
      // smart_wait's answer is JSON text, {"wait_id":"wait_…",…}, which
      // OpenClaw may quote again inside its own JSON.
      const id = (text(m.content).match(/wait_id\\*"\s*:\s*\\*"(wait_[A-Za-z0-9_-]+)/) ?? [])[1];
      if (id) return id;
      fail(`smart_wait, called through OpenClaw, answered no job: ${text(m.content).slice(-1500)}`);
    }
  }
  return undefined;
}

const [cmd, ...args] = process.argv.slice(2);
switch (cmd) {
  case "freeport": {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      console.log(s.address().port);
      s.close();
    });
    break;
  }
  case "health": {
    const [port, seconds] = args;
    let last = "";
    await poll(Number(seconds), async () => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/health`);
        if (res.ok) return true;
        last = `status ${res.status}`;
      } catch (err) {
        last = err.cause?.code ?? err.message;
      }
    }, () => `acu does not answer /health on port ${port} (${last})`);
    break;
  }
  case "wait-id": {
    const [logFile, seconds] = args;
    const last = () => JSON.stringify(lines(logFile).at(-1)?.reply ?? "no request at all").slice(0, 300);
    console.log(await poll(Number(seconds), () => waitID(logFile), () => `no smart_wait result reached the model; its last answer: ${last()} (see ${logFile})`));
    break;
  }
  case "watching": {
    const [port, tokenFile, id, seconds] = args;
    let w = {};
    await poll(Number(seconds), async () => {
      w = await getWait(port, tokenFile, id);
      if (w.state !== "watching") fail(`job ${id} is ${w.state} before the text was shown: ${JSON.stringify(w)}`);
      if (w.evaluations >= 1) return true;
    }, () => `job ${id} has not judged the screen yet: ${JSON.stringify(w)}`);
    console.log(`${id} watching, ${w.evaluations} judgement(s), last verdict: met=${w.last_verdict?.met} ${JSON.stringify(w.last_verdict?.evidence ?? "")}`);
    break;
  }
  case "check": {
    // The loop is proven when:
    //  - acu's job resolved, and its message, built here from the job's
    //    criteria and evidence as the seed specifies, is
    //    "[smart_wait resolved] Job <id>: <criteria> → <evidence>";
    //  - acu's exec notifier ran the OpenClaw CLI with exactly
    //    `system event --text <that message> --mode now`;
    //  - OpenClaw's agent was woken: a later model request carries that
    //    exact message, and the model's answer to it is WOKE.
    const [port, tokenFile, id, logFile, argvFile, seconds] = args;
    const woken = await poll(Number(seconds), () => lines(logFile).find((l) => JSON.stringify(l.body).includes("[smart_wait resolved]")),
      () => `OpenClaw's agent was not woken: no model request holds "[smart_wait resolved]" (see ${logFile})`);
    const w = await getWait(port, tokenFile, id);
    if (w.state !== "resolved") fail(`job ${id} is ${w.state}, want resolved: ${JSON.stringify(w)}`);
    const want = `[smart_wait resolved] Job ${id}: ${w.criteria} → ${w.evidence}`;
    const runs = readFileSync(argvFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const events = runs.filter((a) => a[0] === "system" && a[1] === "event");
    if (events.length === 0) fail(`acu never ran "openclaw system event" (runs: ${JSON.stringify(runs)})`);
    const argv = JSON.stringify(["system", "event", "--text", want, "--mode", "now"]);
    if (!events.some((a) => JSON.stringify(a) === argv)) fail(`acu ran ${JSON.stringify(events)}, want ${argv}`);
    // OpenClaw puts a system event in the woken turn's context as a JSON
    // string, "System: [<time>] <text>": the text must be the message.
    const systemEvents = [];
    for (const m of woken.body.messages ?? []) {
      for (const lit of text(m.content).match(/"(?:[^"\\]|\\.)*"/g) ?? []) {
        let v;
        try {
          v = JSON.parse(lit);
        } catch {
          continue;
        }
        const ev = v.match(/^System: \[[^\]]*\] ([\s\S]*)$/);
        if (ev) systemEvents.push(ev[1]);
      }
    }
    const holds = systemEvents.includes(want);
    if (!holds) fail(`the woken request's system events are ${JSON.stringify(systemEvents)}, want one to be exactly ${JSON.stringify(want)}: ${JSON.stringify(woken.body.messages.slice(-3))}`);
    if (!woken.reply?.text?.startsWith("WOKE")) fail(`the model's answer to the wake was ${JSON.stringify(woken.reply)}`);
    console.log(want);
    break;
  }
  default:
    fail(`unknown helper ${JSON.stringify(cmd)}: freeport, health, wait-id, watching or check`);
}
