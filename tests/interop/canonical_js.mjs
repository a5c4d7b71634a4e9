// The JS SDK's canonical form of each card (what verifyAgentCardSignature
// checks a signature over): of the card as fetched ("fetched"), and of the
// card its resolver hands a client ("client", legacyCompat on). Reads
// {"cards": {name: card}} on stdin; prints {name: {fetched, client}}, each
// {"payload": str} or {"error": str}.
import { canonicalizeAgentCard } from "@a2a-js/sdk";
import { DefaultAgentCardResolver } from "@a2a-js/sdk/client";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const job = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const resolver = new DefaultAgentCardResolver({ legacyCompat: { enabled: true } });
const attempt = (make) => {
  try {
    return { payload: make() };
  } catch (err) {
    return { error: String(err).slice(0, 200) };
  }
};
const out = {};
for (const [name, card] of Object.entries(job.cards)) {
  out[name] = {
    fetched: attempt(() => canonicalizeAgentCard(structuredClone(card))),
    client: attempt(() => canonicalizeAgentCard(resolver.normalizeAgentCard(structuredClone(card)))),
  };
}
process.stdout.write("\nKNOC-RESULT " + JSON.stringify(out) + "\n");
