// Verifies webhook deliveries with the official Standard Webhooks library,
// used exactly as its documentation says: new Webhook(secret).verify(body,
// headers), with the secret as issued and the headers as received.
//
// Usage: node verify.mjs deliveries.json
// where deliveries.json is {"secret": "whsec_...", "deliveries":
// [{"headers": {"Webhook-Id": "...", ...}, "body_base64": "..."}]}.
// Each delivery must verify, and a copy with one body byte changed must not.
// Prints "standardwebhooks: N passed, N failed" and exits non-zero on any
// failure.
import { readFileSync } from "node:fs";
import { Webhook } from "standardwebhooks";

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const wh = new Webhook(input.secret);
let passed = 0;
let failed = 0;
for (const [i, d] of input.deliveries.entries()) {
  const body = Buffer.from(d.body_base64, "base64");
  try {
    wh.verify(body, d.headers);
  } catch (err) {
    failed++;
    console.error(`delivery ${i}: rejected: ${err.message}`);
    continue;
  }
  const altered = Buffer.from(body);
  altered[altered.length - 2] ^= 1;
  try {
    wh.verify(altered, d.headers);
    failed++;
    console.error(`delivery ${i}: an altered body was accepted`);
    continue;
  } catch {
    // expected
  }
  passed++;
}
console.log(`standardwebhooks: ${passed} passed, ${failed} failed`);
if (failed > 0 || passed === 0) process.exit(1);
