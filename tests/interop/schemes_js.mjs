// What the JS SDK's card resolver hands an application for each card file
// given: each security scheme's typed case (`scheme.$case`), or null when
// the card is left unconverted. Reads {"cards": {key: path}} on stdin.
import { DefaultAgentCardResolver } from "@a2a-js/sdk/client";
import fs from "fs";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const job = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const resolver = new DefaultAgentCardResolver();
const out = {};
for (const [key, path] of Object.entries(job.cards)) {
  const card = resolver.normalizeAgentCard(JSON.parse(fs.readFileSync(path, "utf8")));
  out[key] = Object.fromEntries(Object.entries(card.securitySchemes ?? {}).map(
    ([name, scheme]) => [name, scheme?.scheme?.$case ?? null]));
}
console.log(JSON.stringify(out));
