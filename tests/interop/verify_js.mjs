// The JS SDK's verifier (verifyAgentCardSignature) over knoc's signed cards,
// run by the interop suite. Reads {"cards": [{"name", "card", "keys"}]} on
// stdin: each card as JSON with the JWKS keys of its host; prints
// name -> "ok" or the error, as JSON. The verifier is given the card's JSON
// as fetched (its canonical form parses that JSON itself).
import { verifyAgentCardSignature } from "@a2a-js/sdk";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const job = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const out = {};
// The SDK logs each failed signature on stdout, so the verdict goes out as
// one last line of its own, after a marker.
for (const entry of job.cards) {
  const keys = new Map(entry.keys.map((k) => [k.kid, k]));
  try {
    await verifyAgentCardSignature(async (kid) => keys.get(kid))(entry.card);
    out[entry.name] = "ok";
  } catch (err) {
    out[entry.name] = String(err);
  }
}
process.stdout.write("\nKNOC-RESULT " + JSON.stringify(out) + "\n");
