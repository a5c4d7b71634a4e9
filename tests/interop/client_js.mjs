// The JS SDK (@a2a-js/sdk) against knoc's cards, run by the interop suite
// with node. Reads {"base", "cards", "legacy"} on stdin; resolves each card
// with the SDK's DefaultAgentCardResolver (with `legacyCompat` when asked,
// for 0.3 cards) and prints slug -> "ok" (with the interfaces it saw) or
// the error, as JSON.
import { DefaultAgentCardResolver } from "@a2a-js/sdk/client";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const job = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const resolver = new DefaultAgentCardResolver(job.legacy ? { legacyCompat: { enabled: true } } : undefined);
const out = {};
for (const entry of job.cards) {
  try {
    const card = await resolver.resolve(job.base, "/" + entry.card); // the card's path under site/
    const interfaces = (card.supportedInterfaces || []).map((i) => `${i.protocolBinding} ${i.protocolVersion}`);
    out[entry.slug] = card.name && interfaces.length ? { ok: true, interfaces } : { ok: false, error: "no interfaces" };
  } catch (err) {
    out[entry.slug] = { ok: false, error: String(err) };
  }
}
console.log(JSON.stringify(out, null, 1));
