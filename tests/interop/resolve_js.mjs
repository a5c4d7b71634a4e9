// The JS SDK's card resolver given an agent's url, as an application
// would call it (`createFromUrl(url)` resolves through it). Reads
// {"asks": {key: url}} on stdin; prints key -> {"name"} of the card it
// found, or {"error"}, as JSON.
import { DefaultAgentCardResolver } from "@a2a-js/sdk/client";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const job = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const resolver = new DefaultAgentCardResolver();
const out = {};
for (const [key, url] of Object.entries(job.asks)) {
  try {
    out[key] = { name: (await resolver.resolve(url)).name };
  } catch (err) {
    out[key] = { error: String(err) };
  }
}
console.log(JSON.stringify(out, null, 1));
