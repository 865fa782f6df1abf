// The page's fluid-model engine: kernel.wasm (kernel.c, the published reading's kernel in
// C) loaded and run from JavaScript, in a browser or under Node, the same code in both.
//
// The module imports nothing (no WASI, no other site): it is instantiated with an empty
// import object, and its memory is its own. A run takes the kernel's arguments as
// coexist.fluid.model.published.integrate takes them (ms, packets, packets per ms; BBRv2's period
// phases are already in tstr0) and returns the metrics, each flow's rate sum, the selected
// per-flow traces and the link's queue, loss signal and arrival rate, every `every` steps.

/** The per-flow variables a run can sample, in the kernel's order (its `fields` bits). */
export const FIELDS = ["x", "w", "tau", "xbtl", "xmax", "tmin", "mprt", "v", "xpcg", "mdwn",
  "mcrs", "whi"];
/** The link's sampled variables: queue (packets), loss signal pc, arrival rate y. */
export const LINK = ["q", "pc", "y"];
/** Congestion controls by the kernel's codes. */
export const CCAS = { reno: 0, cubic: 1, bbr1: 2, bbr2: 3 };
/** The most memory a run may take: wasm32's 4 GiB less room for the module itself. */
export const MAX_BYTES = 4 * 2 ** 30 - 2 ** 26;

const PER_FLOW = ["d0", "dd", "w0", "x0_est", "w_hi0", "tstr0", "prt"];

/** The wasm module's bytes: from a URL of the site (fetch) or, under Node, a file path. */
async function bytesOf(source) {
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source;
  const url = source instanceof URL ? source : new URL(String(source), import.meta.url);
  if (url.protocol === "file:") {
    const { readFile } = await import("node:fs/promises");
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`kernel.wasm: ${response.status} ${response.statusText}`);
  return response.arrayBuffer();
}

/** How many bytes a run of these arguments allocates: the kernel's rings and state, and
 * the inputs and outputs it shares with JavaScript (an estimate from above). */
export function bytesNeeded(args) {
  const n = args.cca.length;
  const h = args.h;
  const dMax = Math.max(...args.dd);
  const anyBbr = args.cca.some((c) => c >= CCAS.bbr1);
  const rS = Math.min(Math.trunc((2 * dMax + args.buffer / args.capacity + 20) / h) + 3,
    args.n_steps + 1);
  const rT = anyBbr ? Math.min(Math.trunc(3100 / h) + 3, args.n_steps + 1) : 1;
  const r10 = anyBbr ? Math.min(Math.trunc(Math.max(...args.prt) / h) + 3, args.n_steps + 1) : 1;
  const nOut = Math.floor((args.n_steps - 1) / args.every) + 1;
  const fields = (args.fields ?? []).length;
  const doubles = (5 * rS + rT + r10) * n + 4 * rS + 40 * n + 5 + n
    + nOut * (fields * n + LINK.length);
  return 8 * doubles + 64 * 40;
}

/** Load the engine from `source` (kernel.wasm's URL, path or bytes). */
export async function load(source = new URL("./kernel.wasm", import.meta.url)) {
  const module = source instanceof WebAssembly.Module ? source
    : await WebAssembly.compile(await bytesOf(source));
  if (WebAssembly.Module.imports(module).length) {
    throw new Error("kernel.wasm imports from its host; the page's engine must not");
  }
  return new Engine(await WebAssembly.instantiate(module, {}));
}

export class Engine {
  constructor(instance) {
    this.exports = instance.exports;
  }

  /** Run the kernel on `args` (the kernel's arguments by name, arrays as plain arrays or
   * typed arrays; `fields` the names of FIELDS to sample). Returns {metrics, rate_sum,
   * traces: {name: Float64Array(n_out * n), flow-major per sample}, link: {q, pc, y},
   * n_out, seconds}; the arrays are copies, free of the module's memory. */
  run(args) {
    const ex = this.exports;
    const n = args.cca.length;
    const fields = args.fields ?? [];
    let mask = 0;
    for (const f of fields) {
      const j = FIELDS.indexOf(f);
      if (j < 0) throw new Error(`unknown field ${f}; valid: ${FIELDS.join(", ")}`);
      mask |= 1 << j;
    }
    const need = bytesNeeded(args);
    if (need > MAX_BYTES) {
      throw new Error(`this run needs ${(need / 2 ** 30).toFixed(2)} GiB; the engine holds ` +
        `at most ${(MAX_BYTES / 2 ** 30).toFixed(2)} GiB (fewer flows, a shorter run, a ` +
        "longer step or sample interval)");
    }
    const nOut = Math.floor((args.n_steps - 1) / args.every) + 1;
    ex.live_reset();
    const alloc = (bytes) => {
      const at = ex.live_alloc(bytes);
      if (!at) throw new Error(`out of memory allocating ${bytes} bytes`);
      return at;
    };
    const put = (Type, values) => {
      const at = alloc(values.length * Type.BYTES_PER_ELEMENT);
      new Type(ex.memory.buffer, at, values.length).set(values);
      return at;
    };
    const cca = put(Int32Array, args.cca);
    const copyOf = put(Int32Array, args.copy_of ?? [...Array(n).keys()]);
    const flows = PER_FLOW.map((k) => put(Float64Array, args[k]));
    const sorted = FIELDS.filter((f) => fields.includes(f));
    const metrics = alloc(5 * 8);
    const rateSum = alloc(n * 8);
    const trace = alloc(Math.max(sorted.length * nOut * n, 1) * 8);
    const link = alloc(LINK.length * nOut * 8);
    const t0 = performance.now();
    const status = ex.live_run(n, args.n_steps, args.start, args.every, mask, args.h,
      args.capacity, args.buffer, args.red ? 1 : 0, args.expiry ? 1 : 0,
      args.recovery ? 1 : 0, cca, copyOf, ...flows, metrics, rateSum, trace, link);
    const seconds = (performance.now() - t0) / 1e3;
    if (status !== 0) throw new Error("out of memory: the kernel could not allocate its rings");
    const take = (at, count) => new Float64Array(ex.memory.buffer, at, count).slice();
    const traces = {};
    sorted.forEach((f, j) => { traces[f] = take(trace + j * nOut * n * 8, nOut * n); });
    const linkOut = {};
    LINK.forEach((f, j) => { linkOut[f] = take(link + j * nOut * 8, nOut); });
    const result = { metrics: take(metrics, 5), rate_sum: take(rateSum, n), traces,
      link: linkOut, n_out: nOut, seconds };
    ex.live_reset();
    return result;
  }
}
