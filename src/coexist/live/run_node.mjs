// The page's engine under Node, for the command line and CI: reads one request as JSON on
// stdin ({args, out}: the kernel's arguments as engine.mjs takes them, and a file path;
// or {setup}: a dumbbell as setup.mjs takes it, whose arguments it prints as JSON;
// or {closedForm: {report, inputs}}: closed_form.mjs's shareReport, nashReport or twoFlow
// of the inputs (one object, or a list answered with a list), printed as JSON, whose shortest round-trip digits read back to the same doubles),
// runs it through the worker's own handler (worker.mjs), writes every number to `out` as
// little-endian doubles (metrics, rate sums, each sampled field, then q, pc, y) and prints
// {n_out, fields, seconds} as JSON. Doubles travel in binary so no digit is lost.
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { nashReport, shareReport, twoFlow } from "./closed_form.mjs";
import { FIELDS } from "./engine.mjs";
import { dumbbell, linspace } from "./setup.mjs";
import { handle } from "./worker.mjs";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
if (request.setup) {
  const setup = { ...request.setup };
  if (setup.rttRange) setup.rttsS = linspace(...setup.rttRange, setup.ccas.length);
  process.stdout.write(JSON.stringify(dumbbell(setup)) + "\n");
} else if (request.closedForm) {
  const { report, inputs } = request.closedForm;
  const reports = { share: shareReport, nash: nashReport,
    twoFlow: ({ bufferBdp, capacityBps, rttS }) => twoFlow(bufferBdp, capacityBps, rttS) };
  if (!(report in reports)) throw new Error(`no closed-form report ${report}`);
  const answer = Array.isArray(inputs) ? inputs.map(reports[report]) : reports[report](inputs);
  process.stdout.write(JSON.stringify(answer) + "\n");
} else {
  await run(request);
}

/** Run the request's arguments and write the result as the header says. */
async function run(req) {
  if (req.wasm) req.wasm = pathToFileURL(req.wasm);
  const result = await handle(req);
  const fields = FIELDS.filter((f) => f in result.traces);
  const parts = [result.metrics, result.rate_sum, ...fields.map((f) => result.traces[f]),
    result.link.q, result.link.pc, result.link.y];
  const little = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  if (!little) throw new Error("run_node.mjs writes little-endian doubles only");
  writeFileSync(req.out, Buffer.concat(parts.map((a) => Buffer.from(a.buffer, a.byteOffset,
    a.byteLength))));
  process.stdout.write(JSON.stringify({ n_out: result.n_out, fields, seconds: result.seconds })
    + "\n");
}
