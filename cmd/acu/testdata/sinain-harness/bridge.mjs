// Runs sinain-hud's bridge pollers, as written (../sinain-hud/bridge/src),
// against a relay: OpenClawClient posts to /feed and polls /feed,
// SensePoller polls /sense?meta_only=true. The TypeScript is turned into
// JavaScript by the TypeScript compiler (transpileModule, no edits); fetch
// is observed, not changed, to report the status of every call.
//
// usage: node bridge.mjs RELAY_URL OUT_DIR MODE
//   MODE open:    post, then poll until the feed items and sense event
//                 named in EXPECT_FEED (JSON list) and EXPECT_APP arrive
//   MODE refused: post, then poll until each poller has had 2 answers
// Prints one JSON line.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";

const [relayUrl, outDir, mode] = process.argv.slice(2);
const src = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "sinain-hud", "bridge", "src");
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, "package.json"), '{"type":"module"}');
for (const name of ["log", "types", "openclaw-client", "sense-poller"]) {
  const out = ts.transpileModule(fs.readFileSync(path.join(src, name + ".ts"), "utf8"), {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    fileName: name + ".ts",
  });
  fs.writeFileSync(path.join(outDir, name + ".js"), out.outputText);
}

const calls = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (url, init) => {
  const resp = await realFetch(url, init);
  calls.push({ method: init?.method ?? "GET", url: String(url).slice(relayUrl.length), status: resp.status });
  return resp;
};

const { OpenClawClient } = await import(pathToFileURL(path.join(outDir, "openclaw-client.js")).href);
const { SensePoller } = await import(pathToFileURL(path.join(outDir, "sense-poller.js")).href);

const client = new OpenClawClient({ openclawGatewayUrl: relayUrl, openclawToken: "", openclawSessionKey: "" });
const sent = await client.sendMessage("bridge says hi", "high");

const feed = [];
client.onFeedItem((text, priority) => feed.push({ text, priority }));
const sense = [];
const poller = new SensePoller(relayUrl);
poller.on("sense", (e) => sense.push(e));
client.startPolling(100);
poller.startPolling(100);

const expectFeed = JSON.parse(process.env.EXPECT_FEED ?? "[]");
const expectApp = process.env.EXPECT_APP ?? "";
const answered = (prefix) => calls.filter((c) => c.method === "GET" && c.url.startsWith(prefix)).length;
const done = () =>
  mode === "refused"
    ? answered("/feed") >= 2 && answered("/sense") >= 2
    : expectFeed.every((t) => feed.some((f) => f.text === t)) && sense.some((e) => e.meta?.app === expectApp);
for (let i = 0; i < 600 && !done(); i++) await new Promise((r) => setTimeout(r, 50));

const connected = client.isConnected;
client.destroy();
poller.destroy();
console.log(JSON.stringify({ sent, connected, feed, sense, calls, done: done() }));
