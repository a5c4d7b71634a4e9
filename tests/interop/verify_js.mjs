// The JS SDK's verifier (verifyAgentCardSignature) over knoc's signed cards,
// run by the interop suite. Reads {"cards": [{"name", "card", "keys"}]} on
// stdin: each card as JSON with the JWKS keys of its host; prints, per name,
// the verdict on the card as fetched ("fetched") and on the card its
// resolver hands a client ("client", legacyCompat on): "ok" or the error.
import { verifyAgentCardSignature } from "@a2a-js/sdk";
import { DefaultAgentCardResolver } from "@a2a-js/sdk/client";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const job = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const resolver = new DefaultAgentCardResolver({ legacyCompat: { enabled: true } });
const out = {};
// The SDK logs each failed signature on stdout, so the verdict goes out as
// one last line of its own, after a marker.
for (const entry of job.cards) {
  const keys = new Map(entry.keys.map((k) => [k.kid, k]));
  const verify = verifyAgentCardSignature(async (kid) => keys.get(kid));
  const verdict = async (card) => {
    try {
      await verify(card);
      return "ok";
    } catch (err) {
      return String(err);
    }
  };
  out[entry.name] = {
    fetched: await verdict(structuredClone(entry.card)),
    client: await verdict(resolver.normalizeAgentCard(structuredClone(entry.card))),
  };
}
process.stdout.write("\nKNOC-RESULT " + JSON.stringify(out) + "\n");
