// The engine in a Web Worker, so a page runs the model off its main thread: the worker
// loads kernel.wasm from beside this file (the same site) once and answers each message
// {id, args} (the kernel's arguments) or {id, setup} (a dumbbell, as setup.mjs takes it)
// with {id, ok: true, result} or {id, ok: false, error}. The traces' buffers are
// transferred, not copied. `handle` is the whole of what the worker does; the command
// line's Node runner (run_node.mjs) calls the same function.
import { load } from "./engine.mjs";
import { dumbbell } from "./setup.mjs";

let engine = null;

/** One request: the engine's result for `message.args`, or for the dumbbell
 * `message.setup` (the engine loaded on first use, from `message.wasm` when given: a URL
 * of the site or the module's bytes). */
export async function handle(message) {
  if (engine === null) engine = await load(message.wasm ?? new URL("./kernel.wasm", import.meta.url));
  return engine.run(message.args ?? dumbbell(message.setup));
}

/** The buffers of a result, to transfer to the page instead of copying them. */
export function buffers(result) {
  return [result.metrics, result.rate_sum, ...Object.values(result.traces),
    ...Object.values(result.link)].map((a) => a.buffer);
}

const inWorker = typeof WorkerGlobalScope !== "undefined" && self instanceof WorkerGlobalScope;
if (inWorker) {
  self.onmessage = async (event) => {
    const { id } = event.data;
    try {
      const result = await handle(event.data);
      self.postMessage({ id, ok: true, result }, buffers(result));
    } catch (err) {
      self.postMessage({ id, ok: false, error: String(err && err.message ? err.message : err) });
    }
  };
}
