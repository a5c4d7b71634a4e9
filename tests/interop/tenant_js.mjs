// Which interface the JS SDK's client factory calls for a card file: its
// url and the tenant the client sends. Reads {"card": path} on stdin.
import { ClientFactory, DefaultAgentCardResolver } from "@a2a-js/sdk/client";
import fs from "fs";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const job = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const card = new DefaultAgentCardResolver().normalizeAgentCard(JSON.parse(fs.readFileSync(job.card, "utf8")));
const transport = (await new ClientFactory().createFromAgentCard(card)).transport;
const endpoint = (transport.base ?? transport).endpoint; // a tenant wraps the transport
console.log(JSON.stringify({ url: endpoint, tenant: transport.defaultTenant ?? "" }));
